"""Store URIs: schemes by dotted path imported lazily, options from settings overridden by the
URI's query, and what a bad one says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from changewatch.store import BUILTIN_STORE_SCHEMES, StoreError, StoreOptions, open_store, store_from_uri
from changewatch.store.sqlite import SQLiteStore


class RenamedSQLite:
    """A user's backend, registered by dotted path: SQLite under another scheme."""

    @classmethod
    def from_uri(cls, uri: str, options: StoreOptions) -> SQLiteStore:
        return SQLiteStore.from_uri("sqlite:" + uri.split(":", 1)[1], options)


class NoFactory:
    pass


class NotAStore:
    @classmethod
    def from_uri(cls, uri: str, options: StoreOptions) -> object:
        return object()


def _sqlite(uri: str, options: dict[str, Any] | None = None) -> SQLiteStore:
    store = store_from_uri(uri, options=options)
    assert isinstance(store, SQLiteStore)
    return store


def test_options_from_the_uri_override_the_settings(tmp_path: Path) -> None:
    settings = {"synchronous": "OFF", "timeout": 3}
    default = _sqlite(f"sqlite:///{tmp_path}/a.db")
    assert (default.synchronous, default.timeout) == ("NORMAL", 30.0)
    from_settings = _sqlite(f"sqlite:///{tmp_path}/a.db", settings)
    assert (from_settings.synchronous, from_settings.timeout) == ("OFF", 3.0)
    overridden = _sqlite(f"sqlite:///{tmp_path}/a.db?synchronous=full&timeout=10", settings)
    assert (overridden.synchronous, overridden.timeout, overridden.path) == ("FULL", 10.0, tmp_path / "a.db")
    assert not overridden.fast_commits and from_settings.fast_commits


def test_settings_for_other_backends_are_ignored(tmp_path: Path) -> None:
    store = _sqlite(f"sqlite:///{tmp_path}/a.db", {"sslmode": "require", "timeout": "2.5"})
    assert store.timeout == 2.5


@pytest.mark.parametrize(("query", "named"), [
    ("bogus=1", r"unknown option bogus='1'; accepted: synchronous \(OFF, NORMAL, FULL or EXTRA\); timeout"),
    ("synchronous=FAST", r"synchronous='FAST' \(from the URI\) is not accepted: expected OFF, NORMAL, FULL or EXTRA"),
    ("timeout=-1", r"timeout='-1' \(from the URI\) is not accepted: expected a number of seconds, 0 or more"),
    ("timeout=soon", r"timeout='soon'"),
    ("timeout=1&timeout=2", r"gives option 'timeout' more than once"),
    ("timeout", r"cannot read its options 'timeout'"),
])
def test_a_bad_uri_option_is_named(tmp_path: Path, query: str, named: str) -> None:
    with pytest.raises(StoreError, match=named):
        store_from_uri(f"sqlite:///{tmp_path}/a.db?{query}")


def test_a_bad_option_from_the_settings_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"synchronous='sometimes' \(from CHANGEWATCH_STORE_SYNCHRONOUS\)"):
        store_from_uri(f"sqlite:///{tmp_path}/a.db", options={"synchronous": "sometimes"})


def test_relative_absolute_and_memory_uris(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert _sqlite("sqlite:///relative.db").path == Path("relative.db")
    assert _sqlite(f"sqlite:///{tmp_path}/abs.db").path == tmp_path / "abs.db"  # sqlite:////tmp/...
    assert _sqlite("sqlite:///:memory:?synchronous=OFF").path == Path(":memory:")
    open_store("sqlite:///relative.db?timeout=1").close()
    assert (tmp_path / "relative.db").exists()


@pytest.mark.parametrize("uri", ["sqlite://", "sqlite:///", "sqlite:///?timeout=1", "sqlite://host/x.db"])
def test_bad_sqlite_uris(uri: str) -> None:
    with pytest.raises(StoreError, match="bad SQLite store URI"):
        store_from_uri(uri)


@pytest.mark.parametrize("uri", ["mysql://x/y", "state.db", "mysql://me:s3cret@db.example/watch"])
def test_an_unknown_scheme_lists_the_known_ones(uri: str) -> None:
    with pytest.raises(StoreError, match=r"unknown store URI scheme .*known schemes: postgres:, postgresql:, "
                                         r"sqlite:") as caught:
        store_from_uri(uri)
    assert "s3cret" not in str(caught.value)


def test_schemes_are_merged_over_the_builtin_ones(tmp_path: Path) -> None:
    schemes = {"renamed": f"{__name__}.RenamedSQLite"}
    store = store_from_uri(f"renamed:///{tmp_path}/r.db?timeout=4", schemes)
    assert isinstance(store, SQLiteStore) and store.timeout == 4.0
    assert isinstance(store_from_uri(f"sqlite:///{tmp_path}/s.db", schemes), SQLiteStore)  # still there
    with pytest.raises(StoreError, match="unknown store URI scheme"):
        store_from_uri(f"sqlite:///{tmp_path}/s.db", {"sqlite": None})  # None removes one
    assert BUILTIN_STORE_SCHEMES == {"sqlite": "changewatch.store.sqlite.SQLiteStore",
                                     "postgresql": "changewatch.store.postgresql.PostgreSQLStore",
                                     "postgres": "changewatch.store.postgresql.PostgreSQLStore"}


@pytest.mark.parametrize(("path", "named"), [
    ("changewatch.store.nowhere.Store", r"store scheme x: cannot import 'changewatch.store.nowhere.Store'"),
    ("changewatch.store.sqlite.NoSuchStore", r"cannot import 'changewatch.store.sqlite.NoSuchStore'"),
    (f"{__name__}.NoFactory", r"NoFactory has no from_uri\(uri, options\)"),
    (f"{__name__}.NotAStore", r"NotAStore \(scheme x:\) does not implement the store protocol: no open, close"),
])
def test_a_scheme_whose_class_cannot_be_used_is_named(path: str, named: str) -> None:
    with pytest.raises(StoreError, match=named):
        store_from_uri("x:///a.db", {"x": path})


def test_importing_the_store_package_imports_no_backend() -> None:
    code = ("import sys, changewatch.store as s; s.store_from_uri; "
            "print('changewatch.store.sqlite' in sys.modules, 'sqlite3' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
    code = ("import sys, changewatch.store as s; s.store_from_uri('sqlite:///:memory:'); "
            "print('changewatch.store.sqlite' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True"]
    # a PostgreSQL store imports its driver when it opens, not when it is built
    code = ("import sys, changewatch.store as s; s.store_from_uri('sqlite:///:memory:'); "
            "s.store_from_uri('postgresql://u@h/d'); print('psycopg' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False"]


def test_a_password_in_the_query_is_a_connection_parameter_never_shown() -> None:
    from changewatch.store.postgresql import PostgreSQLStore

    store = store_from_uri("postgresql://watcher@db.example/watch?password=s3cret&sslmode=require")
    assert isinstance(store, PostgreSQLStore)
    assert store.connect["password"] == "s3cret"
    assert "s3cret" not in repr(store) and "s3cret" not in store.name
    for query in ("password=s3cret&schema=Bad-Name", "password=s3cret&bogus=1", "password=s3cret&pool_size=0"):
        with pytest.raises(StoreError) as caught:
            store_from_uri(f"postgresql://watcher@db.example/watch?{query}")
        assert "s3cret" not in str(caught.value), str(caught.value)


@pytest.mark.parametrize(("uri", "shown"), [
    ("sqlite:///rel/path/state.db", "sqlite:///rel/path/state.db"),
    ("sqlite:///.changewatch/state.db", "sqlite:///.changewatch/state.db"),
    ("sqlite:////abs/path/state.db?synchronous=FULL", "sqlite:////abs/path/state.db?synchronous=FULL"),
    ("sqlite:///:memory:", "sqlite:///:memory:"),
    ("sqlite:////home/a:x@b/state.db", "sqlite:////home/a:x@b/state.db"),  # an @ in a path is no user part
    ("postgresql://user:pass@host/db?x=y", "postgresql://user:***@host/db?x=y"),
    ("postgresql://user@host:5432/db", "postgresql://user@host:5432/db"),
    ("postgresql://:pass@host/db", "postgresql://:***@host/db"),
    ("postgresql://user:p@ss:w@host/db?sslmode=require&password=q&sslpassword=r",
     "postgresql://user:***@host/db?sslmode=require&password=***&sslpassword=***"),
    ("postgresql://user:pa/ss@host/db", "postgresql://user:***@host/db"),  # a "/" not percent-encoded
    ("postgresql:///db?host=/var/run/postgresql", "postgresql:///db?host=/var/run/postgresql"),
    ("POSTGRESQL://Me:Secret@Host/DB#x", "POSTGRESQL://Me:***@Host/DB#x"),
])
def test_redaction_keeps_the_uri_as_typed_but_its_password(uri: str, shown: str) -> None:
    from changewatch.store.options import redact

    assert redact(uri) == shown
