"""What tasks take and give, as JSON: headlines, failures, articles and ledger rows."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from digest.deliver.ledger import Delivery
from digest.models import ArticleView, Failure


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def failure(data: dict[str, Any]) -> Failure:
    return Failure(str(data["source"]), str(data["error"]))


def article_json(a: ArticleView) -> dict[str, Any]:
    """What a story task needs of one of its articles to crawl and summarize it."""
    return {"id": a.id, "url": a.url, "title": a.title, "source": a.source, "has_text": a.has_text}


def article(data: dict[str, Any], now: datetime) -> ArticleView:
    return ArticleView(
        id=int(data["id"]),
        url=str(data["url"]),
        title=str(data["title"]),
        source=str(data["source"]),
        outlet="",
        published=None,
        first_seen=now,
        lede="",
        origin="",
        has_text=bool(data["has_text"]),
        text_hash=None,
        crawl_status=None,
        summary=None,
    )


def delivery_json(d: Delivery) -> dict[str, Any]:
    return {
        "edition_day": d.edition_day.isoformat(),
        "recipient": d.recipient,
        "channel": d.channel,
        "state": d.state,
        "attempts": d.attempts,
        "next_attempt_at": d.next_attempt_at.isoformat() if d.next_attempt_at else None,
        "last_reply": d.last_reply,
        "message_id": d.message_id,
        "updated_at": d.updated_at.isoformat() if d.updated_at else None,
    }


def delivery(data: dict[str, Any]) -> Delivery:
    return Delivery(
        edition_day=date.fromisoformat(data["edition_day"]),
        recipient=data["recipient"],
        state=data["state"],
        attempts=int(data["attempts"]),
        next_attempt_at=_time(data["next_attempt_at"]),
        last_reply=data["last_reply"],
        message_id=data["message_id"],
        updated_at=_time(data["updated_at"]),
        channel=data["channel"],
    )
