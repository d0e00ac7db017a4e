"""Claims in a summary checked against its sources (digest/facts/claims.py).

What a reader would notice: a figure, date, quote or name that the articles do not contain never
reaches the page, while a faithful summary, however it words the figures, keeps every sentence.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from digest.facts.claims import (
    MAX_SENTENCE,
    SourceIndex,
    check_summary,
    claims_of,
    numbers_in,
)
from digest.facts.text import split_sentences
from digest.summarize import ArticleInput, Source, Summarizer
from digest.summarize.article import LLMSummarizer
from tests import llmserver
from tests.llmserver import INVENTIONS, Invention, LLMServer, invented_sentence
from tests.newsweb import ARTICLES

llm_server = llmserver.llm_server

FUNDING = (
    "Zürich-based Acme Robotics said on Tuesday it had raised $48 million in a funding round "
    "led by Sequoia Capital, valuing the company at about 1.2 billion dollars. Its chief "
    "executive, Anna O'Brien, said the money would go into a plant in Saint-Étienne and that "
    'the company wanted "to build robots that farmers can repair themselves". The round closed '
    "on 12 March 2025. Revenue grew 7.1% last year to 210 million euros, and the company "
    "employs 1,200 people. McDonald's is among its first customers."
)
INFLATION = (
    "Die Inflation im Euroraum lag im März bei 7,1 Prozent, teilte Eurostat in Luxemburg mit. "
    "Im Februar waren es 6,8 Prozent gewesen. Die Europäische Zentralbank hatte die Zinsen "
    "zuletzt um 0,5 Prozentpunkte angehoben."
)
HARBOUR = (
    "The city of Westport opened its new harbour bridge on Monday after four years of work. The "
    "bridge cost €120m and carries two tram lines. Mayor Lena Brandt said it would cut travel "
    "times across the harbour by half, calling it “a bridge for everyone, not just for cars”."
)
SOURCES = [FUNDING, INFLATION, HARBOUR]

GROUNDED = (
    "Acme Robotics, a Zurich company, raised 48m dollars in a round led by Sequoia Capital that "
    "values it at $1.2bn. Chief executive Anna O’Brien wants to build robots “that farmers can "
    "repair themselves” at a plant in Saint-Etienne. The round closed on March 12, 2025, and "
    "McDonald's is an early customer. Acme's revenue rose 7.1 per cent to €210 million and it "
    "has 1200 staff. Inflation in the euro area was 7.1% in March, up from 6.8%, after the "
    "central bank raised rates by 0.5 percentage points. In Westport, Mayor Lena "
    "Brandt opened a €120 million bridge on Monday, “a bridge for everyone”, she said. However, "
    "the plant's opening date is not known."
)


def removed(summary: str, sources: list[str] = SOURCES) -> list[str]:
    return [v.sentence for v in check_summary(summary, sources).sentences if not v.kept]


# -- a faithful summary keeps everything ---------------------------------------------------------


def test_a_grounded_summary_keeps_every_sentence_however_it_writes_the_figures() -> None:
    check = check_summary(GROUNDED, SOURCES)

    assert check.removed == 0, check.describe()
    assert check.text == " ".join(split_sentences(GROUNDED))
    assert check.claims >= 20 and check.found == check.claims
    kinds = {c.kind for v in check.sentences for c in v.claims}
    assert kinds == {"number", "amount", "percent", "date", "quote", "name"}


def test_a_summary_copied_from_the_test_articles_is_kept_whole() -> None:
    for a in ARTICLES:
        text = "\n\n".join([a.lede, *a.paragraphs])
        check = check_summary(" ".join(split_sentences(text)[:6]), [text])
        assert check.removed == 0, (a.title, check.describe())


# -- each kind of invented claim is caught -------------------------------------------------------

INVENTED = {
    "number": "The company also plans to hire 350 engineers.",
    "amount": "Acme also raised $52 million from banks.",
    "percent": "Revenue grew 8.1% last year.",
    "date": "The round closed on 14 March 2025.",
    "name": "The round was led by Jonathan Pryce.",
    "quote": "O'Brien called the deal “a turning point for farming”.",
    "scale": "Acme raised 48 billion dollars.",
    "currency": "Acme raised €48 million.",
    "weekday": "Acme announced the round on Friday.",
    "month": "Inflation in the euro area was 7.1% in April.",
    "year": "The round closed on 12 March 2024.",
    "name at the start": "Jean Dupont led the round.",
}


@pytest.mark.parametrize("kind", INVENTED)
def test_a_sentence_with_an_invented_claim_is_removed_and_the_rest_kept(kind: str) -> None:
    invented = INVENTED[kind]
    summary = f"Acme Robotics raised $48 million. {invented} The round closed on 12 March 2025."
    check = check_summary(summary, SOURCES)

    assert [v.sentence for v in check.sentences if not v.kept] == [invented]
    assert check.text == "Acme Robotics raised $48 million. The round closed on 12 March 2025."
    assert check.removed == 1 and check.found == check.claims - len(check.unfound)
    assert check.unfound and "not found" in check.describe()


@pytest.mark.parametrize(
    "quoted",
    [
        "‹a turning point for farming›",
        "›a turning point for farming‹",
        "″a turning point for farming″",
        "『a turning point for farming』",
        "``a turning point for farming''",
        "”a turning point for farming”",
        "〝a turning point for farming〞",
        "《a turning point for farming》",
        "＂a turning point for farming＂",
    ],
)
def test_a_quote_in_the_marks_of_any_script_is_checked_as_a_quote(quoted: str) -> None:
    invented = f"O'Brien called the deal {quoted}."
    check = check_summary(f"Acme Robotics raised $48 million. {invented}", SOURCES)
    assert [v.sentence for v in check.sentences if not v.kept] == [invented]
    assert [c.kind for c in check.unfound] == ["quote"]

    said = quoted.replace("a turning point for farming", "to build robots that farmers can")
    assert removed(f"O'Brien said the company wanted {said}.") == []


def test_an_ellipsis_may_not_leave_out_a_negation() -> None:
    source = "The chief executive said: “We will not raise prices this year.”"
    assert removed("She said “we will … raise prices”.", [source])
    assert removed("She said “we will ... raise prices”.", [source])
    assert removed("She said “we will [...] raise prices”.", [source])
    # Leaving out other words is fine; the parts must come in the source's order.
    kept = "The chief executive said: “We will, as planned, raise prices this year.”"
    assert removed("She said “we will … raise prices”.", [kept]) == []
    assert removed("She said “raise prices … we will”.", [kept])
    assert removed("Er sagte „wir werden … erhöhen“.", ["„Wir werden die Preise nicht erhöhen.“"])


def test_a_name_written_in_lower_case_is_still_checked() -> None:
    assert removed("The round was led by mr jonathan pryce.")
    assert removed("the round was led by jonathan pryce.")
    assert removed("Acme Robotics raised $48 million, dr pryce said.")
    # The same sentences with what the sources say are kept.
    assert removed("the round was led by sequoia capital.") == []
    assert removed("acme robotics raised $48 million.") == []
    assert removed("Mayor Lena Brandt opened it, mr jones said nothing.", [HARBOUR]) != []
    assert removed("The bridge was opened by mayor lena brandt.", [HARBOUR]) == []


def test_the_unfound_claims_are_listed_for_the_logs() -> None:
    summary = " ".join([INVENTED["amount"], INVENTED["name"], INVENTED["quote"]])
    check = check_summary(summary, SOURCES)

    assert {(c.kind, c.text) for c in check.unfound} == {
        ("amount", "$52 million"),
        ("name", "Jonathan Pryce"),
        ("quote", "a turning point for farming"),
    }
    assert check.text == "" and check.removed == 3
    line = check.describe()
    assert line.startswith(f"{check.found} of {check.claims} claims found in the sources; 3 of 3")
    assert "“$52 million”" in line and "\n" not in line


# -- normalization: the same fact written another way --------------------------------------------


@pytest.mark.parametrize(
    ("source", "summary"),
    [
        ("Inflation was 7,1 Prozent.", "Inflation was 7.1%."),
        ("Inflation was 7.1%.", "Inflation was 7,1 Prozent."),
        ("Inflation was 7.1 per cent.", "Inflation was 7.1 percent."),
        ("It raised $48 million.", "It raised 48m."),
        ("It raised 48m.", "It raised $48 million."),
        ("It raised 48m dollars.", "It raised US$48mn."),
        ("It raised USD 48,000,000.", "It raised $48 million."),
        ("Sales were €3.2bn.", "Sales were 3,2 Mrd. Euro."),
        ("Sales were 3.2 billion euros.", "Sales were EUR 3,200 million."),
        ("It employs 1,200 people.", "It employs 1.200 people."),
        ("It employs 1\u202f200 people.", "It employs 1200 people."),
        ("Prices rose 10-12% in May.", "Prices rose 10% to 12% in May."),
        ("It cost between 2 and 3 billion dollars.", "It cost $2bn."),
        ("The deal closed on 12 March 2025.", "The deal closed on March 12, 2025."),
        ("The deal closed on 12 March 2025.", "The deal closed on 2025-03-12."),
        ("The deal closed on 12.03.2025.", "The deal closed on the 12th of March."),
        ("The deal closed on 12 March 2025.", "The deal closed in 2025, on a Wednesday."),
        ("The deal closed on 12 March, officials said in 2025.", "It closed on 12 March 2025."),
        ("The team visited Zürich.", "The team visited Zurich."),
        ("The team visited Zurich.", "The team visited ZÜRICH."),
        ("It was built in Saint-Étienne.", "It was built in Saint Etienne."),
        ("Shares of ACME ROBOTICS rose.", "Shares of Acme Robotics rose."),
        ("The U.S. economy grew.", "The US economy grew."),
        ("The United States economy grew.", "The economy of the US grew."),
        ("Trump's plan was rejected.", "The plan of Trump was rejected."),
        ("Merkels Nachfolger wurde gewählt.", "Ein Nachfolger wurde von Merkel benannt."),
        ("Merkel und ihr Berater sprachen.", "Das sagte Merkels Berater."),
        ("The plan of Trump was rejected.", "Trump's plan was rejected."),
        ("George W. Bush spoke.", "It was George Bush who spoke."),
        ('He said: "We will not give up, ever."', "He said they would “not give up”."),
        ("She said it was “a very, very good day”.", "She called it “a very very good day”."),
        ("She said “we won and we are proud”.", "She said “we won … we are proud”."),
    ],
)
def test_a_fact_written_another_way_is_found(source: str, summary: str) -> None:
    check = check_summary(summary, [source])
    assert check.removed == 0, check.describe()
    assert check.claims >= 1


@pytest.mark.parametrize(
    ("source", "summary"),
    [
        ("It raised €48 million.", "It raised $48 million."),
        ("It raised $48 million.", "It raised $48 billion."),
        ("It raised $48 million.", "It raised $4.8 million."),
        ("Inflation was 7.1 points.", "Inflation was 7.1%."),
        ("Rates rose 0.5%.", "Rates rose 0.5 percentage points."),
        ("The deal closed on 12 March 2025.", "The deal closed on 13 March 2025."),
        ("The deal closed on 12 March 2025.", "The deal closed on a Friday."),
        ("The team visited Zürich.", "The team visited Zug."),
        ('He said "we will win".', "He said “we will lose”."),
    ],
)
def test_a_fact_changed_is_not_found(source: str, summary: str) -> None:
    assert removed(summary, [source]) == [summary]


# -- what is not a claim -------------------------------------------------------------------------


def test_capitalized_function_words_months_and_titles_are_not_names() -> None:
    (claims,) = claims_of("However, Officials In May told President Lena Brandt on Monday.")
    assert [(c.kind, c.text) for c in claims if c.kind == "name"] == [("name", "Lena Brandt")]
    assert {c.kind for c in claims} == {"name", "date"}


def test_a_known_name_at_the_start_of_a_sentence_is_checked_an_unknown_word_is_not() -> None:
    index = SourceIndex([HARBOUR])
    assert [c.text for c in index.claims("Brandt opened it.")] == ["Brandt"]
    assert index.claims("Engineers opened it.") == []
    assert [c.text for c in index.claims("Pryce Holdings opened it.")] == ["Pryce Holdings"]


def test_names_with_apostrophes_hyphens_and_diacritics_are_one_name() -> None:
    (claims,) = claims_of("They met Anna O'Brien of McDonald's in Saint-Étienne.")
    names = [c.text for c in claims if c.kind == "name"]
    assert names == ["Anna O'Brien of McDonald's", "Saint-Etienne"]


def test_in_a_language_that_capitalizes_nouns_single_words_are_not_names() -> None:
    source = " ".join([INFLATION] * 8)
    summary = "Die Teuerung im Euroraum stieg laut Statistikamt auf 7,1 Prozent."
    check = check_summary(summary, [source])
    assert check.removed == 0 and [c.kind for c in check.sentences[0].claims] == ["percent"]
    assert removed("Die Teuerung meldete Christine Lagarde.", [source])


def test_paragraphs_survive_and_a_paragraph_left_empty_goes() -> None:
    summary = "Acme raised $48 million.\n\nAcme raised $52 million.\n\nIt employs 1,200 people."
    check = check_summary(summary, SOURCES)
    assert check.text == "Acme raised $48 million.\n\nIt employs 1,200 people."


def test_the_kept_text_keeps_grouping_spaces_and_each_citation_with_its_sentence() -> None:
    summary = "Acme employs 1\u202f200 people. [1] Acme raised $52 million. [2] It grew 7.1%. [1]"
    check = check_summary(summary, SOURCES)
    assert check.text == "Acme employs 1\u202f200 people. [1] It grew 7.1%. [1]"
    # 1 200, $52 million, 7.1%, and Acme twice (at the start of a sentence, but a known name);
    # the citations are not claims.
    assert (check.claims, check.found) == (5, 4)


# -- pages built to be slow ---------------------------------------------------------------------


def test_a_page_of_one_endless_paragraph_backs_a_summary_read_in_bounded_pieces() -> None:
    # One paragraph with no full stop, 200,000 characters of `“ a ` between the facts: the
    # check reads it in pieces of at most MAX_SENTENCE characters (it used to take minutes).
    page = FUNDING.replace(". ", ", ") + " " + "“ a " * 50_000 + HARBOUR.replace(". ", ", ")
    filler = " ".join(["and the bridge carries two tram lines"] * (MAX_SENTENCE // 20))
    summary = (
        f"Acme Robotics raised $48 million {filler} and Mayor Lena Brandt opened the bridge "
        f"{filler} and Acme raised $52 million."
    )
    check = check_summary(summary, [page])

    assert all(len(v.sentence) <= MAX_SENTENCE for v in check.sentences)
    assert len(check.sentences) >= 3 and [v.kept for v in check.sentences][-1] is False
    assert check.text.startswith("Acme Robotics raised $48 million and the bridge")
    assert "Mayor Lena Brandt" in check.text and "$52 million" not in check.text
    assert [c.kind for c in check.unfound] == ["amount"]


# -- the fake LLM server's inventions are caught -------------------------------------------------

CHIP = ARTICLES[0]
CHIP_TEXT = "\n\n".join([CHIP.lede, *CHIP.paragraphs])


@pytest.mark.parametrize("fault", INVENTIONS)
async def test_each_invention_of_the_fake_model_is_removed_from_summary_and_brief(
    llm_server: LLMServer, fault: Invention
) -> None:
    llm_server.script(fault)
    summarizer = LLMSummarizer(llm_server.config(), api_key=None)
    article = ArticleInput(url="https://news.example/chip", title=CHIP.title, text=CHIP_TEXT)
    try:
        s = await summarizer.summarize(article)
    finally:
        await summarizer.aclose()
    invented = invented_sentence(fault, CHIP_TEXT)
    assert s.summarizer == "llm:fake-model"
    assert invented in s.summary and invented in s.brief_summary

    for text in (s.summary, s.brief_summary):
        check = check_summary(text, [CHIP_TEXT])
        assert [v.sentence for v in check.sentences if not v.kept] == [invented]
        assert check.text == " ".join(x for x in split_sentences(text) if x != invented)


@pytest.mark.parametrize("fault", INVENTIONS)
async def test_each_invention_of_the_fake_model_is_removed_from_an_answer(
    llm_server: LLMServer, fault: Invention
) -> None:
    sources = [
        Source(f"https://news.example/{a.slug}", a.title, "\n\n".join([a.lede, *a.paragraphs]))
        for a in ARTICLES[:3]
    ]
    llm_server.script(fault)
    async with Summarizer(llm_server.config(), api_key="k") as summarizer:
        answer = await summarizer.answer("What happened?", sources)
    invented = invented_sentence(fault, sources[0].text).rstrip(".") + ". [1]"
    assert answer.answerer == "llm:fake-model" and answer.text.endswith(invented)

    check = check_summary(answer.text, [s.text for s in sources])
    assert [v.sentence for v in check.sentences if not v.kept] == [invented]
    assert check.text == answer.text.removesuffix(invented).strip()


# -- properties ----------------------------------------------------------------------------------

WORDS = st.sampled_from(
    "the plant said would cost about and in of for its chief more than people rose fell new "
    "river votes after during said cafés trade bridge année Straße".split()
)
NAMES = st.sampled_from(
    [
        "Halvard Microsystems",
        "Anna O'Brien",
        "McDonald's",
        "Saint-Étienne",
        "Zürich",
        "Bank of England",
        "Ludwig van Beethoven",
        "São Paulo",
        "Ødegaard",
        "iPhone",
        "NATO",
        "Kestria",
    ]
)
FIGURES = st.one_of(
    st.integers(0, 10**7).map(str),
    st.integers(1000, 10**9).map(lambda n: f"{n:,}"),
    st.integers(1000, 10**9).map(lambda n: f"{n:,}".replace(",", ".")),
    st.integers(1000, 10**6).map(lambda n: f"{n:,}".replace(",", "\u202f")),
    st.decimals(0, 1000, places=2).map(lambda d: f"{d}%"),
    st.decimals(0, 1000, places=1).map(lambda d: f"{d}".replace(".", ",") + " Prozent"),
    st.tuples(
        st.sampled_from(["$", "€", "£", "US$", "CHF "]),
        st.decimals(1, 999, places=1),
        st.sampled_from(["", " million", "m", "bn", " billion", "k"]),
    ).map(lambda t: f"{t[0]}{t[1]}{t[2]}"),
    st.dates().map(lambda d: d.strftime("%d %B %Y")),
    st.dates().map(lambda d: d.strftime("%B %d, %Y")),
    st.dates().map(lambda d: d.isoformat()),
    st.dates().map(lambda d: d.strftime("%d.%m.%Y")),
    st.sampled_from(["Monday", "in March", "on Friday"]),
)
QUOTES = st.lists(WORDS, min_size=1, max_size=5).map(lambda ws: "“" + " ".join(ws) + "”")
PIECES = st.one_of(WORDS, WORDS, WORDS, NAMES, FIGURES, QUOTES)


@st.composite
def news_sentences(draw: st.DrawFn) -> str:
    first = draw(st.one_of(WORDS.map(str.capitalize), NAMES))
    rest = draw(st.lists(PIECES, min_size=1, max_size=14))
    return " ".join([first, *rest]) + "."


SOURCE_SENTENCES = st.lists(news_sentences(), min_size=1, max_size=8)
SOURCE_TEXTS = SOURCE_SENTENCES.map(" ".join)


@given(st.lists(SOURCE_SENTENCES, min_size=1, max_size=3), st.data())
@settings(max_examples=300, deadline=None)
def test_a_sentence_copied_from_a_source_is_always_kept(
    sources: list[list[str]], data: st.DataObject
) -> None:
    sentence = data.draw(st.sampled_from([s for source in sources for s in source]))
    check = check_summary(sentence, [" ".join(source) for source in sources])
    assert check.removed == 0, check.describe()


@given(st.text(max_size=400), st.lists(st.text(max_size=200), max_size=2))
@settings(max_examples=300, deadline=None)
def test_any_text_checked_against_itself_keeps_every_sentence(text: str, others: list[str]) -> None:
    check = check_summary(text, [*others, text])
    assert check.removed == 0, check.describe()


@given(
    st.lists(SOURCE_TEXTS, min_size=1, max_size=3),
    st.data(),
    st.integers(1, 10**9),
    st.sampled_from(["{:d}", "{:,}", "${:,}", "{:d}%", "{:d} million", "{:d}m"]),
)
@settings(max_examples=300, deadline=None)
@example(sources=["Acme raised $48 million."], data=None, number=49, form="${:,}")
def test_a_number_not_in_the_sources_removes_its_sentence(
    sources: list[str], data: st.DataObject | None, number: int, form: str
) -> None:
    digits = re.sub(r"\D", "", " ".join(sources))
    assume(str(number).rstrip("0") not in digits)
    if data is None:
        words, at = ["Acme", "raised", "funds."], 2
    else:
        source = data.draw(st.sampled_from(sources))
        words = data.draw(st.sampled_from(split_sentences(source))).split()
        at = data.draw(st.integers(1, len(words)))
    written = form.format(number)
    summary = " ".join([*words[:at], written, *words[at:]])

    check = check_summary(summary, sources)
    assert written not in check.text.split(), check.describe()
    assert check.removed >= 1 and check.found < check.claims


@given(st.text(max_size=400), st.lists(st.text(max_size=400), max_size=3))
@settings(max_examples=300, deadline=None)
def test_any_text_is_checked_without_error_and_keeps_a_subsequence_of_its_sentences(
    summary: str, sources: list[str]
) -> None:
    check = check_summary(summary, sources)

    # Every sentence is judged once, in order (citations moved to the sentence they follow).
    assert " ".join(" ".join(v.sentence for v in check.sentences).split()) == " ".join(
        s for p in re.split(r"\n\s*\n", summary) for s in split_sentences(p)
    )
    flat, at = " ".join(summary.split()), 0
    for kept in (" ".join(k.split()) for k in check.kept_sentences):
        at = flat.index(kept, at) + len(kept)  # in order, each one whole
    assert check.found + len(check.unfound) == check.claims
    assert check.removed == sum(1 for v in check.sentences if not v.kept)


# -- numbers written as words ----------------------------------------------------------------


def test_a_duration_in_words_that_the_source_does_not_give_removes_its_sentence() -> None:
    # A real model's brief: the source says "a few minutes".
    source = (
        "Her condition means she can only stand or walk for a few minutes at a time, and she "
        "has used a wheelchair since 2019."
    )
    summary = (
        "She could only stand or walk for three hours at a time. She has used a wheelchair "
        "since 2019."
    )
    result = check_summary(summary, [source])
    assert [c.text for c in result.unfound] == ["three"]
    assert result.text == "She has used a wheelchair since 2019."


@pytest.mark.parametrize(
    ("source", "summary"),
    [
        ("Hubo 6 muertos y 14 heridos en El Cairo.", "Seis muertos y catorce heridos en El Cairo."),
        ("Seis muertos y catorce heridos en El Cairo.", "Hubo 6 muertos y 14 heridos en El Cairo."),
        ("38 personnes ont été blessées à Benghazi.", "Trente-huit personnes ont été blessées."),
        ("Bei dem Unglück gab es 12 Verletzte.", "Bei dem Unglück gab es zwölf Verletzte."),
        ("Twelve people died, and 12 bodies have been recovered.", "A dozen people died."),
        ("Il y avait 200 000 manifestants.", "Il y avait deux cent mille manifestants."),
    ],
)
def test_a_number_in_words_is_found_by_the_same_number_in_digits(source: str, summary: str) -> None:
    result = check_summary(summary, [source])
    assert result.claims >= 1
    assert result.text == summary


@pytest.mark.parametrize(
    ("source", "summary"),
    [
        ("Twelve people died in the collapse.", "Fifteen people died in the collapse."),
        ("Hubo 6 muertos en El Cairo y muchos heridos.", "Hubo catorce muertos en El Cairo."),
        ("Vingt-quatre morts ont été recensés.", "Trente morts ont été recensés."),
        ("Es gab drei Tote und viele Verletzte.", "Es gab zwölf Tote und viele Verletzte."),
    ],
)
def test_a_number_in_words_the_sources_do_not_give_is_removed(source: str, summary: str) -> None:
    assert check_summary(summary, [source]).removed == 1


@pytest.mark.parametrize(
    ("sentence", "written", "value"),
    [
        ("Trente-huit personnes ont été blessées.", "Trente-huit", 38),
        ("Il y a eu vingt-quatre morts à Tripoli.", "vingt-quatre", 24),
        ("Selon la police, 200 000 manifestants ont défilé.", "200 000", 200_000),
        ("Selon la police, 200\u202f000 manifestants ont défilé.", "200\u202f000", 200_000),
        ("Un préstamo de mil 500 millones fue aprobado.", "mil 500 millones", 1_500_000_000),
        ("Hubo seis muertos en la plaza.", "seis", 6),
        ("Twelve people died in the collapse.", "Twelve", 12),
        ("Police said a dozen people were hurt.", "a dozen", 12),
        ("Bei dem Unglück starben zweihunderttausend Fische.", "zweihunderttausend", 200_000),
    ],
)
def test_numbers_in_reads_words_and_grouped_digits_where_they_are_written(
    sentence: str, written: str, value: int
) -> None:
    numbers = numbers_in(sentence)
    assert [(sentence[n.start : n.end], Decimal(value) in n.values) for n in numbers] == [
        (written, True)
    ]


@pytest.mark.parametrize(
    "sentence",
    [
        "A few people were hurt and several were taken to hospital.",
        "Dozens of people were hurt and hundreds fled the city.",
        "Decenas de miles de personas marcharon; cientos fueron detenidas.",
        "Des milliers de personnes ont manifesté, des dizaines ont été arrêtées.",
        "One of the two men was arrested for the third time.",
    ],
)
def test_vague_amounts_articles_and_ordinals_in_words_are_no_figures(sentence: str) -> None:
    assert numbers_in(sentence) == []


@given(st.text(max_size=300), st.sampled_from([None, "en", "de", "es", "fr", "it"]))
@settings(max_examples=300, deadline=None)
@example("Trente-huit personnes, 200 000 manifestants, mil 500 millones", "fr")
@example("mil 1 millones mil", "es")
def test_numbers_in_never_fails_and_every_figure_is_inside_its_sentence(
    text: str, language: str | None
) -> None:
    numbers = numbers_in(text, language)
    for n in numbers:
        assert 0 <= n.start < n.end <= len(text)
        assert n.values


@given(st.lists(st.integers(0, 10**9), min_size=1, max_size=5), st.sampled_from(["en", "fr"]))
@settings(max_examples=200, deadline=None)
def test_digits_are_read_in_words_and_alone_as_before(values: list[int], language: str) -> None:
    sentence = " and ".join(f"{v:,} people" for v in values) + "."
    read = [n for n in numbers_in(sentence, language)]
    assert [sentence[n.start : n.end] for n in read] == [f"{v:,}" for v in values]
    assert all(Decimal(v) in n.values for v, n in zip(values, read, strict=True))
