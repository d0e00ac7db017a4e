"""One event collected under two categories is one story: which stories of different categories
tell the same event, and which of them is shown. Pure code, no I/O.

What the store holds. An article is one row per canonical URL, filed under the category it was
first collected under (`digest.store.articles`: "the first known value stays"): the same URL fed
under technology and world is one article, in one story, of technology. Two categories never
share an article, so the same event across categories is two stories told by different outlets'
articles, clustered apart only because clustering works within a category.

The rule. Two stories of different categories tell the same event when the clustering's own
test would have merged them had they been in one category: the cosine of their mean vectors
(`digest.stories.cluster.story_cosines`, centroid linkage with the final similarity, terms
counted once per story as in the clustering's pass 2, identical titles always, and with
`[stories.embeddings]` the stored vectors weighed as the clustering weighs them, so one event
told in English under one category and in German under another is one) reaches the
configured `[stories] similarity` (0.28, measured for the clustering; no threshold of its own).
Pairs join, strongest first (ties by the lower story ids), into events that never hold two
stories of one category: within a category the clustering already decided that two stories
are two, and that stays.

Measured by bench/across_categories.py on ../shared/data/clustering-dev (2,145 labelled
headlines of 39 stories, titles only, two categories; no story spans both): each category's
headlines split at random into two pseudo-categories, each clustered at 0.28, then linked
(seeds 1-3). At 0.28, 84-89% of the links (83-89 of them) join two stories of one labelled
story, 3-7 join the business and the entertainment category, and 38 of the 39 labelled
stories the split put in both halves are linked. Linking at 0.35 instead: 87-92% of 72-77
links, 2-4 across, the same 38. But a pair with ledes counts `TEXT_DISCOUNT` (0.8) of its
similarity, so 0.35 asks of it what 0.44 asks of titles alone, and the Tesla recall told by the
BBC under world and by Reuters and The Verge under technology (tests/test_across_categories.py)
stayed two stories. The clustering's threshold it is, until a floor is measured on titles with
ledes.

Identity. Nothing is stored: the events are recomputed from the stored stories every time
(an edition, `digest stories`), sorted by story id before anything is compared, so the same
stories give the same events whatever order they come in. An event is named by its lowest
story id, the story first clustered, which clustering never splits or merges away, so a later
collect that grows either story keeps the event's name. A stored link would keep two stories
together even after one of them is renamed away from the other; it would need a migration and
a write during every clustering of every category, for no reader-visible gain while the rule
is this cheap. The cost: a decision near the threshold may change as stories grow, as the
clustering's own decisions about new articles do.

The shown story is the event's best: highest score, then the earlier category in the
configuration, then the lower story id. `digest.edition.front_page.place` lays out an edition's
sections with it: the other stories of the event move out of their categories, which fill their
top from below and mention it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from digest.models import StoryView
from digest.stories.cluster import Report, story_cosines


@dataclass(frozen=True, slots=True, kw_only=True)
class Filed:
    """A stored story as the rule sees it: its category, its score and its articles."""

    id: int
    category: str
    score: float
    reports: tuple[Report, ...]

    @classmethod
    def of(cls, story: StoryView, vectors: Mapping[int, tuple[float, ...]] | None = None) -> Filed:
        """`story` as the rule sees it; `vectors`: its articles' embeddings by id, all of one
        model (None: words alone)."""
        known = vectors or {}
        return cls(
            id=story.id,
            category=story.category,
            score=story.score,
            reports=tuple(
                Report(
                    id=a.id,
                    title=a.title,
                    text=a.lede,
                    first_seen=a.first_seen,
                    published=a.published,
                    outlet=a.outlet,
                    embedding=known.get(a.id),
                )
                for a in story.articles
            ),
        )


@dataclass(frozen=True, slots=True)
class Event:
    """Stories of different categories that tell one event."""

    story_ids: tuple[int, ...]  # ascending; two or more, each of another category
    shown: int  # the story shown, in its category; the others are mentioned

    @property
    def id(self) -> int:
        """The event's name across runs: its first story."""
        return self.story_ids[0]


def same_events(
    stories: Sequence[Filed],
    *,
    similarity: float,
    window: timedelta,
    categories: Sequence[str] = (),
) -> list[Event]:
    """The events told by stories of more than one category, by id; `categories` is the
    configured order, which breaks ties of score (see the module docstring)."""
    filed = sorted(stories, key=lambda s: s.id)
    if len({s.id for s in filed}) != len(filed):
        raise ValueError("story ids must be unique")
    cosines = story_cosines(
        [s.reports for s in filed], window=window, categories=[s.category for s in filed]
    )
    joins = sorted(
        (-cos, filed[a].id, filed[b].id, a, b)
        for (a, b), cos in cosines.items()
        if cos >= similarity and filed[a].category != filed[b].category
    )
    parent = list(range(len(filed)))
    held = [{s.category} for s in filed]

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for *_, a, b in joins:
        ra, rb = root(a), root(b)
        if ra == rb or held[ra] & held[rb]:
            continue  # one event, one story of a category
        keep, gone = min(ra, rb), max(ra, rb)
        parent[gone] = keep
        held[keep] |= held[gone]
    members: dict[int, list[int]] = {}
    for i in range(len(filed)):
        members.setdefault(root(i), []).append(i)
    rank = {c: n for n, c in enumerate(categories)}

    def best(i: int) -> tuple[float, int, int]:
        s = filed[i]
        return (-s.score, rank.get(s.category, len(rank)), s.id)

    events = [
        Event(tuple(filed[i].id for i in idx), filed[min(idx, key=best)].id)
        for idx in members.values()
        if len(idx) > 1
    ]
    return sorted(events, key=lambda e: e.id)
