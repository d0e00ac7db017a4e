"""Canonical URLs: one key per article, however a source decorated the link.

The same story arrives with campaign parameters, fragments, upper-case hosts or an explicit default
port; all of those must map to one row. Only changes that cannot alter which page a server returns
are made: the path keeps its case and the remaining query parameters keep their order.
"""

from __future__ import annotations

from urllib.parse import quote, unquote_plus, urlsplit

from digest.errors import InvalidURLError

# Query parameters that only tell the publisher (or an ad network) where a click came from.
# Compared case-insensitively, after percent-decoding the parameter name.
TRACKING_PARAMS = frozenset(
    {
        "fbclid",  # Facebook
        "gclid",  # Google Ads
        "gclsrc",
        "dclid",  # Google Display
        "gbraid",
        "wbraid",
        "msclkid",  # Microsoft Ads
        "mc_cid",  # Mailchimp
        "mc_eid",
        "igshid",  # Instagram
        "_ga",  # Google Analytics cross-domain
        "_gl",
        "yclid",  # Yandex
        "ref_src",  # Twitter/X embeds
        "ref_url",
        "twclid",
        "ttclid",  # TikTok
        "li_fat_id",  # LinkedIn
        "mkt_tok",  # Marketo
        "_hsenc",  # HubSpot
        "_hsmi",
        "oly_anon_id",  # Omeda
        "oly_enc_id",
        "vero_id",  # Vero
        "vero_conv",
        "rb_clickid",
        "s_cid",  # Adobe
        "pk_campaign",  # Piwik
        "pk_kwd",
        "guccounter",  # Yahoo consent redirect
        "guce_referrer",
        "guce_referrer_sig",
        "smid",  # New York Times share links
        "smtyp",
    }
)
TRACKING_PREFIXES = ("utm_", "mtm_")

DEFAULT_PORTS = {"http": 80, "https": 443}

# Characters left as they are; everything else (spaces, non-ASCII, quotes...) is percent-encoded
# as UTF-8, as browsers do, so "/café" and "/caf%C3%A9" share a key. "%" is kept: escapes stay.
_PATH_SAFE = "/:@!$&'()*+,;=[]%"
_QUERY_SAFE = _PATH_SAFE + "?"


def canonical_url(url: str) -> str:
    """Return the key under which `url` (surrounding whitespace ignored) is stored.

    Raises InvalidURLError for anything that is not an absolute http(s) URL with a host (or that the
    stdlib cannot split); every such URL gets a key, even when parts of it are odd (a non-numeric
    port, a host IDNA refuses): those parts are kept as they are.
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError as err:
        raise InvalidURLError(f"not a valid URL ({err}): {_short(url)}") from None
    scheme = parts.scheme  # urlsplit lower-cases it
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise InvalidURLError(f"not an absolute http(s) URL: {_short(url)}")
    netloc = _netloc(scheme, parts.netloc)
    path = _quote(parts.path or "/", _PATH_SAFE)
    kept = [_quote(p, _QUERY_SAFE) for p in parts.query.split("&") if p and not _is_tracking(p)]
    query = "&".join(kept)
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def is_tracking_param(name: str) -> bool:
    """True when the query parameter `name` only records where a click came from."""
    key = unquote_plus(name).lower()
    return key in TRACKING_PARAMS or key.startswith(TRACKING_PREFIXES)


def _is_tracking(pair: str) -> bool:
    return is_tracking_param(pair.split("=", 1)[0])


def _netloc(scheme: str, netloc: str) -> str:
    # Split the way urllib does (SplitResult._hostinfo), but keep an invalid port as text instead
    # of raising: it is still a stable key.
    userinfo, at, hostport = netloc.rpartition("@")
    _, bracket, bracketed = hostport.partition("[")
    if bracket:
        host, _, rest = bracketed.partition("]")
        _, _, port = rest.partition(":")
        host = f"[{host.lower()}]"
    else:
        host, _, port = hostport.partition(":")
        host = _idna(host.lower())
    if port.isascii() and port.isdigit():
        port = "" if int(port) == DEFAULT_PORTS[scheme] else str(int(port))
    return f"{userinfo}{at}{host}" + (f":{port}" if port else "")


def _idna(host: str) -> str:
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:  # a label IDNA 2003 refuses: keep the lower-cased Unicode host
        return host


def _quote(text: str, safe: str) -> str:
    return quote(text, safe=safe, errors="surrogatepass")


def _short(url: str, limit: int = 200) -> str:
    return repr(url if len(url) <= limit else url[:limit] + "…")
