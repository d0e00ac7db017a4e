"""Channels besides email, through Apprise: Telegram, Slack, Discord, Matrix, ntfy, Gotify,
webhooks and about a hundred more, each given as an Apprise URL.

A channel's URL is stored as given; `{env:NAME}` placeholders in it (a bot token, a password)
are resolved from the environment when a message is sent, never stored resolved. Only the
operator (`digest subscribers add/set --channel`) may use placeholders: a URL typed on the
preferences page could otherwise send the service's own secrets to an address of the
subscriber's choosing. For the same reason a page-given URL whose service talks to a host of the
URL's choosing (json://, ntfy://, gotify://...) must name a public address unless
`channels.allow_private_networks` is on (checked when it is saved; a name that later resolves
elsewhere is not re-checked).

Not every Apprise plugin names its host in the URL's host: vapid fetches `keyfile=` and
`subfile=` (paths or URLs) and posts where the subscription file says, zulip builds its host
from the organisation, nostr talks to any `relay=`, matrix follows the host's `.well-known`,
syslog writes to this machine's log. So the page takes only the services of `PAGE_SCHEMES`,
each read in Apprise 2.3's plugin to talk to its own fixed API host or to the URL's host (which
is checked), and only the arguments listed for it: none that names a file, a key, another host,
a redirect or TLS verification. The operator may allow more services (`channels.page_schemes`);
those are checked the same way and refuse the arguments of `_NEVER_FROM_PAGE`. The operator's
own channels (`--channel`) take any URL. Redirects are never followed, for any channel: a
checked public host could otherwise send the message on to a private one.

Apprise is synchronous (requests): each message is one `Apprise.notify` call in a worker
thread, with the service's socket timeouts set from `channels.timeout` and the call bounded by
it too. `notify` answers with a status and the log lines of the attempt (Apprise 2's
`AppriseResult`); `outcome` reads them into the ledger's terms: the HTTP status and what the
service answered, temporary (429, 408, 5xx, a connection that failed or timed out) or permanent
(another 4xx). A connection that could not be made means the service is down, and one that
took more than half its time is slow: the rest of that host's messages wait for the next run
(`Channels.scope`), while other hosts' go on at once (`digest.deliver.sender.deliver`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import socket
import time
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from email.message import EmailMessage
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from digest.deliver.transport import SendResult
from digest.errors import (
    DeliveryError,
    InvalidChannelError,
    PermanentDeliveryError,
    TemporaryDeliveryError,
)

__all__ = [
    "AppriseTransport",
    "Channels",
    "Notification",
    "body_limit",
    "check_channel",
    "outcome",
    "placeholders",
    "resolve",
    "shown_url",
]

log = logging.getLogger(__name__)

_PLACEHOLDER = re.compile(r"\{env:([^{}]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Services whose Apprise plugin can be told to have its Markdown shown as Markdown (it sends
# plain text unless the URL says `format=markdown`).
_MARKDOWN_ON_REQUEST = frozenset({"ntfy", "ntfys", "gotify", "gotifys"})
# Services whose plugin takes extra HTTP headers: the message's id goes along as one.
_HEADER_SCHEMES = frozenset({"json", "jsons", "form", "forms", "xml", "xmls"})
MESSAGE_ID_HEADER = "X-Digest-Message-Id"
_STAND_INS = ("placeholder", "123456789:AAHplaceholderplaceholderplaceholder0", "a1b2c3d4e5f60718")
MAX_REPLY_CHARS = 300

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


@dataclass(frozen=True, slots=True)
class Notification:
    """The compact digest for one channel of one recipient. `url` is the channel's Apprise
    URL as stored (placeholders unresolved); `message_id` is the same every time the message
    is built, like an email's Message-ID."""

    recipient: str
    channel: str  # the channel's key: the ledger's name for it
    url: str
    title: str
    markdown: str
    text: str
    message_id: str


# -- URLs -----------------------------------------------------------------------------------------


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


def _scheme(url: str) -> str:
    return url.partition("://")[0].strip().lower()


@cache
def _manager() -> Any:
    from apprise.manager_plugins import NotificationManager

    return NotificationManager()


def _plugin_class(scheme: str) -> Any:
    manager = _manager()
    return manager[scheme] if scheme in manager else None  # noqa: SIM401 (no .get)


def body_limit(url: str) -> int | None:
    """The longest body the channel's service takes (Apprise's `body_maxlen`), if it says."""
    cls = _plugin_class(_scheme(url))
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
        raise InvalidChannelError(f"{_clip(url)!r} is not an Apprise URL (scheme://...)")
    scheme = _scheme(url)
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
        plugin = apprise.Apprise.instantiate(trial, asset=_asset(), suppress_exceptions=True)
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
    plugin = apprise.Apprise.instantiate(url.strip(), asset=_asset(), suppress_exceptions=True)
    if plugin is None:
        return f"{_scheme(url)}://…"
    # Apprise's own options (retry=0&wait=0.5...) are noise to a reader.
    return str(plugin.url(privacy=True)).partition("?")[0]


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- what the service said -------------------------------------------------------------------------

_STATUS = re.compile(r"error=(\d{3})")
# What requests says when the request went out and no answer came back (the service may have
# taken the message), and when no connection was made at all (it did not): the first words
# of each are what the ledger keeps of the socket error.
_LOST_REPLY = (
    ("read timed out", "read timed out"),
    ("remote end closed", "connection closed without an answer"),
    ("remotedisconnected", "connection closed without an answer"),
    ("connection reset", "connection reset"),
    ("connection aborted", "connection aborted"),
    ("incompleteread", "answer cut short"),
    ("broken pipe", "connection broken"),
)
_NO_CONNECTION = (
    ("connection refused", "connection refused"),
    ("connecttimeout", "connect timed out"),
    ("connect timeout", "connect timed out"),
    ("name or service not known", "host not found"),
    ("nodename nor servname", "host not found"),
    ("failed to resolve", "host not found"),
    ("temporary failure in name resolution", "host not found"),
    ("no route to host", "no route to host"),
    ("network is unreachable", "network unreachable"),
    ("certificate verify failed", "TLS certificate not trusted"),
    ("ssl", "TLS failed"),
)


def outcome(
    status: str, logs: Sequence[tuple[str, str]], *, service: str, timeout: float
) -> SendResult | DeliveryError:
    """What one Apprise attempt came to, from its status (SUCCESS, FAILURE, TIMEOUT) and its
    log lines (level, message): the reply to keep, or the error to record (pure)."""
    if status == "SUCCESS":
        told = [m for level, m in logs if level == "INFO"]
        return SendResult(reply=_reply(f"{service}: {told[-1] if told else 'accepted'}"))
    if status == "TIMEOUT":
        return TemporaryDeliveryError(
            f"{service} did not answer within {timeout:g} s",
            reply=f"no answer within {timeout:g} s; it may have been delivered",
            maybe_delivered=True,
            transport_down=True,  # slow: its other messages wait for the next run
        )
    problems = [m for level, m in logs if level in ("WARNING", "ERROR", "CRITICAL")]
    details = [m for level, m in logs if m.startswith("Response Details:")]
    sockets = [m for level, m in logs if m.startswith("Socket Exception:")]
    code = next((int(c) for m in reversed(problems) for c in _STATUS.findall(m)), None)
    said = problems[-1] if problems else "the service refused the message"
    if code is not None and 300 <= code < 400:
        reply = (
            f"{code}: the service sent the message elsewhere (a redirect), which is not followed"
        )
        return PermanentDeliveryError(f"{service} answered {reply}", reply=reply, code=code)
    if code is not None:
        answer = _response(details[-1]) if details else ""
        reply = _reply(f"{code} {answer}".strip() if answer else f"{code} ({said})")
        if code in (408, 425, 429) or code >= 500:
            return TemporaryDeliveryError(f"{service} answered {reply}", reply=reply, code=code)
        return PermanentDeliveryError(
            f"{service} refused the message: {reply}", reply=reply, code=code
        )
    cause = sockets[-1].removeprefix("Socket Exception:").strip().lower() if sockets else ""
    lost = next((short for sign, short in _LOST_REPLY if sign in cause), None)
    if lost is not None:
        reply = f"{lost}; it may have been delivered"
        return TemporaryDeliveryError(f"{service}: {reply}", reply=reply, maybe_delivered=True)
    refused = next((short for sign, short in _NO_CONNECTION if sign in cause), None)
    if refused is not None:
        # No connection at all: the service is down, and its other messages can wait.
        reply = _reply(f"cannot connect: {refused}")
        return TemporaryDeliveryError(f"{service}: {reply}", reply=reply, transport_down=True)
    reply = _reply(f"{said} ({cause})" if cause else said)
    return TemporaryDeliveryError(f"{service}: {reply}", reply=reply)


def _response(detail: str) -> str:
    """The service's answer from Apprise's "Response Details" line (a bytes repr)."""
    text = detail.removeprefix("Response Details:").strip()
    match = re.fullmatch(r"b(['\"])(.*)\1", text, re.DOTALL)
    if match:
        text = (
            match.group(2).encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")
        )
    return " ".join(text.split())


def _reply(text: str) -> str:
    from digest.render.sanitize import clean_text

    return _clip(clean_text(" ".join(text.split())), MAX_REPLY_CHARS)


# -- sending ---------------------------------------------------------------------------------------


@cache
def _asset() -> Any:
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


@cache
def _quiet_apprise() -> None:
    # Apprise's DEBUG lines hold the service's answer and the socket error: `outcome` needs
    # them. Captured per call; they must not also flood the service's own log.
    logger = logging.getLogger("apprise")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False


class AppriseTransport:
    """Sends a `Notification` through Apprise, one call per message in a worker thread of its
    own (`workers` of them: messages to several services go at once, and the store's threads
    never wait behind a slow service).

    `environ` resolves the URLs' placeholders; `timeout` (seconds) bounds each message: the
    service's connect and read timeouts, and the whole call. A service that takes more than
    half of it is slow: the result says so, and `deliver` defers its other messages.
    """

    def __init__(
        self, environ: Mapping[str, str], *, timeout: float = 10.0, workers: int = 16
    ) -> None:
        self._environ = environ
        self.timeout = timeout
        self._threads = ThreadPoolExecutor(workers, thread_name_prefix="apprise")
        _quiet_apprise()

    def scope(self, msg: Notification) -> str:
        """The service (host and port) a message goes to: one that is down or slow defers
        its other messages."""
        try:
            parts = urlsplit(msg.url)
            host = f"{parts.hostname or ''}:{parts.port or ''}"
        except ValueError:
            host = ""
        return f"apprise:{_scheme(msg.url)}:{host}"

    async def send(self, msg: Notification) -> SendResult:
        url = resolve(msg.url, self._environ)
        loop = asyncio.get_running_loop()
        try:
            result, took = await asyncio.wait_for(
                loop.run_in_executor(self._threads, self._timed_notify, url, msg),
                timeout=self.timeout + 5,
            )
        except TimeoutError:
            result, took = outcome("TIMEOUT", [], service=_scheme(url), timeout=self.timeout), 0.0
        slow = took > self.timeout / 2
        if isinstance(result, DeliveryError):
            result.transport_down = result.transport_down or slow
            raise result
        return replace(result, slow=True) if slow else result

    def _timed_notify(
        self, url: str, msg: Notification
    ) -> tuple[SendResult | DeliveryError, float]:
        started = time.monotonic()
        result = self._notify(url, msg)
        return result, time.monotonic() - started

    def _notify(self, url: str, msg: Notification) -> SendResult | DeliveryError:
        import apprise

        scheme = _scheme(url)
        asset = _asset()
        plugin = apprise.Apprise.instantiate(url, asset=asset, suppress_exceptions=True)
        if plugin is None:
            return PermanentDeliveryError(
                f"Apprise cannot use the channel {shown_url(msg.url)}",
                reply="not sent: Apprise cannot use this URL",
            )
        plugin.redirects = False  # whatever the URL says: see the module's docstring
        query = url.partition("?")[2]
        if "cto=" not in query:
            plugin.socket_connect_timeout = min(4.0, self.timeout)
        if "rto=" not in query:
            plugin.socket_read_timeout = self.timeout
        if scheme in _MARKDOWN_ON_REQUEST and "format=" not in query:
            plugin.notify_format = apprise.NotifyFormat.MARKDOWN
        headers = getattr(plugin, "headers", None)
        if scheme in _HEADER_SCHEMES and isinstance(headers, dict):
            headers[MESSAGE_ID_HEADER] = msg.message_id
        text_only = plugin.notify_format == apprise.NotifyFormat.TEXT
        body = msg.text if text_only else msg.markdown
        body_format = apprise.NotifyFormat.TEXT if text_only else apprise.NotifyFormat.MARKDOWN
        sender = apprise.Apprise(asset=asset)
        sender.add(plugin)
        with sender.notify(
            body=body,
            title=msg.title,
            body_format=body_format,
            timeout=self.timeout,
            log_level=logging.DEBUG,
        ) as result:
            status = result.results[0].status.name if result.results else result.status.name
            logs = [(e.level, str(e.message)) for e in result.logs()]
        found = outcome(status, logs, service=scheme, timeout=self.timeout)
        log.debug("channel %s of %s: %s", msg.channel, msg.recipient, found)
        return found

    async def aclose(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)


class Channels:
    """Every channel's transport behind one `send`: emails to the email transport (outbox or
    SMTP), notifications to Apprise. `scope` tells `deliver` which server a message needs."""

    def __init__(self, email: Any, apprise: AppriseTransport | None = None) -> None:
        self.email = email
        self.apprise = apprise

    def scope(self, msg: Any) -> str:
        if isinstance(msg, Notification) and self.apprise is not None:
            return self.apprise.scope(msg)
        return "email"

    async def send(self, msg: EmailMessage | Notification) -> SendResult:
        if isinstance(msg, Notification):
            if self.apprise is None:
                raise PermanentDeliveryError(
                    "no Apprise transport", reply="not sent: channels are not configured"
                )
            return await self.apprise.send(msg)
        return await self.email.send(msg)

    async def aclose(self) -> None:
        for transport in (self.email, self.apprise):
            close = getattr(transport, "aclose", None)
            if close is not None:
                await close()
