"""Email digests: building the messages, sending them (outbox or SMTP), and the delivery ledger
that makes each one go out once."""

from digest.deliver.ledger import Delivery, RetryPolicy
from digest.deliver.message import Recipient, build_message, message_id
from digest.deliver.sender import DeliveryReport, LedgerStore, MemoryLedgerStore, deliver, resend
from digest.deliver.transport import OutboxTransport, SendResult, SmtpTransport, Transport
from digest.errors import (
    DeliveryError,
    InvalidRecipientError,
    InvalidTransition,
    PermanentDeliveryError,
    TemporaryDeliveryError,
)

__all__ = [
    "Delivery",
    "DeliveryError",
    "DeliveryReport",
    "InvalidRecipientError",
    "InvalidTransition",
    "LedgerStore",
    "MemoryLedgerStore",
    "OutboxTransport",
    "PermanentDeliveryError",
    "Recipient",
    "RetryPolicy",
    "SendResult",
    "SmtpTransport",
    "TemporaryDeliveryError",
    "Transport",
    "build_message",
    "deliver",
    "message_id",
    "resend",
]
