"""Throughput of the comparison core: normalise and simhash on pages of ~20 KB, ~100 KB and ~1 MB.

Run: ``.venv/bin/python bench/bench_core.py`` (about a minute; ``--quick`` for a smoke run).

Pages are built at run time from the real pages of ``../shared/corpus/pages/articles`` (beside the checkout) (never
copied anywhere): sample *i* of a size is article *i*'s (in name order) ``<head>`` when it takes at
most a third of the size, its ``<body>`` content, then the next articles' body contents while it is
shorter than the size, trimmed to the size (UTF-8 bytes) at a tag boundary. So a 20 KB sample is
mostly the start of one real page's body (scripts, nav, text), a 1 MB one the bodies of several.
Without the corpus, pages are generated HTML. The HTML is passed as ``str``, as the pipeline gets
it (``response.text``).

For each size it prints normalise throughput (MB/s of HTML, ms/page), then simhash throughput on
the normalised text of the same pages and the speed-up of :func:`changewatch.core.simhash.simhash`
over :func:`~changewatch.core.simhash.simhash_reference` on the very same texts, plus rows for
~100 KB and ~1 MB of normalised text (the target: >= 40x on a 100 KB page). Every time is the best
and the median of several ``time.perf_counter`` repetitions; both simhash functions are checked to
return identical fingerprints on every text.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from w3lib.encoding import html_to_unicode

from changewatch.core import normalise, simhash, simhash_reference

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "pages" / "articles"
KB = 1024
SIZES = {"20 KB": 20 * KB, "100 KB": 100 * KB, "1 MB": 1024 * KB}


@dataclass(frozen=True)
class Timing:
    best: float
    median: float


def timed(fn: Callable[[str], object], arg: str, repeat: int) -> Timing:
    fn(arg)  # warm-up: caches, lazy imports
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(arg)
        runs.append(time.perf_counter() - t0)
    return Timing(min(runs), statistics.median(runs))


def _trim(html: str, size: int) -> str:
    """*html* cut to at most *size* UTF-8 bytes, at the end of a tag when there is one nearby."""
    cut = html.encode("utf-8")[:size].decode("utf-8", "ignore")
    end = cut.rfind(">")
    return cut[: end + 1] if end > len(cut) * 0.9 else cut


def corpus_pages() -> list[str]:
    pages = []
    for path in sorted(CORPUS.glob("*.html")):
        pages.append(html_to_unicode(None, path.read_bytes())[1])
    return pages


def generated_pages(count: int = 40) -> list[str]:
    rng = random.Random(7)
    words = "the of and to in is that for it as was with be by on not he this are or his from at which".split()
    pages = []
    for i in range(count):
        paras = "".join(f"<p>{' '.join(rng.choice(words) for _ in range(80))} {i}-{j}</p>\n" for j in range(60))
        pages.append(f"<html><head><title>Page {i}</title><script>var x={i};</script></head>"
                     f"<body><nav><a href='/'>Home</a></nav><main>{paras}</main></body></html>")
    return pages


_BODY_START = re.compile(r"<body\b[^>]*>", re.IGNORECASE)


def _body_of(html: str) -> str:
    """The content of *html*'s ``<body>`` (whole documents back to back would lose all but the
    first one's text: the parser ignores what follows ``</html>``)."""
    start = _BODY_START.search(html)
    begin = start.end() if start else 0
    end = html.lower().rfind("</body>")
    return html[begin : end if end > begin else len(html)]


_HEAD = re.compile(r"<head\b.*?</head\s*>", re.IGNORECASE | re.DOTALL)


def _head_of(html: str, limit: int) -> str:
    """*html*'s ``<head>`` when it is at most *limit* bytes: cut in the middle, the rest of a
    head is often an unclosed ``<script>`` that would swallow the body."""
    head = _HEAD.search(html)
    if head is None or len(head.group().encode("utf-8")) > limit:
        return "<head><meta charset='utf-8'></head>"
    return head.group()


def samples(pages: list[str], size: int, count: int) -> list[str]:
    """*count* pages of about *size* bytes: the head of one real page (when it takes at most a
    third of *size*), its body, then the bodies of the next pages while it is shorter, trimmed."""
    out = []
    for start in range(min(count, len(pages))):
        parts = ["<!DOCTYPE html><html>", _head_of(pages[start], size // 3), "<body>"]
        length = sum(len(p.encode("utf-8")) for p in parts)
        i = start
        while length < size:
            parts.append(_body_of(pages[i % len(pages)]))
            length += len(parts[-1].encode("utf-8"))
            i += 1
        out.append(_trim("\n".join(parts), size))
    return out


def text_of(pages: list[str], size: int) -> str:
    """About *size* UTF-8 bytes of normalised text, from as many pages as it takes."""
    parts: list[str] = []
    length = 0
    i = 0
    while length < size:
        parts.append(normalise(pages[i % len(pages)]))
        length += len(parts[-1].encode("utf-8")) + 1
        i += 1
    text = "\n".join(parts).encode("utf-8")[:size].decode("utf-8", "ignore")
    return text.rsplit(" ", 1)[0]


def nbytes(texts: list[str]) -> int:
    return sum(len(t.encode("utf-8")) for t in texts)


def bench_normalise(label: str, htmls: list[str], repeat: int) -> list[str]:
    timings = [timed(normalise, h, repeat) for h in htmls]
    size = nbytes(htmls)
    texts = [normalise(h) for h in htmls]
    best = sum(t.best for t in timings)
    median = sum(t.median for t in timings)
    print(f"{label:>8} {len(htmls):>5} {size / len(htmls) / KB:>9.1f} {nbytes(texts) / len(texts) / KB:>9.1f} "
          f"{size / best / 1e6:>9.2f} {size / median / 1e6:>9.2f} {best / len(htmls) * 1e3:>9.2f} "
          f"{median / len(htmls) * 1e3:>9.2f}")
    return texts


def bench_simhash(label: str, texts: list[str], repeat: int, ref_repeat: int) -> None:
    for text in texts:
        assert simhash(text) == simhash_reference(text), f"fingerprints differ on a {label} text"
    fast = [timed(simhash, t, repeat) for t in texts]
    ref = [timed(simhash_reference, t, ref_repeat) for t in texts]
    size = nbytes(texts)
    words = sum(len(t.split()) for t in texts)
    fast_med = sum(t.median for t in fast)
    ref_med = sum(t.median for t in ref)
    fast_best = sum(t.best for t in fast)
    ref_best = sum(t.best for t in ref)
    print(f"{label:>14} {len(texts):>5} {size / len(texts) / KB:>8.1f} {words // len(texts):>7} "
          f"{size / fast_med / 1e6:>8.2f} {fast_med / len(texts) * 1e3:>8.3f} "
          f"{ref_med / len(texts) * 1e3:>9.2f} {ref_best / fast_best:>8.1f}x {ref_med / fast_med:>8.1f}x   identical")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples and repetitions (smoke run)")
    args = parser.parse_args(argv)
    quick: bool = args.quick

    if CORPUS.is_dir():
        pages = corpus_pages()
        print(f"Pages: built from {len(pages)} real pages of {CORPUS} (concatenated, trimmed to size)")
    else:
        pages = generated_pages()
        print("Pages: generated HTML (no corpus on this machine)")
    print(f"Python {sys.version.split()[0]}; times are per call, best and median of repetitions\n")
    counts = {"20 KB": 8 if quick else 41, "100 KB": 4 if quick else 41, "1 MB": 1 if quick else 4}
    repeats = {"20 KB": 3 if quick else 9, "100 KB": 3 if quick else 7, "1 MB": 2 if quick else 5}

    print("normalise (changewatch.core.text.normalise), HTML str in, normalised text out")
    print(f"{'size':>8} {'pages':>5} {'HTML KB':>9} {'text KB':>9} {'MB/s best':>9} {'MB/s med':>9} "
          f"{'ms best':>9} {'ms med':>9}")
    texts: dict[str, list[str]] = {}
    for label, size in SIZES.items():
        texts[label] = bench_normalise(label, samples(pages, size, counts[label]), repeats[label])

    print("\nsimhash on normalised text: simhash (NumPy) vs simhash_reference (per-gram, per-bit loop)")
    print(f"{'text of':>14} {'texts':>5} {'text KB':>8} {'words':>7} {'MB/s':>8} {'ms fast':>8} "
          f"{'ms ref':>9} {'x (best)':>9} {'x (med)':>9}   fingerprints")
    for label in SIZES:
        bench_simhash(f"{label} page", texts[label], repeats[label], 2 if quick else 3)
    for label, size in (("100 KB", 100 * KB), ("1 MB", 1024 * KB)):
        bench_simhash(f"{label} of text", [text_of(pages, size)], 3 if quick else 9, 2 if quick else 3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
