"""What a field change looks like in a record, for the tests that expect one."""

from __future__ import annotations

from typing import Any

_SHOWN = object()


def field(old: Any, new: Any, old_normalised: Any = _SHOWN, new_normalised: Any = _SHOWN) -> dict[str, Any]:
    """A field change: the values as the page showed them and the normalised ones compared
    (the same as shown unless given)."""
    return {"old": old, "new": new,
            "old_normalised": old if old_normalised is _SHOWN else old_normalised,
            "new_normalised": new if new_normalised is _SHOWN else new_normalised}
