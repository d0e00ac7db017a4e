"""What happened to a story since it was last looked at: the events of its timeline. Pure:
`digest.jobs.deepen` hands in the story's outlets as read now and the figures recorded before,
and records what this returns (`Store.record_events`, once per key whatever runs again).

- "first": the story's first article (outlet, URL, headline; at its publication time);
- "outlet": each outlet after the first, at its first article's time;
- "fact": each figure (`digest.facts.figures`) an outlet's text reports for a subject the
  outlet had not reported before (from its lead, its own figure where it gives two, and a
  count further down that an uncounted headline asks for: `figures.lead_figures`; not a
  quoted post's, another country's or a look back's, the outlet's first article's day
  its date: `figures.reported`, "Whose event, and when"; key
  `fact:<outlet>:<subject>:<value>`), and, for an outlet that joined after the first, the
  sentences of its lede that the story's known text did not say
  (`digest.stories.novelty.new_facts`, the rule "what's new" uses: cheap, and it errs
  towards saying less); a figure names its subject (a quantity key, `figures.QUANTITIES`) and
  value, and its text is the figure's clause as the outlet wrote it (`Figure.clause`, at most
  about 160 characters), not its whole sentence, which on a scraped page can run to 1,800;
- "revision": an outlet updating its own count of one event: its figure for a subject changed
  since it was recorded, and either the article it is read from is the one the recorded figure
  came from (the page was updated: the events' URLs, `OutletText.url`), or the new figure's
  clause itself says the count changed ("rose to", "asciende a", "s'élève à", "stieg auf":
  `figures.changed_count`); a running count (dead, injured, ...: `figures.running_count`)
  lower in another article is never one. Otherwise an outlet's newer article with another
  value is another event's count, or another source's, not a revision: its figure is a
  "fact" of that article (key by value as above, at the time it was read), so an outlet's
  two days' articles about two clashes are never "38 -> 35 injured" (issue 38);
  `previous` -> `value`;
- "disagreement": outlets report different values for the same subject now (key by subject and
  the set of values, so a dispute is recorded once, and again only when its values change).

An outlet's text is its main text when the deep crawl read one, else its lede (as the summary
is written from), and like a summary it loses its links first (`strip_links`, the outlet's own
article URL allowed): a timeline's sentences end up in alerts and in "Since your last digest",
where a feed's "donate at evil.example/pay" must not. Corrections are made by
`digest.jobs.publish`, against what was sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from digest.facts.figures import (
    Figure,
    changed_count,
    disagreements,
    reported,
    revisions,
    running_count,
    values_of,
)
from digest.memory.events import NewEvent
from digest.models import Disagreement, StoryEvent
from digest.stories.novelty import Joined, new_facts
from digest.summarize.output import strip_links


@dataclass(frozen=True, slots=True)
class OutletText:
    """One outlet of a story as read now: the article whose text is read (its URL, headline,
    main text else lede: the story's representative for its outlet, else the outlet's newest)
    and the time of the outlet's earliest article. A figure's events carry `url`: the article
    it came from."""

    outlet: str
    url: str
    title: str
    at: datetime
    text: str
    lede: str = ""
    language: str = ""


def without_links(o: OutletText) -> OutletText:
    """The outlet as read now, its headline, lede and text without links but its own URL (as
    its summary is written: `digest.summarize.output.strip_links`)."""
    allowed = [o.url]
    return replace(
        o,
        title=strip_links(o.title, allowed),
        lede=strip_links(o.lede, allowed),
        text=strip_links(o.text, allowed),
    )


def number(value: Decimal) -> str:
    """A figure's value as keys and details keep it: "30", "3200000", "7.1"."""
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def figure_of(event: StoryEvent, detail: Mapping[str, Any]) -> Figure:
    """A recorded figure as `digest.facts.figures` compares it."""
    return Figure(
        subject=event.subject,
        value=Decimal(str(detail.get("number") or "0")),
        qualifier=str(detail.get("qualifier", "")),
        written=event.value,
        sentence=event.text,
        unit=str(detail.get("unit", "")),
    )


def previous_of(event: StoryEvent, detail: Mapping[str, Any]) -> Figure:
    """What a recorded revision replaced, as a figure."""
    return Figure(
        subject=event.subject,
        value=Decimal(str(detail.get("previous_number") or "0")),
        qualifier=str(detail.get("previous_qualifier", "")),
        written=event.previous,
        sentence="",
        unit=str(detail.get("unit", "")),
    )


Latest = Mapping[tuple[str, str], tuple[StoryEvent, Mapping[str, Any]]]


def by_outlet(latest: Latest) -> dict[str, list[Figure]]:
    """The recorded latest figures (`Store.latest_figures`) by outlet."""
    found: dict[str, list[Figure]] = {}
    for (outlet, _), (event, detail) in sorted(latest.items()):
        found.setdefault(outlet, []).append(figure_of(event, detail))
    return found


def revised(latest: Latest) -> dict[str, list[tuple[Figure, Figure]]]:
    """Each outlet's figures that are a revision, (what it said before, what it says now)."""
    found: dict[str, list[tuple[Figure, Figure]]] = {}
    for (outlet, _), (event, detail) in sorted(latest.items()):
        if event.kind == "revision":
            found.setdefault(outlet, []).append(
                (previous_of(event, detail), figure_of(event, detail))
            )
    return found


def _figure_event(
    kind: str, key: str, o: OutletText, f: Figure, at: datetime, **extra: Any
) -> NewEvent:
    return NewEvent(
        key,
        kind,
        at,
        outlet=o.outlet,
        url=o.url,
        text=f.clause or f.sentence,  # the figure's clause: a sentence can run to a page
        subject=f.subject,
        value=f.written,
        detail={
            "number": number(f.value),
            "qualifier": f.qualifier,
            "unit": f.unit,
            **extra.pop("detail", {}),
        },
        **extra,
    )


def _fell(was: Figure, now: Figure) -> bool:
    """Whether every value the new figure can be is below every value the old one can be."""
    before = was.values or values_of(was.written) or {was.value}
    after = now.values or values_of(now.written) or {now.value}
    return max(after) < min(before)


def updated(recorded_url: str, o: OutletText, was: Figure, now: Figure) -> bool:
    """Whether the outlet's new figure `now` is its own count `was` updated (a revision): read
    from the article the recorded figure came from (the page was updated), or from a clause
    that says the count changed; a running count lower in another article never is."""
    if recorded_url and recorded_url == o.url:
        return True
    if running_count(now.subject) and _fell(was, now):
        return False
    return changed_count(now, o.language or None)


def disagreement_key(d: Disagreement) -> str:
    return f"disagreement:{d.subject}:{'|'.join(sorted(r.value for r in d.reported))}"


def story_events(
    outlets: Sequence[OutletText],
    latest: Latest,
    *,
    recorded: Sequence[str] = (),
    now: datetime,
) -> list[NewEvent]:
    """The events a story's outlets as read now give, against its recorded `latest` figures
    and the outlets already `recorded` (in order). `outlets` are in story order, the first
    reporter first; an event already recorded comes back with the same key (and is ignored)."""
    if not outlets:
        return []
    outlets = [without_links(o) for o in outlets]
    events, known_text, joined = _reporting_events(outlets, recorded)
    current: dict[str, list[Figure]] = {}
    for o in outlets:
        current[o.outlet] = reported(o.text, o.language or None, o.title, o.at.date())
        events += _figure_events(o, current[o.outlet], latest, now)
    events += _lede_facts(outlets, known_text, joined, current)
    events += _disagreement_events(current, now)
    return events


def _reporting_events(
    outlets: Sequence[OutletText], recorded: Sequence[str]
) -> tuple[list[NewEvent], list[str], list[Joined]]:
    """The story's "first" event and an "outlet" event for each outlet after the first; with
    what the story had said (the headline, lede and main text of the first outlet and of
    those already `recorded`) and the outlets that joined since, for their new facts."""
    first = min(outlets, key=lambda o: o.at)
    events = [
        NewEvent("first", "first", first.at, outlet=first.outlet, url=first.url, text=first.title)
    ]
    known_text = [first.title, first.lede, first.text]
    joined: list[Joined] = []
    for o in outlets:
        if o.outlet == first.outlet:
            continue
        events.append(
            NewEvent(f"outlet:{o.outlet}", "outlet", o.at, outlet=o.outlet, url=o.url, text=o.title)
        )
        if o.outlet in recorded:
            known_text += [o.title, o.lede, o.text]
        else:
            joined.append(Joined(o.outlet, o.language, (o.lede or o.text,)))
    return events, known_text, joined


def _figure_events(
    o: OutletText, figures: Sequence[Figure], latest: Latest, now: datetime
) -> list[NewEvent]:
    """An outlet's "fact" for each figure of a subject it had not reported, and for one it had:
    a "revision" when the figure is its own count updated (`updated`), else a "fact" of the
    article it is read from."""
    events: list[NewEvent] = []
    for f in figures:
        before = latest.get((o.outlet, f.subject))
        if before is None:
            key = f"fact:{o.outlet}:{f.subject}:{number(f.value)}"
            events.append(_figure_event("fact", key, o, f, o.at))
            continue
        old = figure_of(*before)
        for was, now_f in revisions([old], [f]):
            if not updated(before[0].url, o, was, now_f):
                key = f"fact:{o.outlet}:{f.subject}:{number(f.value)}"
                events.append(_figure_event("fact", key, o, f, now))
                continue
            key = f"revision:{o.outlet}:{f.subject}:{number(was.value)}:{number(now_f.value)}"
            was_detail = {
                "previous_number": number(was.value),
                "previous_qualifier": was.qualifier,
            }
            events.append(
                _figure_event(
                    "revision", key, o, now_f, now, previous=was.written, detail=was_detail
                )
            )
    return events


def _lede_facts(
    outlets: Sequence[OutletText],
    known_text: Sequence[str],
    joined: Sequence[Joined],
    current: Mapping[str, Sequence[Figure]],
) -> list[NewEvent]:
    """New checked facts without figures: what the joined outlets' ledes add, but for the
    sentences of the figures already found."""
    events: list[NewEvent] = []
    told = {(outlet, f.sentence) for outlet, figures in current.items() for f in figures}
    for fact in new_facts(known_text, joined):
        o = next(x for x in outlets if x.outlet == fact.outlet)
        if (o.outlet, fact.text) in told:
            continue  # the sentence of a figure already recorded for this outlet
        events.append(
            NewEvent(
                f"fact:{o.outlet}:{fact.text[:200]}",
                "fact",
                o.at,
                outlet=o.outlet,
                url=o.url,
                text=fact.text,
            )
        )
    return events


def _disagreement_events(current: Mapping[str, Sequence[Figure]], now: datetime) -> list[NewEvent]:
    """A "disagreement" for each subject the outlets report different values for now."""
    events: list[NewEvent] = []
    for d in disagreements({k: v for k, v in current.items() if v}):
        values = "; ".join(f"{r.value} ({', '.join(r.outlets)})" for r in d.reported)
        events.append(
            NewEvent(
                disagreement_key(d),
                "disagreement",
                now,
                text=values,
                subject=d.subject,
                detail={"reported": [[r.value, list(r.outlets)] for r in d.reported]},
            )
        )
    return events
