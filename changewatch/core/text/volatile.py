"""The volatile fragments: what changes between two fetches of an unchanged page, removed from its
raw text to make its stable text. Case and punctuation are kept as the page wrote them; the
patterns match in any case. Other languages' words are in :mod:`.volatile_languages`.

A pattern is kept only where what it matches cannot be the page's content:

- **relative times** ("3 minutes ago", "5m ago", "just now", "moments ago", "vor 5 Minuten"): they
  change as the clock moves while the page stays the same, and what they say ("posted a while
  ago") is not what anyone watches a page for. "Today", "tomorrow", "yesterday" and "tonight"
  standing alone are words a reader reads ("Subscribe today", "closed tomorrow") and are kept;
  "today at 14:32" goes only with a time that tracks the fetch time (:mod:`.clock_times`);
- **secrets and session ids echoed with their key** as a URL writes them ("token=…", "sid=…"), or
  after a colon with a generated value, 8 characters or more mixing digits and letters ("csrf:
  8f14e45f…"): "Session: Morning", "Session: 2026-2027", "Auth: OAuth 2" are content and kept;
- **UUIDs, hexadecimal ids of 16 digits or more (letters among them: "Order 1234567890123456" is
  content), and base64-like blobs**: request ids, nonces,
  cache busters and build hashes that a page prints afresh on every render. Such an id is what
  a machine reads, never the words a page says (a page whose only change is a new commit hash
  in its text is not reported: a known loss).

Dates, weekdays and times of day are content: "Doors open at 19:30", "Deadline: 12 March 2027",
"Saturday: 10:00 - 16:00" are compared and shown as written. A time that tracks the fetch time is
a clock's, and is left out when a :class:`~.clock_times.Clock` says when the page was fetched
(:mod:`.clock_times`). No counter pattern is kept: "1,204 readers" is a number like a price,
which only the page's own variation (learned noise) can tell from content.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from .clock_times import Clock, clock_fragments
from .stated_ages import Age, stated_age
from .volatile_languages import OTHER_LANGUAGES, OTHER_LANGUAGES_NEEDS

__all__ = ["TRIGGER", "lower_same_length", "stable_lines"]

def _without_leading_boundary(pattern: str) -> str:
    # Not for the key=value pattern: "[a-z_]*token" without its boundary retries inside every word.
    return pattern if pattern.startswith(r"\b(?:[a-z_]*") else pattern.removeprefix(r"\b")


# Order matters: the longest, most specific patterns run first. They run over the whole text
# at once (lines joined by newlines, each line's whitespace already collapsed to single spaces),
# so "\s" in them is compiled as a plain space: a fragment never spans two lines.
#
# A leading "\b" stops Python's regex engine from skipping ahead to the pattern's possible first
# characters, which makes every scan several times slower: it is compiled without it and
# _not_at_word_start() checks the boundary for the few matches instead.
def _digit_first(pattern: str) -> str:
    # "\d" alone first lets the regex engine skip ahead to the next digit; "\d{1,2}" first does not
    # (a tenth to a third faster each, the same matches).
    for repeat, same in ((r"\d{1,2}", r"\d\d?"), (r"\d{4}", r"\d\d{3}"), (r"\d+", r"\d\d*")):
        if pattern.startswith(repeat):
            return same + pattern.removeprefix(repeat)
    return pattern


_ENGLISH_VOLATILE = (
    # key=value secrets and session ids in visible text or echoed URLs; "key: value" only with a
    # generated value (8 characters or more, digits and letters mixed: "Session: 2026-2027" is content)
    r"\b(?:[a-z_]*token|csrf[a-z_]*|nonce|session(?:_?id)?|sid|jsessionid|phpsessid|sig|signature|auth)"
    r"(?:\s*=\s*[^\s&\"'<>]+|\s*:\s*(?=[^\s&\"'<>]*\d)(?=[^\s&\"'<>]*[a-z])[^\s&\"'<>]{8,})",
    # UUIDs, long hex ids (base64-ish blobs: _BLOB)
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
    r"\b[0-9a-f]{16,}\b",
    # relative times
    r"\b(?:\d+|an?|one|a few|several)\s+(?:sec(?:ond)?|min(?:ute)?|hour|hr|day|week|month|year)s?\s+ago\b",
    r"\b(?:just now|moments? ago)\b",
    r"\b\d+\s*(?:s|m|h|d|w|mo|y)\s+ago\b",
)


def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(_digit_first(_without_leading_boundary(pattern.replace(r"[^\s", r"[^ \n").replace(r"\s", " "))))


# What every match of each pattern above contains, one of (in order): a pattern none of whose
# words is in a page's candidate lines is not run over them (the tests check that each removed
# fragment contains its pattern's words). () for a pattern without such words.
_ENGLISH_NEEDS: list[tuple[str, ...]] = [
    ("token", "csrf", "nonce", "session", "sid", "sig", "auth"), ("-",), (), ("ago",),
    ("now", "ago"), ("ago",),
]
# The patterns are written in lower case and run over a lower-cased copy of the text (a flag to
# ignore case made them three to ten times slower); what they match is removed from the text as
# written, at the same places (_remove_volatile).
_VOLATILE = [_compiled(p) for p in (*_ENGLISH_VOLATILE, *OTHER_LANGUAGES)]
_HEX = _VOLATILE[2]
_NEEDS = [*_ENGLISH_NEEDS, *OTHER_LANGUAGES_NEEDS]


# Base64-ish blobs: 24+ characters with a digit and a letter. Hyphenated prose such as
# "covid-19-vaccination-programme" qualifies too, so _kept_blob() keeps a candidate unless one of its
# hyphen/underscore-separated segments mixes letters and digits (as encoded ids do).
_BLOB = re.compile(r"(?<![\w/+=-])(?=[a-z0-9+/_-]*\d)(?=[a-z0-9+/_-]*[a-z])[a-z0-9+/_-]{24,}={0,2}(?![\w/+=-])")
_SEGMENTS = re.compile(r"[-_]")
_MIXED = re.compile(r"(?=.*\d)(?=.*[a-z])")


def _kept_blob(match: re.Match[str]) -> bool:
    return not any(len(seg) >= 6 and _MIXED.match(seg) for seg in _SEGMENTS.split(match.group(0)))


_SPACES = re.compile(" {2,}")
_LINE_TRIM = " ,.;:|-·•"


def _not_at_word_start(match: re.Match[str]) -> bool:
    """Whether a match does not start at a word boundary (what the patterns' dropped leading \\b
    would have refused): such a match is kept. Chinese and Japanese write without spaces, so a
    date or time right after an ideograph or kana starts a word ("更新2026-11-30")."""
    start = match.start()
    return bool(start) and _is_word(before := match.string[start - 1]) and not _WITHOUT_SPACES.match(before) \
        and _is_word(match.string[start])


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


# Kana, CJK ideographs, fullwidth forms
_WITHOUT_SPACES = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


# Every volatile pattern needs a digit, "=" or ":", or one of these words (checked by the tests):
# lines without any are left alone, which spares most of a page's text the scans.
TRIGGER = re.compile(r"[\d=:]|now|ago")


def _remove(matches: Iterable[re.Match[str]], kept: Callable[[re.Match[str]], bool], folded: str,
            text: str) -> tuple[str, str]:
    """Each of *matches* in *folded* that is not *kept*, replaced by a space in *folded* and at
    the same place in *text* (the same string in another case, of the same length)."""
    folded_parts: list[str] = []
    text_parts: list[str] = []
    at = 0
    for match in matches:
        if kept(match):
            continue
        start, end = match.span()
        folded_parts += (folded[at:start], " ")
        text_parts += (text[at:start], " ")
        at = end
    if not at:
        return folded, text
    folded_parts.append(folded[at:])
    text_parts.append(text[at:])
    return "".join(folded_parts), "".join(text_parts)


def _kept_hex(match: re.Match[str]) -> bool:
    """A run of hexadecimal digits that is a number (an order, a tracking number) is content."""
    return _not_at_word_start(match) or match.group(0).isdigit()


def _remove_volatile(folded: str, text: str) -> tuple[str, str]:
    """*folded* and *text* without their volatile fragments, found in *folded* (the lower-case twin
    of *text*)."""
    for pattern, words in zip(_VOLATILE, _NEEDS, strict=True):
        if words and not any(word in folded for word in words):
            continue
        kept = _kept_hex if pattern is _HEX else _not_at_word_start
        folded, text = _remove(pattern.finditer(folded), kept, folded, text)
    return _remove(_BLOB.finditer(folded), _kept_blob, folded, text)


def _remove_clock(folded: str, text: str, clock: Clock, ages: list[Age | None]) -> str:
    """*text* without the times in it that track *clock*'s fetch time (less the age each line
    stated: *ages*), found line by line in *folded* (its lower-case twin)."""
    folded_lines, lines = folded.split("\n"), text.split("\n")
    for i, line in enumerate(folded_lines):
        spans = list(clock_fragments(line, clock, ages[i]))
        if spans:
            parts: list[str] = []
            at = 0
            for start, end in sorted(spans):
                if start >= at:
                    parts += (lines[i][at:start], " ")
                    at = end
            lines[i] = "".join(parts) + lines[i][at:]
    return "\n".join(lines)


def lower_same_length(text: str) -> str:
    """*text* in lower case, character for character ("İ" lowers to two characters: kept)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(low := c.lower()) != 1 else low for c in text)


def stable_lines(raw: str, clock: Clock | None = None) -> list[str]:
    """Stable lines of *raw* (collapsed lines joined by newlines), fetched as *clock* says (None:
    not known, no time is a clock's). The patterns run once each
    over the candidate lines joined together: a call per line and pattern costs more than the
    matching, and no pattern matches a newline, so lines map back one to one. A line that a
    fragment was removed from the end (or start) of loses the separators left there ("Updated:
    10:32" → "Updated"); everything else keeps its punctuation."""
    lines = raw.split("\n")
    folded_lines = lower_same_length(raw).split("\n")
    candidates = [i for i, line in enumerate(folded_lines) if TRIGGER.search(line)]
    if candidates:
        clocked = clock is not None and clock.fetched is not None
        # the ages the lines state, read before the volatile patterns remove their words
        ages = [stated_age(folded_lines[i]) for i in candidates] if clocked else []
        folded, text = _remove_volatile("\n".join([folded_lines[i] for i in candidates]),
                                        "\n".join([lines[i] for i in candidates]))
        if clocked:
            assert clock is not None
            text = _remove_clock(folded, text, clock, ages)
        text = _SPACES.sub(" ", text)
        for i, line in zip(candidates, text.split("\n"), strict=True):
            # A removed fragment leaves a space where it was (the raw lines have none at their
            # ends): only such an end loses its separators.
            if line.startswith(" "):
                line = line.lstrip(_LINE_TRIM)
            if line.endswith(" "):
                line = line.rstrip(_LINE_TRIM)
            lines[i] = line
    return [line for line in lines if line]

