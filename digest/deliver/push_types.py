"""The push channel types, in the order they are asked which one a channel's URL is
(`push_type`): a new type is a module of its own (a `digest.deliver.push.PushType` and its
transport) and its line in `PUSH_TYPES`, before Apprise, which takes any URL.

`Channels` is every transport behind one `send`: an email to the email transport, a
`Notification` to its URL's type's."""

from __future__ import annotations

from collections.abc import Mapping
from email.message import EmailMessage
from typing import TYPE_CHECKING, Any

from digest.deliver.channels import APPRISE
from digest.deliver.push import Notification, PushTransport, PushType
from digest.errors import PermanentDeliveryError

if TYPE_CHECKING:
    from digest.config import ChannelsConfig
    from digest.deliver.transport import SendResult

__all__ = ["PUSH_TYPES", "Channels", "check_url", "push_type", "shown_url"]

PUSH_TYPES: tuple[PushType, ...] = (APPRISE,)


def push_type(url: str) -> PushType:
    """The type of the channel `url`: the first in `PUSH_TYPES` that claims it."""
    return next(t for t in PUSH_TYPES if t.claims(url))


def check_url(url: str, *, from_page: bool, config: ChannelsConfig) -> str:
    """A channel's URL as its type keeps it, or InvalidChannelError (see `PushType.check`)."""
    return push_type(url.strip()).check(url, from_page=from_page, config=config)


def shown_url(url: str) -> str:
    """A channel's URL without its secrets, as its type shows it."""
    return push_type(url).shown(url)


class Channels:
    """Every channel's transport behind one `send`: emails to the email transport (outbox or
    SMTP), notifications to their type's transport (`push`, one a type). `scope` tells
    `deliver` which server a message needs."""

    def __init__(self, email: Any, *push: PushTransport | None) -> None:
        self.email = email
        self.push = {t.name: t for t in push if t is not None}

    @classmethod
    def of_types(cls, email: Any, environ: Mapping[str, str], config: ChannelsConfig) -> Channels:
        """Email, and a transport for every push type."""
        return cls(email, *(t.transport(environ, config) for t in PUSH_TYPES))

    def scope(self, msg: Any) -> str:
        if isinstance(msg, Notification):
            transport = self.push.get(push_type(msg.url).name)
            if transport is not None:
                return transport.scope(msg)
        return "email"

    async def send(self, msg: EmailMessage | Notification) -> SendResult:
        if isinstance(msg, Notification):
            name = push_type(msg.url).name
            transport = self.push.get(name)
            if transport is None:
                raise PermanentDeliveryError(
                    f"no {name} transport", reply="not sent: channels are not configured"
                )
            return await transport.send(msg)
        result: SendResult = await self.email.send(msg)
        return result

    async def aclose(self) -> None:
        for transport in (self.email, *self.push.values()):
            close = getattr(transport, "aclose", None)
            if close is not None:
                await close()
