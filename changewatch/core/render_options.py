"""What a watch asks of its render: ``render: true`` or ``render: {wait_for, timeout, block}``.
Pure: no Scrapy, no Playwright (the watchlist, the spiders and the middleware all read it)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BLOCKABLE", "DEFAULT_BLOCK", "RenderOptions", "parse_render"]

#: resource types a render may leave unloaded (Playwright's ``request.resource_type``): none of
#: them can change the page's text. Scripts, documents and data requests cannot be blocked.
BLOCKABLE = ("image", "font", "media", "stylesheet", "texttrack", "manifest")
DEFAULT_BLOCK = ("image", "font", "media")
_KEYS = ("wait_for", "timeout", "block")


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """*wait_for*: a CSS selector the page must show before it is read; *timeout*: seconds the
    whole render may take (None: ``CHANGEWATCH_RENDER_TIMEOUT``); *block*: resource types not
    loaded at all."""

    wait_for: str | None = None
    timeout: float | None = None
    block: tuple[str, ...] = DEFAULT_BLOCK

    def fingerprint(self) -> str:
        """How the page is rendered, in 12 hex digits: another way of rendering starts a new
        dependency set (a render it is, not a skip)."""
        text = repr((self.wait_for, self.timeout, tuple(sorted(self.block))))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _timeout(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"render.timeout must be a number of seconds, not {value!r}")
    if value <= 0:
        raise ValueError(f"render.timeout must be more than 0 seconds, not {value!r}")
    return float(value)


def _block(value: Any) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
        raise ValueError(f"render.block must be a list of resource types, not {value!r}")
    unknown = [i for i in items if i not in BLOCKABLE]
    if unknown:
        raise ValueError(f"render.block: {unknown[0]!r} is not a resource type that can be blocked "
                         f"(one of: {', '.join(BLOCKABLE)})")
    return tuple(dict.fromkeys(items))


def parse_render(value: Any) -> RenderOptions | None:
    """A watch's or a request's ``render`` as options; None: not rendered. Raises ValueError.

    >>> parse_render(True), parse_render(False)
    (RenderOptions(wait_for=None, timeout=None, block=('image', 'font', 'media')), None)
    >>> parse_render({"wait_for": "#price", "timeout": 20, "block": []})
    RenderOptions(wait_for='#price', timeout=20.0, block=())
    """
    if value is None or value is False:
        return None
    if value is True:
        return RenderOptions()
    if isinstance(value, RenderOptions):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(f"render must be true, false or a mapping of {', '.join(_KEYS)}, not {value!r}")
    unknown = [k for k in value if k not in _KEYS]
    if unknown:
        raise ValueError(f"render: unknown option {unknown[0]!r} (known: {', '.join(_KEYS)})")
    wait_for = value.get("wait_for")
    if wait_for is not None and (not isinstance(wait_for, str) or not wait_for.strip()):
        raise ValueError(f"render.wait_for must be a CSS selector, not {wait_for!r}")
    timeout = value.get("timeout")
    block = value.get("block")
    return RenderOptions(wait_for.strip() if wait_for else None, None if timeout is None else _timeout(timeout),
                         DEFAULT_BLOCK if block is None else _block(block))
