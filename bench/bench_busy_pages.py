"""Busy pages in the pure core: how often noise-only observations alert, how many real changes are
reported with a diff of only the change, and how many confirmations it takes.

The test web is tests/worlds (real pages of ../shared/corpus with trending boxes, ad slots,
reshuffled related lists, counters, clocks, hashed class names, A/B teasers, blocks on some
loads); the judge is the worker's (runtime/offload.py) and every verdict is committed as the
pipeline commits it (tests/worlds/harness.py). Conditions:

- ``calibrate=5``: baseline, five calibration loads, then noise-only runs (confirmation as the
  core has it: on when changewatch.core.confirm exists);
- ``calibrate=5, no confirm``: the same with confirmation off;
- ``confirm only``: no calibration, confirmation on;
- ``neither``: no calibration, no confirmation;
- quiet pages and clock-only pages, with and without calibration.

Then every real-change operator on every busy page, from its state after the noise-only runs.

``--changes`` runs only the real changes, over the seeds given (``--seeds 0-11``): each operator on
each page at run ``--early`` + 1 (after that many noise-only runs: before the key has learned its
furniture) and after ``--runs`` runs, with and without ``-a calibrate=5`` (confirmation on): how
many are reported, and how many diffs show only the change (each changed line a line of the page).

    python bench/bench_busy_pages.py [--pages 20] [--runs 30] [--seed 0] [--corpus-kind article]
    python bench/bench_busy_pages.py --changes [--seeds 0-11] [--early 2] [--runs 30] [--calibrations 0,5] [--samples]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.worlds.busy import world  # noqa: E402
from tests.worlds.harness import (  # noqa: E402
    ChangeTally,
    Key,
    Tally,
    confirmation_available,
    run_changes,
    run_noise,
)

CONDITIONS = (("calibrate=5", 5, True), ("calibrate=5, no confirm", 5, False), ("confirm only", 0, True),
              ("neither", 0, False))


def _row(name: str, tally: Tally, seconds: float) -> str:
    noise = ", ".join(f"{k} {v}" for k, v in tally.by_noise.most_common())
    per100 = 100 * tally.confirmations / tally.observations if tally.observations else 0
    return (f"{name:<34} {tally.observations:>5} {tally.alerts:>5} {100 * tally.rate():>6.1f}% "
            f"{per100:>7.1f} {seconds:>6.1f}s  {noise}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0, help="the test web's seed (its pages' furniture and notices)")
    parser.add_argument("--corpus-kind", default="article", choices=("article", "structured", "listing"))
    parser.add_argument("--conditions", default=",".join(c[0] for c in CONDITIONS),
                        help="the conditions to run, comma-separated (default: all)")
    parser.add_argument("--slots-between-loads", action="store_true",
                        help="confirmation learns between loads with core.learned.between_loads (provisional slots)")
    parser.add_argument("--samples", action="store_true", help="print samples of false alerts and failed changes")
    parser.add_argument("--changes", action="store_true", help="only the real changes, early and late, over --seeds")
    parser.add_argument("--seeds", default="0-11", help="with --changes: the test web's seeds (\"0-11\", \"1,4\")")
    parser.add_argument("--early", type=int, default=2, help="with --changes: noise-only runs before the early change")
    parser.add_argument("--calibrations", default="0,5", help="with --changes: the calibrate=N values to run")
    args = parser.parse_args()
    if args.changes:
        _all_changes(args)
        return
    if args.slots_between_loads:
        import changewatch.core.confirm as confirm
        from changewatch.core.learned import between_loads

        confirm.between_loads = between_loads
    busy = world(args.pages, "busy", seed=args.seed, corpus_kind=args.corpus_kind)
    if not busy:
        sys.exit("the real-page corpus is not found (../shared/corpus)")
    print(f"{len(busy)} {args.corpus_kind} pages (seed {args.seed}), {args.runs} noise-only runs each; "
          f"confirmation {'available' if confirmation_available() else 'not in this core'}")
    print(f"{'condition':<34} {'obs':>5} {'alerts':>5} {'rate':>7} {'conf/100':>7} {'time':>7}  alerts by noise kind")
    kept: dict[str, list[Key]] = {}
    conditions = [c for c in CONDITIONS if c[0] in args.conditions.split(",")]
    for name, calibrate, confirm in conditions:
        for kind in ("busy", "clock", "quiet"):
            pages = [p.as_kind(kind) for p in busy]
            keys: list[Key] = []
            started = time.perf_counter()
            tally = run_noise(pages, args.runs, calibrate=calibrate, confirm=confirm, keys=keys)
            print(_row(f"{kind}, {name}", tally, time.perf_counter() - started), flush=True)
            if tally.alerts:
                print(f"{'':<34} alert rate by runs: {tally.windows()}")
            if args.samples:
                for sample in tally.samples[:3]:
                    print("    " + sample[:400].replace("\n", "\n    "))
            if kind == "busy":
                kept[name] = keys
    print()
    print(f"{'real changes':<34} " + " ".join(f"{w:>18}" for w in ("reported", "late", "diff only change")))
    for name, calibrate, confirm in conditions:
        _changes(name, kept[name], args.runs + 1, args.samples)
        early: list[Key] = []  # the same, at run 3: before the key has learned its furniture
        run_noise(busy, 2, calibrate=calibrate, confirm=confirm, keys=early)
        _changes(f"{name}, at run 3", early, 3, args.samples)


def _seeds(spec: str) -> list[int]:
    """The numbers of *spec*: "0-3,7" → 0, 1, 2, 3, 7."""
    seeds: list[int] = []
    for part in spec.split(","):
        first, _, last = part.partition("-")
        seeds.extend(range(int(first), int(last or first) + 1))
    return seeds


def _all_changes(args: argparse.Namespace) -> None:
    """Real changes only: every operator on every busy page of each seed, early and late."""
    seeds = _seeds(args.seeds)
    print(f"{args.pages} {args.corpus_kind} pages per seed, seeds {args.seeds}; real changes at run {args.early + 1} "
          f"and at run {args.runs + 1}, confirmation on")
    print(f"{'real changes':<34} " + " ".join(f"{w:>18}" for w in ("reported", "late", "diff only change")))
    for calibrate in _seeds(args.calibrations):
        for runs in (args.early, args.runs):
            tally = ChangeTally()
            started = time.perf_counter()
            for seed in seeds:
                keys: list[Key] = []
                run_noise(world(args.pages, "busy", seed=seed, corpus_kind=args.corpus_kind), runs,
                          calibrate=calibrate, confirm=True, keys=keys)
                run_changes(keys, runs + 1, tally=tally)
            name = f"calibrate={calibrate}, at run {runs + 1}"
            _print_changes(name, tally, args.samples)
            print(f"{'':<34} {time.perf_counter() - started:.0f}s", flush=True)


def _changes(name: str, keys: list[Key], start: int, samples: bool) -> None:
    _print_changes(name, run_changes(keys, start), samples)


def _print_changes(name: str, changes: ChangeTally, samples: bool) -> None:
    for what in changes.applied:
        applied = changes.applied[what]
        print(f"{name + ': ' + what:<34} {changes.reported[what]:>10}/{applied:<3} "
              f"{100 * changes.reported[what] / applied:>4.0f}% {changes.late[what]:>12}     "
              f"{changes.clean[what]:>10}/{applied:<3} {100 * changes.clean[what] / applied:>4.0f}%")
    total = sum(changes.applied.values())
    print(f"{name + ': all':<34} {sum(changes.reported.values()):>10}/{total:<3} "
          f"{100 * sum(changes.reported.values()) / total:>4.0f}% {sum(changes.late.values()):>12}     "
          f"{sum(changes.clean.values()):>10}/{total:<3} {100 * sum(changes.clean.values()) / total:>4.0f}%",
          flush=True)
    if samples:
        for failure in changes.failures[:20]:
            print("    " + failure[:300])


if __name__ == "__main__":
    main()
