"""What confirming a change costs and saves, in the pure core, over real pages.

For each page of the corpus (read in place from ../shared/corpus, never copied), a baseline and
then RUNS observations, each judged as the pipeline does: a verdict that the page changed is a
candidate, loaded once more and judged with its confirmation (core/confirm.py); the snapshot
committed is carried to the next run (encoded and decoded, as the store keeps it).

- **busy**: each load has a "Trending now" box of five headlines drawn from 400, a sponsored line
  new on every load and a "Related" list of four fresh items (what the issue's busy pages show);
- **quiet**: the page as it is, the same on every load;
- **edit**: after the noise runs, a paragraph is added to the busy page and must be reported.

Prints, per set: observations, confirmations per 100 observations, alerts per 100 noise-only
observations, edits reported, and the worker CPU of an observation without and with its
confirmation. ``python bench/bench_confirm.py [--runs N] [--pages N]``.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.confirm import observe_loads
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.verdict import Verdict, observe

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "pages"
COMPARISONS = load_comparisons()
WORDS = ("harbour council tram river bakery school library market festival bridge garden museum station "
         "theatre orchard stadium clinic ferry tower square mayor storm budget election concert league "
         "teacher doctor farmer airport").split()
HEADLINES = [" ".join(random.Random(n).sample(WORDS, 6)).capitalize() for n in range(400)]
EDIT = "<p>Notice: the town office moves to Harbour Street from the first of next month.</p>"
_BODY_END = re.compile(rb"</body\s*>", re.IGNORECASE)


def busy(page: bytes, load: int, edit: bool = False) -> bytes:
    rng = random.Random(load)
    trending = "".join(f"<li>{h}</li>" for h in rng.sample(HEADLINES, 5))
    sponsor = " ".join(rng.sample(WORDS, 7))
    related = "".join(f"<li><a href='/r/{rng.randrange(10**6)}'>{' '.join(rng.sample(WORDS, 4))}</a></li>"
                      for _ in range(4))
    box = (f"{EDIT if edit else ''}<aside><h2>Trending now</h2><ol>{trending}</ol><p>Sponsored: {sponsor}</p>"
           f"<h3>Related</h3><ul>{related}</ul></aside>").encode()
    found = _BODY_END.search(page)
    return page[:found.start()] + box + page[found.start():] if found else page + box


@dataclass
class Tally:
    observations: int = 0
    confirmations: int = 0
    alerts: int = 0
    edits: int = 0
    edits_reported: int = 0
    hidden: int = 0  # pages whose added box is not visible text (after an unclosed script, in a hidden block)
    plain_cpu: list[float] = field(default_factory=list)
    confirm_cpu: list[float] = field(default_factory=list)


def obs(body: bytes, run: int) -> Observation:
    return Observation(key="k", url="https://site.example/page", html=body,
                       observed_at=f"2026-12-05T{run // 60:02d}:{run % 60:02d}:00Z")


def judged(first: Observation, second: Observation | None, stored: bytes, tally: Tally) -> Verdict:
    context = CompareContext()
    start = time.process_time()
    verdict = observe(first, Snapshot.decode(stored, COMPARISONS), COMPARISONS, context=context)
    tally.plain_cpu.append(time.process_time() - start)
    if second is None or not verdict.kind.changes_page:
        return verdict
    tally.confirmations += 1
    start = time.process_time()
    verdict = observe_loads(first, second, Snapshot.decode(stored, COMPARISONS), COMPARISONS, context=context)
    tally.confirm_cpu.append(time.process_time() - start)
    return verdict


def run_page(page: bytes, runs: int, noisy: bool, tally: Tally) -> None:
    def load(n: int, edit: bool = False) -> bytes:
        return busy(page, n, edit) if noisy else page

    first = observe(obs(load(0), 0), None, COMPARISONS)
    if first.keep is None:
        return
    if noisy:
        edited = observe(obs(load(0, True), 0), None, COMPARISONS).keep
        content = edited.part("content") if edited is not None else None
        if content is None or "Harbour Street" not in getattr(content, "text", ""):
            tally.hidden += 1  # neither its noise nor its edit is on the page a reader sees
            return
    stored = first.keep.encode(COMPARISONS)
    for run in range(1, runs + 2):
        edit = noisy and run == runs + 1
        if run == runs + 1 and not noisy:
            break
        verdict = judged(obs(load(2 * run, edit), run), obs(load(2 * run + 1, edit), run), stored, tally)
        tally.observations += 1
        if edit:
            tally.edits += 1
            tally.edits_reported += int(verdict.kind is Kind.CONTENT and "Harbour Street" in
                                        str(verdict.members.get("diff")))
        elif verdict.kind.reported:
            tally.alerts += 1
        if verdict.keep is not None and verdict.kind is not Kind.ERROR:
            stored = verdict.keep.encode(COMPARISONS)


def mean_ms(values: list[float]) -> str:
    return f"{1000 * sum(values) / len(values):.1f} ms" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--pages", type=int, default=0, help="at most this many corpus pages (0: all)")
    args = parser.parse_args()
    pages = sorted(CORPUS.glob("*/*.html"))
    if not pages:
        sys.exit(f"no corpus at {CORPUS}")
    if args.pages:
        pages = pages[:args.pages]
    for name, noisy in (("busy", True), ("quiet", False)):
        tally = Tally()
        for path in pages:
            run_page(path.read_bytes(), args.runs, noisy, tally)
        noise_only = tally.observations - tally.edits
        hidden = f" ({tally.hidden} left out: the added box is not visible text there)" if tally.hidden else ""
        print(f"{name}: {len(pages)} pages{hidden}, {tally.observations} observations; "
              f"{100 * tally.confirmations / tally.observations:.1f} confirmations per 100 observations; "
              f"{100 * tally.alerts / max(noise_only, 1):.1f} alerts per 100 noise-only observations; "
              f"edits reported {tally.edits_reported}/{tally.edits}; worker CPU per observation "
              f"{mean_ms(tally.plain_cpu)}, per confirmation judgement {mean_ms(tally.confirm_cpu)}")


if __name__ == "__main__":
    main()
