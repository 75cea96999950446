"""The lxml walker: a *region* selected with lxml and cssselect (whose selector semantics the
watchlists were written against), a page with ``include`` and ``ignore`` (:mod:`.options`), and a
page nested too deeply for lexbor, which libxml2 truncates and a streaming tokenizer reads instead.
lxml is imported on first use: a worker reading whole pages never needs it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from html.parser import HTMLParser as _Tokenizer
from typing import TYPE_CHECKING

from .decoding import decode_page_counted
from .options import TextOptions, include_lines, without_ignored_lines
from .visible import BLOCK_MARK, BLOCKS, DROPPED, VisibleText, counted, finish

if TYPE_CHECKING:
    from lxml import etree

__all__ = ["RegionError", "check_region", "lxml_visible_text", "options_visible_text", "region_xpath"]


class RegionError(ValueError):
    """The region is not a valid CSS selector."""


@lru_cache(maxsize=256)
def region_xpath(region: str) -> etree.XPath:
    from lxml import etree
    from parsel.csstranslator import HTMLTranslator

    try:
        return etree.XPath(HTMLTranslator().css_to_xpath(region))
    except Exception as exc:  # cssselect raises several unrelated types
        raise RegionError(f"invalid region selector {region!r}: {exc}") from exc


def check_region(region: str) -> None:
    """Raise :class:`RegionError` when *region* is not a valid CSS selector."""
    region_xpath(region)


# Characters that are never visible and that lxml refuses in text it is given (C0 controls, lone
# surrogates, U+FFFE/U+FFFF), and the block mark.
_INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ue000\ufffe\uffff]")


def _clean_markup(html: str) -> str:
    return _INVISIBLE.sub("", html.encode("utf-8", "replace").decode("utf-8"))


def _parse(html: str) -> tuple[etree._Element | None, bool]:
    """Parse *html*; the flag says libxml2 hit a resource limit (nesting deeper than it allows)
    and the tree is truncated."""
    from lxml import etree
    from lxml import html as lxml_html

    if not html.strip():
        return None, False
    parser = lxml_html.HTMLParser(remove_comments=True, remove_pis=True, huge_tree=True)
    try:
        tree = lxml_html.document_fromstring(html, parser=parser)
    except (etree.ParserError, ValueError):
        return None, False
    truncated = any(e.type_name == "ERR_RESOURCE_LIMIT" for e in parser.error_log)
    return tree, truncated


class _TokenizerText(_Tokenizer):
    """Streaming text extraction for documents nested too deeply for libxml2's tree."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self._parts: list[str] = []
        self._skip: list[str] = []

    def _flush(self) -> None:
        if self._parts:
            self.lines.append("".join(self._parts))
            self._parts.clear()

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag in DROPPED:
            self._skip.append(tag)
        elif tag in BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if self._skip and self._skip[-1] == tag:
            self._skip.pop()
        elif tag in BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self._parts.append(data)

    def parse_marked_section(self, i: int, report: bool = True) -> int:
        # html.parser raises AssertionError on "<![foo": browsers treat it as a bogus comment.
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:
            end = self.rawdata.find(">", i + 3)
            return -1 if end < 0 else end + 1


def _tokenizer_lines(html: str) -> list[str]:
    extractor = _TokenizerText()
    extractor.feed(html)
    extractor.close()
    extractor._flush()
    return extractor.lines


def _text_lines(roots: list[etree._Element]) -> list[str]:
    """Text of *roots* split at block elements. Iterative, so deep nesting cannot overflow."""
    from lxml import etree

    lines: list[str] = []
    parts: list[str] = []

    def flush() -> None:
        if parts:
            lines.append("".join(parts))
            parts.clear()

    for root in roots:
        skip_depth = 0
        for event, el in etree.iterwalk(root, events=("start", "end")):
            tag = el.tag if isinstance(el.tag, str) else ""
            tag = tag.rsplit("}", 1)[-1].lower()
            if event == "start":
                if skip_depth or tag in DROPPED or not tag:
                    skip_depth += 1
                    continue
                if tag in BLOCKS:
                    flush()
                if el.text:
                    parts.append(el.text)
            else:
                if skip_depth:
                    skip_depth -= 1
                elif tag in BLOCKS:
                    flush()
                if el.tail and el is not root and not skip_depth:
                    parts.append(el.tail)
        flush()
    return lines


def _marked_text_lines(roots: list[etree._Element]) -> list[str]:
    """Same lines as :func:`_text_lines`, with the work done in C: drop invisible elements, mark
    where each block starts and ends, serialise as text, split at the marks. Mutates the tree
    (each page's tree is parsed for this one use); regions are selected before anything is dropped,
    so positional selectors see the page as served."""
    from lxml import etree

    lines: list[str] = []
    for root in roots:
        etree.strip_elements(root, *DROPPED, with_tail=False)
        if not isinstance(root.tag, str) or root.tag in DROPPED:
            continue
        for el in root.iter(*BLOCKS):
            el.text = BLOCK_MARK + el.text if el.text else BLOCK_MARK
            if el is not root:
                el.tail = BLOCK_MARK + el.tail if el.tail else BLOCK_MARK
        lines.extend(etree.tostring(root, method="text", encoding=str, with_tail=False).split(BLOCK_MARK))
    return lines


def lxml_visible_text(html: str | bytes, region: str | None, sort_lines: bool,
                       encoding: str | None, like_scrapy: bool = False) -> VisibleText:
    from lxml import etree

    xpath = region_xpath(region) if region else None
    text, bad = decode_page_counted(html, encoding, like_scrapy=like_scrapy)
    markup = _clean_markup(text)
    tree, truncated = _parse(markup)
    if truncated and xpath is None:
        visible = finish(_tokenizer_lines(markup), sort_lines)
    elif tree is None:
        return VisibleText("", "", sort_lines=sort_lines)
    else:
        roots = [n for n in xpath(tree) if isinstance(n, etree._Element)] if xpath is not None else [tree]
        try:
            lines = _marked_text_lines(roots)
        except ValueError:  # text lxml refuses to take back: the slower walk never writes any
            lines = _text_lines(roots)
        visible = finish(lines, sort_lines)
    return counted(visible) if bad else visible


def options_visible_text(html: str | bytes, region: str | None, sort_lines: bool, encoding: str | None,
                          like_scrapy: bool, options: TextOptions, url: str) -> VisibleText:
    """Visible text with ``include`` and ``ignore`` applied: the lxml way, so that ignore selectors
    mean what ``region`` selectors mean. The region and the ignored elements are both selected
    from the page as served; the included parts are taken after the ignored elements are gone."""
    from lxml import etree

    xpath = region_xpath(region) if region else None
    decoded, bad = decode_page_counted(html, encoding, like_scrapy=like_scrapy)
    tree, _ = _parse(_clean_markup(decoded))
    if tree is None:
        return VisibleText("", "", sort_lines=sort_lines)
    roots = [n for n in xpath(tree) if isinstance(n, etree._Element)] if xpath is not None else [tree]
    options.drop_ignored(tree)
    roots = [r for r in roots if r is tree or tree in r.iterancestors()]  # a region inside an ignored part is gone
    before, after = include_lines(tree, roots, url, options.include) if options.include else ([], [])
    try:
        lines = _marked_text_lines(roots)
    except ValueError:  # text lxml refuses to take back: the slower walk never writes any
        lines = _text_lines(roots)
    text = finish(lines, sort_lines).raw
    if region and not text:
        # a region without text is an error (it matched nothing, or the page is a block page),
        # never a change to what include adds alone
        return VisibleText("", "", sort_lines=sort_lines)
    all_lines = [*before, *(text.split("\n") if text else ()), *after]
    visible = VisibleText("\n".join(without_ignored_lines(all_lines, options.patterns)), sort_lines=sort_lines)
    return counted(visible) if bad else visible

