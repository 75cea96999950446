"""Which destinations a change goes to: CHANGEWATCH_NOTIFY (every kind, or per kind) and the watch's
own ``notify:`` rules (its destinations, the kinds they want, a ``when:`` condition on field values,
tested on its state now or as a crossing). Decided in the crawl when the change is committed, so
that its pending notifications are written with it; the values each firing condition tested go
into the record (``conditions``), so that every message sent for it can show them. No Scrapy
imports."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.destinations import Destination, NotifyRoutes
from ..core.values import normalise_field
from ..watchlist.site import page_options
from ..watchlist.watch import NotifyRule, Watch

__all__ = ["FieldValues", "Routed", "Router"]


class FieldValues:
    """The field values a change's conditions compare, normalised as the fields comparison
    normalises them (each by its kind), computed only for the fields a condition names: the new
    value of a changed field from the record, any other from the observation's own fields. The
    old values (:meth:`old_of`) are the changed fields' ``old`` ones; a field the change did not
    change had the value it has now."""

    def __init__(self, record: Mapping[str, Any], fields: Mapping[str, Any] | None, kinds: Mapping[str, str] | None):
        self.record = record
        self.fields = fields or {}
        self.kinds = kinds or {}

    def normalise(self, name: str, value: Any) -> Any:
        try:
            return normalise_field(value, self.kinds.get(name, "auto"))
        except ValueError:  # an unknown kind: the fields comparison reports that as an error
            return value

    def _of(self, names: Iterable[str], side: str) -> dict[str, Any]:
        changes = self.record.get("changes")
        values: dict[str, Any] = {}
        for name in names:
            change = changes.get(name) if isinstance(changes, Mapping) else None
            if isinstance(change, Mapping) and side in change:
                values[name] = self.normalise(name, change[side])
            elif name in self.fields:
                values[name] = self.normalise(name, self.fields[name])
        return values

    def of(self, names: Iterable[str]) -> dict[str, Any]:
        """The values now of the fields *names* (those known)."""
        return self._of(names, "new")

    def old_of(self, names: Iterable[str]) -> dict[str, Any]:
        """The values on the previous observation of the fields *names* (those known)."""
        return self._of(names, "old")


@dataclass(frozen=True, slots=True)
class Routed:
    """Where a change goes, and the conditions that sent it somewhere: each as the record's
    ``conditions`` member has it (``when`` as written, the ``values`` it tested, old and new, and
    the ``destinations`` it chose, as shown)."""

    destinations: tuple[Destination, ...]
    conditions: tuple[dict[str, Any], ...] = ()


class Router:
    """Destinations by change: CHANGEWATCH_NOTIFY's, then the watch's (by key; a site watch's page
    by the page options its URL has, of *sites*: site watches by key)."""

    def __init__(self, routes: NotifyRoutes, rules: Mapping[str, tuple[NotifyRule, ...]] | None = None,
                 sites: Mapping[str, Watch] | None = None):
        self.routes = routes
        self.rules = dict(rules or {})
        self.sites = dict(sites or {})
        known: dict[str, Destination] = {d.id: d for d in routes.all}
        page_rules = [rule.watch.notify for site in self.sites.values() for rule in site.rules]
        for key_rules in [*self.rules.values(), *(site.notify for site in self.sites.values()), *page_rules]:
            for rule in key_rules:
                for d in rule.destinations:
                    # one the operator configured is the operator's, whatever a fetched watchlist says
                    if d.id not in known or (known[d.id].guarded and not d.guarded):
                        known[d.id] = d
        #: every destination this crawl may send to, by id
        self.destinations = known

    def __bool__(self) -> bool:
        return bool(self.destinations)

    def route(self, record: Mapping[str, Any], values: FieldValues) -> Routed:
        """The destinations of a change record (each once, in the order configured), and the
        conditions that chose some of them."""
        kind = str(record.get("kind"))
        chosen: dict[str, Destination] = {d.id: d for d in self.routes.for_kind(kind)}
        conditions: list[dict[str, Any]] = []
        for rule in self._rules(record):
            if rule.kinds is not None and kind not in rule.kinds:
                continue
            if rule.when is not None:
                names = rule.when.fields
                old, new = values.old_of(names), values.of(names)
                if not rule.when.fires(old, new, values.normalise):
                    continue
                conditions.append({"when": rule.when.as_written,
                                   "values": {n: {"old": old.get(n), "new": new.get(n)} for n in names},
                                   "destinations": [d.shown for d in rule.destinations]})
            chosen.update((d.id, d) for d in rule.destinations if d.id not in chosen)
        return Routed(tuple(self.destinations[i] for i in chosen), tuple(conditions))

    def _rules(self, record: Mapping[str, Any]) -> tuple[NotifyRule, ...]:
        key = str(record.get("key"))
        site = self.sites.get(str(record.get("site_watch")))
        if site is None or key == site.key:  # a watch's, or a site watch's page set's: by key
            return self.rules.get(key, ())
        return page_options(site, str(record.get("url"))).notify
