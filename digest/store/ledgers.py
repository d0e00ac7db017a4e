"""The store's two ledgers as the sender's port (`digest.deliver.sender.LedgerStore`), over the
store's async face: the edition's delivery rows (`SqlLedger`, for `deliver` and `resend`) and
the alerts' rows (`SqlAlertLedger`). Each call is one of the face's awaited methods, so one
short transaction in a worker thread (`digest.store.face`); the rows themselves are written by
`digest.store.deliveries` and `digest.store.follow_alerts`.

Apart from the face's module, which names the parts' types and so must not be named back by
them."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import date
from typing import TYPE_CHECKING

from digest.models import Delivery

if TYPE_CHECKING:
    from digest.store.face import StoreFace
    from digest.store.follow_alerts import Alert

__all__ = ["SqlAlertLedger", "SqlLedger"]


class SqlLedger:
    """The delivery ledger in the store: `digest.deliver.sender.LedgerStore` for `deliver` and
    `resend`. Each call is one short transaction, run in a worker thread by the face."""

    def __init__(self, store: StoreFace, recipients: Collection[str] | None = None) -> None:
        self.store = store
        self.recipients = recipients  # only their rows: one delivery task's batch

    async def add(self, deliveries: Sequence[Delivery]) -> None:
        await self.store.add_deliveries(list(deliveries))

    async def load(self, edition_day: date) -> list[Delivery]:
        return await self.store.load_deliveries(edition_day, self.recipients)

    async def claim(
        self, expected: Delivery, new: Delivery, *, save: Delivery | None = None
    ) -> bool:
        return await self.store.claim_delivery(expected, new, after=save)

    async def save(self, delivery: Delivery) -> None:
        await self.store.save_delivery(delivery)


class SqlAlertLedger:
    """The alert ledger as `digest.deliver.sender.LedgerStore`: each alert's rows are delivery
    rows whose recipient is `alert_key(follow, through)`, so that the edition's sender (claim
    before sending, compare-and-set, retries, stuck rows left alone) sends alerts too. Rows are
    made by `AlertsMixin.open_alerts`; `add` has nothing left to add."""

    def __init__(self, store: StoreFace, alerts: Iterable[Alert]) -> None:
        self.store = store
        self.keys = [(a.follow.id, a.through) for a in alerts]

    async def add(self, deliveries: Sequence[Delivery]) -> None:
        return None

    async def load(self, edition_day: date) -> list[Delivery]:
        return await self.store.load_alert_rows(self.keys, edition_day)

    async def claim(
        self, expected: Delivery, new: Delivery, *, save: Delivery | None = None
    ) -> bool:
        return await self.store.claim_alert_row(expected, new, after=save)

    async def save(self, delivery: Delivery) -> None:
        await self.store.save_alert_row(delivery)
