"""``changewatch compare OLD.html NEW.html``: classify the change between two saved pages with the
crawl's engine and, inside a Scrapy project, its settings (comparisons, threshold, diff). Each
file's modification time is the time its page was fetched (a time in it that tracks that time is
a clock's). Exit 0: none or noise; 1: a change; 2: an error."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import (
    CompareContext,
    DiffOptions,
    Kind,
    Observation,
    RegionError,
    Snapshot,
    Unobservable,
    check_region,
)
from ..core.text.decoding import decode_page
from .common import CommandError, add_command, json_line, project_comparisons, project_config

if TYPE_CHECKING:
    from ..core import Verdict

__all__ = ["add_parser"]

NAME = "compare"

EXIT_SAME, EXIT_CHANGED, EXIT_ERROR = 0, 1, 2


def _snapshot(path: str, args: argparse.Namespace, comparisons: tuple[Any, ...]) -> Snapshot:
    from ..core import digest

    # A saved file has no Content-Type: decoded here as a browser would (a BOM, its <meta>,
    # UTF-8, else windows-1252), not as Scrapy infers a response's encoding.
    # Its modification time is when it was fetched: a saved page's clock shows about that time.
    from ..extract.selectors import binary_body

    file = Path(path)
    body = file.read_bytes()
    if kind := binary_body(body):  # as a crawl refuses it: garbage diffed as text is no answer
        raise Unobservable(f"unsupported: {kind}, not an HTML page")
    html = decode_page(body)
    fetched = datetime.fromtimestamp(file.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    obs = Observation(key=path, url=path, html=html, region=args.region, options={"sort_lines": args.sort_lines},
                      observed_at=fetched)
    return digest(obs, comparisons)


def _verdict(args: argparse.Namespace) -> Verdict:
    from ..core import Verdict, classify

    config = project_config()
    comparisons = project_comparisons(config)
    # what the crawl's pipeline judges with: the project's threshold unless --threshold says another
    context = CompareContext(threshold=config.threshold if args.threshold is None else args.threshold,
                             diff=DiffOptions(context=config.diff_context, max_lines=config.diff_max_lines))
    try:
        old = _snapshot(args.old, args, comparisons)
    except Unobservable as exc:
        return Verdict(Kind.ERROR, error=f"old page: {exc}")
    if (baseline := classify(None, old, comparisons)).error:
        return Verdict(Kind.ERROR, error=f"old page: {baseline.error}")
    try:
        new = _snapshot(args.new, args, comparisons)
    except Unobservable as exc:
        return Verdict(Kind.ERROR, error=str(exc))
    return classify(old, new, comparisons, context=context)


def run(args: argparse.Namespace) -> int:
    try:
        if args.region:
            check_region(args.region)
        verdict = _verdict(args)
    except RegionError as exc:
        raise CommandError(str(exc), EXIT_ERROR) from None
    except OSError as exc:  # a SystemExit(message) would exit 1, which means "changed"
        raise CommandError(f"cannot read {exc.filename}: {exc.strerror or exc}", EXIT_ERROR) from None
    result = {"kind": verdict.kind.value, "distance": verdict.distance, "diff": verdict.diff, "error": verdict.error}
    if args.json:
        print(json_line({k: v for k, v in result.items() if v is not None}))
    else:
        line = verdict.kind.value + (f" (simhash distance {verdict.distance} bits)" if verdict.distance is not None
                                     else "")
        print(line)
        if verdict.error:
            print(verdict.error)
        if verdict.diff:
            print(verdict.diff)
    if verdict.kind is Kind.ERROR:
        return EXIT_ERROR
    return EXIT_CHANGED if verdict.kind.reported else EXIT_SAME


def add_parser(sub: Any) -> None:
    parser = add_command(sub, NAME, __doc__, "classify the change between two saved HTML pages")
    parser.add_argument("old", metavar="OLD.html")
    parser.add_argument("new", metavar="NEW.html")
    parser.add_argument("--region", metavar="CSS", help="compare only the part of the page this CSS selector matches")
    parser.add_argument("--threshold", type=int, metavar="N", choices=range(65),
                        help="simhash bits a text change must exceed to count (default: CHANGEWATCH_THRESHOLD of the "
                             "Scrapy project here, else any change counts)")
    parser.add_argument("--sort-lines", action="store_true", help="sort lines first (lists that shuffle)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)
