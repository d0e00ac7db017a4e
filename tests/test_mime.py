"""The C-encoded MIME of `digest.deliver.mime` against the email package's own: a reader's mail
client must see the same message, whatever the page text was."""

from __future__ import annotations

from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default as default_policy

from hypothesis import example, given
from hypothesis import strategies as st

from digest.deliver import mime

# Page text as it reaches an email: any character a str can hold once encoded to UTF-8 (no lone
# surrogates), lines of any length, every kind of line ending, trailing spaces, leading dots.
texts = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs",)),
        st.sampled_from(["\n", "\r", " ", "\t", ".", "=", "\x0b", "\x85", "é"]),
    ),
    max_size=600,
)


def reference(text: str, html: str) -> EmailMessage:
    msg = EmailMessage(policy=default_policy)
    msg["From"] = "Digest <digest@news.example.org>"
    msg["Message-ID"] = "<m@news.example.org>"
    msg.set_content(text, cte="quoted-printable")
    msg.add_alternative(html, subtype="html", cte="quoted-printable")
    msg.set_boundary("=_b")
    return msg


def fast(text: str, html: str) -> EmailMessage:
    msg = EmailMessage(policy=default_policy)
    msg["From"] = "Digest <digest@news.example.org>"
    msg["Message-ID"] = "<m@news.example.org>"
    mime.alternative(msg, text, html)
    msg.set_boundary("=_b")
    return msg


def parts(raw: bytes) -> list[tuple[str, str]]:
    parsed = message_from_bytes(raw, policy=default_policy)
    return [(p.get_content_type(), p.get_content()) for p in parsed.iter_parts()]  # type: ignore[attr-defined]


@given(texts, texts)
def test_a_reader_gets_the_same_text_and_html_as_the_email_package_writes(
    text: str, html: str
) -> None:
    ours = mime.as_bytes(fast(text, html))
    assert parts(ours) == parts(reference(text, html).as_bytes())
    assert [kind for kind, _ in parts(ours)] == ["text/plain", "text/html"]


@given(texts, texts)
@example("", "00000\x1f\x1f\x08\x80\x80\x80\x80\x80\x80\U00010000\U00010000\t")  # "=09" at 77
def test_every_line_of_the_message_keeps_the_76_characters_of_quoted_printable(
    text: str, html: str
) -> None:
    # RFC 2045 6.7: encoded lines are at most 76 characters (the email package writes 78).
    raw = mime.as_bytes(fast(text, html))
    assert all(len(line) <= 76 for line in raw.split(b"\n")), raw
    assert raw.isascii()


@given(texts, texts)
def test_the_one_pass_writer_writes_the_bytes_of_the_standard_generator(
    text: str, html: str
) -> None:
    for msg in (fast(text, html), reference(text, html)):
        assert mime.as_bytes(msg) == msg.as_bytes()


@given(texts, texts)
@example("a\n.\n..\n.hidden\r\nend", ".first")
def test_the_smtp_data_is_what_aiosmtplib_would_send_of_the_message(text: str, html: str) -> None:
    # aiosmtplib's own preparation of a DATA body: CRLF line endings, then dot-stuffing.
    from aiosmtplib.protocol import PERIOD_REGEX, normalize_message_line_endings

    for msg in (fast(text, html), reference(text, html)):
        wire = PERIOD_REGEX.sub(b"..", normalize_message_line_endings(msg.as_bytes())) + b".\r\n"
        assert mime.smtp_data(msg) == wire


SLOTS = ("@@address-slot@@", "@@unsubscribe-slot@@")


@given(
    st.lists(st.one_of(texts, st.sampled_from(SLOTS)), max_size=8),
    st.lists(
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=120), min_size=2, max_size=2
    ),
)
@example(["x" * 75, SLOTS[0], "=" * 30, SLOTS[1], "é" * 40], ["a" * 200, "=é" * 50])
@example(["a" * 72 + "é", SLOTS[0], SLOTS[1], "\n"], ["", "b" * 74])
@example(["\r", SLOTS[0]], ["", ""])  # an empty value alone on the last line
def test_a_text_encoded_around_its_slots_decodes_to_the_text_filled(
    pieces: list[str], values: list[str]
) -> None:
    # Each copy of an edition encodes only its own values; the reader must still get exactly
    # the filled text, in lines of at most 76 characters, whatever sits next to a slot.
    template = "".join(pieces)
    fills = dict(zip(SLOTS, values, strict=True))
    filled = template
    for slot, value in fills.items():
        filled = filled.replace(slot, value)

    encoded = mime.quoted_printable(template, fills)

    assert encoded == encoded.encode("ascii").decode()
    assert all(len(line) <= 76 for line in encoded.split("\n")), encoded
    expected = mime.quoted_printable(filled, {})  # encoded whole, no slots
    assert quopri_decode(encoded) == quopri_decode(expected)
    assert quopri_decode(expected) == b"\n".join(filled.encode().splitlines()) + b"\n"


def quopri_decode(encoded: str) -> bytes:
    import binascii

    return binascii.a2b_qp(encoded.encode("ascii"))


@given(st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=200))
def test_headers_made_with_the_cached_registry_are_the_email_packages(subject: str) -> None:
    def build(policy: object) -> bytes:
        msg = EmailMessage(policy=policy)  # type: ignore[arg-type]
        msg["From"] = "Digest <digest@news.example.org>"
        msg["To"] = "Zoë <zoe@example.org>"
        msg["Subject"] = subject
        msg["Date"] = "Sat, 01 Mar 2025 07:00:00 +0100"
        msg["List-Unsubscribe"] = "<https://news.example.org/u?t=1>"
        mime.alternative(msg, subject, f"<p>{subject}</p>")
        msg.set_boundary("=_b")
        return mime.as_bytes(msg)

    assert build(mime.POLICY) == build(default_policy)
