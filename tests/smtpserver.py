"""A real SMTP server for tests (aiosmtpd on 127.0.0.1, a free port) with faults on demand.

Queue one fault per message with `server.fail(...)`; the next MAIL FROM takes it:
- "421": the server is shutting down: 421 to MAIL FROM, then it closes the connection;
- "451": a temporary refusal after DATA ("try again later");
- "550": the recipient is refused at RCPT TO (no such user);
- "drop": the whole message arrives, then the connection is cut before the server replies;
  the copy is kept in `dropped` (a real server may well have delivered it);
- "slow": the server takes `slow_seconds` to answer DATA (longer than the client waits); it
  then accepts the message into `late`.
Messages accepted normally are in `received`, each with its envelope and raw bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from dataclasses import dataclass
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default as default_policy
from typing import Any, Literal

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

Fault = Literal["ok", "421", "451", "550", "drop", "slow"]


@dataclass(frozen=True)
class Received:
    mail_from: str
    rcpt_tos: tuple[str, ...]
    data: bytes

    def message(self) -> EmailMessage:
        msg = message_from_bytes(self.data, policy=default_policy)
        assert isinstance(msg, EmailMessage)
        return msg

    @property
    def message_id(self) -> str:
        return str(self.message()["Message-ID"])


class _Handler:
    def __init__(self, owner: SmtpServer) -> None:
        self.owner = owner

    async def handle_MAIL(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        fault = self.owner._next_fault()
        envelope.fault = fault  # type: ignore[attr-defined]
        if fault == "421":
            loop = asyncio.get_running_loop()
            transport = server.transport
            if transport is not None:
                loop.call_soon(transport.close)  # after the reply is written
            return "421 4.3.2 Service shutting down, closing transmission channel"
        envelope.mail_from = address
        envelope.mail_options.extend(options)
        return "250 OK"

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        if getattr(envelope, "fault", "ok") == "550":
            return f"550 5.1.1 <{address}>: Recipient address rejected: User unknown"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        fault = getattr(envelope, "fault", "ok")
        copy = Received(
            mail_from=str(envelope.mail_from),
            rcpt_tos=tuple(envelope.rcpt_tos),
            data=bytes(envelope.original_content or b""),
        )
        if fault == "451":
            return "451 4.3.0 Temporary local problem, please try again later"
        if fault == "drop":
            self.owner.dropped.append(copy)
            if server.transport is not None:
                server.transport.abort()  # no reply at all: the client cannot know
            return "250 OK (never seen)"
        if fault == "slow":
            await asyncio.sleep(self.owner.slow_seconds)
            self.owner.late.append(copy)
            return "250 2.0.0 Ok: queued (late)"
        self.owner.received.append(copy)
        self.owner._connections.add(server)
        return f"250 2.0.0 Ok: queued as {len(self.owner.received)}"


class _Controller(Controller):
    """aiosmtpd's Controller on port 0: it asks the OS for a free port and reports it."""

    def _trigger_server(self) -> None:
        assert self.server is not None
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()


class SmtpServer:
    """Start with `start()` (or use as a context manager); `port` is known once started."""

    def __init__(
        self,
        *,
        slow_seconds: float = 3.0,
        logins: dict[str, str] | None = None,
        port: int = 0,
    ) -> None:
        self.received: list[Received] = []
        self.dropped: list[Received] = []
        self.late: list[Received] = []
        self.slow_seconds = slow_seconds
        self.logins = logins
        self.auth_attempts: list[str] = []
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._connections: set[SMTP] = set()
        kwargs: dict[str, Any] = {}
        if logins is not None:
            kwargs.update(authenticator=self._authenticate, auth_require_tls=False)
        self.controller = _Controller(
            _Handler(self), hostname="127.0.0.1", port=port, ready_timeout=5.0, **kwargs
        )

    @property
    def host(self) -> str:
        return "127.0.0.1"

    @property
    def port(self) -> int:
        return int(self.controller.port)

    def fail(self, *faults: Fault) -> None:
        """Queue faults for the next messages, one each ("ok" lets one through)."""
        with self._lock:
            self._faults.extend(faults)

    def _next_fault(self) -> Fault:
        with self._lock:
            return self._faults.popleft() if self._faults else "ok"

    def _authenticate(
        self, server: SMTP, session: Session, envelope: Envelope, mechanism: str, auth_data: Any
    ) -> AuthResult:
        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        user = auth_data.login.decode()
        self.auth_attempts.append(user)
        ok = self.logins is not None and self.logins.get(user) == auth_data.password.decode()
        return AuthResult(success=ok, handled=False)

    def kick(self) -> None:
        """Cut every open connection, as a server does to idle clients."""
        loop = self.controller.loop

        def cut() -> None:
            for server in list(self._connections):
                if server.transport is not None:
                    server.transport.abort()
            self._connections.clear()

        loop.call_soon_threadsafe(cut)
        # Wait until the loop has run it.
        asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result(5)

    def start(self) -> SmtpServer:
        self.controller.start()
        return self

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.controller.stop()

    def __enter__(self) -> SmtpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
