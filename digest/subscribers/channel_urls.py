"""What a channel's Apprise URL may be, checked where it is given: by the operator
(`digest subscribers add/set --channel`) or by the subscriber on the preferences page.

A channel's URL is stored as given; `{env:NAME}` placeholders in it (a bot token, a password)
are resolved from the environment when a message is sent, never stored resolved. Only the
operator may use placeholders: a URL typed on the preferences page could otherwise send the
service's own secrets to an address of the subscriber's choosing. For the same reason a
page-given URL whose service talks to a host of the URL's choosing (json://, ntfy://, gotify://...)
must name a public address unless `channels.allow_private_networks` is on (checked when it is
saved; a name that later resolves elsewhere is not re-checked).

Not every Apprise plugin names its host in the URL's host: vapid fetches `keyfile=` and
`subfile=` (paths or URLs) and posts where the subscription file says, zulip builds its host
from the organisation, nostr talks to any `relay=`, matrix follows the host's `.well-known`,
syslog writes to this machine's log. So the page takes only the services of `PAGE_SCHEMES`,
each read in Apprise 2.3's plugin to talk to its own fixed API host or to the URL's host (which
is checked), and only the arguments listed for it: none that names a file, a key, another host,
a redirect or TLS verification. The operator may allow more services (`channels.page_schemes`);
those are checked the same way and refuse the arguments of `_NEVER_FROM_PAGE`. The operator's
own channels (`--channel`) take any URL. Sending them is `digest.deliver.channels`' part.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Collection, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from digest.errors import InvalidChannelError, TemporaryDeliveryError

if TYPE_CHECKING:  # Apprise is imported when a channel is checked or sent to
    from apprise import AppriseAsset, NotifyBase
    from apprise.manager_plugins import NotificationManager

__all__ = [
    "PAGE_SCHEMES",
    "apprise_asset",
    "body_limit",
    "check_channel",
    "clip",
    "placeholders",
    "resolve",
    "scheme_of",
    "shown_url",
]

_PLACEHOLDER = re.compile(r"\{env:([^{}]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_STAND_INS = ("placeholder", "123456789:AAHplaceholderplaceholderplaceholder0", "a1b2c3d4e5f60718")

# Arguments any page-given URL may carry: how the text is shaped, nothing that is sent elsewhere.
_SHAPE_ARGUMENTS = frozenset({"format", "overflow", "emojis", "tz"})
# The services a subscriber may add on the preferences page, with the arguments each may carry
# there beyond those. Read in each plugin (Apprise 2.3): a fixed API host (tgram, discord, slack,
# pover, pbul, gchat) or the URL's own host, which `check_channel` checks; every one of them
# sends with `allow_redirects=self.redirects`, which `AppriseTransport` turns off.
PAGE_SCHEMES: Mapping[str, frozenset[str]] = {
    **dict.fromkeys(("json", "jsons", "xml", "xmls", "form", "forms"), frozenset({"method"})),
    **dict.fromkeys(("ntfy", "ntfys"), frozenset({"priority", "tags", "xtags", "auth", "token"})),
    **dict.fromkeys(("gotify", "gotifys"), frozenset({"priority"})),
    "tgram": frozenset({"to", "silent", "preview", "topic", "thread"}),
    "discord": frozenset({"botname", "thread"}),
    "slack": frozenset({"to", "footer", "blocks"}),
    **dict.fromkeys(("mmost", "mmosts"), frozenset({"to", "channel", "channels", "botname"})),
    "pover": frozenset({"to", "priority", "sound"}),
    "pbul": frozenset({"to"}),
    "gchat": frozenset(),
    **dict.fromkeys(("signal", "signals"), frozenset({"to", "from", "batch", "status"})),
    **dict.fromkeys(("rocket", "rockets"), frozenset({"to", "mode", "webhook"})),
    **dict.fromkeys(("apprise", "apprises"), frozenset({"to", "tags", "method"})),
    **dict.fromkeys(("hassio", "hassios"), frozenset({"to", "nid", "prefix"})),
    **dict.fromkeys(("ncloud", "nclouds", "nctalk", "nctalks"), frozenset({"to", "url_prefix"})),
}
# Webhooks take headers (+name), query parameters (-name) and payload fields (:name).
_WEBHOOK_EXTRAS = ("json", "jsons", "xml", "xmls", "form", "forms")
# Arguments refused in a page-given URL even for a service the operator allowed: each names a
# file, a key, another host, a redirect, TLS verification, or holds the sender up.
_NEVER_FROM_PAGE = frozenset(
    {
        "keyfile", "subfile", "relay", "blossom", "discovery", "template", "attach",
        "verify", "redirect", "cto", "rto", "retry", "wait", "store", "ping",
    }
)  # fmt: skip


@cache
def apprise_asset() -> AppriseAsset:
    import apprise

    # No icon URL (a self-hosted digest points no one at Apprise's GitHub), nothing on disk.
    return apprise.AppriseAsset(
        app_id="digest",
        app_desc="digest news digest",
        app_url="",
        image_url_mask="",
        image_url_logo="",
        storage_mode="memory",
        http_redirects=False,
    )


def placeholders(url: str) -> list[str]:
    """The environment variables a channel URL names (`{env:NAME}`), in order."""
    return [m.group(1) for m in _PLACEHOLDER.finditer(url)]


def resolve(url: str, environ: Mapping[str, str]) -> str:
    """The URL with each `{env:NAME}` replaced by that variable's value; TemporaryDeliveryError
    (the operator can still set it, and the retries will pick it up) when one is not set."""
    missing = [name for name in placeholders(url) if not environ.get(name)]
    if missing:
        names = ", ".join(dict.fromkeys(missing))
        raise TemporaryDeliveryError(
            f"the channel's URL needs the environment variable {names}, which is not set",
            reply=f"not sent: environment variable {names} is not set",
        )
    return _PLACEHOLDER.sub(lambda m: environ[m.group(1)], url)


def scheme_of(url: str) -> str:
    return url.partition("://")[0].strip().lower()


@cache
def _manager() -> NotificationManager:
    from apprise.manager_plugins import NotificationManager

    return NotificationManager()


def _plugin_class(scheme: str) -> type[NotifyBase] | None:
    manager = _manager()
    return manager[scheme] if scheme in manager else None  # noqa: SIM401 (no .get)


def body_limit(url: str) -> int | None:
    """The longest body the channel's service takes (Apprise's `body_maxlen`), if it says."""
    cls = _plugin_class(scheme_of(url))
    limit = getattr(cls, "body_maxlen", None) if cls is not None else None
    return limit if isinstance(limit, int) and limit > 0 else None


def check_channel(
    url: str,
    *,
    from_page: bool = False,
    allow_private: bool = False,
    page_schemes: Collection[str] = (),
) -> str:
    """`url` stripped, if Apprise can send to it; InvalidChannelError saying why not.

    `from_page`: the subscriber typed it on the preferences page, where only the services of
    `PAGE_SCHEMES` (and the operator's `page_schemes`) with their own arguments are taken,
    environment placeholders are refused, and so is a custom host that is not a public address
    (unless `allow_private`). Resolves the host's name then: call it in a thread.
    """
    url = url.strip()
    if not url or "://" not in url:
        raise InvalidChannelError(f"{clip(url)!r} is not an Apprise URL (scheme://...)")
    scheme = scheme_of(url)
    if scheme in ("mailto", "mailtos") and from_page:
        raise InvalidChannelError("email comes to your address already: no mailto:// channel")
    cls = _plugin_class(scheme)
    if cls is None or not getattr(cls, "enabled", True):
        raise InvalidChannelError(f"Apprise knows no service {scheme}:// (see its list of URLs)")
    if from_page:
        _check_page_scheme(scheme, page_schemes)
    names = placeholders(url)
    if names and from_page:
        raise InvalidChannelError(
            "environment placeholders ({env:...}) can only be set by the operator"
        )
    for name in names:
        if not _ENV_NAME.match(name):
            raise InvalidChannelError(f"{{env:{name}}} does not name an environment variable")
    import apprise

    # Placeholders stand for secrets whose shape the service checks (a Telegram bot token is
    # digits, a colon and letters): the URL is checkable with any value of one of these shapes.
    plugin = None
    for stand_in in _STAND_INS if names else ("",):
        trial = _PLACEHOLDER.sub(stand_in, url)
        plugin = apprise.Apprise.instantiate(trial, asset=apprise_asset(), suppress_exceptions=True)
        if plugin is not None:
            break
    if plugin is None:
        raise InvalidChannelError(
            f"Apprise cannot use {shown_url(url)!r} ({scheme}:// needs another form)"
        )
    if from_page:
        _check_page_arguments(scheme, cls.parse_url(url) or {})
        if _custom_host(plugin, cls):
            _check_host(str(plugin.host).strip("[]"), allow_private=allow_private)
    return url


def _check_page_scheme(scheme: str, extra: Collection[str]) -> None:
    if scheme in PAGE_SCHEMES or scheme in {s.strip().lower() for s in extra}:
        return
    known = ", ".join(s for s in sorted(PAGE_SCHEMES) if s.removesuffix("s") not in PAGE_SCHEMES)
    raise InvalidChannelError(
        f"{scheme}:// channels cannot be added on this page (it can: {known}); "
        "the operator can add it for you"
    )


def _check_page_arguments(scheme: str, parsed: Mapping[str, Any]) -> None:
    """Refuse a page-given URL's arguments that are not its service's own harmless ones."""
    allowed = PAGE_SCHEMES.get(scheme)
    for name in parsed.get("qsd") or {}:
        key = str(name).strip().lower()
        if allowed is None:
            ok = key not in _NEVER_FROM_PAGE
        else:
            extra = scheme in _WEBHOOK_EXTRAS and key[:1] in ("+", "-", ":")
            ok = key in allowed or key in _SHAPE_ARGUMENTS or extra
        if not ok:
            raise InvalidChannelError(
                f"a channel added on this page cannot set {key}= (an argument that can name "
                "files, keys or other hosts, or weaken TLS, is only for the operator)"
            )


def _custom_host(plugin: Any, cls: Any) -> bool:
    """Does the service connect to a host the URL chooses (not its own fixed API host)?"""
    tokens = getattr(cls, "template_tokens", {}) or {}
    if "host" not in tokens or not getattr(plugin, "host", None):
        return False
    return getattr(plugin, "mode", None) != "cloud"  # ntfy://topic is ntfy.sh's


def _check_host(host: str, *, allow_private: bool) -> None:
    if allow_private:
        return
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise InvalidChannelError(f"the host {host!r} of this channel cannot be found") from None
    for *_, sockaddr in infos:
        ip = ipaddress.ip_address(sockaddr[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
            ip = ip.ipv4_mapped
        if not ip.is_global:
            raise InvalidChannelError(
                f"the host {host!r} of this channel is not a public address ({ip})"
            )


def shown_url(url: str) -> str:
    """The URL as it may be shown to the subscriber: Apprise's privacy form (secrets elided);
    one with placeholders as stored (its secrets are in the environment); a URL Apprise cannot
    read as its scheme only."""
    import apprise

    if placeholders(url):
        return url.strip()  # the operator put its secrets in the environment
    plugin = apprise.Apprise.instantiate(
        url.strip(), asset=apprise_asset(), suppress_exceptions=True
    )
    if plugin is None:
        return f"{scheme_of(url)}://…"
    # Apprise's own options (retry=0&wait=0.5...) are noise to a reader.
    return str(plugin.url(privacy=True)).partition("?")[0]


def clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- what the service said -------------------------------------------------------------------------
