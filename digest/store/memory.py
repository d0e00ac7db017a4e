"""A story's memory across runs and days (issue 31): its timeline in `story_events`.

Recording is idempotent: every event carries a key unique within its story ("outlet:<outlet>",
"fact:<outlet>:<subject>:<value>", ...), and a key already recorded adds nothing, so a run
recorded twice, two runs at once, or a run killed and run again never double an entry. Rows are
never rewritten: a later event says what changed. What an event means is decided by
`digest.stories.memory` (pure); this part only keeps and reads them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import distinct, func, select

from digest.memory.events import NewEvent
from digest.models import StoryEvent
from digest.store.base import StoreBase, insert, now, require_aware
from digest.store.memory_tables import STORY_EVENT_KINDS, story_events
from digest.store.schema import articles, deliveries

# Entries of a timeline read at once, at most: the newest ones, oldest first.
TIMELINE_LIMIT = 30
# The kinds that say what an outlet reports for a subject (its latest figure).
FIGURE_KINDS = ("fact", "revision")


def event_from_row(row: Mapping[Any, Any]) -> StoryEvent:
    detail = row["detail"] or {}
    day = detail.get("edition_day")
    return StoryEvent(
        id=row["id"],
        story_id=row["story_id"],
        kind=row["kind"],
        at=row["at"],
        recorded_at=row["recorded_at"],
        outlet=row["outlet"],
        url=row["url"],
        text=row["text"],
        subject=str(detail.get("subject", "")),
        value=str(detail.get("value", "")),
        previous=str(detail.get("previous", "")),
        edition_day=date.fromisoformat(day) if day else None,
    )


class MemoryMixin(StoreBase):
    """Stories' timelines: recorded once each, read oldest first."""

    def record_events(
        self, story_id: int, events: Sequence[NewEvent], *, at: datetime | None = None
    ) -> list[StoryEvent]:
        """Record the events whose key the story does not have yet; the ones recorded now, in
        order. Concurrent recorders of the same key record it once (ON CONFLICT DO NOTHING)."""
        recorded_at = at or now()
        require_aware(recorded_at, "at")
        added: list[StoryEvent] = []
        with self._write() as conn:
            for e in events:
                detail = {
                    **(e.detail or {}),
                    **({"subject": e.subject} if e.subject else {}),
                    **({"value": e.value} if e.value else {}),
                    **({"previous": e.previous} if e.previous else {}),
                    **({"edition_day": e.edition_day.isoformat()} if e.edition_day else {}),
                }
                values = {
                    "story_id": story_id,
                    "kind": e.kind,
                    "key": e.key,
                    "at": e.at,
                    "recorded_at": recorded_at,
                    "outlet": e.outlet,
                    "url": e.url,
                    "text": e.text,
                    "detail": detail,
                }
                stmt = (
                    insert(conn, story_events)
                    .values(values)
                    .on_conflict_do_nothing(index_elements=["story_id", "key"])
                    .returning(story_events)
                )
                row = conn.execute(stmt).mappings().first()
                if row is not None:
                    added.append(event_from_row(row))
        return added

    def story_timeline(self, story_id: int, *, limit: int = TIMELINE_LIMIT) -> list[StoryEvent]:
        """The story's newest `limit` events, oldest first (by when they happened)."""
        return self.timelines([story_id], limit=limit).get(story_id, [])

    def timelines(
        self, story_ids: Iterable[int], *, limit: int = TIMELINE_LIMIT
    ) -> dict[int, list[StoryEvent]]:
        """Each story's newest `limit` events, oldest first; stories without any are absent."""
        found: dict[int, list[StoryEvent]] = {}
        with self._read() as conn:
            for story_id in sorted(set(story_ids)):
                query = (
                    select(story_events)
                    .where(story_events.c.story_id == story_id)
                    .order_by(story_events.c.id.desc())
                    .limit(limit)
                )
                rows = [event_from_row(r) for r in conn.execute(query).mappings()]
                if rows:
                    found[story_id] = sorted(rows, key=lambda e: (e.at, e.id))
        return found

    def latest_figures(self, story_id: int) -> dict[tuple[str, str], tuple[StoryEvent, dict]]:
        """What each outlet reports now for each subject of the story: its latest "fact" or
        "revision" event by (outlet, subject), with the event's detail (value, qualifier)."""
        t = story_events.c
        query = (
            select(story_events)
            .where(t.story_id == story_id, t.kind.in_(FIGURE_KINDS))
            .order_by(t.id)
        )
        latest: dict[tuple[str, str], tuple[StoryEvent, dict]] = {}
        with self._read() as conn:
            for row in conn.execute(query).mappings():
                event = event_from_row(row)
                if event.subject:  # a fact without a figure says nothing to revise
                    latest[(event.outlet, event.subject)] = (event, dict(row["detail"] or {}))
        return latest

    def recorded_outlets(self, story_id: int) -> list[str]:
        """The outlets the story's timeline has (its first reporter's, then each that joined),
        in the order they were recorded."""
        t = story_events.c
        query = (
            select(t.outlet)
            .where(t.story_id == story_id, t.kind.in_(("first", "outlet")))
            .order_by(t.id)
        )
        with self._read() as conn:
            return list(dict.fromkeys(o for (o,) in conn.execute(query)))

    def events_after(
        self, story_id: int, after_id: int, kinds: Sequence[str] = STORY_EVENT_KINDS
    ) -> list[StoryEvent]:
        """The story's events recorded after the event `after_id` (0: all), of these kinds, in
        the order they were recorded: what a follower has not been alerted to yet."""
        t = story_events.c
        query = (
            select(story_events)
            .where(t.story_id == story_id, t.id > after_id, t.kind.in_(list(kinds)))
            .order_by(t.id)
        )
        with self._read() as conn:
            return [event_from_row(r) for r in conn.execute(query).mappings()]

    def story_corrections(self, story_id: int) -> list[tuple[StoryEvent, dict]]:
        """The corrections made of what editions said of the story, oldest first, each with
        its detail (the sentence as sent, the edition that first carried it)."""
        return self.corrections_where(story_events.c.story_id == story_id)

    def corrections_of_day(self, edition_day: date) -> list[tuple[StoryEvent, dict]]:
        """The corrections of sentences sent in the edition of `edition_day`, any story: what
        that edition's archive pages mark."""
        found = self.corrections_where(story_events.c.kind == "correction")
        return [(e, d) for e, d in found if e.edition_day == edition_day]

    def all_corrections(self) -> list[tuple[StoryEvent, dict]]:
        """Every correction made, oldest first: what the archive marks in earlier editions."""
        return self.corrections_where(story_events.c.kind == "correction")

    def corrections_where(self, condition: Any) -> list[tuple[StoryEvent, dict]]:
        t = story_events.c
        query = select(story_events).where(t.kind == "correction", condition).order_by(t.id)
        with self._read() as conn:
            return [
                (event_from_row(r), dict(r["detail"] or {})) for r in conn.execute(query).mappings()
            ]

    def sent_edition_days(self, before: date) -> list[date]:
        """The days before `before` whose edition went to at least one reader (a `sent` row of
        the delivery ledger), newest first: only what was sent is corrected."""
        t = deliveries.c
        query = (
            select(t.edition_day)
            .distinct()
            .where(t.state == "sent", t.edition_day < before)
            .order_by(t.edition_day.desc())
        )
        with self._read() as conn:
            return [d for (d,) in conn.execute(query)]

    def texts_read_before(self, article_ids: Iterable[int], before: datetime) -> set[int]:
        """Those of these articles whose main text was read before `before`: a developing
        story's pages to read again (its outlets update their articles)."""
        require_aware(before, "before")
        ids = sorted(set(article_ids))
        if not ids:
            return set()
        t = articles.c
        query = select(t.id).where(t.id.in_(ids), t.text.is_not(None), t.crawled_at < before)
        with self._read() as conn:
            return {i for (i,) in conn.execute(query)}

    def story_event_counts(self) -> dict[str, int]:
        """Rows and text bytes of the timelines: what story memory costs to keep."""
        t = story_events.c
        size = func.coalesce(func.sum(func.length(t.text) + func.length(t.key)), 0)
        with self._read() as conn:
            rows, text = conn.execute(select(func.count(), size)).one()
            stories = conn.execute(select(func.count(distinct(t.story_id)))).scalar_one()
        return {"events": int(rows), "stories": int(stories), "bytes": int(text)}
