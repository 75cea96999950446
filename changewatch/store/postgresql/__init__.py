"""The PostgreSQL store (``postgresql://user@host/db``), shared by crawls on several machines
(docs/settings.md, "The PostgreSQL store"). The store and its options are public; the modules
beside them are its parts."""

from .store import OPTIONS, PostgreSQLStore

__all__ = ["OPTIONS", "PostgreSQLStore"]
