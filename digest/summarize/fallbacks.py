"""Why the model's summaries fell back to extractive ones, in a few words each and counted.

A deepen whose three summaries fell back for three causes (an empty reply, the claim check, a
server silent past its first-token time) said "3 summaries fell back to extractive: ... the
reply was empty": the first reason, named for all three. `tally` names every cause once, with
how many stories it hit ("1 empty reply, 1 claim check, 1 no first token in 36 s"); each
story's own reason, in full, is in the log line of that story.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from digest.summarize.output import one_line

# A reason's cause, by the words the summarizer writes it in (`llm_transport`, `timing`, `llm`,
# `story`), the most specific first: "output stayed invalid after a second request: the reply was
# empty" is an empty reply. "{}" takes the seconds the reason names.
_CAUSES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), label)
    for pattern, label in (
        (r"^claim check", "claim check"),
        (r"sent no token within (\d+) s", "no first token in {} s"),
        (r"still writing after (\d+) s", "still writing after {} s"),
        (r"did not answer within (\d+) s", "no answer in {} s"),
        (r"the reply was empty", "empty reply"),
        (r"holds no JSON object", "no JSON in the reply"),
        (r"does not describe the article", "off-topic reply"),
        (r"(?:restates|repeats|only) the headline|headline only", "headline only"),
        (
            r"does not fit the model's context window|could not read the request"
            r"|closed the reply without a word",
            "too long for the window",
        ),
        (r"is rate limiting", "rate limited"),
        (r"unreachable", "server unreachable"),
        (r"answered HTTP (\d+)", "HTTP {}"),
        (r"broke off its reply", "reply broken off"),
        (r"sent a reply (?:of \S+ bytes|past)", "reply too long"),
        (r"sent a reply compressed", "compressed reply"),
        (r"wrong shape|could not be read", "unreadable reply"),
        (r"nothing to summarize", "no text"),
        (r"output (?:invalid|stayed invalid|refused)", "invalid reply"),
    )
)


def cause(reason: str) -> tuple[str, int | None]:
    """A reason's cause in a few words, with the seconds it names ("no first token in {} s",
    36), or its first words when it is none of the known ones."""
    for pattern, label in _CAUSES:
        if found := pattern.search(reason):
            seconds = int(found.group(1)) if "{}" in label else None
            return label, seconds
    return one_line(reason, 60) or "no reason given", None


def tally(reasons: Iterable[str]) -> str:
    """The causes of `reasons`, each once with its count, the commonest first:
    "2 empty reply, 1 no first token in 36-41 s"."""
    counts: dict[str, list[int]] = {}
    seen: dict[str, int] = {}
    for reason in reasons:
        label, seconds = cause(reason)
        seen[label] = seen.get(label, 0) + 1
        counts.setdefault(label, [])
        if seconds is not None:
            counts[label].append(seconds)
    parts = []
    for label in sorted(seen, key=lambda k: -seen[k]):  # stable: first seen first among equals
        shown, times = label, counts[label]
        if times:
            low, high = min(times), max(times)
            shown = label.format(f"{low}" if low == high else f"{low}-{high}")
        if seen[label] > 1:
            shown = re.sub(r"\breply\b", "replies", shown).replace("claim check", "claim checks")
        parts.append(f"{seen[label]} {shown}")
    return ", ".join(parts)
