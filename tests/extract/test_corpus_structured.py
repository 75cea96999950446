"""Evaluation on real pages (../shared/corpus, read in place and never copied; skipped when it is
absent): on every page under pages/structured/ the extractor finds every JSON-LD type the
corpus MANIFEST.tsv lists, and the tracked values it records (first offer's price and
availability, a recipe's total time, an event's start date, the number of Product nodes)."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from scrapy.http import HtmlResponse

from changewatch.core.values import normalise_field
from changewatch.extract.page import Page
from changewatch.extract.specs import FieldSpec

from ..core._support import CORPUS_PAGES, CORPUS_SKIP_REASON

EVENTS = ["Event", "MusicEvent", "SportsEvent"]


@dataclass(frozen=True)
class Expected:
    file: Path
    url: str
    types: frozenset[str]
    notes: str


def _manifest() -> list[Expected]:
    manifest = CORPUS_PAGES.parent / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    out = []
    with manifest.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if row["kind"] != "structured" or not (manifest.parent / row["file"]).is_file():
                continue
            notes = row["notes"]
            types = re.search(r"\| types: ([^|]+)\|", notes)
            url = re.search(r"page URL: (\S+)", notes)
            out.append(Expected(manifest.parent / row["file"], url.group(1) if url else "https://corpus.invalid/",
                                frozenset(t.strip() for t in types.group(1).split(",")) if types else frozenset(),
                                notes))
    return out


PAGES = _manifest()
needs_corpus = pytest.mark.skipif(not PAGES, reason=CORPUS_SKIP_REASON)


def page_of(expected: Expected) -> Page:
    return Page(HtmlResponse(url=expected.url, body=expected.file.read_bytes()))


def first(value: object) -> object:
    return value[0] if isinstance(value, list) else value


@needs_corpus
def test_the_corpus_has_the_structured_pages_we_evaluate() -> None:
    assert len(PAGES) >= 20
    assert all(p.types for p in PAGES), [p.file.name for p in PAGES if not p.types]


@needs_corpus
@pytest.mark.parametrize("expected", PAGES, ids=lambda e: e.file.name)
def test_every_listed_type_is_found(expected: Expected) -> None:
    page = page_of(expected)
    missing = expected.types - page.structured.types()
    assert not missing, f"{expected.file.name}: types not found {sorted(missing)}"
    assert page.structured.invalid_blocks == 0  # the corpus checked every block parses


@needs_corpus
@pytest.mark.parametrize("expected", PAGES, ids=lambda e: e.file.name)
def test_tracked_values_match_the_manifest(expected: Expected) -> None:
    page = page_of(expected)
    notes = expected.notes
    found = 0
    if offer := re.search(r"first: (?:Aggregate)?Offer price=(\S+) \S+ availability=(\S+)", notes):
        price = page.value(FieldSpec.schema("Product", "offers.price|offers.lowPrice"))
        assert normalise_field(first(price), "price") == normalise_field(offer.group(1), "price"), price
        found += 1
        if offer.group(2) != "n/a":
            availability = page.value(FieldSpec.schema("Product", "offers.availability"))
            assert normalise_field(first(availability), "availability") == offer.group(2)
            found += 1
    if count := re.search(r"Product x(\d+)", notes):
        assert len(page.nodes("Product")) >= int(count.group(1))
    if recipe := re.search(r"Recipe: (\d+) ingredients, totalTime=(\S+?),", notes):
        assert len(page.value(FieldSpec.schema("Recipe", "recipeIngredient"))) == int(recipe.group(1))
        time = page.value(FieldSpec.schema("Recipe", "totalTime"))
        assert normalise_field(time, "duration") == normalise_field(recipe.group(2), "duration")
        found += 2
    if event := re.search(r"Event x\d+, first startDate=(\S+)", notes):
        start = page.value(FieldSpec.schema(EVENTS, "startDate"))
        assert normalise_field(first(start), "date") == normalise_field(event.group(1), "date")
        found += 1
    if "LocalBusiness: address" in notes:
        assert page.value(FieldSpec.schema("LocalBusiness", "address")) is not None
        assert page.value(FieldSpec.schema("LocalBusiness", "openingHours|openingHoursSpecification")) is not None
        found += 2
    kind = expected.file.name.split("-", 1)[0]
    if kind in ("product", "recipe", "event", "deal"):
        assert found >= 1, f"{expected.file.name}: no tracked value checked against the manifest"


@needs_corpus
def test_corpus_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """Counts for the record (printed with -s): pages, types found, values found."""
    types = values = 0
    for expected in PAGES:
        page = page_of(expected)
        types += len(expected.types & page.structured.types())
        specs = [FieldSpec.schema("Product", "offers.price|offers.lowPrice"),
                 FieldSpec.schema("Product", "offers.availability"), FieldSpec.schema("Recipe", "totalTime"),
                 FieldSpec.schema(EVENTS, "startDate"),
                 FieldSpec.schema("LocalBusiness", "openingHours|openingHoursSpecification")]
        values += sum(page.value(spec) is not None for spec in specs)
    listed = sum(len(p.types) for p in PAGES)
    print(f"corpus structured pages: {len(PAGES)}, listed types found: {types}/{listed}, tracked values: {values}")
    assert types == listed
