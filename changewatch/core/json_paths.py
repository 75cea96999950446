"""Paths into a JSON document, and its canonical text.

A path is dotted (``product.price``, ``items.0.id``: list indices as numbers) or a JSON Pointer
(RFC 6901, starting with ``/``: ``/items/0/id``, ``/a~1b`` for the key ``a/b``). A path that
matches nothing is :data:`MISSING`, never None: JSON's own ``null`` is a value.
"""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["MISSING", "canonical_json", "check_path", "path_steps", "resolve", "scalar"]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


#: what :func:`resolve` returns for a path that matches nothing
MISSING: Final = _Missing()


def _pointer_step(token: str) -> str:
    if "~" in token.replace("~0", "").replace("~1", ""):
        raise ValueError(f"'~' must be followed by 0 or 1 in a JSON Pointer, not {token!r}")
    return token.replace("~1", "/").replace("~0", "~")


def path_steps(path: str) -> tuple[str, ...]:
    """The keys (or indices, as text) along *path*. Raises ValueError for an empty dotted step
    or a bad escape in a pointer.

    >>> path_steps("items.0.id"), path_steps("/a~1b/~0c")
    (('items', '0', 'id'), ('a/b', '~c'))
    """
    if path.startswith("/"):
        return tuple(_pointer_step(token) for token in path[1:].split("/"))
    steps = tuple(path.split("."))
    if not path or any(not step for step in steps):
        raise ValueError(f"a dotted path needs a name between its dots, not {path!r} "
                         "(a JSON Pointer starting with / names any key)")
    return steps


def check_path(path: str) -> str:
    """*path*, when it is a valid path (ValueError otherwise)."""
    path_steps(path)
    return path


def resolve(data: Any, path: str) -> Any:
    """The value at *path* in *data*, or :data:`MISSING`.

    >>> resolve({"items": [{"id": 7}]}, "items.0.id"), resolve({"a/b": 1}, "/a~1b"), resolve([], "0")
    (7, 1, MISSING)
    """
    node = data
    for step in path_steps(path):
        if isinstance(node, dict):
            if step not in node:
                return MISSING
            node = node[step]
        elif isinstance(node, list):
            if not step.isdigit() or (step != "0" and step.startswith("0")) or int(step) >= len(node):
                return MISSING
            node = node[int(step)]
        else:
            return MISSING
    return node


def scalar(value: Any) -> Any:
    """A value as a field holds it: scalars as they are, objects and arrays as canonical,
    compact JSON text (so that two equal objects are equal fields)."""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return value


def canonical_json(data: Any) -> str:
    """*data* as text that only its content decides: keys sorted, one key or item a line, indented,
    non-ASCII characters as they are. Two documents that differ in key order or spacing only
    give the same text; a changed value changes the line of its key.

    >>> print(canonical_json({"b": 1, "a": {"d": [1, 2], "c": "é"}}))
    {
      "a": {
        "c": "é",
        "d": [
          1,
          2
        ]
      },
      "b": 1
    }
    """
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)
