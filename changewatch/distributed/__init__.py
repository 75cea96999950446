"""Several crawl processes, on one or more machines, sharing one watchlist in rounds: a
scrapy-redis queue per round, and each start request claimed once per round.

``SCHEDULER = "changewatch.distributed.RoundScheduler"`` (docs/distributed.md). Every process
of a round runs the same spider over the same watchlist; each start request (a watch) is
*claimed* in Redis by the first process to reach it, keyed by its ``changewatch_key`` (or its
fingerprint), and the others skip it. Claims live under the round's name, so the next round
claims every watch afresh: no dupefilter left over from the last round hides a watch. The
round's keys are never flushed by a process that closes (scrapy-redis's
``SCHEDULER_PERSIST=False`` would empty the queue of every other node): they expire
``CHANGEWATCH_ROUND_TTL`` after the round's last process closed or died. Every live process
refreshes all its keys together at least every quarter of the TTL (on its scheduler calls, and on a
timer for a process whose every download slot is taken), so a round may last any time.

A process closes when the shared queue is empty and its own requests are done; only a process
that is still busy can push (a retry, a redirect), and it then stays to pop. If Redis loses the
round (flushed, evicted, expired) an idle process notices the round's marker is gone and claims
its start requests again: a watch observed before the loss may be fetched twice that round, none
is skipped, and the store's change log still reports each change once.

Redis may also stop answering mid-round (restarted, failed over, cut off). The scheduler never
waits for it on the crawl's event loop: it counts the outage from its first error, and meanwhile
pops nothing, keeps the requests it is given, says it has work pending (so the engine keeps
asking) and tries Redis again every few seconds. When Redis answers it claims and pushes what it
kept (and re-seeds the round if Redis came back empty); past ``CHANGEWATCH_ROUND_RETRY_TIME`` it
stops the crawl, non-zero. A claim or a push whose reply was lost may or may not have been applied:
a claim records its process, so a process that finds its own claim on a watch it still owes the
queue pushes it (a duplicate push, at worst a watch fetched twice, is preferred to a miss).

Some work is done whole by one process: a site watch's discovery (its sitemap read and judged,
or its links followed), whose callbacks are not the spider's methods and whose state lives in the
process that began it. Its requests carry a *unit* (``meta._ROUND_UNIT``, the site watch's key):
the unit is claimed once per round with its first start request, and the requests of a unit this
process claimed stay in this process's own queue, never pushed to Redis. The page requests a
sitemap's discovery makes are ordinary requests, shared by the round; while a process still reads
a sitemap, the round's idle processes wait for its pages (:mod:`changewatch.distributed.sharing`).
"""

from .connection import REDIS_CONNECT_TIMEOUT, REDIS_SOCKET_TIMEOUT, redis_server
from .keys import CLAIMED, RoundKeys, claim_value, parse_claim, round_name
from .scheduler import RoundScheduler, round_scheduler

__all__ = ["CLAIMED", "REDIS_CONNECT_TIMEOUT", "REDIS_SOCKET_TIMEOUT", "RoundKeys", "RoundScheduler", "claim_value",
           "parse_claim", "redis_server", "round_name", "round_scheduler"]
