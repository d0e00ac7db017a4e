"""The language of each outlet's article (`digest.stories.language`) and how pages group by it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.stories.language import LANGUAGES, detect_language, language_name
from tests import headlines as H


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (f"{H.FED[0].title}\n{H.FED[0].text}", "en"),
        (f"{H.QUAKE_DE[0].title}\n{H.QUAKE_DE[0].text}", "de"),
        (f"{H.ECB_DE[1].title}\n{H.ECB_DE[1].text}", "de"),
        ("Séisme de magnitude 7,1 au large du sud du Japon", "fr"),
        ("Un terremoto de magnitud 7,1 sacude el sur de Japón", "es"),
        ("Terremoto di magnitudo 7,1 nel sud del Giappone", "it"),
        ("Aardbeving met kracht 7,1 treft het zuiden van Japan", "nl"),
        ("Землетрясение магнитудой 7,1 произошло у берегов Японии", "ru"),
        ("日本南部でマグニチュード7.1の地震、津波注意報", "ja"),
    ],
)
def test_headlines_and_ledes_are_detected_in_their_language(text: str, code: str) -> None:
    assert detect_language(text) == code


@pytest.mark.parametrize("text", ["", "   ", "2:1", "7,1 – 4.25%", "Stocks Slip"])
def test_text_too_short_to_tell_gets_no_language(text: str) -> None:
    assert detect_language(text) == ""


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=60))
def test_the_answer_is_a_known_language_or_none_and_always_the_same(text: str) -> None:
    code = detect_language(text)
    assert code == "" or code in LANGUAGES
    assert detect_language(text) == code


def test_languages_are_named_in_themselves() -> None:
    assert [language_name(c) for c in ("en", "de", "fr", "ja", "ar")] == [
        "English",
        "Deutsch",
        "Français",
        "日本語",
        "العربية",
    ]
    assert language_name("") == language_name("xx") == language_name("und") == ""
