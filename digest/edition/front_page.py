"""The front page of an edition, from its stories: each category's order, an event collected
under several categories told once (`place`), and the lead across categories (`lead`). Pure:
the stories come read (`digest.jobs.clustering` reads them from the store)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from digest.models import Edition, EditionStory, StoryView
from digest.stories import best_first, top_picks
from digest.stories.across import Event


@dataclass(frozen=True, slots=True)
class DayStories:
    """Stories of several categories, each category's best first, and the events among them
    that more than one category collected."""

    stories: list[StoryView]
    events: list[Event]


def top_of(found: Iterable[StoryView], limit: int) -> list[StoryView]:
    """The best `limit` of one category's stories, leaving out minor stories and those that
    repeat one above (`digest.stories.top_picks`): fewer when so."""
    order = best_first(found)
    picks = top_picks(
        [s.score for s in order], [[a.title for a in s.articles] for s in order], limit=limit
    )
    return [order[i] for i in picks]


def ranked(stories: Iterable[StoryView]) -> list[StoryView]:
    """One category's stories in the order its top is taken from: best first, less minor
    stories and repeats of one above (`top_of`), not cut (its top is cut after the stories
    another category shows have moved out)."""
    order = list(stories)
    return top_of(order, len(order))


def by_category(found: Sequence[StoryView], order: Sequence[str] = ()) -> list[StoryView]:
    """`found` by category, each category's best first: the categories of `order` (the
    configured ones) in its order, then any other (no longer configured) in name order."""
    present = {s.category for s in found}
    categories = [c for c in dict.fromkeys(order) if c in present]
    categories += sorted(present - set(categories))
    return [s for c in categories for s in best_first(v for v in found if v.category == c)]


def day_stories(found: Sequence[StoryView], categories: Sequence[str]) -> list[StoryView]:
    """The stories of `categories`, by category in their order, each `ranked`."""
    return [s for c in categories for s in ranked(s for s in found if s.category == c)]


@dataclass(frozen=True, slots=True)
class Placement:
    """Which stories an edition's sections show once events are told once."""

    shown: dict[str, list[int]]  # a category's top stories, in the order given
    moved: dict[str, list[int]]  # its stories told by another category's shown story
    mentions: dict[str, list[int]]  # shown stories of other categories it collected too
    also_in: dict[int, tuple[str, ...]]  # a shown story: its event's other categories


def place(ranked: Mapping[str, Sequence[int]], events: Sequence[Event], *, top: int) -> Placement:
    """Each category's `top` stories (`ranked`: its story ids, best first) once every event is
    shown only as its shown story: the others move out, and their categories fill their top
    from below and mention it. An event whose shown story does not make its own category's
    top is not moved at all (its stories rank where they are), so that no event goes unseen
    because its best telling was crowded out; that is decided again until nothing changes
    (each round only gives stories back, so it ends)."""
    category = {i: c for c, ids in ranked.items() for i in ids}
    active = [e for e in events if all(i in category for i in e.story_ids)]
    while True:
        away = {i for e in active for i in e.story_ids if i != e.shown}
        shown = {c: [i for i in ids if i not in away][:top] for c, ids in ranked.items()}
        in_edition = {i for ids in shown.values() for i in ids}
        kept = [e for e in active if e.shown in in_edition]
        if len(kept) == len(active):
            break
        active = kept
    order = {c: n for n, c in enumerate(ranked)}
    others = {
        e.shown: sorted((i for i in e.story_ids if i != e.shown), key=lambda i: order[category[i]])
        for e in active
    }
    return Placement(
        shown=shown,
        moved={c: [i for i in ids if i in away] for c, ids in ranked.items()},
        mentions={
            c: [s for s, rest in others.items() if any(category[i] == c for i in rest)]
            for c in ranked
        },
        also_in={s: tuple(category[i] for i in rest) for s, rest in others.items()},
    )


def placed(day: DayStories, categories: Sequence[str], *, top: int) -> Placement:
    """`day`'s stories laid out in `categories`' sections of `top` stories each: an event
    collected under several categories once, in its best one (`place`)."""
    ranked = {c: [s.id for s in day.stories if s.category == c] for c in categories}
    return place(ranked, day.events, top=top)


def shown(
    day: DayStories, categories: Sequence[str], *, top: int, only: Sequence[str] | None = None
) -> list[StoryView]:
    """The stories `placed` shows in each of `only` (default: every one of `categories`)."""
    layout = placed(day, categories, top=top)
    by_id = {s.id: s for s in day.stories}
    return [by_id[i] for c in (only or categories) for i in layout.shown.get(c, [])]


def lead(edition: Edition, n: int) -> tuple[EditionStory, ...]:
    """The edition's `n` top stories across its sections: highest score first, then more
    outlets, then section order (a reader's copy: across their categories)."""
    stories = [(s, i) for i, section in enumerate(edition.sections) for s in section.stories]
    stories.sort(key=lambda si: (-si[0].score, -len(si[0].outlets), si[1]))
    return tuple(s for s, _ in stories[:n])


def lead_stories(edition: Edition, n: int) -> tuple[EditionStory, ...]:
    """The "Top stories" of an edition or a reader's copy: its `n` top stories across
    categories (`lead`); none when it has stories in one category only, which already opens
    with them."""
    if sum(1 for s in edition.sections if s.stories) < 2:
        return ()
    return lead(edition, n)


def marked_json(found: Sequence[StoryView], events: Sequence[Event]) -> list[dict[str, Any]]:
    """`StoryView.to_json` of each story, with where its event is shown: `shown_in` and
    `shown_as` (the category and id of the story shown in its stead, None when it is shown
    itself) and `also_in` (the other categories of its event)."""
    by_id = {s.id: s for s in found}
    event_of = {i: e for e in events for i in e.story_ids}
    out = []
    for story in found:
        event = event_of.get(story.id)
        shown = by_id.get(event.shown) if event is not None else None
        elsewhere = shown is not None and shown.id != story.id
        others = [by_id[i].category for i in event.story_ids if i != story.id] if event else []
        out.append(
            {
                **story.to_json(),
                "shown_in": shown.category if elsewhere and shown else None,
                "shown_as": shown.id if elsewhere and shown else None,
                "also_in": others,
            }
        )
    return out
