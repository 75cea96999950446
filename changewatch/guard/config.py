"""The SSRF guard's settings (docs/settings.md), read once into a frozen dataclass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings

from .policy import AddressPolicy, normalise_host, parse_ip_host

__all__ = ["GuardConfig"]


def _nameserver(entry: Any) -> tuple[str, int]:
    """``host``, ``host:port`` or ``[v6]:port`` → (IP address, port); raises ValueError."""
    text = str(entry).strip()
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


def _list(settings: BaseSettings, name: str) -> list[str]:
    """A list setting; a string is split on commas (``-s NAME=a,b``)."""
    return [str(v).strip() for v in settings.getlist(name) if str(v).strip()]


@dataclass(frozen=True, slots=True)
class GuardConfig:
    policy: AddressPolicy
    nameservers: tuple[tuple[str, int], ...] = ()

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> GuardConfig:
        """Raises NotConfigured naming the setting with a bad value."""
        try:
            policy = AddressPolicy.build(
                enabled=settings.getbool("CHANGEWATCH_SSRF_ENABLED", True),
                allow_private=settings.getbool("CHANGEWATCH_ALLOW_PRIVATE", False),
                allowed_hosts=_list(settings, "CHANGEWATCH_SSRF_ALLOWED_HOSTS"),
                allowed_networks=_list(settings, "CHANGEWATCH_SSRF_ALLOWED_NETWORKS"))
        except ValueError as exc:
            raise NotConfigured(f"CHANGEWATCH_SSRF_ALLOWED_NETWORKS: {exc}") from None
        try:
            nameservers = tuple(_nameserver(e) for e in _list(settings, "CHANGEWATCH_SSRF_NAMESERVERS"))
        except ValueError as exc:
            raise NotConfigured(f"CHANGEWATCH_SSRF_NAMESERVERS: {exc}") from None
        return cls(policy, nameservers)
