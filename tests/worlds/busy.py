"""A test web of busy pages built from real pages of ../shared/corpus (read in place, never copied).

Each :class:`WorldPage` is one real page plus the furniture real sites put around their content,
regenerated on every load (:func:`load`), deterministic from the page's seed and the load's number:

- ``busy``: a "Trending now" box of five headlines drawn from a pool of 600 (almost every headline
  is new on each load), a sponsored slot whose one line is a new phrase per load, a "Related" list
  reshuffled with two fresh items, counters ("1,204 readers"), a clock ("Updated 5 minutes ago ·
  14:32", tracking the fetch time), class names hashed per deploy, an A/B teaser (one of two texts),
  and blocks present on some loads only;
- ``clock``: only the clock line (and the invisible churn below);
- ``quiet``: no visible noise: only what a reader never sees changes (class names hashed per
  deploy, a script's nonce, a tracking pixel's URL).

Every page also carries a *notice* of its own ("Doors open at 19:30.", "Application deadline:
12 March 2027."…), part of its content on every load: the dates and times a reader watches for.
The real changes a page can undergo are in :mod:`tests.worlds.edits`.

The furniture is inserted inside the body, near the page's own paragraphs (the paragraphs whose
text the project itself reads as lines of the page): the clock and counters after the first
heading, the trending box after the second paragraph, the ad after the third, the related list after
the last. :func:`noise_lines` says which lines of a load are furniture, for checking a diff.
"""

from __future__ import annotations

import csv
import html as htmlmod
import random
import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import cache, lru_cache
from pathlib import Path

from changewatch.core.text.decoding import decode_page

from .vocab import ad_phrase, headline_pool, related_pool

__all__ = ["CORPUS", "KINDS", "NOTICES", "WorldPage", "content_paragraphs", "load", "noise_lines", "own_lines", "world"]

#: ../shared/corpus beside the checkout (/work/wt/shared links to it)
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
KINDS = ("busy", "clock", "quiet")
NOTICES = ("Doors open at 19:30.", "Application deadline: 12 March 2027.", "We are open on Tuesday at 6 pm.",
           "Saturday: 10:00 - 16:00", "The new fares are effective from 1 February 2027.")
_FORBIDDEN = re.compile(r"<(script|style|noscript|template|textarea|title|select|svg)\b.*?</\1\s*>|<!--.*?-->",
                        re.IGNORECASE | re.DOTALL)
_BODY = re.compile(r"<body\b[^>]*>", re.IGNORECASE)
_PARAGRAPH = re.compile(r"<p\b[^>]*>(.*?)</p\s*>", re.IGNORECASE | re.DOTALL)
_HEADING = re.compile(r"<h([12])\b[^>]*>(.*?)</h\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
#: a page its declared charset misreads (private-use or escaped bytes): not a page a reader sees
_MISREAD = re.compile("[\ue000-\uf8ff\udc80-\udcff\U000f0000-\U0010ffff]")
_CHARSET = re.compile(r"""(<meta\b[^>]*?charset\s*=\s*["']?)([\w.:-]+)""", re.IGNORECASE)


@dataclass(frozen=True)
class WorldPage:
    """One page of the test web: a real page's HTML (decoded, its charset declared UTF-8) and
    how it is made busy. ``html`` is the page's own content; :func:`load` adds the furniture."""

    name: str
    html: str
    kind: str = "busy"
    seed: int = 0
    notice: str = NOTICES[0]
    #: minutes east of UTC the page's clock shows
    offset: int = 60
    #: loads per deploy (class names hashed per deploy)
    deploy_every: int = 3

    def with_html(self, html: str) -> WorldPage:
        return replace(self, html=html)

    def as_kind(self, kind: str) -> WorldPage:
        return replace(self, kind=kind)


def visible(fragment: str) -> str:
    """The text of an HTML fragment, as a line: tags dropped, entities read, spaces collapsed."""
    return " ".join(htmlmod.unescape(_TAG.sub(" ", fragment)).split())


def _forbidden(html: str) -> list[tuple[int, int]]:
    return [m.span() for m in _FORBIDDEN.finditer(html)]


def _outside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return all(end <= a or start >= b for a, b in spans)


@lru_cache(maxsize=512)
def _lines_of(html: str) -> frozenset[str]:
    from changewatch.core.comparisons import load_comparisons
    from changewatch.core.observation import Observation
    from changewatch.core.verdict import digest

    snapshot = digest(Observation("world", "https://world.invalid/", html=html), load_comparisons())
    return frozenset((snapshot.text or "").split("\n"))


@lru_cache(maxsize=256)
def content_paragraphs(html: str, minimum: int = 60) -> tuple[tuple[int, int, str], ...]:
    """The page's own paragraphs (start and end of the ``<p>`` element, its text) that the project
    reads as a line of their own: outside scripts and comments, inside the body, visible."""
    body = _BODY.search(html)
    start = body.end() if body else 0
    spans = _forbidden(html)
    lines = _lines_of(html)
    found = []
    for m in _PARAGRAPH.finditer(html, start):
        text = visible(m.group(1))
        if len(text) >= minimum and "<p" not in m.group(1).lower() and _outside(spans, *m.span()) and text in lines:
            found.append((m.start(), m.end(), text))
    return tuple(found)


@lru_cache(maxsize=256)
def first_heading(html: str) -> tuple[int, int, str] | None:
    """The first visible ``<h1>`` of the body read as a line (else ``<h2>``): start, end, its text."""
    body = _BODY.search(html)
    spans, lines = _forbidden(html), _lines_of(html)
    found = [(m.group(1), m.start(), m.end(), visible(m.group(2)))
             for m in _HEADING.finditer(html, body.end() if body else 0)]
    for _level, start, end, text in sorted(found, key=lambda h: h[0]):  # an h1 first
        # read as the page's line, and as its own ("<em>Ars</em>Technica" reads "ArsTechnica")
        if len(text) >= 8 and _outside(spans, start, end) and text in lines \
                and text in _lines_of(f"<html><body>{html[start:end]}</body></html>"):
            return start, end, text
    return None


# -- the furniture of one load -------------------------------------------------------------------


def _hashed(page: WorldPage, n: int, what: str) -> str:
    deploy = n // page.deploy_every
    return f"{what}-{random.Random(f'{page.seed}:{deploy}:{what}').getrandbits(28):07x}"


def _clock(page: WorldPage, fetched_at: datetime, rng: random.Random) -> str:
    local = fetched_at + timedelta(minutes=page.offset)
    return f"Updated {rng.randint(2, 59)} minutes ago · {local:%H:%M}"


def _trending(page: WorldPage, n: int, rng: random.Random) -> str:
    pool = headline_pool(page.seed)
    items = "".join(f'<li><a href="/story/{rng.getrandbits(24)}">{htmlmod.escape(h)}</a></li>'
                    for h in rng.sample(pool, 5))
    return (f'<aside class="{_hashed(page, n, "trend")}"><h3>Trending now</h3><ol>{items}</ol></aside>')


def _related(page: WorldPage, n: int, rng: random.Random) -> str:
    pool = related_pool(page.seed)
    base = random.Random(f"{page.seed}:related").sample(pool[:40], 5)
    for i in rng.sample(range(5), 2):
        base[i] = rng.choice(pool[40:])
    rng.shuffle(base)
    items = "".join(f'<li class="{_hashed(page, n, "rel")}"><a href="/r/{rng.getrandbits(20)}">{htmlmod.escape(t)}'
                    "</a></li>" for t in base)
    return f'<section class="{_hashed(page, n, "related")}"><h3>Related stories</h3><ul>{items}</ul></section>'


def _ad(page: WorldPage, n: int, rng: random.Random) -> str:
    return (f'<div class="{_hashed(page, n, "slot")}"><span>Sponsored</span>'
            f"<p>{htmlmod.escape(ad_phrase(rng))}</p></div>")


def _meta(page: WorldPage, n: int, fetched_at: datetime, rng: random.Random, busy: bool) -> str:
    lines = [f"<p>{htmlmod.escape(_clock(page, fetched_at, rng))}</p>"]
    if busy:
        lines.append(f"<p>{rng.randint(900, 40000):,} readers</p>")
        lines.append(f"<span>Comments ({rng.randint(3, 900)})</span>")
    return f'<div class="{_hashed(page, n, "meta")}">{"".join(lines)}</div>'


def _extras(page: WorldPage, n: int, rng: random.Random) -> str:
    teaser = rng.choice(("Subscribe today: your first month is free", "Join 40,000 readers who get our morning brief"))
    parts = [f'<div class="{_hashed(page, n, "teaser")}"><p>{teaser}</p></div>']
    if rng.random() < 0.4:
        parts.insert(0, f'<div class="{_hashed(page, n, "live")}"><strong>Live:</strong> '
                        f"{htmlmod.escape(rng.choice(headline_pool(page.seed + 7)))}</div>")
    if rng.random() < 0.5:
        parts.append(f'<div class="{_hashed(page, n, "news")}"><p>Sign up for our newsletter</p></div>')
    return "".join(parts)


def _invisible(page: WorldPage, n: int, rng: random.Random) -> str:
    return (f'<script nonce="{rng.getrandbits(64):016x}">window.__cfg={{"build":"{_hashed(page, n, "b")}"}}</script>'
            f'<img src="/pixel.gif?r={rng.getrandbits(40)}" alt="" width="1" height="1">')


def _with_notice(page: WorldPage) -> str:
    return with_notice(page.html, page.notice)


@lru_cache(maxsize=256)
def with_notice(html: str, notice: str) -> str:
    """*html* with *notice* a paragraph of its own after its first paragraph."""
    paragraphs = content_paragraphs(html)
    at = paragraphs[0][1] if paragraphs else _body_start(html)
    return html[:at] + f"<p>{htmlmod.escape(notice)}</p>" + html[at:]


def _body_start(html: str) -> int:
    body = _BODY.search(html)
    return body.end() if body else 0


def load(page: WorldPage, n: int, fetched_at: datetime) -> bytes:
    """The page as served on load number *n*, fetched at *fetched_at* (UTC): UTF-8 bytes."""
    rng = random.Random(f"{page.seed}:{n}:load")
    html = _with_notice(page)
    inserts: list[tuple[int, str]] = [(_body_start(html), _invisible(page, n, rng))]
    if page.kind != "quiet":
        paragraphs = content_paragraphs(html)
        heading = first_heading(html)
        top = heading[1] if heading else (paragraphs[0][0] if paragraphs else _body_start(html))
        inserts.append((top, _meta(page, n, fetched_at, rng, page.kind == "busy")))
        if page.kind == "busy" and paragraphs:
            inserts.append((paragraphs[min(1, len(paragraphs) - 1)][1], _trending(page, n, rng)))
            inserts.append((paragraphs[min(2, len(paragraphs) - 1)][1], _ad(page, n, rng)))
            inserts.append((paragraphs[-1][1], _extras(page, n, rng) + _related(page, n, rng)))
    for at, fragment in sorted(inserts, key=lambda i: i[0], reverse=True):
        html = html[:at] + fragment + html[at:]
    return html.encode("utf-8", "surrogateescape")


def own_lines(page: WorldPage) -> frozenset[str]:
    """The lines of the page's own text (its notice too, no furniture), as the project reads them."""
    return _lines_of(_with_notice(page))


def noise_lines(page: WorldPage, n: int, fetched_at: datetime) -> set[str]:
    """The lines of load *n* that are furniture (as a reader sees them), for checking that a diff
    shows none of them."""
    base = set(_lines_of(_with_notice(page)))
    return {line for line in _lines_of(load(page, n, fetched_at).decode("utf-8", "surrogateescape"))
            if line not in base}


# -- the corpus ----------------------------------------------------------------------------------


@cache
def _manifest() -> list[dict[str, str]]:
    with (CORPUS / "MANIFEST.tsv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _prepared(path: Path) -> str:
    html = decode_page(path.read_bytes())
    return _CHARSET.sub(lambda m: m.group(1) + "utf-8", html)


def world(count: int = 12, kind: str = "busy", *, seed: int = 0, corpus_kind: str = "article") -> list[WorldPage]:
    """*count* pages of the test web: corpus pages of *corpus_kind* (article, structured, listing)
    with at least six paragraphs of their own and a heading, in manifest order, made *kind*.
    Empty when the corpus is absent (callers skip with :data:`CORPUS`'s path as the reason)."""
    if not (CORPUS / "MANIFEST.tsv").is_file():
        return []
    pages: list[WorldPage] = []
    for i, row in enumerate(r for r in _manifest() if r["kind"] == corpus_kind):
        html = _prepared(CORPUS / row["file"])
        if _MISREAD.search(html) or len(content_paragraphs(html)) < 6 or first_heading(html) is None:
            continue
        pages.append(WorldPage(Path(row["file"]).stem, html, kind, seed * 1000 + i,
                               NOTICES[(seed + i) % len(NOTICES)], offset=(60, 0, -300, 540)[i % 4]))
        if len(pages) == count:
            break
    return pages
