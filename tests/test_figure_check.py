"""The model's check of the figure lines the rules found (issue 38): with `[llm]` configured, an
edition shows a disagreement, a revision or a correction only when the model answers a clear
"yes" to "the same quantity of the same event?"; "no", an unclear reply or a failure keeps the
line out and the run says why; without `[llm]`, the rules alone decide, as before."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.deliver.ledger import Delivery
from digest.edition.sections import edition_story
from digest.jobs.figure_check import FigureCheck
from digest.jobs.story_memory import with_memory
from digest.memory import same_quantity
from digest.memory.events import NewEvent
from digest.memory.same_quantity import answer, pair, passes, timeline_pairs
from digest.models import Edition, EditionSection, EditionStory
from digest.store import Store
from digest.summarize.llm import LLMClient
from tests import storefixtures
from tests.llmserver import LLMServer, llm_server
from tests.storefixtures import NOW
from tests.test_story_memory import a_story, events

db_url, store = storefixtures.db_url, storefixtures.store
llm_server = llm_server  # the fixture, found by pytest under this name

DAY1, DAY2 = date(2025, 2, 28), date(2025, 3, 1)
SENT = "The quake killed 12 people in the north."
A_NOW = "The quake killed 30 people, the mayor said."
B_NOW = "30 people died in the quake."
C_NOW = "The quake killed 45 people, a hospital said."


def _fact(outlet: str, value: str, text: str) -> NewEvent:
    return NewEvent(
        f"fact:{outlet}:dead:{value}",
        "fact",
        NOW,
        outlet=outlet,
        subject="dead",
        value=value,
        text=text,
        detail={"number": value, "qualifier": ""},
    )


def a_developing_story(store: Store) -> tuple[int, EditionSection]:
    """Day 1 went out saying 12 dead; since, A revised its 12 to 30, B reports 30 and C 45:
    the rules find a revision (A), a correction (12 -> 30, by A and B) and a disagreement (30
    against 45). Today's section shows the story."""
    story = a_story(store)
    [view] = store.stories_by_id([story])
    sent = replace(edition_story(view), summary=SENT)
    store.save_edition(Edition(DAY1, "UTC", (EditionSection("world", (sent,), ()),), NOW))
    store.add_deliveries([Delivery(DAY1, "reader@example.org", state="sent")])
    store.record_events(story, events())
    revised = NewEvent(
        "revision:A:dead:12:30",
        "revision",
        NOW,
        outlet="A",
        subject="dead",
        value="30",
        previous="12",
        text=A_NOW,
        detail={"number": "30", "qualifier": "", "previous_number": "12"},
    )
    store.record_events(story, [revised, _fact("B", "30", B_NOW), _fact("C", "45", C_NOW)])
    return story, EditionSection("world", (replace(sent, summary=""),), ())


async def remembered(store: Store, section: EditionSection, check: FigureCheck) -> EditionStory:
    """The story as day 2's edition shows it, its figure lines through `check` (as publish
    builds it: the memory in a thread, the model asked from the running loop)."""
    keep = check.from_thread(asyncio.get_running_loop())
    [built] = await asyncio.to_thread(
        with_memory, store, (section,), DAY2, NOW, edition_story, keep
    )
    [shown] = built.stories
    return shown


async def checked(
    store: Store, section: EditionSection, llm_server: LLMServer
) -> tuple[EditionStory, FigureCheck]:
    """The story as day 2's edition shows it, checked by a client of `llm_server` as it
    answers now; and the check, to read what it asked and counted."""
    client = LLMClient(llm_server.config(), "k")
    try:
        check = FigureCheck(client)
        return await remembered(store, section, check), check
    finally:
        await client.aclose()


def figure_lines(shown: EditionStory) -> tuple[int, int, int]:
    """How many disagreements, corrections and revisions the story shows."""
    revisions = sum(1 for e in shown.timeline if e.kind == "revision")
    return len(shown.disagreements), len(shown.corrections), revisions


async def test_without_a_model_the_rules_alone_show_every_figure_line(store: Store) -> None:
    _, section = a_developing_story(store)
    check = FigureCheck(None)
    shown = await remembered(store, section, check)
    assert figure_lines(shown) == (1, 1, 1)
    assert check.asked == 0 and check.report() is None
    # The same as the memory built without any check, as before issue 38.
    assert with_memory(store, (section,), DAY2, NOW, edition_story)[0].stories == (shown,)


async def test_a_no_from_the_model_keeps_every_figure_line_out(
    store: Store, llm_server: LLMServer
) -> None:
    story, section = a_developing_story(store)
    llm_server.same_quantity = "No."
    shown, check = await checked(store, section, llm_server)
    assert figure_lines(shown) == (0, 0, 0)
    # Other entries of the timeline stay; the correction kept out is not recorded either.
    assert [e.kind for e in shown.timeline][:3] == ["first", "outlet", "fact"]
    assert store.story_corrections(story) == []
    # One question per pair of sentences: A's 12 -> 30, 30 against 45, the sent 12 against 30.
    assert check.asked == len(llm_server.same_quantity_asked) == 3
    assert any(SENT in q for q in llm_server.same_quantity_asked)
    assert check.report() == (
        "3 figure lines (disagreement, revision or correction) kept out by the [llm] figure "
        "check: 3 answered no"
    )
    assert all(r.max_tokens == same_quantity.MAX_TOKENS for r in llm_server.completions)


async def test_a_yes_from_the_model_shows_every_figure_line(
    store: Store, llm_server: LLMServer
) -> None:
    story, section = a_developing_story(store)
    llm_server.same_quantity = "Yes, both give the number of dead of the same quake."
    shown, check = await checked(store, section, llm_server)
    assert figure_lines(shown) == (1, 1, 1)
    [fix] = shown.corrections
    assert (fix.said, fix.now, fix.said_on) == ("12", "30", DAY1)
    assert len(store.story_corrections(story)) == 1
    assert check.report() is None


@pytest.mark.parametrize(
    ("reply", "fault", "cause"),
    [
        ("Well, the first sentence is about a quake.", None, "unclear reply"),
        ("Yes and no.", None, "unclear reply"),
        ("", None, "unclear reply"),
        ("Yes.", "error500", "HTTP 500"),
    ],
)
async def test_an_unclear_reply_or_a_failure_keeps_the_line_out_and_is_counted(
    store: Store, llm_server: LLMServer, reply: str, fault: str | None, cause: str
) -> None:
    story, section = a_developing_story(store)
    llm_server.same_quantity = reply
    if fault:
        llm_server.always(fault)  # type: ignore[arg-type]
    shown, check = await checked(store, section, llm_server)
    assert figure_lines(shown) == (0, 0, 0)
    assert store.story_corrections(story) == []
    said = check.report()
    assert said is not None and said.endswith(f"figure check: 3 {cause}")


async def test_a_pair_is_asked_once_a_run(store: Store, llm_server: LLMServer) -> None:
    _, section = a_developing_story(store)
    client = LLMClient(llm_server.config(), "k")
    try:
        check = FigureCheck(client)
        await remembered(store, section, check)
        await remembered(store, section, check)  # the same story again (built twice)
    finally:
        await client.aclose()
    assert check.asked == len(llm_server.same_quantity_asked) == 3


async def test_past_its_question_limit_a_run_asks_no_more_and_keeps_those_lines_out(
    store: Store, llm_server: LLMServer
) -> None:
    """`[llm] figure_check_questions`: a CPU model takes seconds a question; a run stops asking
    at the limit, and a line it could not ask about stays out, said in the run's line."""
    _, section = a_developing_story(store)
    llm_server.same_quantity = "Yes."
    client = LLMClient(llm_server.config(), "k")
    try:
        check = FigureCheck(client, questions=1)
        shown = await remembered(store, section, check)
    finally:
        await client.aclose()
    assert check.asked == len(llm_server.same_quantity_asked) == 1
    assert sum(figure_lines(shown)) == 1  # the one line asked about; the other two kept out
    assert check.report() == (
        "2 figure lines (disagreement, revision or correction) kept out by the [llm] figure "
        "check: 2 question limit reached"
    )


# -- The pure part: the question's pairs and how a reply is read. ------------------------------


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        ("Yes", True),
        ("yes.", True),
        (" **Yes** ", True),
        ("Answer: yes", True),
        ("Yes, both report the number of dead.", True),
        ("No", False),
        ("no, the second is another attack", False),
        ("Yes and no", None),
        ("No. Yes.", None),
        ("Nope", None),
        ("Yesterday", None),
        ("I think yes", None),
        ("(refused: I cannot help with that)", None),
        ("", None),
    ],
)
def test_only_a_reply_that_starts_with_a_clear_yes_or_no_is_read(
    reply: str, said: bool | None
) -> None:
    assert answer(reply) is said


@given(st.text(max_size=200))
def test_any_reply_is_read_as_yes_no_or_unclear_and_yes_starts_it(reply: str) -> None:
    said = answer(reply)
    assert said in (True, False, None)
    if said is True:
        letters = "".join(c for c in reply.lower() if c.isalnum())
        assert letters.startswith(("yes", "answeryes"))
        assert " no" not in f" {reply.lower()} ".replace(",", " ").replace(".", " ")


@given(st.text(max_size=50), st.text(max_size=50))
def test_a_pair_is_the_same_either_way(a: str, b: str) -> None:
    assert pair(a, b) == pair(b, a)


def test_a_line_passes_only_on_a_yes_to_each_of_its_pairs() -> None:
    one, two = pair("12 died.", "30 died."), pair("12 died.", "45 died.")
    assert passes([one, two], {one: True, two: True})
    assert not passes([one, two], {one: True, two: None})
    assert not passes([one], {one: False})
    assert not passes([], {})  # nothing to ask: not shown while a model is configured


def test_a_timelines_revision_and_disagreement_compare_the_outlets_words(store: Store) -> None:
    story, _ = a_developing_story(store)
    dispute = NewEvent(
        "disagreement:dead:30|45",
        "disagreement",
        NOW,
        subject="dead",
        text="30 (A, B); 45 (C)",
    )
    store.record_events(story, [dispute])
    timeline = store.story_timeline(story)
    found = timeline_pairs(timeline)
    [revision] = [e for e in timeline if e.kind == "revision"]
    [disputed] = [e for e in timeline if e.kind == "disagreement"]
    assert found[revision.id] == [pair("12 died.", A_NOW)]
    assert sorted(map(sorted, found[disputed.id])) == [sorted((A_NOW, C_NOW))]
    assert set(found) == {revision.id, disputed.id}


# -- Through publish: the edition stored and sent, and the run's record. ----------------------


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    ("reply", "shown", "status", "error"),
    [
        ("Yes.", (1, 1, 1), "ok", None),
        ("No.", (0, 0, 0), "ok", None),
        ("Sure! Here is a comparison of the sentences", (0, 0, 0), "partial", "3 unclear reply"),
    ],
)
async def test_publish_asks_the_configured_model_and_says_once_what_it_kept_out(
    store: Store,
    db_url: str,
    tmp_path,
    monkeypatch,
    llm_server: LLMServer,
    reply: str,
    shown: tuple[int, int, int],
    status: str,
    error: str | None,
) -> None:
    from digest.app import App
    from digest.config import parse_config
    from digest.jobs.publish import publish

    story, _ = a_developing_story(store)
    llm_server.same_quantity = reply
    monkeypatch.setenv("TEST_LLM_KEY", "k")
    config = parse_config(
        {
            "database": {"url": db_url},
            "sources": {"categories": ["world"], "ddg": False},
            "schedule": {"timezone": "UTC"},
            "archive": {"dir": str(tmp_path / "site")},
            "email": {"outbox_dir": str(tmp_path / "outbox")},
            "llm": llm_server.config(api_key_env="TEST_LLM_KEY").model_dump(),
        }
    )
    async with App(config) as app:
        report = await publish(app, DAY2, send=False)
    [edition_story_] = [
        s for sec in store.edition(DAY2).sections for s in sec.stories if s.id == story
    ]
    assert figure_lines(edition_story_) == shown
    assert report.status == status, report.errors
    assert report.counts["figure_checks"] == 3
    assert report.counts["figure_lines_kept_out"] == 3 - sum(shown)
    said = [e.error for e in report.errors if e.source == "figure check"]
    if error is None:
        assert said == []  # a "no" is the check at work, not a failure of the run
    else:
        [line] = said
        assert line.endswith(f"figure check: {error}")


# -- A summary's disagreement (deepen): attributed only when the model confirms it. ------------


@pytest.mark.parametrize(("reply", "attributed"), [("Yes.", True), ("No.", False), ("?", False)])
async def test_a_summary_attributes_the_values_only_of_a_disagreement_the_model_confirms(
    llm_server: LLMServer, reply: str, attributed: bool
) -> None:
    from digest.jobs.story_summary import confirmed_disputes
    from digest.summarize.story import summarize_story
    from tests.test_story_check import ATTRIBUTED, BLAST

    llm_server.same_quantity = reply
    client = LLMClient(llm_server.config(), "k")
    try:
        check = FigureCheck(client)
        disputes = await confirmed_disputes(check, BLAST)
        made = await summarize_story(client, BLAST, by_outlet=disputes)
    finally:
        await client.aclose()
    assert len(llm_server.same_quantity_asked) == check.asked == 1
    assert made.summary.summarizer == "llm:fake-model"
    if attributed:
        assert made.summary.summary.endswith(ATTRIBUTED) and not check.kept_out
    else:
        # No line saying they disagree, and neither toll stated alone: each is in doubt.
        assert "according to" not in made.summary.summary
        assert "killed 12 people" not in made.summary.summary
        assert "left 15 dead" not in made.summary.summary
        assert "Rescuers searched the docks" in made.summary.summary  # the rest kept
        assert check.kept_out == ["answered no" if reply == "No." else "unclear reply"]
