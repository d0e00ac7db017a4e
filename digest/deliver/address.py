"""The one rule for a subscriber's address, checked when they are added and again when their
email is built, so that nothing `digest subscribers add` takes can fail at send time.

The rule is email-validator's (syntax only: `check_deliverability=False`, there is no DNS here;
the mail server judges deliverability). Internationalized domains are accepted and sent in their
ASCII (IDNA) form, which every server takes. Non-ASCII characters before the @ (`ü@example.org`)
are refused: sending them needs SMTPUTF8 from every server on the way, and a rule that accepted
what the sender cannot always send would fail at the wrong end.
"""

from __future__ import annotations

from dataclasses import dataclass

from email_validator import EmailNotValidError, validate_email

from digest.errors import AddressError

__all__ = ["AddressError", "MailAddress", "check_address"]


@dataclass(frozen=True, slots=True)
class MailAddress:
    """A checked address. `normalized` is what is stored, shown and keyed on; `ascii` is what
    goes into the To header and the SMTP envelope (the domain in IDNA form)."""

    normalized: str
    ascii: str


def check_address(address: str) -> MailAddress:
    """`address` checked and normalized, or AddressError.

    Normalized as email-validator does (domain lower-cased and IDNA-normalized, Unicode form),
    with the part before the @ lower-cased as well, as digest has always stored it: one person
    is one subscriber whatever the case they type, and a normalized address checks unchanged.
    Surrounding whitespace is ignored; anything else unusual (spaces, quotes, display names,
    IP literals, special-use domains such as localhost) is refused.
    """
    if not isinstance(address, str):
        raise AddressError(address, "not text")
    try:
        checked = validate_email(address.strip(), check_deliverability=False, allow_smtputf8=False)
    except EmailNotValidError as err:
        raise AddressError(address, str(err)) from None
    local = checked.local_part.lower()
    return MailAddress(f"{local}@{checked.domain}", f"{local}@{checked.ascii_domain}")
