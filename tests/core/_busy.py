"""Busy pages made from real corpus pages (read in place, never copied): furniture of news and
shop pages that varies on every load, and the real edits a watcher wants reported.

A load ``n`` of a page holds, each drawn afresh: a "Trending now" box of five headlines out of
300, an unlabelled sponsored line that is a new phrase on every load (between two of the page's
paragraphs), a "Related" list of six items reshuffled from twelve with two fresh ones, and
class names hashed per load."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ._support import vocabulary

_BODY = re.compile(r"<body[^>]*>", re.IGNORECASE)
_END_BODY = re.compile(r"</body\s*>", re.IGNORECASE)
_PARAGRAPH = re.compile(r"<p(?:\s[^>]*)?>([^<]{60,})</p>", re.IGNORECASE)
_HEADING = re.compile(r"(<h([1-3])(?:\s[^>]*)?>)([^<]{8,80})(</h\2>)", re.IGNORECASE)
_WORD = re.compile(r"(?<![\w&#;/=.!-])([a-z]{8,})(?![\w-])")
_AD = "<!--sponsored-->"
_NUMBER = re.compile(r"(?<![\w.,:/#-])([1-9]\d{0,2})(?![\w.,:/%-])")


def _phrases(count: int, words: int, seed: int) -> list[str]:
    rng, vocab = random.Random(seed), vocabulary()
    return [" ".join(rng.choice(vocab) for _ in range(words)).capitalize() for _ in range(count)]


HEADLINES = _phrases(300, 6, 11)
FRESH = _phrases(300, 5, 12)
RELATED = _phrases(12, 4, 13)
ADS = _phrases(1000, 7, 14)


@dataclass(frozen=True)
class BusyPage:
    """A real page and where its noise goes in it."""

    html: str  # the page, with a marker where the sponsored line goes (after a paragraph of it)

    @classmethod
    def of(cls, html: str) -> BusyPage | None:
        found = list(_PARAGRAPH.finditer(html))
        if len(found) < 4:
            return None
        at = found[len(found) // 2].end()
        return cls(html[:at] + _AD + html[at:])

    def load(self, n: int, html: str | None = None) -> str:
        """Load *n* of the page (of *html*: an edit of it, its noise where the page's is)."""
        html = self.html if html is None else html
        rng = random.Random(n * 7919 + len(self.html))
        tag = f"{rng.getrandbits(32):08x}"
        trending = "".join(f"<li class='t-{tag}'>{h}</li>" for h in rng.sample(HEADLINES, 5))
        related = rng.sample(RELATED, 4) + rng.sample(FRESH, 2)
        rng.shuffle(related)
        top = f"<div class='box-{tag}'><h3>Trending now</h3><ul>{trending}</ul></div>"
        ad = f"<div class='s-{tag}'><p>{rng.choice(ADS)}</p></div>"
        bottom = (f"<section class='r-{tag}'><h3>Related</h3><ul>"
                  + "".join(f"<li><a href='/a/{rng.getrandbits(20)}'>{r}</a></li>" for r in related)
                  + "</ul></section>")
        html = html.replace(_AD, ad)
        body = _BODY.search(html)
        start = body.end() if body else 0
        ends = list(_END_BODY.finditer(html))
        end = ends[-1].start() if ends else len(html)
        return html[:start] + top + html[start:end] + bottom + html[end:]


@dataclass(frozen=True)
class Edit:
    """A real change of the page: its kind, the edited HTML, and what its diff must show."""

    kind: str
    html: str
    removed: str  # text the diff's "-" lines must hold ("": none)
    added: str  # text the diff's "+" lines must hold ("": none)


def edits(page: BusyPage, text: str, rng: random.Random) -> list[Edit]:
    """Real edits of *page* whose stored stable text is *text*: a word, a number, a paragraph
    added, a paragraph removed, a heading (each where the page allows it)."""
    html, found = page.html, []
    if not _readable(text):
        return found
    words = [w for w in dict.fromkeys(_WORD.findall(text)) if html.count(w) == 1 and text.count(w) == 1]
    if words:
        word = rng.choice(words)
        found.append(Edit("word", html.replace(word, "zebrafish"), word, "zebrafish"))
    numbers = [m for m in _NUMBER.finditer(html) if _visible(html, m.start()) and text.count(m.group(1)) == 1
               and html.count(m.group(1)) == 1]
    if numbers:
        m = rng.choice(numbers)
        found.append(Edit("number", html[:m.start()] + str(int(m.group(1)) + 7) + html[m.end():], m.group(1),
                          str(int(m.group(1)) + 7)))
    paragraphs = [m for m in _PARAGRAPH.finditer(html) if " ".join(m.group(1).split()) in text]
    if paragraphs:
        m = rng.choice(paragraphs)
        added = "A new paragraph about zebrafish and their keepers was added here by the editors"
        found.append(Edit("paragraph added", html[:m.end()] + f"<p>{added}</p>" + html[m.end():], "", added))
        m = rng.choice(paragraphs)
        found.append(Edit("paragraph removed", html[:m.start()] + html[m.end():],
                          " ".join(m.group(1).split())[:40], ""))
    headings = [m for m in _HEADING.finditer(html) if " ".join(m.group(3).split()) in text.split("\n")]
    if headings:
        m = rng.choice(headings)
        found.append(Edit("heading", html[:m.start(3)] + "Zebrafish keepers gather" + html[m.end(3):],
                          " ".join(m.group(3).split()), "Zebrafish keepers gather"))
    return found


def _readable(text: str) -> bool:
    """No undecodable byte in *text* (a diff shows one as an escape, not as read)."""
    return not any(0xDC80 <= ord(c) <= 0xDCFF or ord(c) >= 0xF0000 for c in text)


def _visible(html: str, at: int) -> bool:
    """Whether *at* is in text between tags (not in a tag, a script or a style)."""
    lt, gt = html.rfind("<", 0, at), html.rfind(">", 0, at)
    if lt > gt:
        return False
    opened = html.rfind("<script", 0, at), html.rfind("<style", 0, at)
    closed = html.rfind("</script", 0, at), html.rfind("</style", 0, at)
    return opened[0] <= closed[0] and opened[1] <= closed[1]
