"""Whether two outlets' words report the same quantity of the same event: the question the
configured model is asked (issue 38) before a disagreement, a revision or a correction that the
rules accepted reaches a reader, and how its reply is read. The rules pair figures by subject
and value; a page's "30 dead" and another's "45 dead" can be two events (another day's
attack, last year's toll). The model is asked only about what the rules accepted, never
instead of them, and only a clear "yes" lets a line through. Pure: `digest.jobs.figure_check`
asks the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from digest.facts.figures import Figure
from digest.models import Correction, Disagreement, StoryEvent

QUESTION = (
    "Do these two sentences report the same quantity (e.g. the number of dead) of the same "
    "event? Answer yes or no."
)
# Tokens of the reply: "Yes." and a few more; a model that starts explaining is cut short.
MAX_TOKENS = 8
# Characters of each sentence put to the model: a clause is about 160, a sent sentence more.
SENTENCE_CHARS = 400

Pair = tuple[str, str]


def pair(a: str, b: str) -> Pair:
    """The two sentences as asked about and cached: stripped, in a fixed order (the question
    is symmetric, so a pair seen either way is asked once)."""
    x, y = a.strip()[:SENTENCE_CHARS], b.strip()[:SENTENCE_CHARS]
    return (x, y) if x <= y else (y, x)


def messages(p: Pair) -> list[dict[str, str]]:
    """The chat the model is asked: the question, then the two sentences."""
    return [
        {
            "role": "user",
            "content": f"{QUESTION}\n\nSentence 1: {p[0]}\nSentence 2: {p[1]}\n\nAnswer:",
        }
    ]


_ANSWER = re.compile(r"^[\W_]*(?:answer\s*[:\-]\s*)?[\W_]*(yes|no)\b(.*)$", re.I | re.S)
_OTHER = {"yes": re.compile(r"\bno\b", re.I), "no": re.compile(r"\byes\b", re.I)}


def answer(reply: str) -> bool | None:
    """True for a clear "yes", False for a clear "no", None for anything else (an empty or
    cut reply, a refusal, "yes and no", a sentence that does not start with the answer)."""
    found = _ANSWER.match(reply.strip())
    if found is None:
        return None
    said, rest = found.group(1).lower(), found.group(2)
    if _OTHER[said].search(rest):
        return None  # both words: no clear answer
    return said == "yes"


def _clause(figures: Sequence[Figure], subject: str, written: str | None = None) -> str:
    """The outlet's words for its figure of `subject` (the one written `written` if given)."""
    for f in figures:
        if f.subject == subject and (written is None or f.written == written):
            return f.clause or f.sentence
    return ""


def disagreement_pairs(d: Disagreement, current: Mapping[str, Sequence[Figure]]) -> list[Pair]:
    """The first value's words beside each other value's, as the outlets wrote them (the first
    outlet of each value); none when one of them cannot be found (then it cannot be asked)."""
    clauses = [_clause(current.get(r.outlets[0], ()), d.subject) for r in d.reported]
    if len(clauses) < 2 or not all(clauses):
        return []
    return [pair(clauses[0], c) for c in clauses[1:]]


def correction_pairs(c: Correction, current: Mapping[str, Sequence[Figure]]) -> list[Pair]:
    """The sentence an edition sent beside the words of an outlet that reports the new value."""
    for outlet in c.outlets:
        if clause := _clause(current.get(outlet, ()), c.subject, c.now) or _clause(
            current.get(outlet, ()), c.subject
        ):
            return [pair(c.sentence, clause)]
    return []


def timeline_pairs(events: Sequence[StoryEvent]) -> dict[int, list[Pair]]:
    """For each "revision" and "disagreement" entry of a timeline (oldest first), by event id,
    the sentences it compares, from the figures before it in the same timeline: a revision's
    earlier words for that outlet and subject beside its new ones; a disagreement's words of
    each other value beside the first's (each outlet's latest figure of the subject). An entry
    whose earlier figures fell outside the timeline gets none."""
    found: dict[int, list[Pair]] = {}
    latest: dict[tuple[str, str], StoryEvent] = {}
    for e in events:
        if e.kind == "revision":
            before = latest.get((e.outlet, e.subject))
            found[e.id] = [pair(before.text, e.text)] if before and before.text and e.text else []
        elif e.kind == "disagreement":
            by_value: dict[str, str] = {}
            for (_, subject), f in sorted(latest.items()):
                if subject == e.subject and f.text:
                    by_value.setdefault(f.value, f.text)
            texts = list(by_value.values())
            found[e.id] = [pair(texts[0], t) for t in texts[1:]] if len(texts) >= 2 else []
        if e.kind in ("fact", "revision") and e.subject:
            latest[(e.outlet, e.subject)] = e
    return found


def passes(pairs: Sequence[Pair], answers: Mapping[Pair, bool | None]) -> bool:
    """Whether a line may reach a reader: the model said a clear yes to each of its pairs (a
    line with nothing to ask about is kept out: the model was not asked)."""
    return bool(pairs) and all(answers.get(p) is True for p in pairs)


def tally(causes: Sequence[str]) -> str:
    """The causes of the lines kept out, each once with its count, the commonest first:
    "2 answered no, 1 unclear reply"."""
    counts: dict[str, int] = {}
    for c in causes:
        counts[c] = counts.get(c, 0) + 1
    return ", ".join(f"{n} {c}" for c, n in sorted(counts.items(), key=lambda kv: -kv[1]))
