"""The Redis client of a round, and what its errors say."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.utils.misc import load_object

if TYPE_CHECKING:
    from redis import Redis
    from scrapy.settings import BaseSettings

__all__ = ["REDIS_CONNECT_TIMEOUT", "REDIS_SOCKET_TIMEOUT", "is_redis_error", "redis_server", "where"]

#: Redis connection defaults where ``REDIS_PARAMS`` sets none: every Redis call runs on the crawl's
#: event loop, which a call blocks until it returns. scrapy-redis's 30 s socket timeouts (and
#: redis-py's default of 10 retries with backoff) would freeze the crawl that long on every call to a
#: black-holed server. A refused or reset connection is retried once, at once (a restarted server);
#: a timeout is not retried.
REDIS_SOCKET_TIMEOUT = 5.0
REDIS_CONNECT_TIMEOUT = 3.0


def redis_server(settings: BaseSettings) -> Redis:
    """The Redis client scrapy-redis's ``get_redis_from_settings`` would make, with
    :data:`REDIS_SOCKET_TIMEOUT`, :data:`REDIS_CONNECT_TIMEOUT` and one immediate retry of a
    refused or reset connection (no retry of a timeout) where ``REDIS_PARAMS`` says nothing of them."""
    from redis.backoff import NoBackoff
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.retry import Retry
    from scrapy_redis import defaults
    from scrapy_redis.connection import SETTINGS_PARAMS_MAP, get_redis

    given = settings.getdict("REDIS_PARAMS")
    params = {k: v for k, v in defaults.REDIS_PARAMS.items() if k not in ("socket_timeout", "socket_connect_timeout")}
    params.update(socket_timeout=REDIS_SOCKET_TIMEOUT, socket_connect_timeout=REDIS_CONNECT_TIMEOUT)
    if not {"retry", "retry_on_timeout", "retry_on_error"} & set(given):
        params.pop("retry_on_timeout", None)
        params["retry"] = Retry(NoBackoff(), 1, (RedisConnectionError,))
    params.update(given)
    for source, dest in SETTINGS_PARAMS_MAP.items():
        value = settings.get(source)
        if value:
            params[dest] = value
    if isinstance(params.get("redis_cls"), str):
        params["redis_cls"] = load_object(params["redis_cls"])
    server: Redis = get_redis(**params)
    return server


def is_redis_error(exc: BaseException) -> bool:
    """Every error of a Redis call is an outage to ride out: the scheduler's calls cannot be wrong
    in a way that trying again would not show."""
    from redis.exceptions import RedisError

    return isinstance(exc, RedisError)


def where(server: Redis) -> str:
    """Where *server* is, for a message: host:port/db (or its socket), never its password."""
    kwargs = server.connection_pool.connection_kwargs
    place = kwargs.get("path") or f"{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}"
    return f"{place}/{kwargs.get('db', 0)}"
