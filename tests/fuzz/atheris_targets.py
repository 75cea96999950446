"""Coverage-guided fuzzing with atheris (libFuzzer):
``python -m tests.fuzz.atheris_targets TARGET -runs=N`` (test_atheris.py runs each target).

Each target feeds fuzzer bytes to changewatch functions and lets only their documented errors
through; anything else is a crash that libFuzzer reports with the input that caused it.
Everything is imported in :func:`main`: pytest's doctest collection imports this module too.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REGIONS = [None, "main", "p", "div > p", "p[[[", "#x", "::text", "*"]
SELECTORS = ["p", "a::attr(href)", "//p/text()", "(//a)[1]", "main p::text", "//p[$x]", "p[[["]


def targets() -> dict[str, Callable[[bytes], None]]:
    import atheris

    with atheris.instrument_imports(include=["changewatch"]):
        from parsel import Selector

        from changewatch.core.addresses import AddressPolicy, parse_ip_host
        from changewatch.core.selectors import SelectorError, check_selector
        from changewatch.core.text.lxml_walker import RegionError
        from changewatch.core.text.normalise import normalise
        from changewatch.core.urls import canonical_url
        from changewatch.extract.selectors import select_value
        from changewatch.extract.structured import structured_data
        from changewatch.watchlist import WatchlistError, load_watchlist

    workdir = Path(tempfile.mkdtemp(prefix="changewatch-atheris-"))
    policy = AddressPolicy.build(allowed_hosts=[".example.org"])

    def fuzz_normalise(data: bytes) -> None:
        fdp = atheris.FuzzedDataProvider(data)
        region = REGIONS[fdp.ConsumeIntInRange(0, len(REGIONS) - 1)]
        html: Any = fdp.ConsumeBytes(fdp.remaining_bytes()) if fdp.ConsumeBool() else \
            fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
        try:
            normalise(html, region, sort_lines=bool(len(data) % 2))
        except RegionError:
            assert region is not None

    def fuzz_extract(data: bytes) -> None:
        fdp = atheris.FuzzedDataProvider(data)
        query = SELECTORS[fdp.ConsumeIntInRange(0, len(SELECTORS) - 1)] if fdp.ConsumeBool() else \
            fdp.ConsumeUnicodeNoSurrogates(24)
        html = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
        if not html.strip():
            return
        sel = Selector(text=html, type="html")  # as a Page builds it
        data = structured_data(sel.root, "https://s.example/")
        data.jsonld, data.microdata, data.opengraph  # noqa: B018 - each parsed on first use
        try:
            check_selector(query)
        except SelectorError:
            return
        select_value(sel, query)

    def fuzz_watchlist(data: bytes) -> None:
        path = workdir / ("watchlist.json" if data[:1] == b"{" else "watchlist.yaml")
        path.write_bytes(data)
        try:
            load_watchlist(path)
        except WatchlistError:
            pass

    def fuzz_urls(data: bytes) -> None:
        text = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(len(data))
        try:
            canonical_url(text)
        except ValueError:
            pass
        policy.url_refusal(text)
        parse_ip_host(text)

    return {"normalise": fuzz_normalise, "extract": fuzz_extract, "watchlist": fuzz_watchlist, "urls": fuzz_urls}


def main(argv: list[str]) -> None:
    import atheris

    target = targets()[argv.pop(1)]
    atheris.Setup(argv, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
