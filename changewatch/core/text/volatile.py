"""The volatile patterns: what changes between two fetches of an unchanged page (clock times,
dates, relative times, tokens, long ids), removed from its raw text to make its stable text.
Case and punctuation are kept as the page wrote them; the patterns match in any case. Other
languages' words are in :mod:`.volatile_languages`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from .volatile_languages import (
    DAY_FIRST,
    OTHER_LANGUAGES,
    OTHER_LANGUAGES_NEEDS,
    name_starts,
    words_before_numbers,
)

__all__ = ["TRIGGER", "lower_same_length", "stable_lines"]

_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# "sat", "sun", "wed", "mon" are words too: an abbreviation only goes in front of a date or time.
_WEEKDAY_ABBRS = r"(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)"
# Zone abbreviations spelled out: "[a-z]{2,4}t" also took "most", "next", "first", "best"…
_ZONES = r"(?:utc|gmt|[ecmpa][sd]t|bst|jst|kst|hkt|sgt|msk|cet|cest|eet|eest|aest|aedt|acst|acdt|awst|nzst|nzdt)"
_ORD = r"(?:st|nd|rd|th)?"


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
    # key=value secrets and session ids in visible text or echoed URLs
    r"\b(?:[a-z_]*token|csrf[a-z_]*|nonce|session(?:_?id)?|sid|jsessionid|phpsessid|sig|signature|auth)"
    r"\s*[=:]\s*[^\s&\"'<>]+",
    # UUIDs, long hex ids, base64-ish blobs (must contain a digit to spare long words)
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
    r"\b[0-9a-f]{16,}\b",
    # ISO 8601 timestamps and dates
    r"\b\d{4}-\d{2}-\d{2}(?:[t ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?\b",
    # numeric dates 30/11/2026, 11.30.26
    r"\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b",
    # written dates: "mon, 30 nov 2026", "november 30th, 2026", "30 november", "nov 30"
    rf"\b{_WEEKDAYS}\b\.?,?",
    rf"\b{_WEEKDAY_ABBRS}\b\.?,?(?=\s*(?:\d|{_MONTHS}\b))",
    rf"\b\d{{1,2}}{_ORD}\s+(?:of\s+)?{_MONTHS}\b\.?(?:,?\s+\d{{4}})?",
    rf"\b{_MONTHS}\b\.?\s+\d{{1,2}}{_ORD}\b(?:,?\s+\d{{4}})?",
    rf"\b{_MONTHS}\b\.?\s+\d{{4}}\b",
    # clock times with optional seconds, am/pm and zone
    rf"\b\d{{1,2}}:\d{{2}}(?::\d{{2}}(?:\.\d+)?)?(?:\s*(?:am|pm|a\.m\.|p\.m\.))?(?:\s*{_ZONES}\b)?",
    r"\b\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)(?!\w)",
    # relative times
    r"\b(?:\d+|an?|one|a few|several)\s+(?:sec(?:ond)?|min(?:ute)?|hour|hr|day|week|month|year)s?\s+ago\b",
    r"\b(?:just now|moments? ago|yesterday|today|tomorrow)\b",
    r"\b\d+\s*(?:s|m|h|d|w|mo|y)\s+ago\b",
)


def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(_digit_first(_without_leading_boundary(pattern.replace(r"[^\s", r"[^ \n").replace(r"\s", " "))))


_MONTH_STEMS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# What every match of each pattern above contains, one of (in order): a pattern none of whose
# words is in a page's candidate lines is not run over them (the tests check that each removed
# fragment contains its pattern's words). () for a pattern without such words.
_ENGLISH_NEEDS: list[tuple[str, ...] | frozenset[str]] = [
    ("token", "csrf", "nonce", "session", "sid", "sig", "auth"), ("-",), (), ("-",), ("/", ".", "-"), ("day",),
    ("mon", "tue", "wed", "thu", "fri", "sat", "sun"), _MONTH_STEMS, _MONTH_STEMS, _MONTH_STEMS,
    (":",), ("am", "pm", "a.m", "p.m"), ("ago",), ("now", "ago", "day", "tomorrow"), ("ago",),
]
# The patterns are written in lower case and run over a lower-cased copy of the text (a flag to
# ignore case made them three to ten times slower); what they match is removed from the text as
# written, at the same places (_remove_volatile). The other languages' weekdays and dates that
# start with the day go before the English written dates, which would otherwise take "November
# 2026" out of "30. November 2026"; the rest after them ("November 2026" is Dutch too, and would
# leave "30th" of "30th November 2026").
_ENGLISH = [_compiled(p) for p in _ENGLISH_VOLATILE]
_OTHER = [_compiled(p) for p in OTHER_LANGUAGES]
_VOLATILE = _ENGLISH[:5] + _OTHER[:DAY_FIRST] + _ENGLISH[5:] + _OTHER[DAY_FIRST:]
_NEEDS = (_ENGLISH_NEEDS[:5] + list(OTHER_LANGUAGES_NEEDS[:DAY_FIRST]) + _ENGLISH_NEEDS[5:]
          + list(OTHER_LANGUAGES_NEEDS[DAY_FIRST:]))


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
TRIGGER = re.compile(r"[\d=:]|day|now|ago|tomorrow|星期|曜日")


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


def _anchored(pattern: re.Pattern[str], starts: Iterable[int], folded: str) -> Iterator[re.Match[str]]:
    """The matches of *pattern* that start at one of *starts* (in order), none overlapping."""
    end = 0
    for start in starts:
        if start >= end and (match := pattern.match(folded, start)):
            end = match.end()
            yield match


def _remove_volatile(folded: str, text: str) -> str:
    """*text* without its volatile fragments, found in *folded* (its lower-case twin). A pattern
    whose words are a frozenset runs only when one of them is the word before a number."""
    before_numbers: set[str] | None = None
    for pattern, words in zip(_VOLATILE, _NEEDS, strict=True):
        matches: Iterable[re.Match[str]]
        if isinstance(words, frozenset):
            if before_numbers is None:
                before_numbers = words_before_numbers(folded)
            if words.isdisjoint(before_numbers):
                continue
            matches = _anchored(pattern, name_starts(folded, words), folded)
        elif words and not any(word in folded for word in words):
            continue
        else:
            matches = pattern.finditer(folded)
        folded, text = _remove(matches, _not_at_word_start, folded, text)
    folded, text = _remove(_BLOB.finditer(folded), _kept_blob, folded, text)
    return _SPACES.sub(" ", text)


def lower_same_length(text: str) -> str:
    """*text* in lower case, character for character ("İ" lowers to two characters: kept)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(low := c.lower()) != 1 else low for c in text)


def stable_lines(raw: str) -> list[str]:
    """Stable lines of *raw* (collapsed lines joined by newlines). The patterns run once each
    over the candidate lines joined together: a call per line and pattern costs more than the
    matching, and no pattern matches a newline, so lines map back one to one. A line that a
    fragment was removed from the end (or start) of loses the separators left there ("Updated:
    10:32" → "Updated"); everything else keeps its punctuation."""
    lines = raw.split("\n")
    folded_lines = lower_same_length(raw).split("\n")
    candidates = [i for i, line in enumerate(folded_lines) if TRIGGER.search(line)]
    if candidates:
        text = _remove_volatile("\n".join([folded_lines[i] for i in candidates]),
                                "\n".join([lines[i] for i in candidates]))
        for i, line in zip(candidates, text.split("\n"), strict=True):
            # A removed fragment leaves a space where it was (the raw lines have none at their
            # ends): only such an end loses its separators.
            if line.startswith(" "):
                line = line.lstrip(_LINE_TRIM)
            if line.endswith(" "):
                line = line.rstrip(_LINE_TRIM)
            lines[i] = line
    return [line for line in lines if line]

