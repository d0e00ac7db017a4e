"""Delivery errors, by the kind of decision they call for: retry later, or give up.

They live here while the deliver package settles; they derive from `DigestError` like the rest of
the hierarchy in `digest.errors` and may move there unchanged.
"""

from __future__ import annotations

from digest.errors import DigestError


class DeliveryError(DigestError, OSError):
    """A message could not be handed to the mail server (or written to the outbox).

    `reply` is the server's reply (or what happened to the connection), kept in the ledger.
    `maybe_delivered` is true when the failure came after the message data went out and before
    the server confirmed it: the server may have accepted it anyway (see `digest.deliver.sender`).
    `transport_down` is true when the failure is the server's or the connection's, not this
    message's (refused connection, failed login or TLS): the rest of the run would fail the same.
    """

    def __init__(
        self,
        message: str,
        *,
        reply: str,
        code: int | None = None,
        maybe_delivered: bool = False,
        transport_down: bool = False,
    ) -> None:
        super().__init__(message)
        self.reply = reply
        self.code = code
        self.maybe_delivered = maybe_delivered
        self.transport_down = transport_down

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.reply


class TemporaryDeliveryError(DeliveryError):
    """Worth retrying later: a 4xx reply, a dropped or refused connection, a timeout."""


class PermanentDeliveryError(DeliveryError):
    """Retrying will not help: a 5xx reply, a refused or malformed recipient."""


class InvalidRecipientError(PermanentDeliveryError):
    """The recipient's address breaks the address rule (`digest.deliver.address`): their email
    is not built and no server is asked. It fails that recipient's row, never the others'."""


class InvalidTransition(DigestError, ValueError):
    """A delivery ledger row cannot make this move from its current state."""
