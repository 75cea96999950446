"""What a text watch's ``include`` and ``ignore`` options add to and take from its text
(docs/watchlist.md, "What the text leaves out, and what to leave out").

``include`` adds what the visible text leaves out, as labelled lines: the ``<title>`` and the
meta description, ``og:title`` and ``og:description`` before the text (``[title] …``,
``[meta description] …``), the canonical link and the absolute targets of ``a[href]``,
``img[src]`` and ``form[action]`` after it (``[meta canonical] https://…``, ``[link] https://…``,
sorted and without duplicates: the links are a set). ``ignore`` removes elements by CSS selector
before the text is taken (as script and style are), and lines by regular expression after.

A URL line is compared as written (it is *verbatim*: the volatile patterns that take dates and
clock times out of text would take "1:80" out of "127.0.0.1:8080"), less the query parameters
that identify a visit or carry a token. Such a line is marked in the raw text with a leading NUL,
which no page's text can hold, so that the stable text stays a function of the raw text alone.

Only a watch that sets one of the options reads its page this way (lxml, cssselect: the
selectors mean what they mean in ``region``); every other page goes lexbor's faster way.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from ..urls import is_tracking_param, path_without_session

# Imported where a watch's include or ignore is read: a worker process that reads no such watch
# does not pay for them.
if TYPE_CHECKING:
    import regex
    from lxml import etree

__all__ = ["IGNORE_TEXT_BUDGET", "INCLUDE_PARTS", "VERBATIM", "TextOptions", "TextOptionsError", "check_pattern",
           "check_selector", "include_lines", "without_ignored_lines"]

#: what ``include`` may name
INCLUDE_PARTS = ("title", "meta", "links")
#: seconds the ``ignore.text`` patterns may take over one page, all lines and patterns together:
#: a pattern that backtracks catastrophically makes the page an ``ignore.text:`` error, not a hang
IGNORE_TEXT_BUDGET = 1.0
#: the mark of a raw line compared as written (see the module's docstring)
VERBATIM = "\x00"

# Query parameters that carry a token rather than say what the target is (besides the tracking and
# session parameters of canonical URLs), as the volatile key=value pattern of text names them: a
# signed or CSRF-protected link changes on every load. "_" is a cache buster (a clock reading).
_TOKEN_NAMES = frozenset({"nonce", "sig", "auth", "_"})
_TOKEN_PREFIXES = ("csrf", "session")
_TOKEN_SUFFIXES = ("token", "signature")
_META = {"description": "meta description", "og:title": "meta og:title", "og:description": "meta og:description"}
_SKIPPED_SCHEMES = ("javascript:", "data:", "about:")
_LINK_ATTRIBUTES = {"a": "href", "img": "src", "form": "action"}


class TextOptionsError(ValueError):
    """An ``include`` or ``ignore`` option cannot be used; the message starts with the option
    (``ignore.text: …``), as an ``error`` record's does."""


@lru_cache(maxsize=256)
def _selector_xpath(selector: str) -> etree.XPath:
    from cssselect import parse as parse_css

    from .lxml_walker import RegionError, region_xpath

    try:
        xpath = region_xpath(selector)
    except RegionError as exc:
        raise TextOptionsError(f"ignore.selectors: invalid CSS selector {selector!r}: {exc.__cause__}") from None
    if any(parsed.pseudo_element for parsed in parse_css(selector)):
        raise TextOptionsError(f"ignore.selectors: {selector!r} selects text or attributes (::text, ::attr), "
                               "not elements to remove")
    return xpath


@lru_cache(maxsize=256)
def _pattern(pattern: str) -> regex.Pattern[str]:
    import regex

    try:
        # VERSION0: the `re` module's syntax and meaning, as the docs promise
        compiled = regex.compile(pattern, regex.VERSION0)
    except RecursionError:
        raise TextOptionsError(f"ignore.text: regular expression nested too deeply: {pattern[:40]!r}…") from None
    except (regex.error, TypeError) as exc:
        raise TextOptionsError(f"ignore.text: invalid regular expression {pattern!r}: {exc}") from None
    if compiled.search("") is not None:
        raise TextOptionsError(f"ignore.text: {pattern!r} matches an empty line, so it would remove every line")
    return compiled


def check_selector(selector: str) -> None:
    """Raise :class:`TextOptionsError` when *selector* is not a CSS selector cssselect compiles."""
    _selector_xpath(selector)


def check_pattern(pattern: str) -> None:
    """Raise :class:`TextOptionsError` when *pattern* does not compile, or matches every line."""
    _pattern(pattern)


def _strings(value: Any, option: str) -> tuple[str, ...]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list | tuple) or not all(isinstance(v, str) and v for v in values):
        raise TextOptionsError(f"{option}: expected a string or a list of strings, not {value!r}"[:200])
    return tuple(values)


@dataclass(frozen=True, slots=True)
class TextOptions:
    """A text watch's ``include`` and ``ignore`` options, checked."""

    include: frozenset[str] = frozenset()
    selectors: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> TextOptions | None:
        """The options ``include`` and ``ignore`` of an observation's *options* (None: neither
        is set). Raises :class:`TextOptionsError` for a value the watchlist's model would refuse
        (a per-site spider's options are not validated before)."""
        include, ignore = options.get("include"), options.get("ignore")
        if not include and not ignore:
            return None
        parts = frozenset(_strings(include, "include")) if include else frozenset()
        if unknown := sorted(parts.difference(INCLUDE_PARTS)):
            raise TextOptionsError(f"include: unknown part {unknown[0]!r} (known: {', '.join(INCLUDE_PARTS)})")
        ignore = ignore or {}
        if not isinstance(ignore, Mapping) or not set(ignore) <= {"selectors", "text"}:
            raise TextOptionsError("ignore: expected a mapping with 'selectors' and/or 'text'")
        selectors = _strings(ignore.get("selectors") or (), "ignore.selectors")
        patterns = _strings(ignore.get("text") or (), "ignore.text")
        for selector in selectors:
            check_selector(selector)
        for pattern in patterns:
            check_pattern(pattern)
        return cls(parts, selectors, patterns) if parts or selectors or patterns else None

    def key(self, url: str) -> str:
        """What decides how these options read a page, for the body hash: the page's URL too
        when links are joined with it."""
        joined = url if self.include & {"meta", "links"} else ""
        return repr((sorted(self.include), self.selectors, self.patterns, joined))

    def drop_ignored(self, tree: etree._Element) -> None:
        """Remove the elements the ignore selectors match (their tails stay: they are the parent's)."""
        from lxml import etree

        doomed = [el for selector in self.selectors for el in _selector_xpath(selector)(tree)
                  if isinstance(el, etree._Element)]
        for el in doomed:
            parent = el.getparent()
            if parent is None:
                continue  # the document itself, or already removed with an ancestor
            if el.tail:
                previous = el.getprevious()
                if previous is not None:
                    previous.tail = (previous.tail or "") + el.tail
                else:
                    parent.text = (parent.text or "") + el.tail
            parent.remove(el)


def _collapsed(text: str | None) -> str:
    return " ".join((text or "").split())


def _without_token_params(url: str) -> str:
    """*url* as written, less a path's session id and the query parameters that identify a visit
    or carry a token (utm_*, gclid, session ids, *token, csrf*, nonce, sig…)."""
    if "?" not in url and ";" not in url:
        return url  # most links: nothing to take out, nothing to split
    parts = urlsplit(url)
    kept = []
    for pair in parts.query.split("&") if parts.query else ():
        name = unquote(pair.split("=", 1)[0]).lower()
        if not (is_tracking_param(name) or name in _TOKEN_NAMES or name.startswith(_TOKEN_PREFIXES)
                or name.endswith(_TOKEN_SUFFIXES)):
            kept.append(pair)
    return urlunsplit((parts.scheme, parts.netloc, path_without_session(parts.path), "&".join(kept), ""))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _absolute(base: str, target: str, origin: str) -> str | None:
    """*target* (an attribute's value) joined with *base*, or None when it points nowhere else:
    empty, a fragment of this page, ``javascript:``, ``data:``."""
    target = target.strip().replace("\t", "").replace("\n", "").replace("\r", "")
    if not target or target.startswith("#") or target.lower().startswith(_SKIPPED_SCHEMES):
        return None
    try:
        # an absolute target is taken as written (joining re-splits it: half the time of a page's links)
        if target.lower().startswith(("http://", "https://")):
            joined = target
        elif target.startswith("/") and not target.startswith("//") and "/." not in target:
            joined = origin + target  # a path from the root: what urljoin would make of it, at a tenth of the cost
        else:
            joined = urljoin(base, target)
        # the fragment is a place in the target, not another target
        return _without_token_params(joined.partition("#")[0])
    except ValueError:  # "http://[oops": kept as written
        return target


def include_lines(tree: etree._Element, roots: Iterable[etree._Element], url: str,
                  include: frozenset[str]) -> tuple[list[str], list[str]]:
    """The lines *include* adds: those that go before the text (title, meta) and those that go
    after it, verbatim (the canonical link and *roots*' link targets, sorted, no duplicates)."""
    base_href = next((b.get("href") for b in tree.iter("base") if b.get("href")), None)
    base = urljoin(url, base_href.strip()) if base_href else url
    before: list[str] = []
    after: list[str] = []
    if "title" in include:
        title = next((t for t in tree.iter("title") if not any(a.tag == "svg" for a in t.iterancestors())), None)
        if title is not None and (text := _collapsed(title.text_content())):
            before.append(f"[title] {text}")
    if "meta" in include:
        found: dict[str, str] = {}
        for meta in tree.iter("meta"):
            name = (meta.get("name") or meta.get("property") or "").strip().lower()
            if name in _META and name not in found and (content := _collapsed(meta.get("content"))):
                found[name] = content
        before.extend(f"[{label}] {found[name]}" for name, label in _META.items() if name in found)
        canonical = next((link.get("href") for link in tree.iter("link")
                          if "canonical" in (link.get("rel") or "").lower().split() and link.get("href")), None)
        if canonical and (target := _absolute(base, canonical, _origin(base))):
            after.append(f"{VERBATIM}[meta canonical] {target}")
    if "links" in include:
        values = {value for root in roots for el in root.iter(*_LINK_ATTRIBUTES)
                  if (value := el.get(_LINK_ATTRIBUTES[str(el.tag)]))}
        origin = _origin(base)
        targets = {target for value in values if (target := _absolute(base, value, origin))}
        after.extend(f"{VERBATIM}[link] {target}" for target in sorted(targets))
    return before, after


def without_ignored_lines(lines: list[str], patterns: tuple[str, ...]) -> list[str]:
    """*lines* less those any of *patterns* finds something in (``re.search``, the line as it is
    shown: without the verbatim mark), within :data:`IGNORE_TEXT_BUDGET` seconds for them all."""
    if not patterns:
        return lines
    compiled = [_pattern(p) for p in patterns]
    deadline = time.monotonic() + IGNORE_TEXT_BUDGET
    kept = []
    for line in lines:
        shown = line.removeprefix(VERBATIM)
        for pattern in compiled:
            try:
                found = pattern.search(shown, timeout=max(deadline - time.monotonic(), 0.001))
            except TimeoutError:
                raise TextOptionsError(
                    f"ignore.text: {pattern.pattern!r} took more than {IGNORE_TEXT_BUDGET:g} s over this page's "
                    "lines (a pattern that backtracks catastrophically, such as nested quantifiers)") from None
            if found:
                break
        else:
            kept.append(line)
    return kept
