"""An edition's sections, from what the store holds of the day: each category's stories as
readers see them (told against their latest appearance in an earlier edition, with why a
summary is extractive), the events it shares with other categories, and its "More headlines".
Pure: `digest.jobs.publish.build_edition` reads the day's stories, headlines and earlier
editions and hands them here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime

from digest.edition.front_page import Placement
from digest.models import (
    Edition,
    EditionHeadline,
    EditionMention,
    EditionSection,
    EditionStory,
    Item,
    Outlet,
    StoryView,
)
from digest.stories import best_first
from digest.stories.language import detect_language
from digest.stories.novelty import Telling, outlet_key, whats_new
from digest.stories.repeats import REPEAT_SIMILARITY, cosine, story_vectors
from digest.summarize.output import strip_links

HEADLINES_PER_SECTION = 12
# How many earlier editions a story is looked for in, newest first: what is new is told
# against its latest appearance within about two weeks.
LOOKBACK = 14


@dataclass(frozen=True, slots=True)
class Appearance:
    """A story as an earlier edition showed it: that edition's day and build time, and the story."""

    day: date
    built_at: datetime
    story: EditionStory


def edition_story(story: StoryView, earlier: Appearance | None = None) -> EditionStory:
    """A stored story as readers see it: its own summary (checked against its sources), else
    its lead article's, else the representative's lede; each outlet with the language of its
    article; and, when the story was in an earlier edition and outlets joined it since, what
    they add (`digest.stories.novelty`)."""
    checked = story.summary
    lead = checked or next((a.summary for a in story.articles if a.summary), None)
    outlets: dict[str, Outlet] = {}
    for a in story.articles:
        if a.outlet not in outlets:
            outlets[a.outlet] = Outlet(
                name=a.source or a.outlet,
                url=a.url,
                title=a.title,
                language=detect_language(f"{a.title}\n{a.lede}"),
            )
    first = story.articles[0] if story.articles else None
    fallback = first.lede if first else ""
    shown = EditionStory(
        id=story.id,
        category=story.category,
        title=story.title,
        brief_summary=lead.brief_summary if lead else fallback,
        summary=lead.summary if lead else fallback,
        keywords=tuple(lead.keywords) if lead else (),
        summarizer=lead.summarizer if lead else "lede",
        outlets=tuple(outlets.values()),
        first_seen=story.first_seen,
        updated=story.updated,
        claims=checked.claims if checked else None,
        claims_found=checked.claims_found if checked else None,
        sentences_removed=checked.sentences_removed if checked else 0,
        summary_note=reader_note(checked.note) if checked else "",
        cited=checked.sources if checked and checked.summarizer != "extractive" else (),
        score=story.score,
    )
    if earlier is None:
        return shown
    news = whats_new(
        shown, earlier.story, since=earlier.day, as_of=earlier.built_at, tellings=tellings_of(story)
    )
    return replace(shown, whats_new=news)


def tellings_of(story: StoryView) -> list[Telling]:
    """The story's articles as `novelty` compares them: each under its outlet's key as the
    edition shows the outlet (its first article's source and link), its lede without links
    but its own (as a summary: its sentences are what "New:" and "Since your last digest"
    tell)."""
    keys: dict[str, str] = {}
    for a in story.articles:
        if a.outlet not in keys:
            keys[a.outlet] = outlet_key(Outlet(name=a.source or a.outlet, url=a.url))
    return [
        Telling(keys[a.outlet], strip_links(a.lede, [a.url]), a.first_seen) for a in story.articles
    ]


def reader_note(note: str) -> str:
    """Why a story's summary is extractive, told to a reader: never the claims that were not
    found (they are what must not be published), only that there were some."""
    if not note:
        return ""
    if note.startswith("claim check"):
        return "Extractive: the model's summary made claims its sources do not back."
    if "budget" in note:
        return "Extractive: the time set aside for model summaries ran out."
    return "Extractive: the model could not be used."


def appearances_in(
    edition: Edition, story_ids: set[int], found: Mapping[int, Appearance]
) -> dict[int, Appearance]:
    """The stories of `story_ids` that `edition` shows and `found` (what newer editions
    showed) has not: their appearance in it. Read newest first, each story's latest
    appearance is the one kept."""
    new: dict[int, Appearance] = {}
    for section in edition.sections:
        for story in section.stories:
            if story.id in story_ids and story.id not in found and story.id not in new:
                new[story.id] = Appearance(edition.day, edition.generated_at, story)
    return new


def loose_headlines(items: Iterable[Item], in_stories: set[str], end: datetime) -> list[Item]:
    """The collected headlines no story holds yet, published before the edition's day ends."""
    return [
        i
        for i in items
        if i.headline.url not in in_stories
        and (i.headline.published is None or i.headline.published < end)
    ]


def more_headlines(
    stories: Sequence[StoryView], loose: Sequence[Item], above: Sequence[StoryView]
) -> list[EditionHeadline]:
    """A section's "More headlines": its `stories` not shown `above`, best first, one line
    each with all its outlets, then the articles no story holds yet (`loose`, collected since
    the last clustering), newest first. A line that repeats a story shown above or a line
    before it (its titles as close as a clustering join, `digest.stories.repeats`) is left
    out: a reader sees each story once. At most `HEADLINES_PER_SECTION` lines."""
    shown = {s.id for s in above}
    lines: list[tuple[list[str], EditionHeadline]] = []
    for story in best_first(s for s in stories if s.id not in shown and s.articles):
        first = story.articles[0]
        names = tuple({a.outlet: a.source or a.outlet for a in story.articles}.values())
        line = EditionHeadline(
            title=story.title,
            url=first.url,
            source=names[0],
            lede=first.lede,
            published=story.newest,
            outlets=names,
        )
        lines.append(([a.title for a in story.articles], line))
    for item in loose:
        h = item.headline
        line = EditionHeadline(
            title=h.title,
            url=h.url,
            source=h.source,
            lede=item.extract.full_content or h.snippet,
            published=h.published,
        )
        lines.append(([h.title], line))
    vectors = story_vectors([[a.title for a in s.articles] for s in above] + [t for t, _ in lines])
    kept = vectors[: len(above)]
    out: list[EditionHeadline] = []
    for vector, (_, line) in zip(vectors[len(above) :], lines, strict=True):
        if len(out) >= HEADLINES_PER_SECTION:
            break
        if any(cosine(vector, k) >= REPEAT_SIMILARITY for k in kept):
            continue
        kept.append(vector)
        out.append(line)
    return out


def unmoved(everything: Iterable[StoryView], category: str, layout: Placement) -> list[StoryView]:
    """The category's stories that are its own lines: those told above under another category
    (`Placement.moved`) are not."""
    moved = {i for ids in layout.moved.values() for i in ids}
    return [s for s in everything if s.category == category and s.id not in moved]


# A section as found: its category, its top stories and its "More headlines".
Found = tuple[str, Sequence[StoryView], Sequence[EditionHeadline]]


def mentions(
    category: str, layout: Placement, by_id: Mapping[int, StoryView]
) -> tuple[EditionMention, ...]:
    """The events of this category shown in another section, in the order of the day."""
    best = best_first(by_id[i] for i in layout.mentions[category])
    return tuple(EditionMention(s.id, s.title, s.category, s.outlet_count) for s in best)


def edition_sections(
    found: Iterable[Found],
    layout: Placement,
    by_id: Mapping[int, StoryView],
    earlier: Mapping[int, Appearance],
) -> tuple[EditionSection, ...]:
    """The sections readers see: each story as `edition_story` tells it against its
    `earlier` appearance, with the other categories of its event; the headlines; the events
    of the category another section shows. Detecting languages takes a while: a thread's
    work for the job."""
    return tuple(
        EditionSection(
            category=category,
            stories=tuple(
                replace(edition_story(s, earlier.get(s.id)), also_in=layout.also_in.get(s.id, ()))
                for s in stories
            ),
            headlines=tuple(headlines),
            mentions=mentions(category, layout, by_id),
        )
        for category, stories, headlines in found
    )
