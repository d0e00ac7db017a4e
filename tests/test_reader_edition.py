"""Every reader's own digest: `send_edition` with a real store, the outbox and local Apprise
receivers. Rules, stories per category, language, own send time, every channel once, and an
edition a rule leaves empty skipped in the ledger with the reason."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from email import message_from_bytes
from email.policy import default as default_policy
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from digest.app import App
from digest.config import load_config
from digest.jobs.sending import NOTHING_MATCHED, NOTHING_NEW, send_edition
from digest.models import EditionStory, Outlet
from digest.schedule import subscriber_edition
from digest.subscribers.preferences import Preferences
from digest.summarize.translate import Untranslated, story_language, translate_edition
from tests.configs import write_config
from tests.conftest import serve_in_thread
from tests.editions import make_edition
from tests.receivers import Receivers

DAY = date(2026, 11, 29)
NOON = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def receivers() -> Iterator[Receivers]:
    yield from serve_in_thread(Receivers())


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    write_config(
        tmp_path,
        sources={"categories": ["technology", "world", "finance", "us politics"]},
        archive={"base_url": "https://news.example.org/"},
        email={"from": "digest@news.example.org", "retry_backoff": 1.0},
        schedule={"publish_at": "07:00", "timezone": "Europe/Berlin"},
        channels={"timeout": 3.0},
    )
    async with App(load_config(tmp_path / "digest.toml")) as app:
        store = await app.store()
        store.save_edition(make_edition(DAY))
        yield app


async def subscribe(app: App, email: str, **prefs: object) -> None:
    store = await app.store()
    store.add_subscriber(email, categories=None, timezone="UTC")
    store.save_preferences(email, Preferences(**{"timezone": "UTC", **prefs}))  # type: ignore[arg-type]


def outbox(app: App) -> dict[str, str]:
    """The outbox's emails by recipient: their plain-text parts."""
    found = {}
    for path in sorted(app.config.resolve("outbox").glob("*.eml")):
        msg = message_from_bytes(path.read_bytes(), policy=default_policy)
        found[str(msg["To"])] = msg.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    return found


async def ledger(app: App) -> dict[tuple[str, str], tuple[str, str | None]]:
    store = await app.store()
    return {(d.recipient, d.channel): (d.state, d.last_reply) for d in store.load_deliveries(DAY)}


async def edition(app: App):
    store = await app.store()
    return store.edition(DAY)


async def test_a_reader_gets_only_what_their_rules_keep_on_every_channel_once(
    app: App, receivers: Receivers
) -> None:
    hook = receivers.json_url("rules-reader")
    await subscribe(
        app,
        "rules@example.org",
        include=("central bank", "flood"),
        exclude=("spring",),
        channels=(hook,),
    )
    await subscribe(app, "all@example.org")

    report = await send_edition(app, await edition(app), now=NOON)

    mail = outbox(app)
    assert "Flood barrier holds as storm hits the lower valley" in mail["rules@example.org"]
    assert "Central bank holds rates, signals cuts next spring" not in mail["rules@example.org"]
    assert "Chipmaker unveils" not in mail["rules@example.org"]
    assert "Chipmaker unveils" in mail["all@example.org"]
    (got,) = receivers.of("rules-reader")
    assert "Flood barrier holds" in got.message and "Chipmaker" not in got.message
    assert len(report.sent) == 3
    again = await send_edition(app, await edition(app), now=NOON + timedelta(hours=1))
    assert again.sent == () and len(receivers.of("rules-reader")) == 1 and len(outbox(app)) == 2


async def test_an_edition_the_rules_leave_empty_is_skipped_with_the_reason(
    app: App, receivers: Receivers
) -> None:
    hook = receivers.json_url("nothing-matches")
    await subscribe(app, "picky@example.org", include=("zeppelin",), channels=(hook,))

    report = await send_edition(app, await edition(app), now=NOON)

    assert outbox(app) == {} and receivers.of("nothing-matches") == []
    assert len(report.skipped) == 2 and report.ok
    rows = await ledger(app)
    assert set(rows.values()) == {("skipped", NOTHING_MATCHED)}


async def test_stories_per_category_and_categories_are_the_readers(app: App) -> None:
    await subscribe(app, "brief@example.org", categories=("world", "finance"), max_stories=1)
    await send_edition(app, await edition(app), now=NOON)
    mail = outbox(app)["brief@example.org"]
    assert "Flood barrier holds" in mail and "Central bank holds rates" in mail
    assert "Chipmaker" not in mail  # technology is not theirs
    full = await edition(app)
    second_world = full.sections[1].stories[1].title
    assert second_world not in mail


async def test_the_email_can_be_switched_off_and_the_channels_still_get_it(
    app: App, receivers: Receivers
) -> None:
    await subscribe(
        app, "push@example.org", send_email=False, channels=(receivers.ntfy_url("push-only"),)
    )
    await send_edition(app, await edition(app), now=NOON)
    assert outbox(app) == {} and len(receivers.of("push-only")) == 1
    assert list(await ledger(app)) == [
        ("push@example.org", (await app.store()).subscriber("push@example.org").channels[0].key)
    ]


async def test_a_story_not_in_the_readers_language_is_sent_as_written_and_marked(app: App) -> None:
    await subscribe(app, "fr@example.org", language="fr", categories=("finance",))
    await send_edition(app, await edition(app), now=NOON)
    mail = outbox(app)["fr@example.org"]
    # make_edition's finance stories lead with Der Spiegel (German) or an English outlet; the
    # mark names the language as a French reader does (issue 38).
    assert "(Allemand)" in mail or "(Anglais)" in mail
    assert "traduit" not in mail and "translated from" not in mail


class CountingTranslator:
    """A stand-in for an LLM translator: "translates" by prefixing, counts its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, str]] = []

    async def translate(self, story: EditionStory, language: str) -> EditionStory:
        self.calls.append((story.id, language))
        return replace(
            story,
            title=f"[{language}] {story.title}",
            language=language,
            translated_from=story_language(story),
        )


async def test_a_translator_is_asked_once_per_story_and_language(app: App, monkeypatch) -> None:
    translator = CountingTranslator()

    async def counting() -> CountingTranslator:
        return translator

    monkeypatch.setattr(app, "translator", counting)
    for name in ("a", "b", "c"):
        await subscribe(app, f"{name}@example.org", language="fr", categories=("world",))
    await subscribe(app, "d@example.org", language="de", categories=("world",))

    await send_edition(app, await edition(app), now=NOON)

    world = [s.id for s in (await edition(app)).sections[1].stories]
    assert sorted(translator.calls) == sorted(
        [(i, "fr") for i in world] + [(i, "de") for i in world]
    )
    mail = outbox(app)
    assert "[fr] Flood barrier holds" in mail["a@example.org"]
    assert "traduit par le modèle, original en anglais" in mail["a@example.org"]


async def test_untranslated_stories_are_marked_only_when_not_in_the_readers_language() -> None:
    ed = make_edition(DAY)
    english = await translate_edition(ed, "en", Untranslated())
    marks = {s.language for sec in english.sections for s in sec.stories}
    assert marks <= {"", "de", "fr"}  # English stories unmarked for an English reader
    assert await translate_edition(ed, None, Untranslated()) == ed


# -- each reader's own time ------------------------------------------------------------------------


async def test_each_reader_gets_it_at_their_own_time_in_their_own_zone(app: App) -> None:
    await subscribe(app, "early@example.org", timezone="Asia/Tokyo", send_at="06:00")
    await subscribe(app, "late@example.org", timezone="America/New_York", send_at="18:30")
    await subscribe(app, "default@example.org", timezone="Europe/Berlin")  # publish_at, 07:00
    ed = await edition(app)
    tokyo = datetime.combine(DAY, time(6, 0), ZoneInfo("Asia/Tokyo"))
    berlin = datetime.combine(DAY, time(7, 0), ZoneInfo("Europe/Berlin"))
    new_york = datetime.combine(DAY, time(18, 30), ZoneInfo("America/New_York"))

    async def sent_at(now: datetime) -> list[str]:
        report = await send_edition(app, ed, now=now, due_only=True)
        return sorted({d.recipient for d in report.sent})

    assert await sent_at(tokyo - timedelta(minutes=1)) == []
    assert await sent_at(tokyo) == ["early@example.org"]
    assert await sent_at(berlin - timedelta(seconds=1)) == []
    assert await sent_at(berlin) == ["default@example.org"]
    assert await sent_at(new_york - timedelta(minutes=5)) == []
    assert await sent_at(new_york + timedelta(minutes=5)) == ["late@example.org"]
    assert await sent_at(new_york + timedelta(hours=5)) == []


async def test_a_newer_edition_due_for_a_reader_replaces_the_older_one(app: App) -> None:
    await subscribe(app, "west@example.org", timezone="Pacific/Honolulu", send_at="23:30")
    ed = await edition(app)
    # Honolulu's 23:30 of the 29th is 09:30 UTC on the 30th, after the 30th's edition is out.
    due = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)
    report = await send_edition(app, ed, now=due, due_only=True, newer=[DAY + timedelta(days=1)])
    assert [d.recipient for d in report.sent] == ["west@example.org"]
    # A day later both are due: the newest only, the older one is not sent after it.
    later = due + timedelta(days=1)
    store = await app.store()
    store.save_edition(make_edition(DAY + timedelta(days=2)))
    stale = await send_edition(app, ed, now=later, due_only=True, newer=[DAY + timedelta(days=1)])
    assert stale.sent == ()


def test_the_newest_due_edition_is_the_readers() -> None:
    days = [DAY - timedelta(days=1), DAY]
    morning = time(7, 0)
    assert (
        subscriber_edition(days, morning, "UTC", datetime(2026, 11, 29, 6, 59, tzinfo=UTC))
        == days[0]
    )
    assert subscriber_edition(days, morning, "UTC", datetime(2026, 11, 29, 7, 0, tzinfo=UTC)) == DAY
    # Honolulu's 23:30 of the 28th is 09:30 UTC on the 29th; of the 29th, 09:30 on the 30th.
    assert subscriber_edition(days, time(23, 30), "Pacific/Honolulu", NOON) == days[0]
    assert (
        subscriber_edition([DAY], morning, "UTC", datetime(2026, 11, 28, 23, 0, tzinfo=UTC)) is None
    )


async def test_a_channel_added_after_the_edition_went_out_starts_with_the_next_one(
    app: App, receivers: Receivers
) -> None:
    await subscribe(app, "later@example.org")
    await send_edition(app, await edition(app), now=NOON)
    store = await app.store()
    hook = receivers.json_url("added-later")
    store.save_preferences("later@example.org", Preferences(timezone="UTC", channels=(hook,)))

    again = await send_edition(app, await edition(app), now=NOON + timedelta(hours=1))
    assert again.sent == () and receivers.of("added-later") == []

    store.save_edition(make_edition(DAY + timedelta(days=1)))
    tomorrow = store.edition(DAY + timedelta(days=1))
    report = await send_edition(app, tomorrow, now=NOON + timedelta(days=1))
    assert len(report.sent) == 2 and len(receivers.of("added-later")) == 1


async def test_the_next_copy_repeats_only_what_is_new_since_the_readers_last_one(
    app: App, receivers: Receivers
) -> None:
    """A reader who got yesterday's edition is told today's news of its stories (an outlet
    joined one) and not the others again; one who subscribed since gets every story whole."""
    await subscribe(app, "daily@example.org", categories=("world",))
    await send_edition(app, await edition(app), now=NOON)
    await subscribe(app, "newcomer@example.org", categories=("world",))

    store = await app.store()
    today = DAY + timedelta(days=1)
    yesterday = await edition(app)
    # Today: yesterday's world stories again (the same ids); Metro Wire joined the first.
    world = yesterday.sections[1]
    first, *others = world.stories
    joined = replace(
        first, outlets=(*first.outlets, Outlet("Metro Wire", "https://metro.example/a"))
    )
    store.save_edition(
        replace(
            yesterday,
            day=today,
            generated_at=yesterday.generated_at + timedelta(days=1),
            sections=(replace(world, stories=(joined, *others)),),
        )
    )
    report = await send_edition(app, store.edition(today), now=NOON + timedelta(days=1))
    assert len(report.sent) == 2

    daily, newcomer = outbox(app)["daily@example.org"], outbox(app)["newcomer@example.org"]
    assert "Since your last digest (29 November): New: Metro Wire" in " ".join(daily.split())
    assert first.title in daily and "according to reports" not in daily  # not its summary
    assert all(s.title not in daily for s in others)  # nothing new: not repeated
    assert all(s.title in newcomer for s in world.stories) and "Since your last" not in newcomer


async def test_a_copy_with_nothing_new_to_its_reader_is_skipped_saying_so(app: App) -> None:
    store = await app.store()
    yesterday, today = DAY + timedelta(days=1), DAY + timedelta(days=2)
    same = make_edition(yesterday, headlines=0, first_id=500)
    store.save_edition(same)
    await subscribe(app, "daily@example.org", categories=("world",))
    await send_edition(app, same, now=NOON + timedelta(days=1))
    store.save_edition(replace(same, day=today, generated_at=same.generated_at + timedelta(days=1)))

    report = await send_edition(app, store.edition(today), now=NOON + timedelta(days=2))

    assert report.sent == () and len(report.skipped) == 1
    [row] = store.load_deliveries(today)
    assert (row.state, row.last_reply) == ("skipped", NOTHING_NEW)
