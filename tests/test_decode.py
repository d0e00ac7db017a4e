"""Decoding HTML bytes: BOM, header charset, <meta>, detection, and never crashing."""

from __future__ import annotations

import codecs
from html import escape

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from digest.fetch.decode import decode_html, detect_encoding, normalize_charset
from tests.newsweb import ARTICLES, render_article

CAFE = next(a for a in ARTICLES if a.slug == "cafe-culture")
TOKYO = next(a for a in ARTICLES if a.slug == "tokyo-robots")


def test_latin1_page_declared_only_in_http_equiv_meta_is_decoded() -> None:
    text = decode_html(render_article(CAFE), None)
    assert escape(CAFE.lede) in text


def test_shift_jis_page_declared_only_in_meta_charset_is_decoded() -> None:
    text = decode_html(render_article(TOKYO), None)
    assert escape(TOKYO.lede) in text


def test_bom_wins_over_a_wrong_header_charset() -> None:
    body = codecs.BOM_UTF8 + "<p>Straße</p>".encode()
    assert decode_html(body, "iso-8859-1") == "<p>Straße</p>"


def test_utf16_bom_is_honoured() -> None:
    body = codecs.BOM_UTF16_LE + "<p>日本</p>".encode("utf-16-le")
    assert decode_html(body, None) == "<p>日本</p>"


def test_header_charset_wins_over_meta() -> None:
    body = '<meta charset="shift_jis"><p>café</p>'.encode("cp1252")
    assert "café" in decode_html(body, "windows-1252")


def test_unknown_header_charset_falls_back_to_meta() -> None:
    body = '<meta charset="iso-8859-1"><p>café</p>'.encode("latin-1")
    assert "café" in decode_html(body, "x-no-such-charset")


@pytest.mark.parametrize(
    "declared", ["no-such-thing", "base64", "rot13", "zlib", "", "utf-8; x", '"'], ids=repr
)
def test_unknown_or_unsafe_meta_charset_does_not_crash(declared: str) -> None:
    body = f'<meta charset="{declared}"><p>plain ascii text</p>'.encode()
    assert "plain ascii text" in decode_html(body, declared)


def test_meta_after_the_first_2kb_is_ignored() -> None:
    body = b"<!--" + b"x" * 4000 + b'--><meta charset="shift_jis"><p>caf\xc3\xa9</p>'
    assert detect_encoding(body, None) == "utf-8"


def test_undeclared_windows_1251_is_detected() -> None:
    russian = (
        "Правительство объявило о новых мерах поддержки малого бизнеса, которые вступят в силу "
        "с первого числа следующего месяца. Эксперты считают, что эти меры помогут сохранить "
        "рабочие места в регионах, где экономика пострадала сильнее всего."
    )
    body = f"<html><body><p>{russian}</p></body></html>".encode("cp1251")
    assert russian in decode_html(body, None)


def test_prefix_cut_inside_a_character_is_still_utf8() -> None:
    body = "<p>Zürich café crème</p>".encode()
    cut = body[: body.index("é".encode()) + 1]  # half of "é"
    assert detect_encoding(cut, None) == "utf-8"
    assert decode_html(cut, None).startswith("<p>Zürich caf")


def test_whatwg_aliases_map_latin1_to_windows_1252() -> None:
    assert normalize_charset("ISO-8859-1") == "cp1252"
    assert decode_html(b"<p>\x93quoted\x94</p>", "iso-8859-1") == "<p>“quoted”</p>"


@settings(max_examples=300)
@given(st.binary(max_size=3000), st.one_of(st.none(), st.text(max_size=30)))
@example(b"\x00", "UNDEFINED")  # Python's "undefined" codec refuses everything
def test_any_bytes_and_any_charset_name_decode_to_text(body: bytes, charset: str | None) -> None:
    assert isinstance(decode_html(body, charset), str)


@settings(max_examples=200)
@given(st.text(max_size=500))
def test_utf8_text_round_trips(text: str) -> None:
    expected = text.removeprefix("\ufeff")  # a leading BOM is consumed, as browsers do
    assert decode_html(text.encode(), None) == expected
