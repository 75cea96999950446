"""Every ``changewatch_*`` key changewatch reads from or writes to ``Request.meta``, in one place.

Public keys (spiders set or read them; docs/adding-a-site.md and docs/conditional.md):

- :data:`KEY`: the key a request's observation will have, when the spider knows it before the
  fetch. A failed fetch becomes an ``error`` of that key, and only that key's validators are sent.
- :data:`CONDITIONAL`: ``False`` opts a request out of conditional requests (always a full fetch),
  like Scrapy's ``dont_cache``.
- :data:`SPEC`: what the page is extracted with; a new value forces one full fetch.
- :data:`VANTAGE`: the request's vantage point (proxy, language, cookies, headers); ``None``
  opts out of the project's.
- :data:`NOT_MODIFIED`: set by changewatch on a 304 that answered its validators
  (:class:`changewatch.middlewares.NotModified`).
- :data:`WATCH`: the watchlist entry a request of the ``watch`` spider observes.
- :data:`RENDER`: render the page in a browser: ``True``, or a mapping of ``wait_for``,
  ``timeout`` and ``block`` (docs/watchlist.md, ``render``), or a
  :class:`changewatch.render.RenderOptions`.
- :data:`SCHEDULE`: ``False``: the schedule never skips the request (a page that leads to others,
  or one part of an observation assembled over several). ``ChangewatchSpider.watch`` sets it
  with ``conditional=False`` unless told otherwise.
- :data:`EVERY`: fetch the request's key (:data:`KEY`) at most this often, a duration (``"6h"``,
  seconds): a request made sooner after the key's last observation is dropped
  (docs/schedule.md). The ``watch`` spider sets it from a watch's ``every``.
- :data:`CONFIRM`: ``False``: a change of the request's page is reported from this one load, not
  confirmed by a second (``CHANGEWATCH_CONFIRM_CHANGES``). The ``watch`` spider sets it from a
  watch's ``confirm``; ``ChangewatchSpider.watch(..., confirm=False)`` sets it.
- :data:`CONFIRMATION`: set by changewatch on the second load that confirms a change: such a load
  is never confirmed again.
- :data:`CALIBRATION`: set by changewatch on the extra loads of ``-a calibrate=N`` (their number,
  from 1): such a load only teaches its key's learned variation (docs/noise.md, "Learned noise").

The private keys (leading underscore) are changewatch's own bookkeeping between its middlewares.
"""

from __future__ import annotations

__all__ = ["CALIBRATION", "CONDITIONAL", "CONFIRM", "CONFIRMATION", "EVERY", "KEY", "NOT_MODIFIED", "RENDER",
           "SCHEDULE", "SPEC", "VANTAGE", "WATCH"]

KEY = "changewatch_key"
CONDITIONAL = "changewatch_conditional"
SPEC = "changewatch_spec"
VANTAGE = "changewatch_vantage"
NOT_MODIFIED = "changewatch_not_modified"
WATCH = "changewatch_watch"
RENDER = "changewatch_render"
EVERY = "changewatch_every"
SCHEDULE = "changewatch_schedule"
CONFIRM = "changewatch_confirm"
#: set by the pipeline on the load that confirms a change
CONFIRMATION = "changewatch_confirmation"
#: set by the pipeline on a calibration load (``-a calibrate=N``): its number, from 1
CALIBRATION = "changewatch_calibration"

#: the validators a conditional request carried (ConditionalRequestMiddleware, private)
_SENT = "_changewatch_sent"
#: a response's body size on the wire, before decompression (ConditionalRequestMiddleware, private)
_WIRE_SIZE = "_changewatch_wire_size"
#: a request changewatch made for a render (a page's resource, a dependency's re-check): not
#: conditional, not rendered (changewatch.render.fetch, private)
_SUBREQUEST = "_changewatch_subrequest"
#: on the stand-in request of a 304 the spider did not ask for: the spider's own request
_ANSWERED = "_changewatch_answered"
#: the RenderOptions a request is rendered with, once RenderMiddleware decided to render it (private)
_RENDER_OPTIONS = "_changewatch_render_options"
#: the key's stored dependency set when it was rendered again (RenderMiddleware, private)
_RENDER_PREVIOUS = "_changewatch_render_previous"
#: the dependency set a render found, as stored (RenderDownloadHandler, private)
_RENDER_DEPS = "_changewatch_render_deps"
#: a request one process of a distributed round does with the rest of its unit (a site watch's
#: discovery: its sitemap read, its links followed), named by this value: never pushed to the
#: round's shared queue (changewatch.distributed, private)
_ROUND_UNIT = "_changewatch_round_unit"
#: on a unit's start request: the unit makes requests for the whole round (a sitemap's pages):
#: the round's idle processes wait for them (changewatch.distributed.sharing, private)
_ROUND_SHARES = "_changewatch_round_shares"
#: a link-mode site page's request: validators only with the page's stored links, else a full
#: fetch; on its response, the links found, stored with its validators (spiders/site.py, private)
_LINKS = "_changewatch_links"
#: the key's due state (a DueEntry; None: never fetched), read by whoever made the request with
#: what it read of the store: ScheduleMiddleware decides with it and reads no due row for it
#: (a site watch's pages, read with its page set; private)
_DUE_ENTRY = "_changewatch_due_entry"
