"""The csv feed format with the add-on: one header for every kind of change record."""

from __future__ import annotations

import csv
import io
import json

from scrapy.settings import Settings

from changewatch import Addon
from changewatch.feeds import RECORD_FIELDS, ChangeRecordCsvExporter

CONTENT = {"key": "terms", "url": "https://s.example/terms", "kind": "content", "observed_at": "2026-12-01T10:00:00Z",
           "spider": "watch", "distance": 7, "diff": "- old line\n+ New line, as written.", "change_id": 3}
FIELD = {"key": "kettle", "url": "https://s.example/k", "kind": "field", "observed_at": "2026-12-01T10:00:01Z",
         "spider": "watch", "changes": {"price": {"old": "89.00", "new": "79.00"}}, "change_id": 4}
ENTITIES = {"key": "rentals", "url": "https://s.example/r", "kind": "entities", "observed_at": "2026-12-01T10:00:02Z",
            "spider": "watch", "added": [{"key": "https://s.example/r/21", "fields": {"rent": "£950"}}],
            "change_id": 5, "redelivery": True}


def export(items: list[dict[str, object]], **options: object) -> list[dict[str, str]]:
    out = io.BytesIO()
    exporter = ChangeRecordCsvExporter(out, **options)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    return list(csv.DictReader(io.StringIO(out.getvalue().decode("utf-8"))))


def test_every_kind_keeps_its_members_whatever_comes_first() -> None:
    rows = export([CONTENT, FIELD, ENTITIES])
    assert list(rows[0]) == list(RECORD_FIELDS)
    content, field, entities = rows
    assert content["diff"] == CONTENT["diff"] and content["distance"] == "7" and content["changes"] == ""
    assert json.loads(field["changes"]) == FIELD["changes"]  # JSON, not a Python repr
    assert json.loads(entities["added"]) == ENTITIES["added"] and "£950" in entities["added"]
    assert entities["redelivery"] == "True" and field["change_id"] == "4"


def test_other_items_and_named_fields_are_exported_as_scrapy_does() -> None:
    rows = export([{"name": "a", "tags": ["x", "y"]}])
    assert rows == [{"name": "a", "tags": "x,y"}]
    named = export([FIELD], fields_to_export=["key", "kind"])
    assert named == [{"key": "kettle", "kind": "field"}]


def test_the_add_on_makes_it_the_csv_format_and_the_user_s_own_wins() -> None:
    settings = Settings()
    Addon().update_settings(settings)
    assert settings.getwithbase("FEED_EXPORTERS")["csv"] == "changewatch.feeds.ChangeRecordCsvExporter"
    mine = Settings({"FEED_EXPORTERS": {"csv": "myproject.MyCsv"}})
    Addon().update_settings(mine)
    assert mine.getwithbase("FEED_EXPORTERS")["csv"] == "myproject.MyCsv"
