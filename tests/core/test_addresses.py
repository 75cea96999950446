"""The SSRF policy as pure functions: address rules, URL rules, allowlists, settings."""

from __future__ import annotations

import ipaddress

import pytest
from scrapy.settings import Settings

from changewatch.config import ChangewatchConfig, ConfigError
from changewatch.core.addresses import AddressPolicy, address_rule, parse_ip_host

DEFAULT = AddressPolicy()


@pytest.mark.parametrize(("address", "rule"), [
    ("8.8.8.8", None), ("1.1.1.1", None), ("2606:4700::1111", None), ("64:ff9b::808:808", None),
    ("127.0.0.1", "loopback"), ("127.255.255.254", "loopback"), ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"), ("2002:7f00:1::", "loopback"),
    ("10.0.0.1", "private"), ("172.31.255.255", "private"), ("192.168.0.1", "private"), ("fc00::1", "private"),
    ("::ffff:10.0.0.1", "private"), ("64:ff9b::c0a8:1", "private"), ("2001:0:808:808::f5ff:fffe", "private"),
    ("169.254.169.254", "metadata"), ("fd00:ec2::254", "metadata"), ("100.100.100.200", "metadata"),
    ("168.63.129.16", "metadata"), ("::ffff:169.254.169.254", "metadata"),
    ("169.254.0.1", "link-local"), ("fe80::1", "link-local"),
    ("224.0.0.1", "multicast"), ("239.255.255.250", "multicast"), ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"), ("0.1.2.3", "unspecified"), ("::", "unspecified"),
    ("240.0.0.1", "reserved"), ("255.255.255.255", "reserved"), ("::7f00:1", "reserved"),
    ("100.64.0.1", "non-global"),
])
def test_address_rules(address: str, rule: str | None) -> None:
    assert address_rule(ipaddress.ip_address(address)) == rule


@pytest.mark.parametrize(("host", "address"), [
    ("127.0.0.1", "127.0.0.1"), ("2130706433", "127.0.0.1"), ("0x7f000001", "127.0.0.1"),
    ("0X7F.0.0.1", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"), ("017700000001", "127.0.0.1"), ("127.1", "127.0.0.1"),
    ("127.0.1", "127.0.0.1"), ("0", "0.0.0.0"), ("127.0.0.1.", "127.0.0.1"), ("%31%32%37.0.0.1", "127.0.0.1"),
    ("\uff11\uff12\uff17\u3002\uff10\u3002\uff10\u3002\uff11", "127.0.0.1"), ("[::1]", "::1"),
    ("[fe80::1%25eth0]", "fe80::1"), ("::ffff:127.0.0.1", "::ffff:7f00:1"), ("0xA9FEA9FE", "169.254.169.254"),
    ("example.com", None), ("1.2.3.4.5", None), ("256.0.0.1", None), ("08.0.0.1", None), ("0x", "0.0.0.0"),
    ("4294967296", None), ("1e3", None), ("", None), ("[::1", None), ("0-5", None), ("0x-5", None), ("0+5", None),
    ("01_0", None), ("0x1_0", None), ("09", None), ("1..1", None),
])
def test_ip_spellings(host: str, address: str | None) -> None:
    parsed = parse_ip_host(host)
    assert (str(parsed) if parsed is not None else None) == address


@pytest.mark.parametrize(("url", "rule"), [
    ("https://example.com/", None), ("http://example.com:8080/a?b#c", None), ("HTTPS://EXAMPLE.COM", None),
    ("file:///etc/passwd", "scheme"), ("ftp://example.com/", "scheme"), ("gopher://x/", "scheme"),
    ("data:text/html,hi", "scheme"), ("//example.com/", "scheme"),
    ("http://u:p@example.com/", "credentials"), ("http://u@example.com/", "credentials"),
    ("http://example.com\\@127.0.0.1/", "credentials"),
    ("http:///path", "url"), ("http://[::1/", "url"),
    ("http://localhost/", "loopback"), ("http://LOCALHOST./", "loopback"), ("http://x.localhost/", "loopback"),
    ("http://metadata.google.internal/", "metadata"), ("http://0x7f.1/", "loopback"),
    ("http://[::ffff:169.254.169.254]/", "metadata"), ("http://localhost.example.com/", None),
])
def test_url_rules(url: str, rule: str | None) -> None:
    refusal = DEFAULT.url_refusal(url)
    assert (refusal.rule if refusal else None) == rule


def test_refusals_never_quote_credentials() -> None:
    for url in ("ftp://user:secret@files.example/a", "file://user:secret@host/etc/passwd", "http://u:secret@x/"):
        assert "secret" not in str(DEFAULT.url_refusal(url))


def test_allow_private_relaxes_addresses_only() -> None:
    policy = AddressPolicy.build(allow_private=True)
    assert policy.url_refusal("http://127.0.0.1:8000/") is None
    assert policy.url_refusal("http://localhost/") is None
    assert policy.address_refusal(ipaddress.ip_address("10.0.0.1"), "intranet") is None
    assert policy.url_refusal("file:///etc/passwd").rule == "scheme"  # type: ignore[union-attr]
    assert policy.url_refusal("http://u:p@127.0.0.1/").rule == "credentials"  # type: ignore[union-attr]


def test_disabled_policy_refuses_nothing() -> None:
    policy = AddressPolicy.build(enabled=False)
    assert policy.url_refusal("file:///etc/passwd") is None
    assert policy.address_refusal(ipaddress.ip_address("127.0.0.1"), "x") is None


def test_allowlists() -> None:
    policy = AddressPolicy.build(allowed_hosts=["Intranet.Example.", ".corp.example", " "],
                                 allowed_networks=["10.20.0.0/16", "fd00::/8"])
    assert policy.allowed_hosts == (".corp.example", "intranet.example")
    for host in ("intranet.example", "INTRANET.example.", "corp.example", "a.b.corp.example"):
        assert policy.host_allowed(host), host
    for host in ("x.intranet.example", "evilcorp.example", "corp.example.evil.test", "example"):
        assert not policy.host_allowed(host), host
    assert policy.address_refusal(ipaddress.ip_address("127.0.0.1"), "a.corp.example") is None
    assert policy.address_refusal(ipaddress.ip_address("10.20.3.4"), "wiki") is None
    assert policy.address_refusal(ipaddress.ip_address("fd12::1"), "wiki") is None
    refusal = policy.address_refusal(ipaddress.ip_address("10.21.0.1"), "wiki")
    assert refusal is not None and str(refusal) == "private: wiki resolved to 10.21.0.1"


def test_one_bad_answer_refuses_the_name() -> None:
    answers = [ipaddress.ip_address(a) for a in ("93.184.216.34", "127.0.0.1")]
    refusal = DEFAULT.addresses_refusal(answers, "example.test")
    assert refusal is not None and str(refusal) == "loopback: example.test resolved to 127.0.0.1"


def test_settings() -> None:
    config = ChangewatchConfig.from_settings(Settings({
        "CHANGEWATCH_SSRF_ALLOWED_HOSTS": "a.example, .b.example",
        "CHANGEWATCH_SSRF_ALLOWED_NETWORKS": ["10.0.0.0/8"],
        "CHANGEWATCH_SSRF_NAMESERVERS": "127.0.0.1:5353,[::1]:53,9.9.9.9"})).guard
    assert config.policy.allowed_hosts == (".b.example", "a.example")
    assert config.policy.allowed_networks == (ipaddress.ip_network("10.0.0.0/8"),)
    assert config.nameservers == (("127.0.0.1", 5353), ("::1", 53), ("9.9.9.9", 53))
    assert ChangewatchConfig.from_settings(Settings()).guard.policy == AddressPolicy()
    assert ChangewatchConfig.from_settings(Settings({"CHANGEWATCH_ALLOW_PRIVATE": "True"})).guard.policy.allow_private


@pytest.mark.parametrize(("name", "value"), [
    ("CHANGEWATCH_SSRF_ALLOWED_NETWORKS", "10.0.0.0/33"), ("CHANGEWATCH_SSRF_ALLOWED_NETWORKS", "intranet"),
    ("CHANGEWATCH_SSRF_NAMESERVERS", "dns.example"), ("CHANGEWATCH_SSRF_NAMESERVERS", "1.2.3.4:0"),
    ("CHANGEWATCH_SSRF_NAMESERVERS", "1.2.3.4:99999"), ("CHANGEWATCH_SSRF_NAMESERVERS", "0x7f.1"),
])
def test_bad_settings_stop_the_crawl_naming_the_setting(name: str, value: str) -> None:
    # ConfigError, not NotConfigured: Scrapy would drop the guard with a warning and crawl on
    with pytest.raises(ConfigError, match=name):
        ChangewatchConfig.from_settings(Settings({name: value}))
