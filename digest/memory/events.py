"""An event of a story's timeline as it is handed to the store to record (issue 31): its key,
unique within the story, makes recording it again a no-op. What the kinds mean is told by
`digest.models.StoryEvent` and `digest.memory.timeline`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

STORY_EVENT_KINDS = ("first", "outlet", "fact", "revision", "disagreement", "correction")


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to record: its key (unique within the story) and what it says. `detail` is
    kept as JSON beside the columns (a figure's number and qualifier, a correction's day)."""

    key: str
    kind: str
    at: datetime
    outlet: str = ""
    url: str = ""
    text: str = ""
    subject: str = ""
    value: str = ""
    previous: str = ""
    edition_day: date | None = None
    detail: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.kind not in STORY_EVENT_KINDS:
            raise ValueError(f"not a kind of story event: {self.kind!r}")
        if self.at.tzinfo is None:
            raise ValueError(f"at must be an aware datetime, not {self.at!r}")
