"""SSRF guard: URL checks, the address policy, and its enforcement at connect time."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.config import FetchConfig
from digest.errors import BlockedAddressError, InvalidURLError
from digest.fetch.client import HttpClient
from digest.fetch.guard import AddressPolicy, AddressRefused, check_url
from tests.newsweb import NewsWeb

DEFAULT = AddressPolicy()

PRIVATE_V4 = [
    "127.0.0.0/8",
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "169.254.0.0/16",
    "100.64.0.0/10",
    "0.0.0.0/8",
    "192.0.2.0/24",
    "198.18.0.0/15",
    "224.0.0.0/4",
    "240.0.0.0/4",
]
PRIVATE_V6 = ["::1/128", "fe80::/10", "fc00::/7", "ff00::/8", "2001:db8::/32", "::/128"]


def _in(network: str) -> st.SearchStrategy[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    net = ipaddress.ip_network(network)
    return st.integers(0, net.num_addresses - 1).map(lambda i: net[i])


private_v4 = st.sampled_from(PRIVATE_V4).flatmap(_in)
private_v6 = st.sampled_from(PRIVATE_V6).flatmap(_in)
any_ip = st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6))


def disguises(v4: ipaddress.IPv4Address) -> list[ipaddress.IPv6Address]:
    """The same IPv4 destination written as IPv6: mapped, 6to4, NAT64, IPv4-compatible."""
    n = int(v4)
    return [
        ipaddress.IPv6Address(f"::ffff:{v4}"),
        ipaddress.IPv6Address((0x2002 << 112) | (n << 80) | 1),
        ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | n),
        ipaddress.IPv6Address(n),
    ]


# -- the policy ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ip", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("10.1.2.3", "private network"),
        ("192.168.1.1", "private network"),
        ("169.254.169.254", "link-local address"),
        ("100.64.0.1", "shared address space"),
        ("0.0.0.0", "unspecified address"),
        ("224.0.0.1", "multicast address"),
        ("::1", "loopback"),
        ("fe80::1", "link-local address"),
        ("fd00::1", "private network"),
        ("ff02::1", "multicast address"),
        ("::ffff:10.0.0.1", "private network"),
        ("2002:a00:1::1", "private network inside 6to4 address"),
        ("64:ff9b::a9fe:a9fe", "link-local address"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo tunnel"),
    ],
)
def test_non_public_addresses_are_refused_with_a_reason(ip: str, reason: str) -> None:
    assert DEFAULT.refusal(ip) == reason


@pytest.mark.parametrize(
    "ip", ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]
)
def test_public_addresses_are_allowed(ip: str) -> None:
    assert DEFAULT.allows(ip)


@given(private_v4)
def test_private_ipv4_is_refused_in_every_ipv6_disguise(v4: ipaddress.IPv4Address) -> None:
    assert not DEFAULT.allows(v4)
    for v6 in disguises(v4):
        assert not DEFAULT.allows(v6), v6


@given(private_v6)
def test_private_ipv6_is_refused(v6: ipaddress.IPv6Address) -> None:
    assert not DEFAULT.allows(v6)


@given(st.ip_addresses(v=4))
def test_mapped_address_is_judged_like_its_ipv4(v4: ipaddress.IPv4Address) -> None:
    mapped = ipaddress.IPv6Address(f"::ffff:{v4}")
    assert DEFAULT.allows(mapped) == DEFAULT.allows(v4)
    narrow = AddressPolicy(allowed_networks=["127.0.0.1/32"])
    assert narrow.allows(mapped) == narrow.allows(v4)


@given(any_ip)
def test_allowed_addresses_are_global_unicast(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    if DEFAULT.allows(ip):
        plain = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip
        assert plain.is_global
        assert not plain.is_multicast


@given(any_ip)
def test_refusal_names_a_reason_exactly_when_refused(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    reason = DEFAULT.refusal(ip)
    assert (reason is None) == DEFAULT.allows(ip)
    assert reason is None or reason.strip()


@given(any_ip)
def test_allow_private_networks_allows_everything(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    assert AddressPolicy(allow_private=True).allows(ip)


@given(st.sampled_from(PRIVATE_V4[:6]).flatmap(_in), st.integers(8, 32), private_v4)
def test_allowed_network_opens_its_addresses_and_no_others(
    inside: ipaddress.IPv4Address, prefix: int, other: ipaddress.IPv4Address
) -> None:
    net = ipaddress.ip_network(f"{inside}/{prefix}", strict=False)
    policy = AddressPolicy(allowed_networks=[str(net)])
    assert policy.allows(inside)
    assert policy.allows(ipaddress.IPv6Address(f"::ffff:{inside}"))
    assert policy.allows(other) == (other in net)


@given(any_ip, st.lists(st.sampled_from([*PRIVATE_V4, *PRIVATE_V6]), max_size=4))
def test_allowing_more_networks_never_refuses_more(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address, nets: list[str]
) -> None:
    if DEFAULT.allows(ip):
        assert AddressPolicy(allowed_networks=nets).allows(ip)


def test_socket_factory_refuses_before_creating_a_socket() -> None:
    with pytest.raises(AddressRefused) as caught:
        DEFAULT.socket_factory((socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.1", 80)))
    assert caught.value.reason == "private network"
    with pytest.raises(AddressRefused):
        DEFAULT.socket_factory(
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("fe80::1%lo", 80, 0, 1))
        )


def test_socket_factory_makes_a_socket_for_an_allowed_address() -> None:
    policy = AddressPolicy(allowed_networks=["127.0.0.1/32"])
    sock = policy.socket_factory((socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 80)))
    try:
        assert sock.family == socket.AF_INET
    finally:
        sock.close()


# -- enforcement on real connections -------------------------------------------------------------


async def test_loopback_is_refused_by_default_before_any_request(news_web: NewsWeb) -> None:
    async with HttpClient(FetchConfig()) as http:
        with pytest.raises(BlockedAddressError) as caught:
            await http.get(news_web.url("/technology/chip-plant.html"))
    message = str(caught.value)
    assert "resolves to 127.0.0.1 (loopback)" in message
    assert "fetch.allow_private_networks = true" in message
    assert news_web.total_hits == 0


async def test_hostname_resolving_to_loopback_is_refused(news_web: NewsWeb) -> None:
    url = news_web.url("/technology/chip-plant.html").replace("127.0.0.1", "localhost")
    async with HttpClient(FetchConfig()) as http:
        with pytest.raises(BlockedAddressError, match="blocked address"):
            await http.get(url)
    assert news_web.total_hits == 0


async def test_allow_private_networks_reaches_loopback(news_web: NewsWeb) -> None:
    async with HttpClient(FetchConfig(allow_private_networks=True)) as http:
        resp = await http.get(news_web.url("/teaser.html"))
    assert resp.status == 200


# -- check_url -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        ("", "empty URL"),
        ("   ", "empty URL"),
        ("ftp://example.com/file", "only http and https"),
        ("javascript:alert(1)", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("/relative/path", "not an absolute URL"),
        ("example.com/page", "not an absolute URL"),
        ("http://", "no host"),
        ("http://exa mple.com/", "spaces or control characters"),
        ("http://example.com:99999/", "not a valid URL"),
        ("http://example.com/" + "a" * 5000, "too long"),
    ],
)
def test_bad_urls_are_refused_with_a_clear_message(url: str, complaint: str) -> None:
    with pytest.raises(InvalidURLError, match=complaint):
        check_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/news/2025/05/12/story.html?utm_source=x#top",
        "http://127.0.0.1:8080/path",
        "http://[::1]:8080/",
        "https://bücher.example/straße",
    ],
)
def test_good_urls_pass(url: str) -> None:
    checked = check_url(url)
    assert checked.startswith(("http://", "https://"))


@settings(max_examples=300)
@given(st.text(max_size=300))
def test_check_url_on_any_text_returns_a_url_or_says_why_not(text: str) -> None:
    try:
        checked = check_url(text)
    except InvalidURLError as err:
        assert str(err) and "\n" not in str(err)
    else:
        assert checked.startswith(("http://", "https://"))
        assert check_url(checked) == checked


url_like = st.builds(
    lambda scheme, host, port, path: f"{scheme}://{host}{port}/{path}",
    st.sampled_from(["http", "https", "HTTP", "ftp", "gopher", ""]),
    st.one_of(st.text(max_size=30), st.from_regex(r"[a-z0-9.-]{1,30}", fullmatch=True)),
    st.one_of(st.just(""), st.integers(-5, 70000).map(lambda p: f":{p}")),
    st.text(max_size=60),
)


@settings(max_examples=300)
@given(url_like)
def test_check_url_on_url_shaped_text_is_idempotent(text: str) -> None:
    try:
        checked = check_url(text)
    except InvalidURLError:
        return
    assert check_url(checked) == checked
