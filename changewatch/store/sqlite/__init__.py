"""The SQLite store (``sqlite:///path``): one file, WAL, one writer at a time (docs/architecture.md,
"The store protocol"). The store and its options are public; the modules beside them are its parts."""

from .store import OPTIONS, SQLiteStore

__all__ = ["OPTIONS", "SQLiteStore"]
