"""Channels besides email, through Apprise: Telegram, Slack, Discord, Matrix, ntfy, Gotify,
webhooks and about a hundred more, each given as an Apprise URL: the push channel type
`APPRISE` (`digest.deliver.push.PushType`), the last that `digest.deliver.push_types` asks, as
it takes any URL.

What a channel's URL may be, and the checks of a URL given on the preferences page, are
`digest.subscribers.channel_urls`'. Redirects are never followed, for any channel: a checked
public host could otherwise send the message on to a private one.

Apprise is synchronous (requests): each message is one `Apprise.notify` call in a worker
thread, with the service's socket timeouts set from `channels.timeout` and the call bounded by
it too. `notify` answers with a status and the log lines of the attempt (Apprise 2's
`AppriseResult`); `outcome` reads them into the ledger's terms: the HTTP status and what the
service answered, temporary (429, 408, 5xx, a connection that failed or timed out) or permanent
(another 4xx). A connection that could not be made means the service is down, and one that
took more than half its time is slow: the rest of that host's messages wait for the next run
(`AppriseTransport.scope`), while other hosts' go on at once (`digest.deliver.sender.deliver`).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from digest.deliver.push import Notification
from digest.deliver.transport import SendResult
from digest.errors import (
    DeliveryError,
    PermanentDeliveryError,
    TemporaryDeliveryError,
)
from digest.subscribers.channel_urls import (
    apprise_asset,
    body_limit,
    check_channel,
    clip,
    resolve,
    scheme_of,
    shown_url,
)

if TYPE_CHECKING:
    from digest.config import ChannelsConfig

__all__ = ["APPRISE", "AppriseTransport", "AppriseType", "Notification", "outcome"]

log = logging.getLogger(__name__)

# Services whose Apprise plugin can be told to have its Markdown shown as Markdown (it sends
# plain text unless the URL says `format=markdown`).
_MARKDOWN_ON_REQUEST = frozenset({"ntfy", "ntfys", "gotify", "gotifys"})
# Services whose plugin takes extra HTTP headers: the message's id goes along as one.
_HEADER_SCHEMES = frozenset({"json", "jsons", "form", "forms", "xml", "xmls"})
MESSAGE_ID_HEADER = "X-Digest-Message-Id"
MAX_REPLY_CHARS = 300


# -- URLs -----------------------------------------------------------------------------------------


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

    return clip(clean_text(" ".join(text.split())), MAX_REPLY_CHARS)


# -- sending ---------------------------------------------------------------------------------------


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

    name = "Apprise"

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
        return f"apprise:{scheme_of(msg.url)}:{host}"

    async def send(self, msg: Notification) -> SendResult:
        url = resolve(msg.url, self._environ)
        loop = asyncio.get_running_loop()
        try:
            result, took = await asyncio.wait_for(
                loop.run_in_executor(self._threads, self._timed_notify, url, msg),
                timeout=self.timeout + 5,
            )
        except TimeoutError:
            result, took = outcome("TIMEOUT", [], service=scheme_of(url), timeout=self.timeout), 0.0
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

        scheme = scheme_of(url)
        asset = apprise_asset()
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


class AppriseType:
    """The Apprise channels: any URL no other type claims (`digest.subscribers.channel_urls`
    says what such a URL may be)."""

    name = "Apprise"

    def claims(self, url: str) -> bool:
        return True

    def check(self, url: str, *, from_page: bool, config: ChannelsConfig) -> str:
        return check_channel(
            url,
            from_page=from_page,
            allow_private=config.allow_private_networks,
            page_schemes=config.page_schemes,
        )

    def shown(self, url: str) -> str:
        return shown_url(url)

    def body_limit(self, url: str) -> int | None:
        return body_limit(url)

    def transport(self, environ: Mapping[str, str], config: ChannelsConfig) -> AppriseTransport:
        return AppriseTransport(environ, timeout=config.timeout)


APPRISE = AppriseType()
