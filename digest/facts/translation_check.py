"""A translation checked like any summary: every claim in it must be in the original or its
sources (`digest.facts.claims`), or the reader gets the original.

A translation may reword, never add: each number, amount, percentage, date and proper name of
the translated headline, brief and summary must be found in the original text or in the story's
articles (which may be in the reader's language: "Genf" is found in a German outlet's article
when the English summary says "Geneva"). The claim check normalizes across languages already:
"7,1 %" is 7.1%, "1.200" is 1,200, "48 Millionen Dollar" is $48 million, "12. März 2025" is
12 March 2025. A translation into German is read as German text (its nouns are capitalized):
only names of two or more words are checked there, as the claim check does for German sources.
A name found once its first word is dropped is found: that word is a title in the reader's
language ("Gouverneur Andrew Bailey"), which no source need say.

Quoted phrases cannot be found word for word once translated. So: a quote of the translation
whose words are in the original or its sources (kept as said, or said in the reader's language
by an outlet) is found; any other counts as the translation of one of the original's quotes of
the same field (headline, brief, summary), and the translation may hold no more of those than
the original has quotes there that it does not keep as they were; the numbers and names inside a
translated quote are checked like any other. A quote in the translation of a text that quotes
nobody is invented and refuses the translation.

What this cannot catch: a quote translated into something else the speaker did not say (only
its figures and names are checked), a claim moved to another subject, a name translated into a
form no source uses (refused: the prompt asks to keep names as written), and what the claim
check cannot catch in any summary (see its docstring).

Nothing may be left out either ("numbers, names and quotes survive"): every figure and date of
the original must be in its translation, and as many quotes and names (a name written in the
reader's language, "Genf" for "Geneva", stands for the one it replaces); a model that shortens
or skips the text is refused like one that invents.

Not one sentence is dropped from a translation: one claim not found refuses the whole of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from digest.facts.claims import Claim, ClaimCheck, SourceIndex, claims_of

# Languages that capitalize every noun: there a single capitalized word is no name.
CAPITALIZES_NOUNS = frozenset({"de", "lb"})
FIELDS = ("headline", "brief", "summary")


@dataclass(frozen=True, slots=True)
class TranslationCheck:
    """The verdict on a translation: counts, and why it was refused ("" when it was not)."""

    claims: int
    found: int
    unfound: tuple[tuple[str, Claim], ...] = ()  # (field, claim) the translation added
    reason: str = ""

    @property
    def ok(self) -> bool:
        return not self.reason


def check_translation(
    original: Sequence[str],
    translated: Sequence[str],
    sources: Sequence[str],
    language: str,
) -> TranslationCheck:
    """Check `translated` (headline, brief, summary in `language`) against `original` (the
    same three fields as sent) and the story's `sources` (its articles' texts)."""
    index = SourceIndex(["\n\n".join(original), *sources])
    if language in CAPITALIZES_NOUNS:
        index.capitalizes_nouns = True  # the translation's nouns are capitalized, not names
    total = found = 0
    unfound: list[tuple[str, Claim]] = []
    dropped: list[tuple[str, Claim]] = []
    for name, before, after in zip(FIELDS, original, translated, strict=True):
        dropped += [(name, c) for c in _dropped(before, after, language)]
        check = index.check(after)
        total += check.claims
        found += check.found
        said = [c for sentence in claims_of(before) for c in sentence if c.kind == "quote"]
        kept = {c.words for sentence in check.sentences for c in sentence.claims}
        open_quotes = sum(1 for q in said if q.words not in kept)
        for claim in check.unfound:
            if claim.kind == "quote" and open_quotes > 0:
                open_quotes -= 1  # the translation of one of the original's quotes
                found += 1
                for inner in index.claims(claim.text):
                    total += 1
                    if index.found(inner):
                        found += 1
                    else:
                        unfound.append((name, inner))
                continue
            if claim.kind == "name" and _titled(index, claim):
                found += 1
                continue
            unfound.append((name, claim))
    reason = ""
    if unfound:
        shown = ", ".join(f"{c.kind} “{c.text}” ({where})" for where, c in unfound[:5])
        more = f" and {len(unfound) - 5} more" if len(unfound) > 5 else ""
        reason = f"not in the original or its sources: {shown}{more}"
    elif dropped:
        shown = ", ".join(f"{c.kind} “{c.text}” ({where})" for where, c in dropped[:5])
        more = f" and {len(dropped) - 5} more" if len(dropped) > 5 else ""
        reason = f"left out of the translation: {shown}{more}"
    elif all(a.strip() == b.strip() for a, b in zip(original, translated, strict=True)):
        reason = "the model gave the text back untranslated"
    return TranslationCheck(total, found, tuple(unfound), reason)


def _titled(index: SourceIndex, claim: Claim) -> bool:
    """Whether a name is found once its first word is dropped: a title in the reader's
    language ("Gouverneur Andrew Bailey" for "Governor Andrew Bailey") is no name."""
    (words,) = claim.words or ((),)
    return len(words) > 1 and index.found(replace(claim, words=(words[1:],)))


def _dropped(before: str, after: str, language: str) -> list[Claim]:
    """What of the original `before` its translation `after` (in `language`) leaves out: every
    figure and date must be in it; of the quotes, as many (they are translated, not found word
    for word); of the names, as many (one written in the reader's language, "Genf" for
    "Geneva", stands for the one it replaces)."""
    if not before.strip():
        return []
    check = SourceIndex([after]).check(before)
    back = SourceIndex([before])
    if language in CAPITALIZES_NOUNS:
        back.capitalizes_nouns = True
    added = back.check(after)
    out = [c for c in check.unfound if c.kind in ("number", "amount", "percent", "date")]
    for kind in ("quote", "name"):
        lost = [c for c in check.unfound if c.kind == kind]
        written = sum(1 for c in _all(added) if c.kind == kind)
        if written < sum(1 for c in _all(check) if c.kind == kind):
            new = sum(1 for c in added.unfound if c.kind == kind)
            out += lost[new:]
    return out


def _all(check: ClaimCheck) -> list[Claim]:
    return [c for sentence in check.sentences for c in sentence.claims]
