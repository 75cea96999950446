"""Stores for the report's tests, filled through the store's own commits (so the change log and
the health history are what a crawl leaves), with every kind of record and page text that must
never become markup."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from changewatch.core.comparisons import Kind
from changewatch.core.diff import line_diff
from changewatch.store import Outcome, Store
from changewatch.store.health import HealthStore
from changewatch.store.semantics import format_time

HOSTILE = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'
OLD_TEXT = "\n".join(["Terms of service", "We keep your data for 30 days.", "Contact: legal@shop.example",
                      "Section 4 stays.", HOSTILE + " is quoted here"])
NEW_TEXT = "\n".join(["Terms of service", "We keep your data for 90 days, and share it with partners.",
                      "Contact: legal@shop.example", "Section 4 stays.", HOSTILE + " is quoted here!"])


class Filler:
    def __init__(self, store: Store, now: datetime):
        self.store, self.now = store, now
        self.versions: dict[tuple[str, str], int] = {}

    def at(self, days_ago: float) -> str:
        return format_time(self.now - timedelta(days=days_ago))

    def commit(self, key: str, url: str, kind: Kind, days_ago: float, record: dict[str, Any] | None = None, *,
               spider: str = "watch", error: str | None = None, distance: int | None = None) -> None:
        at = self.at(days_ago)
        full = None if record is None else {"key": key, "url": url, "kind": kind.value, "observed_at": at,
                                            "spider": spider, **record}
        committed = self.store.commit(spider, key, self.versions.get((spider, key)),
                                      Outcome(kind, url, at, snapshot=None if kind is Kind.ERROR else b"s",
                                              record=full, error=error, distance=distance))
        self.versions[(spider, key)] = committed.version


def every_kind(store: Store, now: datetime) -> None:
    """Every kind of record (field, entities, content, error, moved, recovered, health warnings),
    over two weeks of daily observations with noise on two sites."""
    f = Filler(store, now)
    shop, terms, rentals = "https://shop.example/p/kettle", "https://shop.example/terms", "https://rent.example/2br"
    for day in range(14, 0, -1):
        for key, url in (("kettle", shop), ("terms", terms), ("rentals", rentals)):
            if day == 14:
                f.commit(key, url, Kind.BASELINE, day + 0.5)
            f.commit(key, url, Kind.NOISE if day % 3 else Kind.NONE, day, distance=2 + day % 4 if day % 3 else None)
    f.commit("kettle", shop, Kind.FIELD, 0.9, {"changes": {
        "offers.price": {"old": "89.00", "new": "79.00"},
        "offers.availability": {"old": "InStock", "new": "OutOfStock"},
        "name": {"old": "Kettle 2000", "new": "Kettle 2000 " + HOSTILE}}})
    f.commit("terms", terms, Kind.CONTENT, 0.8, {"distance": 17, "diff": line_diff(OLD_TEXT, NEW_TEXT)})
    f.commit("rentals", rentals, Kind.ENTITIES, 0.7, {
        "added": [{"key": "https://rent.example/flat/9", "fields": {"title": "Sunny 2BR", "price": "1,950"}},
                  {"key": "javascript:alert(1)", "fields": {"title": HOSTILE}}],
        "removed": [{"key": "https://rent.example/flat/3", "fields": {"title": "Dark 2BR"}}],
        "changed": [{"key": "https://rent.example/flat/5", "changes": {"price": {"old": "2,100", "new": "1,990"}}}]})
    f.commit("gone", "https://shop.example/old", Kind.BASELINE, 3)
    f.commit("gone", "https://shop.example/old", Kind.ERROR, 0.6, {"error": "blocked: page says 'Access Denied'"},
             error="blocked: page says 'Access Denied'")
    f.commit("moving", "https://shop.example/a", Kind.BASELINE, 3)
    f.commit("moving", "https://shop.example/b", Kind.MOVED, 0.5,
             {"moved_to": "https://shop.example/b", "url": "https://shop.example/a"})
    f.commit("flaky", "https://shop.example/f", Kind.BASELINE, 3)
    f.commit("flaky", "https://shop.example/f", Kind.ERROR, 2, {"error": "timeout: no answer in 30 s"},
             error="timeout: no answer in 30 s")
    f.commit("flaky", "https://shop.example/f", Kind.RECOVERED, 0.4, {})
    assert isinstance(store, HealthStore)
    warning = {"key": "rent.example", "url": "https://rent.example/", "kind": "error", "observed_at": f.at(0.3),
               "spider": "watch", "error": "health: noise: rent.example's pages vary more than they did",
               "health": {"condition": "noise", "site": "rent.example"}}
    store.open_condition("watch", "rent.example", "noise", f.at(0.3), warning)


def bulk(store: Any, now: datetime, count: int, sites: int = 5, keys: int = 50) -> None:
    """A store holding *count* content changes over the last 6 days and their health history,
    written in one transaction (``import_rows``, as ``changewatch migrate`` fills a store): 100,000
    changes in seconds, where as many commits would take a minute."""
    def at(days_ago: float) -> str:
        return format_time(now - timedelta(days=days_ago))

    observations = [("watch", f"page-{k}", f"https://site{k % sites}.example/page-{k}", 1, b"s", "{}", at(7), at(0.01),
                     at(0.01), at(0.01), None, 0, None, None, None, at(0.01), at(0.01), at(0.01)) for k in range(keys)]
    changes = []
    for n in range(count):
        key = f"page-{n % keys}"
        record = {"key": key, "url": f"https://site{n % keys % sites}.example/{key}", "kind": "content",
                  "observed_at": at(6 - 6 * n / count), "spider": "watch", "distance": 9,
                  "diff": f"  intro\n- price {n} EUR\n+ price {n + 1} EUR\n  outro"}
        changes.append((n + 1, "watch", key, "content", record["observed_at"], json.dumps(record), None))
    history = [("watch", f"site{s}.example", (now - timedelta(days=d)).strftime("%Y-%m-%d"), kind, n, n if kind ==
                "noise" else 0, 3 * n if kind == "noise" else 0, 7 if kind == "noise" else 0)
               for s in range(sites) for d in range(7) for kind, n in (("none", 40), ("noise", 9), ("content", 5))]
    store.import_rows([("observations", observations), ("changes", changes), ("health_history", history)])
