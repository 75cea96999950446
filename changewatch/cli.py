"""The ``changewatch`` command: compare two saved pages, run the demo, list a store's change log,
write a report of it, write a change's evidence out, explain or teach what is learned of a key's
variation, migrate a store, list or resend notifications, or print the watchlist's JSON Schema."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from . import cli_changes, cli_evidence, cli_learned, cli_migrate, cli_notify, cli_report
from .core.comparisons import CompareContext, Kind, Unobservable, load_comparisons
from .core.normalise import RegionError, check_region, decode_page
from .core.observation import Observation
from .core.snapshot import Snapshot
from .core.verdict import Verdict, classify, digest

__all__ = ["main"]

EXIT_SAME, EXIT_CHANGED, EXIT_ERROR = 0, 1, 2


def _read(path: str) -> str:
    # A saved file has no Content-Type: decoded here as a browser would (a BOM, its <meta>,
    # UTF-8, else windows-1252), not as Scrapy infers a response's encoding.
    return decode_page(Path(path).read_bytes())


def _snapshot(path: str, args: argparse.Namespace) -> Snapshot:
    obs = Observation(key=path, url=path, html=_read(path), region=args.region,
                      options={"sort_lines": args.sort_lines})
    return digest(obs, load_comparisons())


def _verdict(args: argparse.Namespace) -> Verdict:
    comparisons = load_comparisons()
    try:
        old = _snapshot(args.old, args)
    except Unobservable as exc:
        return Verdict(Kind.ERROR, error=f"old page: {exc}")
    if (baseline := classify(None, old, comparisons)).error:
        return Verdict(Kind.ERROR, error=f"old page: {baseline.error}")
    try:
        new = _snapshot(args.new, args)
    except Unobservable as exc:
        return Verdict(Kind.ERROR, error=str(exc))
    return classify(old, new, comparisons, context=CompareContext(threshold=args.threshold))


def compare(args: argparse.Namespace) -> int:
    """Classify OLD → NEW with the crawl's engine. Exit 0: none/noise; 1: a change; 2: error."""
    try:
        if args.region:
            check_region(args.region)
        verdict = _verdict(args)
    except RegionError as exc:
        print(f"changewatch compare: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:  # a SystemExit(message) would exit 1, which means "changed"
        print(f"changewatch compare: cannot read {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR
    result = {"kind": verdict.kind.value, "distance": verdict.distance, "diff": verdict.diff, "error": verdict.error}
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if v is not None}, ensure_ascii=False))
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="changewatch", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    cmp = sub.add_parser("compare", help="classify the change between two saved HTML pages")
    cmp.add_argument("old", metavar="OLD.html")
    cmp.add_argument("new", metavar="NEW.html")
    cmp.add_argument("--region", metavar="CSS", help="compare only the part of the page this CSS selector matches")
    cmp.add_argument("--threshold", type=int, metavar="N", choices=range(65),
                     help="simhash bits a text change must exceed to count (default: any change counts)")
    cmp.add_argument("--sort-lines", action="store_true", help="sort lines first (lists that shuffle)")
    cmp.add_argument("--json", action="store_true", help="print one JSON object")
    cmp.set_defaults(func=compare)
    demo = sub.add_parser("demo", help="serve a noisy demo site on 127.0.0.1, crawl it, change it, crawl again")
    demo.add_argument("--keep", metavar="DIR", help="keep the demo's store, watchlist and feeds in DIR")
    demo.set_defaults(func=_demo)
    cli_changes.add_parser(sub)
    cli_evidence.add_parser(sub)
    cli_learned.add_parser(sub)
    cli_migrate.add_parser(sub)
    cli_report.add_parser(sub)
    cli_notify.add_parser(sub)
    schema = sub.add_parser("schema", help="print the JSON Schema of a watchlist, for editors that check it as it is "
                                           "typed (the package ships it as changewatch/watchlist.schema.json)")
    schema.set_defaults(func=_schema)
    return parser


def _schema(args: argparse.Namespace) -> int:
    # Generated afresh from the model, so that `changewatch schema > changewatch/watchlist.schema.json`
    # regenerates the shipped file.
    from .watchlist.model import watchlist_schema

    sys.stdout.write(watchlist_schema())
    return 0


def _demo(args: argparse.Namespace) -> int:
    from .demo.run import run_demo

    return run_demo(args.keep)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
