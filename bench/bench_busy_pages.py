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

    python bench/bench_busy_pages.py [--pages 20] [--runs 30] [--seed 0] [--corpus-kind article]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.worlds.busy import world  # noqa: E402
from tests.worlds.harness import Key, Tally, confirmation_available, run_changes, run_noise  # noqa: E402

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
    args = parser.parse_args()
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


def _changes(name: str, keys: list[Key], start: int, samples: bool) -> None:
    changes = run_changes(keys, start)
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
        for failure in changes.failures[:8]:
            print("    " + failure[:300])


if __name__ == "__main__":
    main()
