"""What an updated story adds since its latest earlier edition. Pure: `digest.jobs.publish` hands in
the stored edition and the story's articles.

A story that was in an earlier edition and has gained outlets since carries `WhatsNew`: the
outlets that were not in that edition, and the new facts their ledes bring. The rule for a new
fact, kept simple enough to explain to a reader and to test:

- the candidates are the sentences of the new outlets' ledes, outlet by outlet in story order;
- a sentence is compared, by its content words, with everything the earlier appearance said:
  its title, brief and summary, the titles of its outlets, and the ledes of those outlets'
  articles that were already in the store when that edition was built. Content words are
  `digest.stories.tokens.words` (case and accents folded, stopwords of English and German
  dropped, numbers whole: "7,1" is "7.1") less the commonest function words of French,
  Spanish, Italian, Dutch and Portuguese, compared by `tokens.stem` ("elections" meets
  "election");
- it is new when it has at least `MIN_WORDS` content words and more than `NOVEL_SHARE` of them
  are absent from that text: a sentence that mostly repeats it is not news, a dateline or a
  byline is too short to be a fact;
- across languages words rarely match, so a sentence in a language the earlier appearance was
  not told in is judged by its numbers, which read the same in every language, when it has any:
  new when it brings a number the story had not said (a toll, a rate, a score), not new when
  all its numbers were known ("Ein Erdbeben der Stärke 7,1..." after "A 7.1 earthquake...");
  without numbers it falls back to the word rule, which calls most such sentences new;
- a chosen fact joins the known text, so two new outlets saying the same thing give one fact;
  at most `MAX_FACTS` are kept.

Being about words, not meaning, it misses a paraphrase with none of the same words (shown as
new) and a new fact told mostly in known words (not shown); both err towards a short story
line, never towards hiding that outlets joined: those are always listed. Chinese and Japanese
text is not split into words, so its sentences count as too short to be facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

from digest.models import Correction, EditionStory, NewFact, Outlet, WhatsNew
from digest.stories.rank import outlet as outlet_of
from digest.stories.tokens import fold, stem, words

__all__ = [
    "MAX_FACTS",
    "MIN_WORDS",
    "NOVEL_SHARE",
    "Joined",
    "Seen",
    "Telling",
    "content_terms",
    "for_reader",
    "last_seen",
    "new_facts",
    "outlet_key",
    "sentences",
    "whats_new",
]

MAX_FACTS = 3
MIN_WORDS = 3
NOVEL_SHARE = 0.5

# The commonest function words of the other languages news arrives in here (English and German
# ones are already `tokens.STOPWORDS`): without them, "le", "de", "la" would make a French
# sentence look half known to any French text.
_MORE_STOPWORDS = frozenset(
    fold(w)
    for w in """
    le la les un une des du de d l au aux et ou mais donc car ni que qui quoi dont où ce cet cette
    ces son sa ses leur leurs il elle ils elles on nous vous je tu se ne pas plus est sont été être
    a ont avait avoir fait par pour sur dans avec sans sous entre vers selon après avant depuis
    el los las lo del al y o pero que quien cual este esta estos estas ese esa su sus se es son
    fue ha han había ser por para con sin sobre entre hasta desde según tras como más muy
    il lo gli i della dello delle degli dei nel nella nei nelle sul sulla alla alle agli ai dal
    dalla e ed che chi cui questo questa quello quella suo sua suoi sue è sono stato stata ha hanno
    per con tra fra più anche come
    de het een en of maar dat die dit deze zijn haar hun hij zij ze wij we is zijn was waren
    heeft hebben wordt werd worden met voor naar bij uit over door tegen tot ook nog niet
    o os as um uma uns umas do da dos das no na nos nas ao aos pelo pela pelos pelas e ou mas que
    quem este esta esse essa seu sua seus suas se é são foi foram tem têm por para com sem sobre
    entre até desde segundo após como mais muito
    """.split()
)

# Words that end in a full stop without ending the sentence.
_ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof st sen rep gov gen col lt sgt capt jr sr inc corp co ltd no nr vs approx
    jan feb mar apr jun jul aug sep sept oct nov dec bzw ca dt hr fr mme mm sra sr sig dott
    """.split()
)
_END = re.compile(r"[.!?…]+[\"'”’»)\]]*\s+")
_INITIALS = re.compile(r"^(?:[^\W\d_]\.)*[^\W\d_]$")  # "U.S", "A", "z.B"
_SPACE = re.compile(r"\s+")
_OPENERS = frozenset("\"'“„«‘¿¡([")


@dataclass(frozen=True, slots=True)
class Telling:
    """One article of the story as the store holds it now."""

    outlet: str  # `outlet_key` of its outlet
    lede: str
    first_seen: datetime


@dataclass(frozen=True, slots=True)
class Joined:
    """An outlet that joined the story: its name as shown, its language and its ledes."""

    outlet: str
    language: str  # ISO 639-1, "" when not detected
    ledes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Seen:
    """A story as an edition a reader received showed it: that edition's day and build time."""

    day: date
    built_at: datetime
    story: EditionStory


def last_seen(
    story_id: int, received: Iterable[tuple[date, datetime, Sequence[EditionStory]]]
) -> Seen | None:
    """The story's appearance in the latest of the editions a reader received (each: its day,
    build time and the stories of their copy of it) that carried it; None when none did."""
    found: Seen | None = None
    for day, built_at, stories in received:
        if found is not None and day <= found.day:
            continue
        story = next((s for s in stories if s.id == story_id), None)
        if story is not None:
            found = Seen(day, built_at, story)
    return found


def for_reader(
    story: EditionStory,
    seen: Seen | None,
    *,
    tellings: Sequence[Telling],
    missed: Sequence[EditionStory] = (),
) -> EditionStory | None:
    """The story as one reader's copy shows it, told against `seen`, its appearance in the last
    edition that reader received (`last_seen`):

    - never shown to them (`seen` None): the whole story, without a "new" line about an edition
      they did not get;
    - nothing new since: None, it is not repeated;
    - else updated: `whats_new` says, since `seen.day`, which outlets joined, the new facts
      (checked facts the timeline recorded after that edition was built, then what the new
      outlets' ledes add, as `whats_new`) and the corrections of what they were sent (of this
      story and of its appearances in the editions they `missed`, less those `seen` carried),
      which move from the story's `corrections` into its `whats_new`.
    """
    if seen is None:
        return story if story.whats_new is None else replace(story, whats_new=None)
    news = whats_new(story, seen.story, since=seen.day, as_of=seen.built_at, tellings=tellings)
    after = _aware(seen.built_at)
    shown = {e.id for e in seen.story.timeline}  # what that edition's timeline already held
    checked = [
        NewFact(e.outlet, e.text)
        for e in story.timeline
        if e.kind == "fact" and e.text and e.id not in shown and _aware(e.recorded_at) > after
    ]
    # What the outlets they were already told of reported since: a follow-up article.
    old = {outlet_key(o) for o in seen.story.outlets}
    follow_ups = [
        Joined(
            outlet=_display_name(o),
            language=o.language,
            ledes=tuple(
                t.lede
                for t in tellings
                if t.outlet == outlet_key(o) and _aware(t.first_seen) > after
            ),
        )
        for o in story.outlets
        if outlet_key(o) in old
    ]
    known = [
        *_known(seen.story, tellings, seen.built_at),
        *(f.text for f in (news.facts if news else ())),
    ]
    languages = frozenset(o.language for o in seen.story.outlets if o.language)
    later = new_facts(known, [j for j in follow_ups if j.ledes], known_languages=languages)
    facts = _unique_facts([*checked, *(news.facts if news else ()), *later])
    told = set(seen.story.corrections)
    corrections: list[Correction] = []
    for c in (*(c for s in missed for c in s.corrections), *story.corrections):
        if c not in told and c.said_on <= seen.day and c not in corrections:
            corrections.append(c)
    outlets = news.outlets if news else ()
    if not (outlets or facts or corrections):
        return None
    reader_news = WhatsNew(
        since=seen.day,
        outlets=outlets,
        facts=facts,
        for_reader=True,
        corrections=tuple(corrections),
    )
    # The corrections are told once, with the rest of what is new to them.
    return replace(story, whats_new=reader_news, corrections=())


def _unique_facts(facts: Sequence[NewFact]) -> tuple[NewFact, ...]:
    """The facts in order, one of each sentence, at most `MAX_FACTS`."""
    out: list[NewFact] = []
    for fact in facts:
        if all(fold(f.text) != fold(fact.text) for f in out):
            out.append(fact)
    return tuple(out[:MAX_FACTS])


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def outlet_key(outlet: Outlet) -> str:
    """What makes two editions' outlets the same: the outlet as stories count it
    (`digest.stories.rank.outlet`: the name, folded, else the link's registrable host)."""
    return outlet_of(outlet.name, outlet.url.strip()) or outlet.url.strip()


def whats_new(
    story: EditionStory,
    earlier: EditionStory,
    *,
    since: date,
    as_of: datetime,
    tellings: Sequence[Telling],
) -> WhatsNew | None:
    """What `story` adds to `earlier`, its appearance in the edition of `since` built at `as_of`;
    None when no outlet joined it since. `tellings` are the story's articles now, in story
    order."""
    old = {outlet_key(o) for o in earlier.outlets}
    joined = tuple(o for o in story.outlets if outlet_key(o) not in old)
    if not joined:
        return None
    known = _known(earlier, tellings, as_of)
    languages = {o.language for o in earlier.outlets if o.language}
    # An edition stored before languages were detected: the old outlets' languages as of now.
    languages |= {o.language for o in story.outlets if o.language and outlet_key(o) in old}
    candidates = [
        Joined(
            outlet=_display_name(o),
            language=o.language,
            ledes=tuple(t.lede for t in tellings if t.outlet == outlet_key(o)),
        )
        for o in joined
    ]
    facts = new_facts(known, candidates, known_languages=frozenset(languages))
    return WhatsNew(since=since, outlets=joined, facts=facts)


def _known(earlier: EditionStory, tellings: Sequence[Telling], as_of: datetime) -> list[str]:
    """Everything an earlier appearance said: its title, brief and summary, its outlets' titles
    and the ledes of their articles already in the store when that edition was built."""
    old = {outlet_key(o) for o in earlier.outlets}
    return [
        earlier.title,
        earlier.brief_summary,
        earlier.summary,
        *(o.title for o in earlier.outlets),
        *(t.lede for t in tellings if t.outlet in old and t.first_seen <= as_of),
    ]


def new_facts(
    known: Iterable[str],
    joined: Sequence[Joined],
    *,
    known_languages: frozenset[str] = frozenset(),
    limit: int = MAX_FACTS,
) -> tuple[NewFact, ...]:
    """The sentences of the joined outlets' ledes that `known` did not already say (see the
    module docstring), in order, at most `limit`."""
    seen = {term for text in known for term in content_terms(text)}
    facts: list[NewFact] = []
    for outlet in joined:
        other_language = bool(
            outlet.language and known_languages and outlet.language not in known_languages
        )
        for lede in outlet.ledes:
            for sentence in sentences(lede):
                if len(facts) == limit:
                    return tuple(facts)
                terms = set(content_terms(sentence))
                if not _is_new(terms, seen, other_language):
                    continue
                facts.append(NewFact(outlet.outlet, sentence, outlet.language))
                seen |= terms  # a second outlet saying the same is no second fact
    return tuple(facts)


def _is_new(terms: set[str], seen: set[str], other_language: bool) -> bool:
    if len(terms) < MIN_WORDS:
        return False
    numbers = {t for t in terms if t[0].isdigit()}
    if other_language and numbers:
        return bool(numbers - seen)
    return len(terms - seen) > NOVEL_SHARE * len(terms)


def content_terms(text: str) -> list[str]:
    """The stems of the content words of `text` in order, as facts are compared."""
    return [stem(w) for w in words(text) if w not in _MORE_STOPWORDS]


def sentences(text: str) -> list[str]:
    """`text` split into sentences, whitespace collapsed. A full stop ends a sentence when a
    capital, a digit or an opening quote follows, and not after an initial ("U.S.", "J.") or a
    common abbreviation ("Dr.", "Nov."); decimals ("7.1") never split."""
    text = _SPACE.sub(" ", text).strip()
    out: list[str] = []
    start = 0
    for match in _END.finditer(text):
        end = match.end()
        following = text[end : end + 1]
        if not (following.isupper() or following.isdigit() or following in _OPENERS):
            continue
        if match.group().startswith(".") and not match.group().startswith("..."):
            before = text[start : match.start()].rsplit(" ", 1)[-1].lstrip("\"'“„«‘(")
            if _INITIALS.match(before) or before.casefold() in _ABBREVIATIONS:
                continue
        out.append(text[start:end].strip())
        start = end
    if text[start:].strip():
        out.append(text[start:].strip())
    return out


def _display_name(outlet: Outlet) -> str:
    return " ".join(outlet.name.split()) or outlet_key(outlet)
