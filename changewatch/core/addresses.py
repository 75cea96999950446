"""The SSRF policy: which URLs and addresses a crawl may fetch. Pure functions, no Scrapy, no Twisted.

Three places apply it (docs/security.md): the downloader middleware checks the URL text of every
request and redirect, the reactor's name resolver checks every address a host name resolves to
(so DNS rebinding and redirects to internal names are covered), and the middleware checks the
address a response actually came from.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from .urls import shown_url

__all__ = ["METADATA_ADDRESSES", "AddressPolicy", "GuardConfig", "IPAddress", "IPNetwork", "Refusal", "address_rule",
           "iter_ips", "normalise_host", "parse_host_entry", "parse_ip_host", "parse_nameserver", "parse_network"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Cloud instance metadata services: credentials live behind these.
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
    "169.254.170.2",  # AWS ECS task metadata
    "169.254.169.253",  # AWS VPC DNS
    "fd00:ec2::254",  # AWS IMDS over IPv6
    "100.100.100.200",  # Alibaba Cloud
    "192.0.0.192",  # Oracle Cloud (legacy)
    "168.63.129.16",  # Azure WireServer: a public address, internal to Azure
))
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
_METADATA_NAMES = frozenset({"metadata", "metadata.google.internal", "instance-data", "instance-data.ec2.internal"})
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # well-known prefix: the last 32 bits are the IPv4 address
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
_HEX, _OCTAL, _DECIMAL = frozenset("0123456789abcdefABCDEF"), frozenset("01234567"), frozenset("0123456789")
# Dots that IDNA (UTS #46) maps to "." before a host name is looked up.
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is not made: *rule* is one stable word (docs/security.md), *detail* says what."""

    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.detail}"


def normalise_host(host: str) -> str:
    """*host* as names are compared: lower case, NFKC, IDNA dots, no brackets, no trailing dot.

    >>> normalise_host("WWW.Example.COM.")
    'www.example.com'
    >>> normalise_host("[::1]")
    '::1'
    """
    h = unicodedata.normalize("NFKC", unquote(host)).translate(_DOTS).strip().lower()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    return h[:-1] if h.endswith(".") and not h.endswith("..") else h


def _inet_aton(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address C's inet_aton (and so getaddrinfo) reads in *host*: 1 to 4 parts, each
    decimal, octal (leading 0) or hex (0x); the last part fills the remaining bytes."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        if part[:2] in ("0x", "0X") and all(c in _HEX for c in part[2:]):
            values.append(int(part[2:] or "0", 16))
        elif part.startswith("0") and all(c in _OCTAL for c in part):
            values.append(int(part, 8))
        elif part and part[0] != "0" and all(c in _DECIMAL for c in part):
            values.append(int(part))
        else:  # int() would also take signs, underscores and spaces: inet_aton does not
            return None
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (5 - len(values)):
        return None
    number = last
    for i, v in enumerate(head):
        number += v << (8 * (3 - i))
    return ipaddress.IPv4Address(number)


def parse_ip_host(host: str) -> IPAddress | None:
    """The IP address *host* spells, in any spelling a resolver accepts (dotted, decimal, octal,
    hex, shortened, IPv6 with or without brackets or zone), or None for a name.

    >>> parse_ip_host("0x7f.1"), parse_ip_host("2130706433"), parse_ip_host("0177.0.0.01")
    (IPv4Address('127.0.0.1'), IPv4Address('127.0.0.1'), IPv4Address('127.0.0.1'))
    >>> parse_ip_host("[::ffff:7f00:1]"), parse_ip_host("example.com")
    (IPv6Address('::ffff:7f00:1'), None)
    """
    h = normalise_host(host)
    if ":" in h:
        try:
            return ipaddress.IPv6Address(h.split("%", 1)[0])
        except ValueError:
            return None
    return _inet_aton(h) if h else None


def _translated_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 translation address reaches (``::ffff:a.b.c.d``, NAT64 64:ff9b::/96)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _own_rule(ip: IPAddress) -> str | None:
    if ip.is_unspecified or ip in _THIS_NETWORK:
        return "unspecified"
    if ip in METADATA_ADDRESSES:
        return "metadata"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_reserved:
        return "reserved"
    if ip.is_private:
        return "private"
    if not ip.is_global:
        return "non-global"
    return None


def address_rule(ip: IPAddress) -> str | None:
    """The rule that refuses connecting to *ip*, or None for a global unicast address. An IPv6
    address that stands for an IPv4 one (``::ffff:a.b.c.d``, NAT64, 6to4) is judged by that.

    >>> [address_rule(ipaddress.ip_address(a)) for a in ("8.8.8.8", "10.1.2.3", "::ffff:127.0.0.1",
    ...                                                   "169.254.169.254", "fe80::1", "64:ff9b::808:808")]
    [None, 'private', 'loopback', 'metadata', 'link-local', None]
    """
    if isinstance(ip, ipaddress.IPv6Address):
        translated = _translated_ipv4(ip)
        if translated is not None:
            return _own_rule(translated)
        # tunnels (6to4, Teredo) carry IPv4 addresses that must be global too
        tunnelled = [ip.sixtofour] if ip.sixtofour is not None else list(ip.teredo or ())
        for inner in tunnelled:
            if (rule := _own_rule(inner)) is not None:
                return rule
    return _own_rule(ip)


def parse_network(text: str) -> IPNetwork:
    """An allowlisted network: ``10.0.0.0/8``, ``fd00::/8``, or one address; host bits are
    ignored (``10.1.2.3/8`` is ``10.0.0.0/8``). Raises ValueError naming the entry.

    >>> parse_network(" 10.1.2.3/8 "), parse_network("::1")
    (IPv4Network('10.0.0.0/8'), IPv6Network('::1/128'))
    """
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except ValueError as exc:
        raise ValueError(str(exc)) from None  # "'x' does not appear to be an IPv4 or IPv6 network"


def parse_host_entry(text: str) -> str:
    """An allowlisted host: a name (``intranet.example``), ``.corp.example`` for a domain and
    its subdomains, or an IP literal; not a URL. Raises ValueError naming the entry.

    >>> parse_host_entry("Intranet.Example."), parse_host_entry(".corp.example"), parse_host_entry("[::1]")
    ('intranet.example', '.corp.example', '::1')
    """
    entry = text.strip()
    domain = entry.startswith(".")
    name = normalise_host(entry.lstrip("."))
    if parse_ip_host(name) is None and (not name or any(c in name for c in " /:@?#\\")):
        raise ValueError(f"{entry!r} is not a host name")
    return ("." if domain else "") + name


def _host_entries(hosts: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({("." if h.strip().startswith(".") else "") + normalise_host(h.strip().lstrip("."))
                         for h in hosts if h.strip().strip(".")}))


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """What may be fetched. *allowed_hosts*: exact names, or ``.example.org`` for a domain and its
    subdomains, never checked; *allowed_networks*: addresses fetched although not global."""

    enabled: bool = True
    allow_private: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def build(cls, *, enabled: bool = True, allow_private: bool = False, allowed_hosts: Iterable[str] = (),
              allowed_networks: Iterable[str] = ()) -> AddressPolicy:
        """Raises ValueError naming a network that is not one."""
        networks = tuple(parse_network(str(net)) for net in allowed_networks)
        return cls(enabled, allow_private, _host_entries(allowed_hosts), networks)

    @property
    def checks_addresses(self) -> bool:
        return self.enabled and not self.allow_private

    def host_allowed(self, host: str) -> bool:
        h = normalise_host(host)
        return any(h == entry or (entry.startswith(".") and (h.endswith(entry) or h == entry[1:]))
                   for entry in self.allowed_hosts)

    def address_refusal(self, ip: IPAddress, host: str) -> Refusal | None:
        """Why connecting to *ip* (what *host* resolved to) is refused, or None."""
        if not self.checks_addresses or self.host_allowed(host) or any(ip in n for n in self.allowed_networks):
            return None
        rule = address_rule(ip)
        if rule is None:
            return None
        if normalise_host(host) == str(ip):
            return Refusal(rule, str(ip))
        if parse_ip_host(host) == ip:
            return Refusal(rule, f"{host} is {ip}")
        return Refusal(rule, f"{host} resolved to {ip}")

    def addresses_refusal(self, ips: Iterable[IPAddress], host: str) -> Refusal | None:
        """The first refusal among a name's addresses: one bad answer refuses the name."""
        return next((r for r in (self.address_refusal(ip, host) for ip in ips) if r), None)

    def url_refusal(self, url: str) -> Refusal | None:
        """Why fetching *url* is refused from its text alone (scheme, credentials, an IP literal in
        any spelling, a loopback or metadata name), or None. Never raises."""
        if not self.enabled:
            return None
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
        except ValueError as exc:
            return Refusal("url", f"cannot parse the URL: {exc}")
        if parts.scheme.lower() not in ("http", "https"):
            return Refusal("scheme", f"{parts.scheme or 'no'} scheme in {shown_url(url)} (only http and https "
                                     f"are fetched)")
        if "@" in parts.netloc:
            return Refusal("credentials", "the URL carries a user name or password; use HTTP auth settings instead")
        if not host:
            return Refusal("url", f"no host in {shown_url(url)}")
        return self.host_refusal(host)

    def host_refusal(self, host: str) -> Refusal | None:
        if not self.checks_addresses or self.host_allowed(host):
            return None
        ip = parse_ip_host(host)
        if ip is not None:
            return self.address_refusal(ip, host)
        name = normalise_host(host)
        if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
            return Refusal("loopback", f"{name} is a loopback name")
        if name in _METADATA_NAMES:
            return Refusal("metadata", f"{name} is a cloud metadata service")
        return None


def iter_ips(hosts: Iterable[str]) -> Iterator[IPAddress]:
    """The IP addresses in resolver answers (IPv6 zone ids dropped); other strings are skipped."""
    for host in hosts:
        try:
            yield ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            continue


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
    """The SSRF guard's settings, parsed (CHANGEWATCH_ALLOW_PRIVATE, CHANGEWATCH_SSRF_ENABLED and
    the others): their defaults are the settings table's."""

    policy: AddressPolicy
    nameservers: tuple[tuple[str, int], ...]
