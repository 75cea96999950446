"""What both built-in backends share for running for months (:class:`~.base.MaintainedStore`):
keys' due states, listed marks, evidence written with an observation and read for a change, and the
purges. Written once, statements and steps, with each backend's placeholder, ``greatest`` and table
names: both select and delete exactly the same rows. Each step runs on a cursor (SQLite: the
connection) inside a transaction the backend opens.

Purges never scan what they keep: a version is marked ``superseded`` when the next version of its
key is written (in that commit), and retention looks only at superseded versions; a body is
deleted with the last version that referred to it, in the same transaction."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.schedule import DueEntry, epoch
from .changelog import entry
from .records import ChangeEvidence, Evidence, KeptVersion, PageSetChange

__all__ = ["BODY_WINDOW", "Dialect", "DueTable"]

#: seconds: a body no version refers to is deleted only if it was last stored this long ago: a
#: commit in flight that refers to it again (and so moved its ``stored_at`` on) never loses it
BODY_WINDOW = 3600.0

#: how far (a share) a stored interval may lie outside a bound before it was set under another bound
_BOUND_SLACK = 1e-9

#: the columns of a kept version with its body (``e``: evidence, ``b``: evidence_bodies)
_VERSION_COLUMNS = ("e.id, e.spider, e.key, e.change_id, e.observed_at, e.url, e.status, e.headers, e.digest, "
                    "b.compression, b.body, b.size")


class DueTable(Mapping[str, DueEntry]):
    """Keys' due states as read (one query), each turned into a :class:`DueEntry` only when asked for."""

    def __init__(self, rows: Sequence[Sequence[Any]]):
        self._rows = {row[0]: row for row in rows}

    def __getitem__(self, key: str) -> DueEntry:
        return self.entry(self._rows[key][1:])

    @staticmethod
    def entry(row: Sequence[Any]) -> DueEntry:
        """A due entry of (last_seen, due_at, due_interval, listed_at) as stored."""
        last_seen, due_at, interval, listed_at = tuple(row)
        return DueEntry(epoch(last_seen), epoch(due_at), None if interval is None else float(interval),
                        epoch(listed_at))

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one backend spells what the statements need, and the steps written with them."""

    mark: str  # the driver's placeholder
    greatest: str  # the larger of two values (SQLite: max, PostgreSQL: GREATEST)
    prefix: str = ""  # before each table's name (a PostgreSQL schema)
    any_array: bool = False  # ``= ANY(array)`` (PostgreSQL) instead of ``IN (…)``
    #: a stored time ``{time}`` moved by ``{seconds}`` (a number), written as the store writes times
    shifted: str = "strftime('%Y-%m-%dT%H:%M:%SZ', {time}, printf('%.3f seconds', {seconds}))"
    #: after a text column: ordered and compared by code point, as Python orders str (SQLite's
    #: BINARY is UTF-8 byte order, which is code point order)
    by_code_point: str = ""

    def among(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        if self.any_array:
            return f"{column} = ANY({self.mark})", [list(values)]
        return f"{column} IN ({', '.join([self.mark] * len(values))})", list(values)

    def table(self, name: str) -> str:
        return f"{self.prefix}{name}"

    # -- the schedule ------------------------------------------------------------------------------

    def due_entries(self, cur: Any, spider: str, keys: Sequence[str]) -> DueTable:
        if not keys:
            return DueTable(())
        among, args = self.among("key", keys)
        return DueTable(cur.execute(f"SELECT key, last_seen, due_at, due_interval, listed_at FROM "
                                    f"{self.table('observations')} WHERE spider = {self.mark} AND {among}",
                                    (spider, *args)).fetchall())

    def bound_schedule(self, cur: Any, spider: str, minimum: float, maximum: float) -> int:
        """Each due interval of *spider* outside *minimum*..*maximum* set to the bound it crossed,
        and its due time moved with it (from the observation that set it): one statement, however
        many keys. A key within them is not written, so a start whose bounds did not change writes
        nothing. Returns the keys moved."""
        m = self.mark
        # intervals at a bound are floats computed from it: a rounding error is not a bound change
        low, high = minimum * (1 - _BOUND_SLACK), maximum * (1 + _BOUND_SLACK)
        bounded = f"(CASE WHEN due_interval < {m} THEN {m} ELSE {m} END)"
        due = self.shifted.format(time="due_at", seconds=f"{bounded} - due_interval")
        done = cur.execute(f"UPDATE {self.table('observations')} SET due_at = {due}, due_interval = {bounded} "
                           f"WHERE spider = {m} AND due_at IS NOT NULL AND (due_interval < {m} OR due_interval > {m})",
                           (low, minimum, maximum, low, minimum, maximum, spider, low, high))
        return int(done.rowcount)

    def mark_listed(self, cur: Any, spider: str, keys: Sequence[str], at: str) -> None:
        among, args = self.among("key", keys)
        cur.execute(f"UPDATE {self.table('observations')} SET listed_at = {self.mark} WHERE spider = {self.mark} "
                    f"AND {among}", (at, spider, *args))

    # -- evidence ---------------------------------------------------------------------------------

    def write_evidence(self, cur: Any, spider: str, key: str, change_id: int | None, observed_at: str,
                       evidence: Evidence, stored_at: str) -> None:
        """In an observation's transaction: its body (once per digest) and the version, which
        supersedes the key's previous ones."""
        m, body = self.mark, evidence.body
        # A body already kept is kept once; its stored_at moves on (which a purge checks again: in
        # PostgreSQL it waits for this row's lock and then sees it fresh), so a purge never deletes
        # a body this commit refers to.
        cur.execute(f"INSERT INTO {self.table('evidence_bodies')} (spider, digest, compression, size, stored_at, "
                    f"body) VALUES ({m}, {m}, {m}, {m}, {m}, {m}) ON CONFLICT (spider, digest) DO UPDATE SET "
                    "stored_at = excluded.stored_at",
                    (spider, body.digest, body.compression, body.size, stored_at, body.data))
        cur.execute(f"UPDATE {self.table('evidence')} SET superseded = 1 WHERE spider = {m} AND key = {m} "
                    "AND superseded = 0", (spider, key))
        cur.execute(f"INSERT INTO {self.table('evidence')} (spider, key, change_id, observed_at, url, status, "
                    f"headers, digest) VALUES ({m}, {m}, {m}, {m}, {m}, {m}, {m}, {m})",
                    (spider, key, change_id, observed_at, evidence.url, evidence.status, evidence.headers,
                     body.digest))

    def _version(self, cur: Any, where: str, args: tuple[Any, ...]) -> KeptVersion | None:
        row = cur.execute(f"SELECT {_VERSION_COLUMNS} FROM {self.table('evidence')} e "
                          f"LEFT JOIN {self.table('evidence_bodies')} b ON b.spider = e.spider "
                          f"AND b.digest = e.digest WHERE {where} ORDER BY e.id DESC LIMIT 1", args).fetchone()
        if row is None:
            return None
        id_, spider, key, change_id, observed_at, url, status, headers, digest, compression, body, size = tuple(row)
        return KeptVersion(id_, spider, key, change_id, observed_at, url, status, headers, digest, compression,
                           None if body is None else bytes(body), size)

    def change_evidence(self, cur: Any, change_id: int) -> ChangeEvidence | None:
        m = self.mark
        row = cur.execute(f"SELECT id, spider, key, kind, observed_at, record, delivered_at FROM "
                          f"{self.table('changes')} WHERE id = {m}", (change_id,)).fetchone()
        if row is None:
            return None
        change = entry(row)
        after = self._version(cur, f"e.change_id = {m}", (change_id,))
        # the kept version before it, of the same key (by id; by time when its own is not kept)
        before = (self._version(cur, f"e.spider = {m} AND e.key = {m} AND e.id < {m}", (change.spider, change.key,
                                                                                        after.id))
                  if after is not None else
                  self._version(cur, f"e.spider = {m} AND e.key = {m} AND e.observed_at < {m}",
                                (change.spider, change.key, change.observed_at)))
        return ChangeEvidence(change, before, after)

    # -- purges: candidates (a LIMIT), then deletes that check the condition again -------------------

    def _unseen(self) -> str:
        return f"{self.greatest}(coalesce(last_seen, ''), coalesce(listed_at, '')) < {self.mark}"

    # -- site watches' page sets ------------------------------------------------------------------

    def write_pages(self, cur: Any, spider: str, site: str, change: PageSetChange) -> None:
        """The rows of *site*'s page set that *change* adds and removes (in the caller's transaction)."""
        m, table = self.mark, self.table("site_pages")
        if change.added:
            cur.executemany(f"INSERT INTO {table} (spider, site, url) VALUES ({m}, {m}, {m}) ON CONFLICT DO NOTHING",
                            [(spider, site, url) for url in change.added])
        if change.removed:
            cur.executemany(f"DELETE FROM {table} WHERE spider = {m} AND site = {m} AND url = {m}",
                            [(spider, site, url) for url in change.removed])
        if change.spec is not None:
            cur.execute(f"INSERT INTO {self.table('site_sets')} (spider, site, spec) VALUES ({m}, {m}, {m}) "
                        "ON CONFLICT (spider, site) DO UPDATE SET spec = excluded.spec", (spider, site, change.spec))

    def site_spec(self, cur: Any, spider: str, site: str) -> str | None:
        row = cur.execute(f"SELECT spec FROM {self.table('site_sets')} WHERE spider = {self.mark} AND site = "
                          f"{self.mark}", (spider, site)).fetchone()
        return None if row is None else str(row[0])

    def site_pages(self, cur: Any, spider: str, site: str, after: str, limit: int) -> list[tuple[str, DueEntry | None]]:
        """Up to *limit* pages of *site*'s set after the URL *after*, in URL order (code points),
        each with its page key's due state (None: the key was never stored)."""
        m, url = self.mark, f"p.url{self.by_code_point}"
        rows = cur.execute(
            f"SELECT p.url, o.key, o.last_seen, o.due_at, o.due_interval, o.listed_at FROM "
            f"{self.table('site_pages')} p LEFT JOIN {self.table('observations')} o "
            f"ON o.spider = p.spider AND o.key = p.site || {m} || p.url "
            f"WHERE p.spider = {m} AND p.site = {m} AND {url} > {m} ORDER BY {url} LIMIT {m}",
            ("|", spider, site, after, limit)).fetchall()
        return [(row[0], None if row[1] is None else DueTable.entry(row[2:])) for row in rows]

    def forget(self, cur: Any, spider: str, before: str, limit: int, bodies_before: str) -> list[str]:
        m = self.mark
        keys = [r[0] for r in cur.execute(f"SELECT key FROM {self.table('observations')} WHERE spider = {m} AND "
                                          f"{self._unseen()} LIMIT {m}", (spider, before, limit)).fetchall()]
        if not keys:
            return []
        among, args = self.among("key", keys)
        forgotten = [r[0] for r in cur.execute(f"DELETE FROM {self.table('observations')} WHERE spider = {m} AND "
                                               f"{among} AND {self._unseen()} RETURNING key",
                                               (spider, *args, before)).fetchall()]
        if forgotten:
            among, args = self.among("key", forgotten)
            cur.execute(f"DELETE FROM {self.table('validators')} WHERE spider = {m} AND {among}", (spider, *args))
            for table in ("site_pages", "site_sets"):
                cur.execute(f"DELETE FROM {self.table(table)} WHERE spider = {m} AND "
                            f"{self.among('site', forgotten)[0]}", (spider, *args))
            digests = [r[0] for r in cur.execute(f"DELETE FROM {self.table('evidence')} WHERE spider = {m} "
                                                 f"AND {among} RETURNING digest", (spider, *args)).fetchall()]
            self._delete_bodies(cur, spider, digests, bodies_before)
        return forgotten

    def purge_evidence(self, cur: Any, spider: str, before: str, limit: int, bodies_before: str) -> int:
        m = self.mark
        rows = cur.execute(f"SELECT id, digest FROM {self.table('evidence')} WHERE spider = {m} AND superseded = 1 "
                           f"AND observed_at < {m} LIMIT {m}", (spider, before, limit)).fetchall()
        if rows:
            among, args = self.among("id", [r[0] for r in rows])
            cur.execute(f"DELETE FROM {self.table('evidence')} WHERE {among}", args)
            self._delete_bodies(cur, spider, [r[1] for r in rows], bodies_before)
        return len(rows)

    def _delete_bodies(self, cur: Any, spider: str, digests: Sequence[str], before: str) -> None:
        """The bodies of *digests* no version refers to any more (and not stored again since *before*)."""
        if not digests:
            return
        bodies = self.table("evidence_bodies")
        among, args = self.among("digest", sorted(set(digests)))
        cur.execute(f"DELETE FROM {bodies} WHERE spider = {self.mark} AND {among} AND stored_at < {self.mark} "
                    f"AND NOT EXISTS (SELECT 1 FROM {self.table('evidence')} e WHERE e.spider = {bodies}.spider "
                    f"AND e.digest = {bodies}.digest)", (spider, *args, before))

    def purge_changes(self, cur: Any, spider: str, before: str, limit: int) -> int:
        m = self.mark
        ids = [r[0] for r in cur.execute(f"SELECT id FROM {self.table('changes')} WHERE spider = {m} AND "
                                         f"delivered_at IS NOT NULL AND observed_at < {m} ORDER BY id LIMIT {m}",
                                         (spider, before, limit)).fetchall()]
        if not ids:
            return 0
        among, args = self.among("id", ids)
        return int(cur.execute(f"DELETE FROM {self.table('changes')} WHERE {among} AND delivered_at IS NOT NULL",
                               args).rowcount)
