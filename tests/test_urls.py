"""canonical_url: one key per article, however a source decorated the link."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from digest.errors import InvalidURLError
from digest.store.urls import TRACKING_PARAMS, TRACKING_PREFIXES, canonical_url, is_tracking_param

# Building blocks that need no escaping, so expectations can be written down exactly.
label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
hosts = st.lists(label, min_size=1, max_size=4).map(".".join)
safe_text = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
segments = st.lists(safe_text, max_size=4).map(lambda parts: "/" + "/".join(parts))
real_names = safe_text.filter(lambda name: name != "" and not is_tracking_param(name))
real_params = st.lists(st.tuples(real_names, safe_text), max_size=4)
tracking_names = st.sampled_from(sorted(TRACKING_PARAMS)) | st.builds(
    lambda prefix, rest: prefix + rest, st.sampled_from(TRACKING_PREFIXES), safe_text
)
tracking_params = st.lists(st.tuples(tracking_names, safe_text), max_size=4)
schemes = st.sampled_from(["http", "https"])

# Anything at all after "scheme://": the stdlib decides whether it is a URL.
anything = st.text(st.characters(codec="utf-8"), max_size=60)


def query_of(pairs: list[tuple[str, str]]) -> str:
    return "&".join(f"{k}={v}" for k, v in pairs)


def randomly_upper(draw: st.DrawFn, text: str) -> str:
    return "".join(c.upper() if draw(st.booleans()) else c for c in text)


@st.composite
def decorated(draw: st.DrawFn) -> tuple[str, str]:
    """A plain URL and the same URL as a source might hand it over."""
    scheme, host, path = draw(schemes), draw(hosts), draw(segments)
    real, tracking = draw(real_params), draw(tracking_params)
    plain = f"{scheme}://{host}{path}" + (f"?{query_of(real)}" if real else "")

    # Tracking parameters anywhere between the real ones, whose order is kept.
    mixed = list(real)
    for pair in tracking:
        mixed.insert(draw(st.integers(0, len(mixed))), pair)
    default_port = {"http": ":80", "https": ":443"}[scheme] if draw(st.booleans()) else ""
    fragment = "#" + draw(safe_text) if draw(st.booleans()) else ""
    query = f"?{query_of(mixed)}" if mixed or draw(st.booleans()) else ""
    variant = (
        f"{randomly_upper(draw, scheme)}://{randomly_upper(draw, host)}{default_port}"
        f"{path}{query}{fragment}"
    )
    return plain, variant


def parses_as_http(url: str) -> bool:
    """What canonical_url promises a key for: surrounding whitespace is not part of a URL."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


@given(decorated())
def test_decorated_variants_share_the_plain_urls_key(urls: tuple[str, str]) -> None:
    plain, variant = urls
    assert canonical_url(variant) == canonical_url(plain)


@given(decorated())
def test_key_keeps_real_parameters_in_order_and_drops_tracking(urls: tuple[str, str]) -> None:
    plain, variant = urls
    key = canonical_url(variant)
    names = [pair.split("=", 1)[0] for pair in urlsplit(key).query.split("&") if pair]
    assert not any(is_tracking_param(name) for name in names)
    assert urlsplit(key).query == urlsplit(plain).query


@given(schemes, anything, anything)
@example("http", "Example.COM:80", "/A/b?utm_source=x#top")
@example("https", "bücher.DE", "/straße?q=ü")
@example("http", "[::FFFF:1.2.3.4]:8080", "/x y")
@example("http", "a..b", "")
@example("http", "a:99999", "/")
@example("http", "a:port", "/")
@example("http", "user:P%40ss@host", "?&&x=1&")
@example("http", "\u00df" * 70, "")
def test_any_parseable_http_url_gets_a_stable_key(scheme: str, netloc: str, rest: str) -> None:
    url = f"{scheme}://{netloc}{rest}"
    assume(parses_as_http(url))
    key = canonical_url(url)
    assert key.startswith(f"{scheme}://")
    assert parses_as_http(key)
    assert canonical_url(key) == key
    assert "#" not in key


@given(anything)
@example("")
@example("not a url")
@example("ftp://example.com/file")
@example("//example.com/no-scheme")
@example("http:///no-host")
@example("javascript:alert(1)")
@example("http://[::1/unclosed")
def test_anything_else_is_an_invalid_url_error(text: str) -> None:
    try:
        key = canonical_url(text)
    except InvalidURLError:
        assert not parses_as_http(text)
    else:
        assert canonical_url(key) == key


@pytest.mark.parametrize(
    ("url", "key"),
    [
        (
            "HTTPS://News.Example.COM:443/World/Story?b=2&a=1",
            "https://news.example.com/World/Story?b=2&a=1",
        ),
        ("http://example.com", "http://example.com/"),
        ("http://example.com/?", "http://example.com/"),
        ("http://example.com/a?utm_source=x&utm_medium=y", "http://example.com/a"),
        ("http://example.com/a?fbclid=1&id=7&gclid=2#comments", "http://example.com/a?id=7"),
        ("http://example.com/a?UTM_Source=x&Utm%5Fcampaign=y&id=7", "http://example.com/a?id=7"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://example.com:80/a", "https://example.com:80/a"),
        ("http://Bücher.example/", "http://xn--bcher-kva.example/"),
        ("http://example.com/caf\u00e9 au lait", "http://example.com/caf%C3%A9%20au%20lait"),
        ("http://example.com/caf%C3%A9", "http://example.com/caf%C3%A9"),
        ("  https://example.com/a\n", "https://example.com/a"),
    ],
)
def test_known_urls_map_to_expected_keys(url: str, key: str) -> None:
    assert canonical_url(url) == key


def test_path_case_and_unknown_parameters_survive() -> None:
    key = canonical_url("https://example.com/Article/ABC?ref=home&Page=2&page=1")
    assert key == "https://example.com/Article/ABC?ref=home&Page=2&page=1"


@pytest.mark.parametrize("url", ["", "mailto:x@example.com", "file:///etc/passwd", "http://"])
def test_non_http_urls_raise_invalid_url_error_which_is_a_value_error(url: str) -> None:
    with pytest.raises(ValueError, match="http"):
        canonical_url(url)
    with pytest.raises(InvalidURLError):
        canonical_url(url)
