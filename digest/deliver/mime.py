"""The MIME work of many copies of one edition, done in C where the email package does it in
Python, and once where it would be done for every copy.

An edition goes to thousands of readers as two quoted-printable parts of up to 100 KB each.
`EmailMessage.set_content` encodes them with `email.quoprimime`, a character at a time in
Python, and the generator writes them out a line at a time: most of a message's CPU
(`bench/email_bench.py`: 7.7 ms a message to build before, 2.8 ms after). Here the text around a
copy's slots (address, unsubscribe link) is encoded once per rendered edition by the standard
library's `binascii.b2a_qp`, each copy encodes only its values, headers are parsed with a
registry that makes each header class once, and the message is written by the standard
generator with a line writer of one pass. The messages are the same `EmailMessage` objects with
the same headers and the same decoded content, in lines within RFC 2045's 76 characters
(`tests/test_mime.py` checks them against the email package's own output).
"""

from __future__ import annotations

import binascii
import io
import re
from collections.abc import Mapping
from email.generator import BytesGenerator
from email.headerregistry import BaseHeader, HeaderRegistry
from email.message import EmailMessage, MIMEPart
from email.policy import Policy
from email.policy import default as default_policy
from functools import lru_cache

__all__ = ["POLICY", "alternative", "as_bytes", "quoted_printable", "smtp_data", "text_part"]


class _Headers(HeaderRegistry):
    """The email package's header classes, made once per header name: its registry makes a new
    class for every header it parses (a tenth of a message's cost, ten headers a message)."""

    def __init__(self) -> None:
        super().__init__()
        self._made: dict[str, type[BaseHeader]] = {}

    def __getitem__(self, name: str) -> type[BaseHeader]:
        made = self._made.get(name.lower())
        if made is None:
            made = self._made[name.lower()] = super().__getitem__(name)
        return made


# The email package's default policy (the one `EmailMessage` uses), with that registry.
POLICY = default_policy.clone(header_factory=_Headers())
_POLICY_CRLF = POLICY.clone(linesep="\r\n")  # the same, writing lines as SMTP sends them


def text_part(
    text: str, subtype: str, policy: object, fills: Mapping[str, str] | None = None
) -> MIMEPart:
    """A text/`subtype` part of `text` in UTF-8, quoted-printable: what
    ``part.set_content(text, subtype=subtype, cte="quoted-printable")`` makes, with each key of
    `fills` in `text` replaced by its value (see `quoted_printable`)."""
    part = MIMEPart(policy=policy)  # type: ignore[arg-type]
    part["Content-Type"] = f'text/{subtype}; charset="utf-8"'
    part["Content-Transfer-Encoding"] = "quoted-printable"
    part.set_payload(quoted_printable(text, fills or {}))
    return part


def alternative(
    msg: EmailMessage,
    text: str,
    html: str,
    *,
    text_fills: Mapping[str, str] | None = None,
    html_fills: Mapping[str, str] | None = None,
) -> None:
    """Make `msg` multipart/alternative of a plain-text and an HTML part, as
    ``msg.set_content(text, cte="quoted-printable")`` then ``msg.add_alternative(html,
    subtype="html", cte="quoted-printable")`` do (the fills as in `text_part`)."""
    msg["MIME-Version"] = "1.0"
    msg["Content-Type"] = "multipart/alternative"
    msg.set_payload(
        [
            text_part(text, "plain", msg.policy, text_fills),
            text_part(html, "html", msg.policy, html_fills),
        ]
    )


def quoted_printable(text: str, fills: Mapping[str, str]) -> str:
    """`text`, each key of `fills` replaced by its value, as the body of a quoted-printable
    part (lines ending in "\n", at most 76 characters).

    An edition's thousands of copies differ only in a few slots (the reader's address, their
    unsubscribe link): the text around the slots is encoded once per text and kept, and each
    copy encodes only its values, joined to the rest by soft line breaks. Values with a line
    break in them, or empty (none of the slots is either), go the long way: the whole text
    filled, then encoded (an empty value alone on the text's last line ends no line there)."""
    if not fills or any(not v or "\r" in v or "\n" in v for v in fills.values()):
        for key, value in fills.items():
            text = text.replace(key, value)
        return _encode(_body(text.encode("utf-8")))
    pieces: list[str] = []
    for piece in _around_slots(text, tuple(fills)):
        encoded = piece if isinstance(piece, str) else _fits(_encode(fills[piece.decode()]))
        if not encoded:
            continue
        if pieces and not pieces[-1].endswith("\n"):
            pieces.append("=\n")  # a soft line break: nothing in the decoded text
        pieces.append(encoded)
    return "".join(pieces)


@lru_cache(maxsize=32)
def _around_slots(text: str, slots: tuple[str, ...]) -> tuple[str | bytes, ...]:
    """`text`'s body cut at the slots: encoded pieces (str) between the slots' names (bytes)."""
    body = _body(text.encode("utf-8"))
    pattern = re.compile(b"(" + b"|".join(re.escape(s.encode()) for s in slots) + b")")
    return tuple(
        piece if i % 2 else _fits(_encode(piece)) for i, piece in enumerate(pattern.split(body))
    )


def _body(data: bytes) -> bytes:
    # As the email package prepares a body: lines split as bytes.splitlines() does, then
    # joined by "\n" with one at the end.
    return b"\n".join(data.splitlines()) + b"\n"


def _encode(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    encoded = binascii.b2a_qp(raw, istext=True).decode("ascii")
    # b2a_qp does not count the escape of a line's trailing space or tab ("=09") against the
    # 76 characters: such a line can come out at 77 or 78.
    return _short_lines(encoded) if _LONG_LINE.search(encoded) else encoded


_LONG_LINE = re.compile(r"[^\n]{77}")


def _short_lines(encoded: str) -> str:
    """`encoded` with every line over 76 characters broken by soft line breaks, never inside
    an =XX escape."""
    lines: list[str] = []
    for line in encoded.split("\n"):
        while len(line) > 76:
            cut = 75 - (1 if line[74] == "=" else 2 if line[73] == "=" else 0)
            lines.append(f"{line[:cut]}=")
            line = line[cut:]
        lines.append(line)
    return "\n".join(lines)


def _fits(encoded: str) -> str:
    """`encoded` with room for a soft line break's "=" after its last line (the encoder fills
    lines to 76 characters): a long last line is broken where no =XX escape is cut."""
    head, _, last = encoded.rpartition("\n")
    if len(last) <= 73:
        return encoded
    cut = 73 - (1 if last[72] == "=" else 2 if last[71] == "=" else 0)
    return f"{head}\n" * bool(head) + f"{last[:cut]}=\n{last[cut:]}"


class _Generator(BytesGenerator):
    """The standard generator; only the line writer is one pass instead of a write per line
    (the original splits at "\r\n", "\r" and "\n" and writes its line ending between lines)."""

    _NL: str  # the policy's line ending, set by `flatten`

    def _write_lines(self, lines: str) -> None:
        if lines:  # str.replace: a regular expression's match per line cost as much again
            lines = lines.replace("\r\n", "\n").replace("\r", "\n")
            self.write(lines if self._NL == "\n" else lines.replace("\n", self._NL))


def as_bytes(msg: EmailMessage) -> bytes:
    """``msg.as_bytes()``, byte for byte, in a fraction of the time for large bodies."""
    return _written(msg, msg.policy)


def _written(msg: EmailMessage, policy: Policy) -> bytes:
    out = io.BytesIO()
    _Generator(out, mangle_from_=False, policy=policy).flatten(msg)
    return out.getvalue()


def smtp_data(msg: EmailMessage) -> bytes:
    """What goes over SMTP after DATA: ``msg.as_bytes()`` with every line ending in CRLF, a
    dot doubled at the start of each line that has one (RFC 5321, 4.5.2) and the closing "."
    line.

    aiosmtplib's `data()` makes the same bytes from `as_bytes` with two regular expressions
    over the whole message, a match per line: 1.3 ms for a 137 KB edition, where writing CRLF
    from the start and `bytes.replace` add 0.5 ms to `as_bytes` (a worker's CPU per email went
    from 5.6 to 4.5-5.0 ms in `bench/scale.py`)."""
    policy = _POLICY_CRLF if msg.policy is POLICY else msg.policy.clone(linesep="\r\n")
    data = _written(msg, policy)
    lines = data.count(b"\r\n")
    if data.count(b"\r") != lines or data.count(b"\n") != lines:  # a lone CR or LF in a header
        data = _LINE_ENDINGS.sub(b"\r\n", data)
    if not data.endswith(b"\r\n"):
        data += b"\r\n"
    if data.startswith(b"."):
        data = b"." + data
    return data.replace(b"\r\n.", b"\r\n..") + b".\r\n"


_LINE_ENDINGS = re.compile(rb"\r\n|\n|\r")
