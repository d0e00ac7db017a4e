"""Editions management (`digest editions list|remove`): the days published, and taking one back.

An edition made by mistake (a wrong `publish --date`, say) sits in the archive, its index and
feeds, and may have gone out already. Removing it deletes it from the store and writes the
archive again without it (its pages deleted; the index, `latest.html` and the feeds rebuilt).
The delivery ledger keeps what was sent: a sent message stays recorded (`digest deliveries`),
so the record of who got what is never lost, and a message not sent yet is skipped, saying
why, so nobody gets an edition that is gone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from digest.app import App
from digest.errors import DigestError, NoSuchEditionError
from digest.render.archive import write_archive
from digest.runtime.threads import off_loop
from digest.schedule import publish_key

# What a message of a removed edition that was never sent says in the ledger.
EDITION_REMOVED = "not sent: the edition was removed (digest editions remove)"


@dataclass(frozen=True, slots=True)
class ListedEdition:
    """One stored edition, as `digest editions list` shows it."""

    day: date
    stories: int
    headlines: int
    generated_at: datetime
    deliveries: dict[str, int] = field(default_factory=dict)  # ledger rows per state

    def to_json(self) -> dict[str, Any]:
        return {
            "day": self.day.isoformat(),
            "stories": self.stories,
            "headlines": self.headlines,
            "generated_at": self.generated_at.isoformat(),
            "deliveries": self.deliveries,
        }


@dataclass(frozen=True, slots=True)
class RemovedEdition:
    """What `digest editions remove` did."""

    day: date
    sent: int  # messages of it sent before: kept in the ledger
    skipped: int  # messages of it not sent yet: skipped
    pages_removed: int
    pages_written: int


async def list_editions(app: App) -> list[ListedEdition]:
    """Every stored edition, newest first, with its messages per state in the ledger."""
    store = await app.face(create=False)
    found = []
    for edition in await store.editions():
        counts = await store.ledger_counts(edition.day)
        found.append(
            ListedEdition(
                day=edition.day,
                stories=sum(len(s.stories) for s in edition.sections),
                headlines=sum(len(s.headlines) for s in edition.sections),
                generated_at=edition.generated_at,
                deliveries={state: n for state, n in counts.items() if n},
            )
        )
    return found


async def remove_edition(app: App, day: date) -> RemovedEdition:
    """Remove the edition of `day` from the store and the archive (see the module docstring).
    The day's publish run gives up its key: the daemon may publish the day again when it is
    due, though a reader its message already reached is not sent the day again."""
    store = await app.face(create=False)
    sent = (await store.ledger_counts(day))["sent"]
    skipped = await store.remove_edition(
        day,
        run_key=publish_key(day),
        reason=EDITION_REMOVED,
        at=datetime.now(UTC),
    )
    if skipped is None:
        raise NoSuchEditionError(f"there is no edition of {day} (see `digest editions list`)")
    config = app.config
    editions = await store.editions()
    out_dir = config.resolve(config.archive.dir)
    # The corrections later editions made of the ones left: their pages keep marking them.
    from digest.jobs.story_memory import archive_corrections

    corrected = await store.call(archive_corrections)
    try:
        archive = await off_loop(  # our own rendering and local files: it ends by itself
            write_archive,
            editions,
            config.archive,
            out_dir,
            prune=True,
            lead=config.publish.lead_stories,
            corrected=corrected,
        )
    except OSError as err:
        raise DigestError(
            f"removed the edition of {day} from the store, but cannot write the archive in "
            f"{out_dir}: {err.strerror or err}; the next publish writes it again"
        ) from None
    return RemovedEdition(day, sent, skipped, len(archive.removed), len(archive.written))
