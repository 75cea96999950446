"""A small site served on 127.0.0.1 whose every load differs in the ways real pages do (rotating
tokens, timestamps, "N minutes ago", shuffled modules, tracking parameters), while its substance
changes only when :meth:`DemoSite.publish_changes` is called. Used by the demo and the tests."""

from __future__ import annotations

import json
import random
import secrets
import time
from datetime import UTC, datetime
from typing import Any

from .serving import ServedSite

__all__ = ["DemoSite"]

_WORDS = ("the customer may cancel any order within fourteen days of delivery provided that goods are "
          "returned unused in their original packaging and a refund will be issued to the original "
          "payment method within thirty days").split()


def _paragraph(i: int) -> str:
    rng = random.Random(i)  # the same text on every load: only the noise varies
    return f"Clause {i}. " + " ".join(rng.choice(_WORDS) for _ in range(40)) + "."


_PARAGRAPHS = [_paragraph(i) for i in range(1, 31)]


class DemoSite(ServedSite):
    """Thread-served demo site. ``version`` 1 is the original, 2 after :meth:`publish_changes`."""

    thread_name = "demo-site"

    def __init__(self) -> None:
        self.version = 1
        self.price = "89.00"
        self.listings = [("/rent/12-oak-street", "2-bed flat, Oak Street", "1,150"),
                         ("/rent/7-mill-lane", "Studio, Mill Lane", "720"),
                         ("/rent/3-park-road", "3-bed house, Park Road", "1,600")]
        self.edit_sentence = False
        #: path → (status, content type, body) served instead of the page (tests use this)
        self.overrides: dict[str, tuple[int, str, bytes]] = {}
        #: path → seconds to wait before answering (a hanging server)
        self.delays: dict[str, float] = {}

    # -- the site's substance ----------------------------------------------------------------------

    def publish_changes(self) -> None:
        """A price cut, a one-sentence edit in a long page and a new listing."""
        self.version = 2
        self.price = "79.00"
        self.edit_sentence = True
        self.listings.append(("/rent/21-canal-walk", "1-bed flat, Canal Walk", "950"))

    # -- noise ----------------------------------------------------------------------------------------

    @staticmethod
    def _noise() -> dict[str, str]:
        now = datetime.now(UTC)
        return {
            "stamp": now.strftime("%Y-%m-%d %H:%M:%S UTC"),
            "clock": now.strftime("%H:%M"),
            "ago": f"{random.randint(2, 59)} minutes ago",
            "token": secrets.token_hex(16),
            "session": secrets.token_urlsafe(24),
            "request_id": secrets.token_hex(12),
        }

    def _page(self, title: str, main: str, extra_head: str = "") -> str:
        n = self._noise()
        return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="csrf-token" content="{n['token']}">
<script>window.__STATE__ = {{"rid": "{n['request_id']}", "t": {random.random()}}};</script>
<style>.x{{color:#{random.randint(0, 0xFFFFFF):06x}}}</style>{extra_head}</head>
<body>
<header><nav><a href="/">Home</a> <a href="/terms?utm_source=nav&amp;sid={n['session']}">Terms</a></nav>
<p class="status">Page generated {n['stamp']} · updated {n['ago']} · request id {n['request_id']}</p></header>
<main>{main}</main>
<footer><p>Session token={n['session']}</p><p>Local time {n['clock']}</p></footer>
</body></html>"""

    def terms(self) -> str:
        paragraphs = list(_PARAGRAPHS)
        if self.edit_sentence:
            paragraphs[16] = paragraphs[16].replace("Clause 17.", "Clause 17. Refunds now take up to sixty days.")
        body = "<h1>Terms of sale</h1>" + "".join(f"<p>{p}</p>" for p in paragraphs)
        return self._page("Terms of sale", body)

    def product(self) -> str:
        data = {"@context": "https://schema.org", "@graph": [
            {"@type": "Organization", "name": "Demo Shop"},
            {"@type": "Product", "name": "Steel kettle 1.7 l", "sku": "KT-17",
             "offers": {"@type": "Offer", "price": self.price, "priceCurrency": "EUR",
                        "availability": "http://schema.org/InStock"}}]}
        head = f'\n<script type="application/ld+json">{json.dumps(data)}</script>'
        body = (f"<h1>Steel kettle 1.7 l</h1><p class='price'>€ {self.price}</p>"
                f"<p>{random.randint(3, 40)} people are looking at this right now</p>")
        return self._page("Steel kettle", body, head)

    def listing_page(self) -> str:
        rows = list(self.listings)
        random.shuffle(rows)  # boards reorder their results on every load
        items = "".join(
            f'<li class="listing"><a href="{path}?utm_source=board&amp;utm_campaign={secrets.token_hex(3)}'
            f'&amp;fbclid={secrets.token_urlsafe(12)}">{title}</a> <span class="price">£{rent} pcm</span>'
            f' <span class="age">posted {random.randint(1, 23)} hours ago</span></li>'
            for path, title, rent in rows)
        return self._page("Flats to rent", f"<h1>Flats to rent</h1><ul>{items}</ul>")

    def news(self) -> str:
        modules = ["<section><h2>Weather</h2><p>Mild and dry all week.</p></section>",
                   "<section><h2>Markets</h2><p>Shares closed flat.</p></section>",
                   "<section><h2>Sport</h2><p>The cup final goes to extra time.</p></section>"]
        random.shuffle(modules)  # personalised module order
        return self._page("News", "<h1>Front page</h1>" + "".join(modules))

    def routes(self) -> dict[str, Any]:
        return {"/terms": self.terms, "/product/kettle": self.product, "/listings": self.listing_page,
                "/news": self.news}

    # -- serving --------------------------------------------------------------------------------------

    def respond(self, path: str) -> tuple[int, str, bytes]:
        path_only = path.split("?", 1)[0]
        if path_only in self.overrides:
            return self.overrides[path_only]
        if path_only == "/robots.txt":
            return 200, "text/plain", b"User-agent: *\nAllow: /\n"
        route = self.routes().get(path_only)
        if route is None:
            return 404, "text/html", b"<h1>Not found</h1>"
        return 200, "text/html; charset=utf-8", route().encode("utf-8")

    def respond_to(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes]:
        delay = self.delays.get(path.split("?", 1)[0])
        if delay:
            time.sleep(delay)
        return self.respond(path)

