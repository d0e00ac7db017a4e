"""Email digests: building the messages, sending them (outbox or SMTP), and the delivery ledger
that makes each one go out once."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from digest.deliver.ledger import Delivery, RetryPolicy
    from digest.deliver.message import Recipient, build_message, message_id
    from digest.deliver.sender import (
        DeliveryReport,
        LedgerStore,
        MemoryLedgerStore,
        deliver,
        resend,
    )
    from digest.deliver.transport import OutboxTransport, SendResult, SmtpTransport, Transport
    from digest.errors import (
        DeliveryError,
        InvalidRecipientError,
        InvalidTransition,
        PermanentDeliveryError,
        TemporaryDeliveryError,
    )

# Names are imported on first use: a command that reads the ledger (`Delivery`) does not load
# the message builder, its templates and the SMTP client.
_EXPORTS = {
    "Delivery": "digest.deliver.ledger",
    "RetryPolicy": "digest.deliver.ledger",
    "Recipient": "digest.deliver.message",
    "build_message": "digest.deliver.message",
    "message_id": "digest.deliver.message",
    "DeliveryReport": "digest.deliver.sender",
    "LedgerStore": "digest.deliver.sender",
    "MemoryLedgerStore": "digest.deliver.sender",
    "deliver": "digest.deliver.sender",
    "resend": "digest.deliver.sender",
    "OutboxTransport": "digest.deliver.transport",
    "SendResult": "digest.deliver.transport",
    "SmtpTransport": "digest.deliver.transport",
    "Transport": "digest.deliver.transport",
    "DeliveryError": "digest.errors",
    "InvalidRecipientError": "digest.errors",
    "InvalidTransition": "digest.errors",
    "PermanentDeliveryError": "digest.errors",
    "TemporaryDeliveryError": "digest.errors",
}

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


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'digest.deliver' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
