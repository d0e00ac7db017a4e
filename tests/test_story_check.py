"""A story's summary as the model returned it, validated and checked before it can be
published (`digest.summarize.story.build_story_summary`): pure, no server."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from digest.summarize.article import build_summary
from digest.summarize.claims import SourceIndex, sentences_of
from digest.summarize.disputes import (
    dispute_summary,
    story_disputes,
    texts_by_outlet,
)
from digest.summarize.figures import covers, one_sided
from digest.summarize.output import restates_headline
from digest.summarize.request import InvalidOutput
from digest.summarize.story import MIN_WORDS, build_story_summary, extractive_story_summary
from digest.summarize.types import ArticleInput, StoryInput, StorySource
from tests.llmserver import INVENTIONS, Document, fake_story, invented_sentence, sentences
from tests.newsweb import ARTICLES, RETELLINGS

CHIP = ARTICLES[0]
WIRE = RETELLINGS[0][1]
TEXTS = ["\n\n".join([a.lede, *a.paragraphs]) for a in (CHIP, WIRE)]
STORY = StoryInput(
    CHIP.title,
    (
        StorySource("https://a.example/chip", "Example News", CHIP.title, TEXTS[0]),
        StorySource("https://b.example/chip", "Wire Service", WIRE.title, TEXTS[1]),
    ),
    date(2025, 5, 12),
)
GROUNDED = [f"{s} [1]" for s in sentences(TEXTS[0])[:4]] + [f"{sentences(TEXTS[1])[0]} [2]"]


def reply(parts: list[str], **more: object) -> dict[str, object]:
    return {"summary": " ".join(parts), "brief_summary": " ".join(parts[:2]), **more}


def test_a_grounded_summary_is_kept_whole_with_its_citations() -> None:
    made = build_story_summary(reply(GROUNDED, keywords=["Halvard"]), STORY, TEXTS, "llm:m")
    assert made.summary == " ".join(GROUNDED)
    assert made.claims == made.claims_found > 0 and made.sentences_removed == 0
    assert [o.name for o in made.sources] == ["Example News", "Wire Service"]
    assert made.keywords == ("Halvard",)


def test_keywords_the_sources_do_not_write_are_dropped_and_none_left_falls_back() -> None:
    named = ["Halvard Microsystems", "ELBE", "Siemens", "elbe", "Dresden Chip Alliance"]
    made = build_story_summary(reply(GROUNDED, keywords=named), STORY, TEXTS, "llm:m")
    assert made.keywords == ("Halvard Microsystems", "ELBE")  # as the sources write, any case
    invented = build_story_summary(reply(GROUNDED, keywords=["Siemens"]), STORY, TEXTS, "llm:m")
    assert invented.keywords[:2] == ("Elbe", "Halvard Microsystems")  # the extractive names


@pytest.mark.parametrize("fault", INVENTIONS)
def test_an_invented_sentence_is_removed_from_summary_and_brief(fault: str) -> None:
    invented = invented_sentence(fault, "\n".join(TEXTS))  # type: ignore[arg-type]
    parts = [GROUNDED[0], invented, *GROUNDED[1:]]
    made = build_story_summary(reply(parts), STORY, TEXTS, "llm:m")
    assert invented not in made.summary and invented not in made.brief_summary
    assert made.summary == " ".join(GROUNDED)
    assert made.sentences_removed == 2 and made.claims_found < made.claims


def test_citations_of_sources_that_do_not_exist_and_links_are_dropped() -> None:
    parts = [GROUNDED[0].replace("[1]", "[7]"), f"{GROUNDED[1]} See https://evil.example/x."]
    made = build_story_summary(reply([*parts, *GROUNDED[2:]]), STORY, TEXTS, "llm:m")
    assert "[7]" not in made.summary and "evil.example" not in made.summary


def test_a_summary_mostly_invented_is_refused_so_that_it_becomes_extractive() -> None:
    invented = [invented_sentence(f, "\n".join(TEXTS)) for f in INVENTIONS]  # type: ignore[arg-type]
    short = f"{sentences(TEXTS[1])[-1]} [2]"  # 15 words: too few once the rest is removed
    with pytest.raises(InvalidOutput, match="claim check"):
        build_story_summary(reply([short, *invented]), STORY, TEXTS, "llm:m")
    fallback = extractive_story_summary(STORY, 12_000, "claim check: ...")
    assert fallback.summarizer == "extractive" and fallback.note == "claim check: ..."
    assert len(fallback.summary.split()) >= MIN_WORDS and fallback.sentences_removed == 0


WORDS = st.sampled_from(
    ["Halvard", "plant", "Elbe", "Zephyr", "Okonkwo", "99", "4.2", "2031", "“bold move”", "the"]
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(GROUNDED),
            st.lists(WORDS, min_size=3, max_size=9).map(lambda w: " ".join(w).capitalize() + "."),
            st.text(max_size=80),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_whatever_the_model_writes_what_is_kept_holds_only_claims_the_sources_back(
    parts: list[str],
) -> None:
    try:
        made = build_story_summary(reply(parts), STORY, TEXTS, "llm:m")
    except (InvalidOutput, ValidationError):  # the client asks once more, then extractive
        return
    index = SourceIndex([*TEXTS, *(s.title for s in STORY.sources), STORY.title])
    assert index.check(made.summary).removed == 0
    assert index.check(made.brief_summary).removed == 0
    assert "://" not in made.summary


def test_a_short_summary_whose_claims_are_all_found_stands() -> None:
    short = f"{sentences(TEXTS[1])[-1]} [2]"  # 15 words, nothing invented
    made = build_story_summary(reply([short]), STORY, TEXTS, "llm:m")
    assert made.summary == short and made.summarizer == "llm:m"


# -- a "summary" that only restates the headline (issue 39) ---------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        CHIP.title,
        f"{CHIP.title}.",
        f"{CHIP.title} [1]",
        f"{CHIP.title.upper()} - Example News",
        f"Example News: {CHIP.title}",
        f"{WIRE.title} (Wire Service)",
    ],
)
def test_a_summary_that_only_restates_the_headline_is_refused(said: str) -> None:
    with pytest.raises(InvalidOutput, match="only restates the headline"):
        build_story_summary(reply([said]), STORY, TEXTS, "llm:m")


def test_a_summary_that_says_more_than_the_headline_stands() -> None:
    said = f"{CHIP.title}. {sentences(TEXTS[1])[-1]} [2]"
    made = build_story_summary(reply([said]), STORY, TEXTS, "llm:m")
    assert made.summarizer == "llm:m"


def test_an_article_summary_that_only_restates_its_headline_is_refused() -> None:
    article = ArticleInput("https://a.example/chip", f"{CHIP.title} - Example News", TEXTS[0])
    data = {"title": CHIP.title, "summary": f"{CHIP.title} | Example News", "brief_summary": ""}
    with pytest.raises(InvalidOutput, match="only restates the headline"):
        build_summary(data, replace(article, source="Example News"), "llm:m")
    data["summary"] = " ".join(sentences(TEXTS[0])[:2])
    assert build_summary(data, article, "llm:m").summary


@given(st.text(max_size=120), st.lists(st.text(max_size=60), max_size=3))
def test_a_headline_restates_itself_and_more_words_do_not(headline: str, names: list[str]) -> None:
    if not restates_headline(headline, [headline], names):
        return  # nothing but punctuation, or only the names' words: no words to compare
    assert restates_headline(f"  {headline} [1].  ", [headline], names)
    assert not restates_headline(f"{headline} zqxvw", [headline], names)


# -- outlets that disagree on a figure (issue 31) ----------------------------------------------

HERALD = (
    "A blast at the Kestria port killed 12 people on Monday morning. Rescuers searched the "
    "docks and the warehouses through the night with dogs and thermal cameras. The port "
    "authority said the cause was probably a gas leak in a storage hall near the quays. Ships "
    "were diverted to the northern harbour while inspectors examined the damaged piers."
)
WIRE_15 = (
    "The explosion at the Kestria port on Monday left 15 dead. Firefighters fought the flames "
    "in the storage halls for most of the afternoon before the blaze was under control. The "
    "mayor ordered the harbour district closed to traffic until the inspectors finish their "
    "work on the piers and the warehouses."
)
BLAST = StoryInput(
    "Blast at the Kestria port",
    (
        StorySource("https://herald.example/blast", "Kestria Herald", "Port blast", HERALD),
        StorySource("https://wire.example/blast", "Valmora Wire", "Port explosion", WIRE_15),
    ),
    date(2026, 12, 3),
)
ATTRIBUTED = "12 dead, according to Kestria Herald; 15, according to Valmora Wire."


def _fake_llm_reply(story: StoryInput) -> dict[str, object]:
    docs = [Document({"Title": s.title}, s.text, "n") for s in story.sources]
    return fake_story(docs, None)


def test_outlets_that_disagree_give_a_summary_that_attributes_each_value_never_one_alone() -> None:
    reply_ = _fake_llm_reply(BLAST)  # the fake model states each outlet's toll as fact
    made = build_story_summary(reply_, BLAST, [HERALD, WIRE_15], "llm:m")
    assert made.summary.endswith(ATTRIBUTED)
    assert "killed 12 people" not in made.summary and "left 15 dead" not in made.summary
    assert "killed 12" not in made.brief_summary
    assert made.sentences_removed == 3  # two in the summary, one in the brief
    assert "Rescuers searched the docks" in made.summary  # the rest kept


def test_a_summary_that_already_gives_both_values_is_kept_as_written() -> None:
    ranged = (
        "Between 12 and 15 people were killed in a blast at the Kestria port on Monday [1] [2]. "
        "Rescuers searched the docks and the warehouses through the night with dogs and "
        "thermal cameras [1]. The port authority said the cause was probably a gas leak [1]."
    )
    made = build_story_summary(
        {"summary": ranged, "brief_summary": ranged}, BLAST, [HERALD, WIRE_15], "llm:m"
    )
    assert made.summary == ranged and made.sentences_removed == 0


def test_an_extractive_summary_of_outlets_that_disagree_attributes_too() -> None:
    made = extractive_story_summary(BLAST, 12_000)
    assert made.summarizer == "extractive" and made.summary.endswith(ATTRIBUTED)
    assert "killed 12 people" not in made.summary and made.sentences_removed >= 1


def test_the_texts_by_outlet_given_decide_the_disagreement() -> None:
    agreeing = {"Kestria Herald": HERALD, "Valmora Wire": HERALD}
    made = build_story_summary(
        _fake_llm_reply(BLAST), BLAST, [HERALD, WIRE_15], "llm:m", by_outlet=agreeing
    )
    assert "killed 12 people" in made.summary and "according to" not in made.summary


def test_a_summary_already_made_is_given_the_disagreements_of_the_texts_by_outlet() -> None:
    made = build_story_summary(_fake_llm_reply(BLAST), BLAST, [HERALD, WIRE_15], "llm:m")
    third = "The port blast on Monday left 15 dead, the mayor's office confirmed."
    updated = dispute_summary(
        made, {"Kestria Herald": HERALD, "Valmora Wire": WIRE_15, "Port Daily": third}
    )
    assert updated.summary.endswith(
        "15 dead, according to Port Daily and Valmora Wire; 12, according to Kestria Herald."
    )
    assert ATTRIBUTED not in updated.summary  # the old attribution states one side now
    assert dispute_summary(made, {"Kestria Herald": HERALD}) == made


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "The blast killed 12 people.",
                    "At least 15 were killed, the mayor said.",
                    "Between 12 and 15 people died.",
                    "Rescuers searched the docks through the night.",
                    "12 dead, according to Kestria Herald; 15, according to Valmora Wire.",
                ]
            ),
            st.text(max_size=60),
        ),
        max_size=8,
    )
)
def test_a_disputed_summary_never_states_one_side_and_gives_every_disputed_value(
    parts: list[str],
) -> None:
    made = build_story_summary(_fake_llm_reply(BLAST), BLAST, [HERALD, WIRE_15], "llm:m")
    text = " ".join(parts)
    updated = dispute_summary(
        replace(made, summary=text, brief_summary=text), texts_by_outlet(BLAST)
    )
    disputes = story_disputes(texts_by_outlet(BLAST))
    assert not any(one_sided(s, disputes) for s in sentences_of(updated.summary))
    (dispute,) = disputes  # given attributed, or as a range
    assert any(covers(s, dispute) for s in sentences_of(updated.summary))


def test_one_value_attributed_to_someone_else_still_gets_the_outlets_values() -> None:
    made = build_story_summary(_fake_llm_reply(BLAST), BLAST, [HERALD, WIRE_15], "llm:m")
    said = "At least 15 were killed, the mayor said."
    updated = dispute_summary(replace(made, summary=said), texts_by_outlet(BLAST))
    assert updated.summary == f"{said} {ATTRIBUTED}"


@settings(max_examples=100, deadline=None)
@given(
    before=st.text(alphabet="abcdefg XYZ:,-0123456789", max_size=30),
    value=st.sampled_from(["12", "15"]),
)
def test_a_headline_stays_the_outlets_words_where_outlets_disagree(before: str, value: str) -> None:
    """Never "kills 12 or 15": the disagreement has its own line, the headline is as written."""
    title = f"{before} Blast kills {value} people"
    story = replace(BLAST, title=title)
    assert story_disputes(texts_by_outlet(story))  # the outlets do disagree
    made = build_story_summary(_fake_llm_reply(story), story, [HERALD, WIRE_15], "llm:m")
    assert made.title == title
    assert dispute_summary(replace(made, title=title), texts_by_outlet(story)).title == title
    assert extractive_story_summary(story, 1200).title == title


ES_A = (
    "Al menos 70 personas murieron este martes en el ataque químico contra la localidad de "
    "Jan Sheijun, en la provincia de Idlib, según los equipos de rescate que trabajan en la zona. "
    "Los hospitales de la región atendieron a decenas de heridos con síntomas de asfixia."
)
ES_B = (
    "Murieron 86 personas en el ataque químico contra la localidad de Jan Sheijun, en la "
    "provincia de Idlib, según el recuento de los médicos que atendieron a los heridos. Las "
    "familias enterraron a sus muertos en fosas abiertas a las afueras del pueblo."
)


def _khan(title_b: str) -> StoryInput:
    return StoryInput(
        "Ataque químico en Jan Sheijun",
        (
            StorySource("https://a.example/ks", "Diario A", "Ataque químico en Idlib", ES_A),
            StorySource("https://b.example/ks", "Diario B", title_b, ES_B),
        ),
        date(2017, 4, 5),
    )


def test_a_summary_compares_the_figures_the_story_memory_reads_headline_and_all() -> None:
    """An outlet whose headline looks back at an earlier event ("un año después") reports no
    figure of the story's, in the timeline and in the summary's disputes alike."""
    today = extractive_story_summary(_khan("Decenas de muertos en Idlib"), 12_000)
    assert "según Diario A" in today.summary and "según Diario B" in today.summary
    looking_back = extractive_story_summary(
        _khan("Un año después del ataque de Jan Sheijun"), 12_000
    )
    assert "según Diario" not in looking_back.summary
