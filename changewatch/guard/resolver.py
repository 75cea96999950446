"""The name resolver every connection of the crawl uses, refusing addresses the policy forbids.

``TWISTED_DNS_RESOLVER = "changewatch.guard.GuardedResolver"`` (the project's settings) installs it
on the reactor; the guard middleware installs it itself when a process was started without it.
Twisted's ``HostnameEndpoint``, which Scrapy's HTTP/1.1 handler connects through, asks the
reactor's ``nameResolver`` for the addresses of every host, IP literals included, and connects
only to the addresses it is given: checking them here covers redirects and DNS rebinding (a name
that answers a public address first and 127.0.0.1 next), which checking the URL cannot.
"""

from __future__ import annotations

import logging
import socket
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Literal

from twisted.internet import defer
from twisted.internet._resolver import GAIResolver, HostResolution
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.interfaces import IHostnameResolver, IResolutionReceiver
from twisted.names import client, dns
from zope.interface import implementer, provider

from ..config import ChangewatchConfig, ConfigError
from ..core.addresses import AddressPolicy, GuardConfig, Refusal, iter_ips, normalise_host

__all__ = ["GuardedResolver", "NameserverResolver", "installed_guard"]

logger = logging.getLogger(__name__)

_TCP: Literal["TCP"] = "TCP"
_REFUSALS_KEPT = 1024


def _key(host: str) -> str:
    """One spelling of a host name for both sides: Twisted resolves the Unicode form of an
    internationalised name, the request URL holds its punycode."""
    name = normalise_host(host)
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:
        return name


@implementer(IHostnameResolver)
class NameserverResolver:
    """Resolves with DNS queries (A and AAAA) to the given nameservers only: no /etc/hosts, no
    cache (``CHANGEWATCH_SSRF_NAMESERVERS``)."""

    def __init__(self, reactor: Any, servers: Sequence[tuple[str, int]], timeout: Sequence[int] = (1, 3, 11)):
        self._client: Any = client.Resolver(  # type: ignore[no-untyped-call]
            servers=list(servers), reactor=reactor, timeout=tuple(timeout))

    def resolveHostName(self, resolutionReceiver: Any, hostName: str, portNumber: int = 0,
                        addressTypes: Sequence[type[Any]] | None = None,
                        transportSemantics: str = "TCP") -> Any:
        resolution = HostResolution(hostName)
        resolutionReceiver.resolutionBegan(resolution)
        types = addressTypes or (IPv4Address, IPv6Address)
        queries = ([self._client.lookupAddress(hostName)] if IPv4Address in types else []) + (
            [self._client.lookupIPV6Address(hostName)] if IPv6Address in types else [])

        def deliver(results: list[tuple[bool, Any]]) -> None:
            for ok, result in results:
                for record in (result[0] if ok else []):
                    if record.type == dns.A:
                        resolutionReceiver.addressResolved(IPv4Address(_TCP, record.payload.dottedQuad(), portNumber))
                    elif record.type == dns.AAAA:
                        host = socket.inet_ntop(socket.AF_INET6, record.payload.address)
                        resolutionReceiver.addressResolved(IPv6Address(_TCP, host, portNumber))
            resolutionReceiver.resolutionComplete()

        defer.DeferredList(queries, consumeErrors=True).addCallback(deliver)
        return resolution


@provider(IResolutionReceiver)
class _CheckingReceiver:
    """Holds a resolution's addresses back until all are known, then passes them all on, or none."""

    def __init__(self, guard: GuardedResolver, receiver: Any, host: str):
        self.guard, self.receiver, self.host = guard, receiver, host
        self.addresses: list[Any] = []

    def resolutionBegan(self, resolution: Any) -> None:
        self.receiver.resolutionBegan(resolution)

    def addressResolved(self, address: Any) -> None:
        self.addresses.append(address)

    def resolutionComplete(self) -> None:
        if not self.guard.refuse(self.host, [getattr(a, "host", "") for a in self.addresses]):
            for address in self.addresses:
                self.receiver.addressResolved(address)
        self.receiver.resolutionComplete()


@implementer(IHostnameResolver)
class GuardedResolver:
    """An ``IHostnameResolver`` that passes on a name's addresses only when the policy allows
    every one of them. A refused name resolves to nothing (the connection fails as a DNS error);
    :meth:`refusal` tells the guard middleware why, so the error names the rule."""

    def __init__(self, reactor: Any, policy: AddressPolicy, inner: Any):
        self.reactor = reactor
        self.policy = policy
        self.inner = inner
        self._refusals: OrderedDict[str, Refusal] = OrderedDict()
        #: built with the default policy because the process's settings were bad (from_crawler):
        #: the SSRF middleware replaces it with one of the crawl's settings
        self.provisional = False
        #: (host, port) pairs passed without a check: local sites changewatch itself serves
        #: (``CrawlServices.trust_origin``), never anything a watchlist or a page names
        self.trusted: set[tuple[str, int]] = set()

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> GuardedResolver:
        # Scrapy passes the CrawlerProcess here: these are the process's settings, not a spider's,
        # read while the reactor is set up, before any crawl. A bad changewatch setting raised
        # from here would end the process with a traceback; the crawl reads the same settings at
        # its start and says what is wrong in one line (exit status 1). Meanwhile, and should a
        # spider's own settings be fine, the guard stands with the default policy, the strictest,
        # until the SSRF middleware puts the crawl's own in its place.
        try:
            config = ChangewatchConfig.from_settings(crawler.settings).guard
        except ConfigError:
            guard = cls.for_config(reactor, GuardConfig(AddressPolicy.build(), ()), None)
            guard.provisional = True
            return guard
        return cls.for_config(reactor, config, None)

    @classmethod
    def for_config(cls, reactor: Any, config: GuardConfig, fallback: Any) -> GuardedResolver:
        """Nameservers when configured; else *fallback*, else the system's getaddrinfo."""
        if config.nameservers:
            inner: Any = NameserverResolver(reactor, config.nameservers)
        else:
            inner = fallback or GAIResolver(reactor, reactor.getThreadPool)
        return cls(reactor, config.policy, inner)

    def trust(self, host: str, port: int) -> None:
        self.trusted.add((normalise_host(host), port))

    def install_on_reactor(self) -> None:
        self.reactor.installNameResolver(self)

    def resolveHostName(self, resolutionReceiver: Any, hostName: str, portNumber: int = 0,
                        addressTypes: Sequence[type[Any]] | None = None,
                        transportSemantics: str = "TCP") -> Any:
        if self.trusted and (normalise_host(hostName), portNumber) in self.trusted:
            return self.inner.resolveHostName(resolutionReceiver, hostName, portNumber, addressTypes,
                                              transportSemantics)
        literal = next(iter_ips([normalise_host(hostName)]), None)
        if literal is not None:
            # an IP literal: no lookup (a nameserver would not know it), only the check
            return self._literal(resolutionReceiver, hostName, portNumber, str(literal), literal.version)
        if not self.policy.checks_addresses or self.policy.host_allowed(hostName):
            return self.inner.resolveHostName(resolutionReceiver, hostName, portNumber, addressTypes,
                                              transportSemantics)
        receiver = _CheckingReceiver(self, resolutionReceiver, hostName)
        self.inner.resolveHostName(receiver, hostName, portNumber, addressTypes, transportSemantics)
        return HostResolution(hostName)

    def _literal(self, receiver: Any, host: str, port: int, ip: str, version: int) -> Any:
        resolution = HostResolution(host)
        receiver.resolutionBegan(resolution)
        if not self.refuse(host, [ip]):
            receiver.addressResolved((IPv4Address if version == 4 else IPv6Address)(_TCP, ip, port))
        receiver.resolutionComplete()
        return resolution

    def refuse(self, host: str, addresses: Sequence[str]) -> bool:
        """Check a name's answers; remember and log a refusal."""
        key = _key(host)
        refusal = self.policy.addresses_refusal(iter_ips(addresses), host)
        if refusal is None:
            self._refusals.pop(key, None)
            return False
        logger.debug("SSRF guard: refused to connect: %s", refusal)
        self._refusals[key] = refusal
        self._refusals.move_to_end(key)
        while len(self._refusals) > _REFUSALS_KEPT:
            self._refusals.popitem(last=False)
        return True

    def refusal(self, host: str) -> Refusal | None:
        """Why the last resolution of *host* was refused (None: it was not)."""
        return self._refusals.get(_key(host))


def installed_guard(reactor: Any) -> GuardedResolver | None:
    resolver = getattr(reactor, "nameResolver", None)
    return resolver if isinstance(resolver, GuardedResolver) else None
