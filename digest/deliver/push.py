"""What a push channel type is (Apprise's today: `digest.deliver.channels`), and the message
every push channel gets: a `Notification`, the compact digest or an alert, built the same way
whichever type sends it (`digest.deliver.notification`, `digest.deliver.follow_alert`).

A type says which channel URLs are its own, checks one as the subscriber gave it, shows it
without its secrets, says how long a body its service takes and makes the transport that sends
to it. The types are listed, in the order they are asked, in `digest.deliver.push_types`; the
jobs never name one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from digest.config import ChannelsConfig
    from digest.deliver.transport import SendResult

__all__ = ["Notification", "PushTransport", "PushType"]


@dataclass(frozen=True, slots=True)
class Notification:
    """The compact digest for one channel of one recipient. `url` is the channel's URL as
    stored (placeholders unresolved); `message_id` is the same every time the message is
    built, like an email's Message-ID."""

    recipient: str
    channel: str  # the channel's key: the ledger's name for it
    url: str
    title: str
    markdown: str
    text: str
    message_id: str


class PushTransport(Protocol):
    """Sends a push type's notifications: raises a `DeliveryError` for one it could not send
    (`transport_down` when the service's other messages should wait for the next run)."""

    @property
    def name(self) -> str:
        """Its type's name (`PushType.name`)."""
        ...

    def scope(self, msg: Notification) -> str:
        """The service a message goes to: one that is down or slow defers its other
        messages (`digest.deliver.sender.deliver`)."""
        ...

    async def send(self, msg: Notification) -> SendResult: ...

    async def aclose(self) -> None: ...


class PushType(Protocol):
    """One kind of push channel, named by its URLs."""

    @property
    def name(self) -> str: ...

    def claims(self, url: str) -> bool:
        """Whether `url` is a channel of this type (the first type that claims it sends it)."""
        ...

    def check(self, url: str, *, from_page: bool, config: ChannelsConfig) -> str:
        """`url` as it is kept, or InvalidChannelError saying why it cannot be; `from_page`:
        the subscriber typed it on the preferences page (stricter). May resolve host names:
        call it in a thread."""
        ...

    def shown(self, url: str) -> str:
        """`url` as its subscriber may see it again: no secret in it."""
        ...

    def body_limit(self, url: str) -> int | None:
        """The longest body its service takes, if it says."""
        ...

    def transport(self, environ: Mapping[str, str], config: ChannelsConfig) -> PushTransport:
        """What sends its notifications; `environ` resolves the URLs' placeholders."""
        ...
