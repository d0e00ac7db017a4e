"""An SMTP sink for benchmarks: accepts every message and counts it, at C speed.

aiosmtpd, the server the tests use, reads a message a line at a time in Python: at 100,000
digests of 90 KB it spends more CPU than the sender it measures, on the same two cores. This
sink does what Postfix's smtp-sink does for mailer benchmarks: it speaks enough SMTP for a
client (greeting, EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT) and finds the end of each
message with one search of the buffer. It checks nothing and keeps nothing but the count of
recipients whose message it accepted (after the final "250", as a mail server would count).

    with smtp_sink() as (port, count, pid): ...   # a child process; count() asks it
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

END = b"\r\n.\r\n"


class _Session(asyncio.Protocol):
    accepted = 0  # recipients of accepted messages, all sessions

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.buffer = bytearray()
        self.in_data = False
        self.scanned = 0  # where the search for the end of the data resumes
        self.recipients = 0
        transport.write(b"220 sink ESMTP\r\n")

    def data_received(self, chunk: bytes) -> None:
        self.buffer += chunk
        while self.buffer:
            if self.in_data:
                end = self.buffer.find(END, self.scanned)
                if end < 0:
                    self.scanned = max(0, len(self.buffer) - len(END) + 1)
                    return
                del self.buffer[: end + len(END)]
                self.in_data, self.scanned = False, 0
                _Session.accepted += self.recipients
                self.recipients = 0
                self.transport.write(b"250 2.0.0 Ok: queued\r\n")
                continue
            line_end = self.buffer.find(b"\r\n")
            if line_end < 0:
                return
            line = bytes(self.buffer[:line_end])
            del self.buffer[: line_end + 2]
            self._command(line.split(b" ", 1)[0].upper())

    def _command(self, verb: bytes) -> None:
        if verb == b"EHLO":
            self.transport.write(b"250-sink\r\n250 8BITMIME\r\n")
        elif verb == b"RCPT":
            self.recipients += 1
            self.transport.write(b"250 2.1.5 Ok\r\n")
        elif verb == b"DATA":
            # The first line of the data may be the end mark itself: search from a CRLF.
            self.buffer[:0] = b"\r\n"
            self.in_data = True
            self.transport.write(b"354 End data with <CR><LF>.<CR><LF>\r\n")
        elif verb == b"QUIT":
            self.transport.write(b"221 2.0.0 Bye\r\n")
            self.transport.close()
        elif verb in (b"MAIL", b"RSET"):  # a new envelope
            self.recipients = 0
            self.transport.write(b"250 2.0.0 Ok\r\n")
        elif verb in (b"HELO", b"NOOP"):
            self.transport.write(b"250 2.0.0 Ok\r\n")
        else:
            self.transport.write(b"502 5.5.2 Command not recognized\r\n")


def _serve(conn: Connection) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(_Session, "127.0.0.1", 0)
        conn.send(server.sockets[0].getsockname()[1])
        while True:
            request = await asyncio.to_thread(conn.recv)
            if request == "stop":
                break
            conn.send(_Session.accepted)
        server.close()

    asyncio.run(main())


@contextlib.contextmanager
def smtp_sink() -> Iterator[tuple[int, Any, int]]:
    """(port, count, pid): the sink in a child process, `count()` the recipients accepted so
    far, `pid` for its CPU time."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve, args=(child,), daemon=True)
    proc.start()
    port = parent.recv()

    def count() -> int:
        parent.send("count")
        return int(parent.recv())

    try:
        yield port, count, proc.pid or 0
    finally:
        parent.send("stop")
        proc.join(10)
        if proc.is_alive():
            proc.kill()
