"""Where messages go: an outbox directory of .eml files (the default) or an SMTP server.

Both answer `send(msg)` with the server's reply, or raise `TemporaryDeliveryError` (retry later:
4xx, dropped or refused connection, timeout) or `PermanentDeliveryError` (5xx, bad recipient).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import getaddresses, parseaddr
from pathlib import Path
from typing import Protocol

import aiosmtplib

from digest.config import EmailConfig
from digest.deliver import mime
from digest.errors import DeliveryError, PermanentDeliveryError, TemporaryDeliveryError
from digest.render.files import fsync_directories, write_atomic
from digest.runtime.closing import AsyncClosing
from digest.runtime.threads import off_loop

__all__ = ["OutboxTransport", "SendResult", "SmtpTransport", "Transport", "outbox_name"]


@dataclass(frozen=True, slots=True)
class SendResult:
    reply: str  # what the server said on accepting the message, e.g. "250 2.0.0 Ok: queued"
    # The server took so long (over half its time) that its other messages wait for the next
    # run rather than hold everyone else's (`digest.deliver.sender.deliver`).
    slow: bool = False


class Transport(Protocol):
    async def send(self, msg: EmailMessage) -> SendResult: ...


def _message_id(msg: EmailMessage) -> str:
    mid = str(msg.get("Message-ID", "")).strip()
    if not mid:
        raise ValueError("the message has no Message-ID")
    return mid


def _envelope(msg: EmailMessage) -> tuple[str, list[str]]:
    sender = parseaddr(str(msg.get("From", "")))[1]
    fields = [str(v) for name in ("To", "Cc", "Bcc") for v in msg.get_all(name, [])]
    recipients = [addr for _, addr in getaddresses(fields) if addr]
    if not sender or not recipients:
        raise PermanentDeliveryError(
            "the message has no sender or no recipient",
            reply="no envelope sender or recipient",
        )
    return sender, recipients


# -- outbox ----------------------------------------------------------------------------------------

_UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]")


def outbox_name(message_id: str) -> str:
    """The file name of a message in the outbox: its Message-ID, made safe for any file system.

    The same Message-ID always gives the same name (a re-send overwrites, never duplicates);
    IDs that had to be altered get a hash suffix so two of them cannot collide.
    """
    bare = message_id.strip().strip("<>")
    safe = _UNSAFE.sub("_", bare)[:150].lstrip(".") or "message"
    if safe != bare:
        safe += "-" + hashlib.sha256(message_id.encode()).hexdigest()[:12]
    return safe + ".eml"


class OutboxTransport:
    """One .eml file per message in `directory`, written atomically (temp file, fsync, rename).

    A reader (or a mail client opening the folder) never sees a half-written file, and a crash
    leaves either the old file or the new one.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def path_for(self, msg: EmailMessage) -> Path:
        return self.directory / outbox_name(_message_id(msg))

    async def send(self, msg: EmailMessage) -> SendResult:
        _envelope(msg)  # an unsendable message fails here as it would over SMTP
        path = self.path_for(msg)
        data = mime.as_bytes(msg)
        try:
            await off_loop(_write_atomically, path, data)
        except OSError as err:
            reason = err.strerror or str(err)
            raise TemporaryDeliveryError(
                f"cannot write {path}: {reason}",
                reply=f"outbox write failed: {reason}",
                transport_down=True,
            ) from err
        return SendResult(reply=f"written to {path}")

    async def aclose(self) -> None:
        return None


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)
    fsync_directories([path.parent])  # the rename itself is durable only once its folder is


# -- SMTP ------------------------------------------------------------------------------------------


class SmtpTransport(AsyncClosing):
    """Messages over SMTP with aiosmtplib, one connection reused across messages.

    `security`: "starttls" requires STARTTLS (a server that does not offer it is an error, never
    a silent fall back to clear text), "ssl" is implicit TLS, "none" plain text. The client logs
    in when `username` is set. `timeout` applies to each step of the conversation.
    Use as `async with SmtpTransport(...) as t:` or call `aclose()`.
    """

    def __init__(
        self,
        config: EmailConfig,
        password: str | None = None,
        *,
        tls_context: ssl.SSLContext | None = None,
    ) -> None:
        self.config = config
        self._password = password
        self._tls_context = tls_context
        self._client: aiosmtplib.SMTP | None = None
        self._lock = asyncio.Lock()

    @property
    def server(self) -> str:
        return f"{self.config.host}:{self.config.port}"

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and client.is_connected:
            try:
                await client.quit()
            except (TimeoutError, aiosmtplib.SMTPException, OSError):
                client.close()

    async def send(self, msg: EmailMessage) -> SendResult:
        sender, recipients = _envelope(msg)
        data = mime.smtp_data(msg)
        async with self._lock:
            reused = self._client is not None and self._client.is_connected
            try:
                return await self._transaction(sender, recipients, data)
            except _StaleConnection as stale:
                if not reused:
                    raise stale.error from stale.__cause__
            # The kept connection had died while idle (the server timed it out) before the
            # message went out: nothing was sent, so one fresh connection is safe.
            try:
                return await self._transaction(sender, recipients, data)
            except _StaleConnection as stale:
                raise stale.error from stale.__cause__

    async def _connect(self) -> aiosmtplib.SMTP:
        if self._client is not None and self._client.is_connected:
            return self._client
        c = self.config
        client = aiosmtplib.SMTP(
            hostname=c.host,
            port=c.port,
            username=c.username,
            password=self._password if c.username else None,
            timeout=c.timeout,
            use_tls=c.security == "ssl",
            start_tls=c.security == "starttls",
            tls_context=self._tls_context,
        )
        try:
            await client.connect()
        except (TimeoutError, aiosmtplib.SMTPException, OSError) as err:
            client.close()
            raise self._connection_error(err) from err
        self._client = client
        return client

    async def _transaction(self, sender: str, recipients: list[str], data: bytes) -> SendResult:
        client = await self._connect()
        stage = "envelope"
        try:
            await client.mail(sender)
            for rcpt in recipients:
                await client.rcpt(rcpt)
            stage = "data"
            response = await _data(client, data)
        except aiosmtplib.SMTPResponseException as err:
            self._drop()
            raise self._reply_error(err, recipients) from err
        except (TimeoutError, aiosmtplib.SMTPException, OSError) as err:
            self._drop()
            if stage == "envelope" and isinstance(err, aiosmtplib.SMTPServerDisconnected):
                raise _StaleConnection(self._lost(err, stage)) from err
            raise self._lost(err, stage) from err
        return SendResult(reply=f"{response.code} {response.message}".strip())

    def _drop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def _connection_error(self, err: BaseException) -> DeliveryError:
        if isinstance(err, aiosmtplib.SMTPResponseException):
            reply = f"{err.code} {err.message}".strip()
        else:
            reply = _describe(err)
        # Refused connection, failed greeting, TLS or login: not this message's fault, and the
        # next message would fail the same way. Retried later, so a fixed server or password
        # delivers the backlog.
        return TemporaryDeliveryError(
            f"cannot connect to the mail server {self.server}: {reply}",
            reply=reply,
            code=getattr(err, "code", None),
            transport_down=True,
        )

    def _reply_error(
        self, err: aiosmtplib.SMTPResponseException, recipients: list[str]
    ) -> DeliveryError:
        reply = f"{err.code} {err.message}".strip()
        who = ", ".join(recipients)
        if 400 <= err.code < 500:
            return TemporaryDeliveryError(
                f"the mail server {self.server} deferred the message to {who}: {reply}",
                reply=reply,
                code=err.code,
            )
        return PermanentDeliveryError(
            f"the mail server {self.server} refused the message to {who}: {reply}",
            reply=reply,
            code=err.code,
        )

    def _lost(self, err: BaseException, stage: str) -> DeliveryError:
        if stage == "data":
            reply = (
                f"connection lost after the message was sent, before the server confirmed it "
                f"({_describe(err)}); it may have been delivered"
            )
        else:
            reply = f"connection lost before the message was sent ({_describe(err)})"
        return TemporaryDeliveryError(
            f"the mail server {self.server}: {reply}",
            reply=reply,
            maybe_delivered=stage == "data",
        )


async def _data(client: aiosmtplib.SMTP, data: bytes) -> aiosmtplib.SMTPResponse:
    """The DATA command with `data` already as it goes on the wire (`mime.smtp_data`).

    `client.data()` would normalize the line endings and double the leading dots again, with
    two regular expressions over the whole message. This is the rest of what it does, through
    the client's public commands; the transport's lock keeps one transaction at a time."""
    start = await client.execute_command(b"DATA")
    if start.code != aiosmtplib.SMTPStatus.start_input:
        raise aiosmtplib.SMTPDataError(start.code, start.message)
    protocol = client.protocol
    if protocol is None:
        raise aiosmtplib.SMTPServerDisconnected("Connection lost")
    protocol.write(data)
    response = await protocol.read_response(timeout=client.timeout)
    if response.code != aiosmtplib.SMTPStatus.completed:
        raise aiosmtplib.SMTPDataError(response.code, response.message)
    return response


class _StaleConnection(Exception):
    def __init__(self, error: DeliveryError) -> None:
        super().__init__(str(error))
        self.error = error


def _describe(err: BaseException) -> str:
    if isinstance(err, asyncio.TimeoutError | TimeoutError):
        detail = str(err) or "no answer in time"
        return f"timeout: {detail}"
    return str(err) or type(err).__name__
