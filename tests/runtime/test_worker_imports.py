"""What a worker process imports before its first page: the comparisons and the lexbor reader,
not Scrapy, the pool's own asyncio machinery, nor the libraries only some watches need (lxml for
regions and include/ignore, NumPy for fingerprints and deep pages, price-parser and w3lib's URLs
for fields and entities). Each worker pays its imports on every crawl, in the crawl's time
(docs/performance.md, "Fixed cost")."""

from __future__ import annotations

import json
import subprocess
import sys

#: imported on first use only
LAZY = ("scrapy", "twisted", "asyncio", "numpy", "lxml", "parsel", "cssselect", "regex", "price_parser", "w3lib.url",
        "email.utils", "pypdf")


def test_a_worker_imports_what_every_page_needs_and_no_more() -> None:
    code = (
        "import json, sys\n"
        "from changewatch.runtime import worker_main\n"
        "fn = worker_main.resolve_function(b'changewatch.runtime.offload:judge_in_worker')\n"
        "from changewatch.core.comparisons import BUILTIN_COMPARISONS, load_comparisons\n"
        "load_comparisons(BUILTIN_COMPARISONS)\n"
        f"print(json.dumps(sorted(m for m in {LAZY!r} if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_what_is_imported_on_first_use_still_works() -> None:
    """A fingerprint, a region, a price and an entity key in a fresh process: each lazy import
    is found where it is used."""
    code = (
        "from changewatch.core import canonical_url, normalise, simhash\n"
        "from changewatch.core.values import normalise_fields\n"
        "from changewatch.core.text.lexbor_walker import maybe_deep\n"
        "print(simhash('the quick brown fox') != 0, normalise('<main><p>Kettle 89</p></main>', 'main'),\n"
        "      normalise_fields({'price': '£1,150 pcm'}, {'price': 'price'}), canonical_url('https://A.example/p?b=1&a=2'),\n"
        "      maybe_deep(b'<div>' * 5000), maybe_deep(b'<br>' * 5000))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] == ("True Kettle 89 {'price': '1150 GBP'} https://a.example/p?a=2&b=1 True False")
