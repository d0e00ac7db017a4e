"""The MIME work of many copies of one edition, done in C where the email package does it in
Python.

An edition goes to thousands of readers as two quoted-printable parts of up to 100 KB each.
`EmailMessage.set_content` encodes them with `email.quoprimime`, a character at a time in
Python, and the generator writes the result out a line at a time: about 6 ms of CPU a message,
most of a message's cost (`bench/email_bench.py`). Here the same text is encoded by the standard
library's `binascii.b2a_qp` and the message written with the standard generator whose line
writer converts line endings in one regular-expression pass. The messages are the same
`EmailMessage` objects, with the same headers and the same decoded content
(`tests/test_mime.py` checks both against the email package's own output).
"""

from __future__ import annotations

import binascii
import io
import re
from email.generator import BytesGenerator
from email.message import EmailMessage, MIMEPart

__all__ = ["alternative", "as_bytes", "text_part"]

_NEWLINES = re.compile(r"\r\n|\r|\n")  # the generator's own rule for line endings


def text_part(text: str, subtype: str, policy: object) -> MIMEPart:
    """A text/`subtype` part of `text` in UTF-8, quoted-printable: what
    ``part.set_content(text, subtype=subtype, cte="quoted-printable")`` makes."""
    part = MIMEPart(policy=policy)  # type: ignore[arg-type]
    # As the email package prepares the body: lines split as bytes.splitlines() does, then
    # joined by "\n" with one at the end.
    body = b"\n".join(text.encode("utf-8").splitlines()) + b"\n"
    part["Content-Type"] = f'text/{subtype}; charset="utf-8"'
    part["Content-Transfer-Encoding"] = "quoted-printable"
    part.set_payload(binascii.b2a_qp(body, istext=True).decode("ascii"))
    return part


def alternative(msg: EmailMessage, text: str, html: str) -> None:
    """Make `msg` multipart/alternative of a plain-text and an HTML part, as
    ``msg.set_content(text, cte="quoted-printable")`` then ``msg.add_alternative(html,
    subtype="html", cte="quoted-printable")`` do."""
    msg["MIME-Version"] = "1.0"
    msg["Content-Type"] = "multipart/alternative"
    msg.set_payload([text_part(text, "plain", msg.policy), text_part(html, "html", msg.policy)])


class _Generator(BytesGenerator):
    """The standard generator; only the line writer is one pass instead of a write per line
    (the original splits by the same expression and writes the line ending between lines)."""

    _NL: str  # the policy's line ending, set by `flatten`

    def _write_lines(self, lines: str) -> None:
        if lines:
            self.write(_NEWLINES.sub(self._NL, lines))


def as_bytes(msg: EmailMessage) -> bytes:
    """``msg.as_bytes()``, byte for byte, in a fraction of the time for large bodies."""
    out = io.BytesIO()
    _Generator(out, mangle_from_=False, policy=msg.policy).flatten(msg)
    return out.getvalue()
