"""`clean_text`, the one rule for what a reader may get from a page (terminal, archive, feeds,
search index, email), and the JSON escaping of the same characters: property tests."""

from __future__ import annotations

import json
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from digest.render.sanitize import clean_text, escape_json_for_terminal, needs_cleaning

# Unicode's Bidi_Control property, written out independently of the code under test.
BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def forbidden(c: str) -> bool:
    """A character no reader may get: a control other than tab/newline, a bidi control, a
    lone surrogate or U+FFFE/U+FFFF."""
    return (
        (unicodedata.category(c) == "Cc" and c not in "\t\n")
        or ord(c) in BIDI
        or 0xD800 <= ord(c) <= 0xDFFF
        or c in "\ufffe\uffff"
    )


# Text as pages carry it, salted with what attackers plant: escapes, C1, bidi controls, CR.
hostile_text = st.text(
    alphabet=st.one_of(
        st.characters(),
        st.sampled_from(
            ["\x1b", "\x07", "\x9b", "\x85", "\x7f", "\r", "\n", "\t", "\ud800", "\ufffe"]
            + [chr(c) for c in sorted(BIDI)]
        ),
    ),
    max_size=80,
)
printable_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)).filter(
        lambda c: c.isprintable() or c in "\t\n"
    ),
    max_size=80,
)


@given(hostile_text)
def test_cleaned_text_holds_no_control_or_bidi_character(text: str) -> None:
    cleaned = clean_text(text)
    assert not [c for c in cleaned if forbidden(c)]
    assert clean_text(cleaned) == cleaned and not needs_cleaning(cleaned)
    assert needs_cleaning(text) == (cleaned != text)


@given(printable_text)
def test_printable_text_is_kept_exactly(text: str) -> None:
    assert clean_text(text) == text
    assert not needs_cleaning(text)


@given(hostile_text)
def test_cleaning_only_removes_the_forbidden_characters(text: str) -> None:
    """Nothing is added or reordered: CR becomes a newline, the rest is deletion."""
    expected = "".join(
        c for c in text.replace("\r\n", "\n").replace("\r", "\n") if not forbidden(c)
    )
    assert clean_text(text) == expected


def test_the_attacks_from_the_issue_lose_their_controls_and_keep_their_text() -> None:
    assert clean_text("a\x1b[2Jb") == "a[2Jb"  # screen clear
    assert clean_text("a\x1b]52;c;ZXZpbA==\x07b") == "a]52;c;ZXZpbA==b"  # clipboard write
    assert clean_text("\x1b]8;;https://evil/\x1b\\x\x1b]8;;\x1b\\") == "]8;;https://evil/\\x]8;;\\"
    assert clean_text("a\x9b31mb") == "a31mb"  # C1 CSI
    assert clean_text("invoice\u202efdp.exe") == "invoicefdp.exe"  # right-to-left override
    assert clean_text("line one\r\nline two\rthree\ttab") == "line one\nline two\nthree\ttab"
    assert clean_text("عربي \u200fنص") == "عربي نص"  # right-to-left letters keep their order


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), hostile_text),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_escaped_json_is_the_same_data_with_nothing_a_terminal_acts_on(value: object) -> None:
    data = escape_json_for_terminal(json.dumps(value, ensure_ascii=False, indent=2))
    assert json.loads(data) == value
    assert not [c for c in data if forbidden(c) and c != "\n"]
