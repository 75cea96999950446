"""The SSRF guard's settings (docs/settings.md), as part of the one parse of every changewatch
setting (:class:`changewatch.runtime.config.ChangewatchConfig`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .policy import AddressPolicy, normalise_host, parse_ip_host

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["GuardConfig", "parse_nameserver"]


def parse_nameserver(entry: str) -> tuple[str, int]:
    """``host``, ``host:port`` or ``[v6]:port`` → (IP address, port); raises ValueError.

    >>> parse_nameserver("127.0.0.1:5353"), parse_nameserver("[::1]:53"), parse_nameserver("9.9.9.9")
    (('127.0.0.1', 5353), ('::1', 53), ('9.9.9.9', 53))
    """
    text = entry.strip()
    host, port = text, "53"
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else "53"
    elif text.count(":") == 1:
        host, port = text.split(":")
    ip = parse_ip_host(host) if host else None
    if ip is None or str(ip) != normalise_host(host) or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{entry!r} is not an IP address with an optional port")
    return str(ip), int(port)


@dataclass(frozen=True, slots=True)
class GuardConfig:
    policy: AddressPolicy = field(default_factory=AddressPolicy)
    nameservers: tuple[tuple[str, int], ...] = ()

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> GuardConfig:
        """The guard's part of :meth:`ChangewatchConfig.from_settings`, which checks every
        changewatch setting: raises ConfigError (never NotConfigured) for any bad value."""
        from ..runtime.config import ChangewatchConfig

        return ChangewatchConfig.from_settings(settings).guard
