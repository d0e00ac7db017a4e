"""Publishing: build the day's edition from the store, render the archive, send the emails.

An edition is one day in the configured time zone. Building it again gives the same edition
(updated if its stories changed, never a second one); sending goes through the delivery ledger,
so publishing again sends nothing twice. What the edition holds and who gets what of it is
decided in `digest.edition` (pure); here the store is read for it, and the edition saved,
rendered and sent (sending: `digest.jobs.sending`).
"""

from __future__ import annotations

import asyncio
import logging
import time as clock
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from functools import partial
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from digest.edition.front_page import placed
from digest.edition.sections import (
    HEADLINES_PER_SECTION,
    LOOKBACK,
    Appearance,
    Found,
    appearances_in,
    edition_sections,
    edition_story,
    loose_headlines,
    more_headlines,
    unmoved,
)
from digest.errors import InvalidEditionDayError, StoreError
from digest.jobs.alerts import alert_followers
from digest.jobs.clustering import across_categories
from digest.jobs.figure_check import ANSWERED_NO, FIGURE_CHECK, FigureCheck, for_app
from digest.jobs.run import OpenRun, recorded_run
from digest.jobs.sending import delivery_counts, delivery_failures, send_edition
from digest.jobs.story_memory import archive_corrections, with_memory
from digest.models import Edition, Failure
from digest.runtime.progress import NO_PROGRESS, Progress
from digest.runtime.threads import off_loop
from digest.schedule import edition_day

if TYPE_CHECKING:
    from digest.jobs.units import Parts
    from digest.render.archive import ArchiveReport
    from digest.store.face import StoreFace

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PublishReport:
    run_id: int
    day: date
    status: str
    edition_state: str  # "new", "updated" or "unchanged"
    pages_written: int
    pages_unchanged: int
    counts: dict[str, int] = field(default_factory=dict)
    errors: list[Failure] = field(default_factory=list)
    elapsed: float = 0.0


async def earlier_appearances(
    store: StoreFace, day: date, story_ids: set[int]
) -> dict[int, Appearance]:
    """Each story's latest appearance in the editions before `day` (the latest `LOOKBACK`
    editions). An edition that cannot be read is skipped: it must not stop today's."""
    found: dict[int, Appearance] = {}
    days = [d for d in await store.edition_days() if d < day][:LOOKBACK]
    for earlier_day in days:
        if len(found) == len(story_ids):
            break
        try:
            edition = await store.edition(earlier_day)
        except StoreError as err:
            log.warning("%s; stories are compared with older editions", err)
            continue
        if edition is not None:
            found |= appearances_in(edition, story_ids, found)
    return found


def day_bounds(day: date, tz: str) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(0), tzinfo=ZoneInfo(tz))
    return start, start + timedelta(days=1)


async def build_edition(
    app: Parts, day: date, *, now: datetime | None = None, check: FigureCheck | None = None
) -> Edition:
    """The edition of `day` from what the store holds: per category, its top stories (each
    told against its latest appearance in an earlier edition) and the ledes of the day's other
    headlines. An event collected under several categories is one story, in its best category
    (`digest.stories.across`), and a mention in the others; a category's top stories are
    counted after such stories have moved out. Its "More headlines" are its other stories,
    once each, none repeating a story shown in any section (`more_headlines`). Its figure
    lines pass `check` (default: the run's, `figure_check.for_app`) before they are shown."""
    config = app.config
    store = await app.face()
    start, end = day_bounds(day, config.schedule.timezone)
    everything = await store.stories_since(None, since=start, until=end)
    day_stories = await store.call(
        across_categories,
        config.stories,
        config.sources.categories,
        since=start,
        until=end,
        found=everything,
    )
    by_id = {s.id: s for s in day_stories.stories}
    layout = placed(day_stories, config.sources.categories, top=config.stories.top)
    above = [by_id[i] for c in config.sources.categories for i in layout.shown[c]]
    found: list[Found] = []
    in_stories = {a.url for s in everything for a in s.articles}
    for category in config.sources.categories:
        stories = [by_id[i] for i in layout.shown[category]]
        told = sum(len(s.articles) for s in everything if s.category == category)
        items = await store.headlines(category, since=start, limit=HEADLINES_PER_SECTION + told)
        loose = loose_headlines(items, in_stories, end)
        others = unmoved(everything, category, layout)
        headlines = await off_loop(more_headlines, others, loose, above)
        if stories or headlines or layout.mentions[category]:
            found.append((category, stories, headlines))
    earlier = await earlier_appearances(store, day, {s.id for _, ss, _ in found for s in ss})

    now = now or datetime.now(UTC)
    # Detecting languages takes a while: a thread.
    built = await off_loop(edition_sections, found, layout, by_id, earlier)
    # Each story's timeline, disputes and corrections (issue 31; digest.jobs.story_memory).
    check = check or await for_app(app)
    keep = check.from_thread(asyncio.get_running_loop())
    built = await store.call(with_memory, built, day, now, edition_story, keep)
    return Edition(day=day, timezone=config.schedule.timezone, sections=built, generated_at=now)


async def save_edition(app: Parts, edition: Edition) -> tuple[Edition, str]:
    """Store the edition; an unchanged rebuild keeps the stored one (and its timestamp).
    Returns the edition and what happened to it: "new", "updated" or "unchanged"."""
    store = await app.face()
    stored = await store.edition(edition.day)
    if stored is not None and replace(edition, generated_at=stored.generated_at) == stored:
        return stored, "unchanged"
    created, changed = await store.save_edition(edition)
    return edition, "new" if created else "updated" if changed else "unchanged"


async def render_archive(app: Parts) -> ArchiveReport:
    """Bring the static archive up to date with every stored edition (incrementally)."""
    from digest.render.archive import write_archive

    store = await app.face()
    editions = await store.editions()
    corrected = await store.call(archive_corrections)
    out_dir = app.config.resolve(app.config.archive.dir)
    return await off_loop(
        partial(write_archive, lead=app.config.publish.lead_stories, corrected=corrected),
        editions,
        app.config.archive,
        out_dir,
    )


async def publish(
    app: Parts,
    day: date | None = None,
    *,
    send: bool = True,
    due_only: bool = False,
    run_key: str | None = None,
    progress: Progress = NO_PROGRESS,
    note: str = "",
) -> PublishReport:
    """Build the edition of `day` (default: today), render the archive, send the emails;
    `progress` hears of each step and of each message sent. `note`: why nothing came in (a
    cycle whose collection failed), which an edition without stories says on its page."""
    started = clock.monotonic()
    now = datetime.now(UTC)
    day = day or edition_day(now, app.config.schedule.timezone)
    state, archive = "unchanged", None
    async with recorded_run(app, "publish", run_key, started=started) as run:
        progress.step("building the edition")
        built = await checked_edition(app, day, now, run)
        if note and not built.sections:
            built = replace(built, note=note)
        edition, state = await save_edition(app, built)
        run.counts.update(edition_counts(edition))
        progress.step("writing the archive")
        archive = await archive_or_failure(app, run)
        if send:
            await send_and_count(app, edition, now, run, due_only=due_only, progress=progress)
        run.status = "partial" if run.errors else "ok"
    if send:  # corrections found while building the edition, to the stories' followers
        await alert_followers(app, "publish")
    return PublishReport(
        run.id,
        day,
        run.status,
        state,
        len(archive.written) if archive else 0,
        len(archive.unchanged) if archive else 0,
        run.counts,
        run.errors,
        clock.monotonic() - started,
    )


async def checked_edition(app: Parts, day: date, now: datetime, run: OpenRun) -> Edition:
    """The edition of `day` built with the run's figure check (`build_edition`); the run
    counts what the check asked and kept out, and fails it where the model failed."""
    check = await for_app(app)
    built = await build_edition(app, day, now=now, check=check)
    if check.on:
        run.counts["figure_checks"] = check.asked
        run.counts["figure_lines_kept_out"] = len(check.kept_out)
    if kept_out := check.report():
        log.info("%s", kept_out)
        if any(c != ANSWERED_NO for c in check.kept_out):  # the model failed, not said no
            run.errors.append(Failure(FIGURE_CHECK, kept_out))
    return built


def edition_counts(edition: Edition) -> dict[str, int]:
    """What a publication's run record counts of its edition."""
    return {
        "stories": sum(len(s.stories) for s in edition.sections),
        "headlines": sum(len(s.headlines) for s in edition.sections),
    }


async def archive_or_failure(app: Parts, run: OpenRun) -> ArchiveReport | None:
    """`render_archive`, counted on the run; a failure to write (a full disk) is the run's
    error, not the end of it: the emails are sent all the same."""
    try:
        archive = await render_archive(app)
    except OSError as err:
        run.errors.append(Failure("archive", f"cannot write the archive: {err}"))
        return None
    run.counts["pages_written"] = len(archive.written)
    return archive


async def send_and_count(
    app: Parts,
    edition: Edition,
    now: datetime,
    run: OpenRun,
    *,
    due_only: bool,
    progress: Progress,
) -> None:
    """`send_edition` to every subscriber (the translator is loaded only when a reader has a
    language); the run counts what was sent, translated and still waits, and reports what was
    not delivered or not translated."""
    store = await app.face()
    readers = await store.subscribers()
    translator = await app.translator() if any(s.preferences.language for s in readers) else None
    report = await send_edition(
        app, edition, now=now, due_only=due_only, translator=translator, progress=progress
    )
    stats = getattr(translator, "stats", None)
    if stats is not None:
        run.counts.update(stats.counts())
        if stats.refused or stats.failed:
            left = stats.refused + stats.failed
            run.errors.append(
                Failure(
                    "translate",
                    f"{left} translation{'' if left == 1 else 's'} not made, the "
                    f"original sent instead; last: {stats.last_error}",
                )
            )
    # What waits for a retry is every pending message of this edition or an earlier
    # one, as `digest status` counts them: not only those that failed in this run.
    pending = await store.deliveries(None, states=("pending",))
    waiting = [d for d in pending if d.edition_day <= edition.day]
    run.counts.update(delivery_counts(report, waiting))
    run.errors += delivery_failures(report, waiting)


def edition_day_refusal(day: date, today: date, articles_seen: int) -> str | None:
    """Why an edition of `day` must not be made by hand, or None. A future day would be an
    empty edition at the top of the archive (its `latest.html`); a past day without articles
    collected on it would file other days' stories under it."""
    if day > today:
        return f"{day} is in the future (today is {today}): an edition is made on its day"
    if day < today and not articles_seen:
        return (
            f"no articles were collected on {day}: an edition of it would hold other days' "
            "stories (`digest editions list` shows the editions there are)"
        )
    return None


async def check_edition_day(app: Parts, day: date, now: datetime) -> None:
    """Raise InvalidEditionDayError when `edition_day_refusal` refuses `day`."""
    tz = app.config.schedule.timezone
    store = await app.face()
    seen = await store.articles_seen(*day_bounds(day, tz))
    refusal = edition_day_refusal(day, edition_day(now, tz), seen)
    if refusal is not None:
        raise InvalidEditionDayError(f"cannot publish {day}: {refusal}")


async def publish_claiming(
    app: Parts, day: date | None = None, *, send: bool = True, progress: Progress = NO_PROGRESS
) -> PublishReport:
    """A publication by hand: it claims the day's scheduled run when that is still free, so the
    daemon does not publish the same edition again (the ledger already prevents double emails).
    A day given by hand is checked first (`edition_day_refusal`): nothing is written for a
    refused one."""
    from digest.errors import RunExistsError
    from digest.schedule import publish_key

    now = datetime.now(UTC)
    if day is not None:
        await check_edition_day(app, day, now)
    the_day = day or edition_day(now, app.config.schedule.timezone)
    if not send:
        return await publish(app, the_day, send=False, progress=progress)
    try:
        return await publish(app, the_day, run_key=publish_key(the_day), progress=progress)
    except RunExistsError:
        return await publish(app, the_day, progress=progress)
