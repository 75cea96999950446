"""CSS and XPath selectors as a watchlist or a spider gives them: checked once, before any page
is read (:func:`check_selector`), and run on a parsed page (:func:`select`)."""

from __future__ import annotations

from lxml import etree
from parsel import Selector, SelectorList
from parsel.csstranslator import HTMLTranslator

from .reprs import short_repr

__all__ = ["SelectorError", "check_selector", "is_xpath", "select"]

_PROBE = '<html><head><title>t</title></head><body><main><p class="a">x<a href="/y">y</a></p></main></body></html>'


class SelectorError(ValueError):
    """A CSS or XPath selector does not compile."""


def is_xpath(query: str) -> bool:
    """CSS, or XPath when the query starts with ``/`` or ``(``."""
    return query.lstrip().startswith(("/", "("))


def check_selector(query: str) -> None:
    """Raise :class:`SelectorError` (and nothing else) when *query* is not a valid CSS or XPath
    selector. XPath is also evaluated once on a small page: undefined variables or namespace
    prefixes and type errors (``//p | 1``) compile, and would only fail on the first real page."""
    if not isinstance(query, str) or not query.strip():
        raise SelectorError(f"selector must be a non-empty string, not {short_repr(query)}")
    try:
        if is_xpath(query):
            etree.XPath(query)
        else:
            HTMLTranslator().css_to_xpath(query)
        select(Selector(text=_PROBE, type="html"), query)
    except Exception as exc:  # cssselect, lxml and parsel raise several unrelated types
        raise SelectorError(f"invalid {'XPath' if is_xpath(query) else 'CSS'} selector {short_repr(query)}: "
                            f"{exc}") from exc


def select(sel: Selector | SelectorList[Selector], query: str) -> SelectorList[Selector]:
    """Matches of *query* (checked by :func:`check_selector`: then it does not raise)."""
    return sel.xpath(query) if is_xpath(query) else sel.css(query)
