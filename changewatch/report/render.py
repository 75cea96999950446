"""The HTML of one change, as the report shows it: what changed, side by side, in the page's own
words. Everything that comes from a page or a record is escaped (``html.escape``); only http(s)
URLs become links. Pure: no store, no I/O."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from html import escape
from typing import Any
from urllib.parse import urlsplit

from .words import Row, Segment, side_by_side, word_diff

__all__ = ["LIST_LIMIT", "change_html", "link", "text"]

#: the most entities (added, removed, changed) or fields one change shows; the rest are counted
LIST_LIMIT = 50


def text(value: Any) -> str:
    """A value as escaped text: strings as written, anything else as JSON."""
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return escape(shown)


def link(url: Any, label: Any = None) -> str:
    """A link to *url* when it is an http(s) URL, else its text (a ``javascript:`` URL from a page
    must never be a link)."""
    shown = text(url if label is None else label)
    if not isinstance(url, str):
        return shown
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return shown
    if scheme not in ("http", "https"):
        return shown
    return f'<a href="{escape(url, quote=True)}" rel="noreferrer noopener">{shown}</a>'


def _segments(segments: Iterable[Segment]) -> str:
    return "".join(f"<mark>{escape(s.text)}</mark>" if s.changed else escape(s.text) for s in segments)


def _diff_row(row: Row) -> str:
    if row.kind == "gap":
        return '<tr class="gap"><td colspan="2">⋯</td></tr>'
    if row.kind == "more":
        return f'<tr class="gap"><td colspan="2">{escape(row.note)}</td></tr>'
    old = "" if row.old is None else _segments(row.old)
    new = "" if row.new is None else _segments(row.new)
    if row.kind == "context":
        return f'<tr class="same"><td>{old}</td><td>{new}</td></tr>'
    old_class = "del" if row.old is not None else "none"
    new_class = "ins" if row.new is not None else "none"
    return f'<tr class="changed"><td class="{old_class}">{old}</td><td class="{new_class}">{new}</td></tr>'


def diff_table(diff: str) -> str:
    rows = "".join(_diff_row(row) for row in side_by_side(diff))
    return ('<table class="diff"><thead><tr><th>before</th><th>after</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>")


def _old_new(old: Any, new: Any) -> tuple[str, str]:
    if isinstance(old, str) and isinstance(new, str):
        before, after = word_diff(old, new)
        return _segments(before), _segments(after)
    return text(old), text(new)


def fields_table(changes: Mapping[str, Any], caption: str = "") -> str:
    rows = []
    for name, change in list(changes.items())[:LIST_LIMIT]:
        pair = change if isinstance(change, Mapping) else {"old": None, "new": change}
        old, new = _old_new(pair.get("old"), pair.get("new"))
        rows.append(f'<tr><th scope="row">{text(name)}</th><td class="del">{old}</td><td class="ins">{new}</td></tr>')
    more = _more(len(changes))
    head = f"<caption>{escape(caption)}</caption>" if caption else ""
    return (f'<table class="fields">{head}<thead><tr><th>field</th><th>old</th><th>new</th></tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>{more}")


def _more(total: int) -> str:
    return f'<p class="more">{total - LIST_LIMIT} more not shown</p>' if total > LIST_LIMIT else ""


def _entity_fields(fields: Any) -> str:
    if not isinstance(fields, Mapping) or not fields:
        return ""
    return " <span class=\"efields\">" + " · ".join(
        f"<b>{text(k)}</b> {text(v)}" for k, v in list(fields.items())[:12]) + "</span>"


def _entity_list(title: str, css: str, entities: list[Any]) -> str:
    items = []
    for entity in entities[:LIST_LIMIT]:
        entity = entity if isinstance(entity, Mapping) else {"key": entity}
        items.append(f"<li>{link(entity.get('key') or entity.get('url'))}{_entity_fields(entity.get('fields'))}</li>")
    return (f'<div class="entities {css}"><h4>{escape(title)} ({len(entities)})</h4><ul>{"".join(items)}</ul>'
            f"{_more(len(entities))}</div>")


def _changed_entities(entities: list[Any]) -> str:
    blocks = []
    for entity in entities[:LIST_LIMIT]:
        entity = entity if isinstance(entity, Mapping) else {"key": entity, "changes": {}}
        found = entity.get("changes")
        changes: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        blocks.append(f'<li>{link(entity.get("key"))}{fields_table(changes)}</li>')
    return (f'<div class="entities changed"><h4>changed ({len(entities)})</h4><ul>{"".join(blocks)}</ul>'
            f"{_more(len(entities))}</div>")


def _body(record: Mapping[str, Any]) -> list[str]:
    parts: list[str] = []
    if record.get("error"):
        parts.append(f'<p class="error">{text(record["error"])}</p>')
    if isinstance(record.get("summary"), str):
        parts.append(f'<p class="summary">{text(record["summary"])}</p>')
    if isinstance(record.get("changes"), Mapping) and record["changes"]:
        parts.append(fields_table(record["changes"]))
    entity_parts = []
    for member, title in (("added", "added"), ("removed", "removed")):
        if isinstance(record.get(member), list) and record[member]:
            entity_parts.append(_entity_list(title, member, record[member]))
    if isinstance(record.get("changed"), list) and record["changed"]:
        entity_parts.append(_changed_entities(record["changed"]))
    if entity_parts:
        parts.append(f'<div class="entity-lists">{"".join(entity_parts)}</div>')
    if isinstance(record.get("diff"), str) and record["diff"]:
        parts.append(diff_table(record["diff"]))
    if record.get("moved_to"):
        parts.append(f'<p>moved to {link(record["moved_to"])}</p>')
    health = record.get("health")
    if isinstance(health, Mapping):
        if health.get("recovered_from"):
            parts.append(f'<p class="recovered">over: {text(health["recovered_from"])}</p>')
        parts.append(f'<p class="meta">health condition <code>{text(health.get("condition"))}</code></p>')
    elif record.get("kind") == "recovered":
        parts.append('<p class="recovered">the page is observed again</p>')
    return parts


def change_html(change_id: int, spider: str, record: Mapping[str, Any], evidence: str) -> str:
    """One change as an ``<article>``: its header (kind, key, the watched page, when), what changed,
    and the command that writes its evidence (*evidence*, already with the store's URI)."""
    kind = str(record.get("kind", ""))
    distance = record.get("distance")
    facts = [f"#{change_id}", text(spider), text(record.get("observed_at", ""))]
    if isinstance(distance, int):
        facts.append(f"{distance} bits")
    if record.get("redelivery"):
        facts.append("redelivered")
    css = kind if kind.isidentifier() else "other"
    return (f'<article class="change kind-{css}" id="change-{change_id}">'
            f'<header><span class="badge kind-{css}">{escape(kind)}</span> <strong>{text(record.get("key", ""))}'
            f'</strong> <span class="url">{link(record.get("url"))}</span>'
            f'<span class="facts">{" · ".join(facts)}</span></header>'
            + "".join(_body(record)) +
            f'<footer>evidence: <code>{escape(evidence)}</code></footer></article>')
