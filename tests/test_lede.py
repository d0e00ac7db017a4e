"""The lede finder: the article's own opening, not the cookie banner, on whole and partial pages."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.fetch.lede import Lede, could_hold_article, find_lede

FIRST = (
    "The city council voted on Tuesday to close the old harbour bridge to cars from next spring, "
    "ending a debate that has divided residents for more than a decade."
)
SECOND = (
    "Cyclists and shop owners on the waterfront welcomed the decision, while commuters from the "
    "northern suburbs said the detour would add twenty minutes to their daily journey."
)
THIRD = (
    "The bridge, built in 1911, carries about 14,000 vehicles a day. Engineers warned last year "
    "that its steel deck would need a full replacement within five years."
)
ARTICLE = f"<p>{FIRST}</p>\n<p>{SECOND}</p>\n<p>{THIRD}</p>"

NAV = (
    '<nav class="main-menu"><ul>'
    + "".join(f'<li><a href="/{s}">{s.title()}</a></li>' for s in ("news", "sport", "culture"))
    + "</ul></nav>"
)
COOKIES = (
    '<div class="cookie-banner"><p>We use cookies to give you the best experience on our '
    "website. By continuing to browse you agree to our use of cookies and to our privacy "
    "policy, which you can read at any time.</p><button>Accept</button></div>"
)
NEWSLETTER = (
    '<div class="newsletter-signup"><p>Get the morning briefing: the day\'s most important '
    "stories from the harbour city and beyond, delivered to your inbox every weekday at six, "
    "free of charge and easy to cancel whenever you want.</p></div>"
)
RELATED = (
    '<aside class="related"><h3>Related</h3><ul>'
    + "".join(
        f'<li><p><a href="/r{i}">Earlier story number {i} about the harbour bridge debate</a> '
        "and what the council had said about it at the time of the vote.</p></li>"
        for i in range(6)
    )
    + "</ul></aside>"
)


def page(body: str, head: str = "") -> str:
    return f"<!doctype html><html><head><title>News</title>{head}</head><body>{body}</body></html>"


def meta(name: str, content: str, attr: str = "name") -> str:
    return f'<meta {attr}="{name}" content="{content}">'


# --- the article's own opening -----------------------------------------------------------------


def test_lede_is_the_articles_first_sentence_not_the_boilerplate_before_it() -> None:
    html = page(
        f"{NAV}{COOKIES}{NEWSLETTER}<main><article><h1>Bridge to close</h1>{ARTICLE}</article>"
        f"{RELATED}</main><footer><p>© 2024 Harbour Herald. All rights reserved. Imprint, "
        "privacy, terms of use and contact details for the newsroom.</p></footer>"
    )
    lede = find_lede(html)
    assert lede.kind == "article"
    assert lede.text.startswith(FIRST)
    assert "cookies" not in lede.text
    assert "briefing" not in lede.text


def test_byline_and_date_paragraphs_before_the_article_are_skipped() -> None:
    html = page(
        "<article><h1>Bridge to close</h1>"
        '<p class="byline">By Jane Doe, City Reporter</p>'
        "<p>Published 12.03.2024, 10:32 · Updated 11:05</p>"
        f"{ARTICLE}</article>"
    )
    lede = find_lede(html)
    assert lede.kind == "article"
    assert lede.text.startswith(FIRST)


def test_photo_captions_and_share_buttons_inside_the_article_are_skipped() -> None:
    html = page(
        "<article><h1>Bridge to close</h1>"
        '<div class="share-tools"><p>Share this article on Facebook, X, LinkedIn or by e-mail '
        "with your friends and colleagues.</p></div>"
        '<figure><img src="b.jpg"><figcaption>The harbour bridge at dusk, seen from the old '
        "customs house on the northern bank.</figcaption></figure>"
        "<p>The harbour bridge at dusk. Photo: Harbour Herald / J. Smith</p>"
        f"{ARTICLE}</article>"
    )
    assert find_lede(html).text.startswith(FIRST)


def test_comments_longer_than_the_article_do_not_become_the_lede() -> None:
    comments = "".join(
        f'<div class="comment"><p>Reader {i} wrote: I have crossed that bridge every morning '
        "for thirty years and I think the council has made a terrible mistake, frankly, and "
        "I will remember it at the next election.</p></div>"
        for i in range(12)
    )
    html = page(f'<article>{ARTICLE}</article><section id="comments">{comments}</section>')
    assert find_lede(html).text.startswith(FIRST)


def test_a_related_stories_list_does_not_become_the_lede() -> None:
    html = page(f"<main>{RELATED}<div class='story'>{ARTICLE}</div>{RELATED}</main>")
    assert find_lede(html).text.startswith(FIRST)


def test_first_paragraph_in_a_sibling_element_is_kept() -> None:
    html = page(
        f'<article><div class="block"><p>{FIRST}</p></div>'
        f'<div class="article-body"><p>{SECOND}</p><p>{THIRD}</p><p>{SECOND}</p></div></article>'
    )
    assert find_lede(html).text.startswith(FIRST)


def test_an_article_with_each_paragraph_in_its_own_wrapper_is_found() -> None:
    wrapped = "".join(
        f'<div class="section"><div class="component"><p>{text}</p></div></div>'
        for text in (FIRST, SECOND, THIRD) * 4  # a full article's worth: a few are not enough
    )
    lede = find_lede(page(f'<div itemprop="articleBody">{wrapped}</div>'))
    assert lede.kind == "article"
    assert lede.text.startswith(f"{FIRST} {SECOND[:40]}")


def test_a_marked_standfirst_is_left_out_like_main_text_extraction_does() -> None:
    """Trafilatura (and so the benchmark) mostly leave standfirsts out of the main text."""
    html = page(
        f'<article><p class="teaser">A summary of the story in one sentence, written by an '
        f'editor for the front page.</p><div class="article-body">{ARTICLE}</div></article>'
    )
    assert find_lede(html).text.startswith(FIRST)


def test_layout_classes_that_look_like_boilerplate_do_not_hide_the_article() -> None:
    html = page(
        '<div class="page has-sidebar o-section--has-ads">'
        '<article class="post category-newsletter tag-social-media">'
        f"{ARTICLE}</article></div>"
    )
    lede = find_lede(html)
    assert lede.kind == "article"
    assert lede.text.startswith(FIRST)


def test_line_breaks_separate_words() -> None:
    html = page(f"<article><p>{FIRST}<br>{SECOND}</p><p>{THIRD}</p></article>")
    assert f"{FIRST} {SECOND[:40]}" in find_lede(html, 600).text


def test_whitespace_is_normalised() -> None:
    messy = FIRST.replace(" ", " \n\t ").replace("council", "coun\u00adcil")
    html = page(f"<article><p>  {messy}  </p><p>{SECOND}\u00a0</p></article>")
    text = find_lede(html, 1000).text
    assert text == f"{FIRST} {SECOND}"


# --- length and cutting ------------------------------------------------------------------------


@pytest.mark.parametrize("max_chars", [40, 100, 299, 300])
def test_lede_is_cut_at_a_word_boundary_within_max_chars(max_chars: int) -> None:
    text = find_lede(page(f"<article>{ARTICLE}</article>"), max_chars).text
    assert len(text) <= max_chars
    assert text.endswith("…")
    kept = text.removesuffix("…")
    full = f"{FIRST} {SECOND} {THIRD}"
    assert full.startswith(kept)
    assert full[len(kept)] in " ,"  # the next character starts a new word


def test_a_short_article_is_returned_whole_without_ellipsis() -> None:
    text = find_lede(page(f"<article>{ARTICLE}</article>"), 2000).text
    assert text == f"{FIRST} {SECOND} {THIRD}"


def test_max_chars_must_be_positive() -> None:
    with pytest.raises(ValueError):
        find_lede(page(ARTICLE), 0)


# --- partial pages, as the fast path reads them ------------------------------------------------


def test_a_paragraph_cut_off_mid_stream_is_not_part_of_the_lede() -> None:
    whole = page(f"<article>{ARTICLE}</article>")
    partial = whole[: whole.index(THIRD) + 40]  # stops in the middle of the third paragraph
    lede = find_lede(partial, 1000)
    assert lede.kind == "article"
    assert lede.text == f"{FIRST} {SECOND}"


def test_a_prefix_that_ends_before_the_article_is_not_an_article() -> None:
    whole = page(
        f"{NAV}{COOKIES}<main><article>{ARTICLE}</article></main>",
        head=meta("description", "The harbour bridge will close to cars."),
    )
    partial = whole[: whole.index("<main>")]
    assert find_lede(partial) == Lede(
        "The harbour bridge will close to cars.", "meta", title="News"
    )


def test_a_prefix_cut_inside_a_tag_still_finds_the_article() -> None:
    whole = page(f"<article>{ARTICLE}<p class='x'>More text follows here</p></article>")
    partial = whole[: whole.index("class='x'") + 4]
    assert find_lede(partial).text.startswith(FIRST)


# --- fallbacks ---------------------------------------------------------------------------------


def test_description_meta_is_the_fallback_when_there_are_no_article_paragraphs() -> None:
    head = meta("description", "Plain description.") + meta(
        "og:description", "  The bridge   closes\nnext spring.  ", attr="property"
    )
    lede = find_lede(page(f"{NAV}<div>Photo gallery</div>", head=head))
    assert lede == Lede("The bridge closes next spring.", "meta", title="News")


def test_twitter_description_is_used_when_it_is_the_only_one() -> None:
    lede = find_lede(page(NAV, head=meta("twitter:description", "From the twitter card.")))
    assert lede == Lede("From the twitter card.", "meta", title="News")


def test_a_lone_short_paragraph_is_not_taken_for_an_article() -> None:
    body = "<p>Sign in to continue reading, or create a free account.</p>"
    assert find_lede(page(body)) == Lede("", "", title="News")
    lede = find_lede(page(body, head=meta("description", "What the page is about.")))
    assert lede == Lede("What the page is about.", "meta", title="News")


def test_a_cookie_banner_alone_is_not_an_article() -> None:
    assert find_lede(page(NAV + COOKIES + NEWSLETTER)).kind == ""


@pytest.mark.parametrize(
    "html",
    ["", "   \n ", "<", "<<<>>>", "\x00\x01\x02", "<html>", "<p>", "just some words", "&amp;&"],
    ids=repr,
)
def test_empty_or_garbage_input_gives_no_lede(html: str) -> None:
    assert find_lede(html) == Lede("", "")


# --- other scripts -----------------------------------------------------------------------------

JAPANESE = (
    "市議会は火曜日、旧港湾橋を来春から車両通行止めにすることを決めた。十年以上にわたり住民を二分して"
    "きた議論に終止符が打たれる。自転車利用者や商店主は決定を歓迎した。"
)


def test_japanese_article_without_spaces_is_found_and_cut_within_max_chars() -> None:
    html = page(f"<article><p>{JAPANESE}</p><p>{JAPANESE}</p></article>")
    lede = find_lede(html, 50)
    assert lede.kind == "article"
    assert len(lede.text) <= 50
    assert lede.text.endswith("…")
    assert JAPANESE.startswith(lede.text.removesuffix("…"))


def test_ruby_annotations_are_not_read_into_the_text() -> None:
    annotated = JAPANESE.replace(
        "市議会", "<ruby>市議会<rp>(</rp><rt>しぎかい</rt><rp>)</rp></ruby>"
    )
    html = page(f"<article><p>{annotated}</p><p>{JAPANESE}</p></article>")
    assert find_lede(html).text.startswith(JAPANESE[:20])


def test_cyrillic_article_is_found() -> None:
    first = (
        "Городской совет во вторник проголосовал за закрытие старого моста в гавани для "
        "автомобилей со следующей весны, завершив многолетний спор жителей."
    )
    html = page(f"{COOKIES}<article><p>{first}</p><p>{first}</p></article>")
    assert find_lede(html).text.startswith(first)


# --- properties --------------------------------------------------------------------------------

_WORDS = st.sampled_from(
    ["bridge", "council", "cookie", "the", "Straße", "橋", "мост", " ", "\n", "&amp;", "<", ">"]
)
_CLASSES = st.sampled_from(
    ["", "article-body", "cookie-banner", "related", "has-sidebar", "post-meta", "comment", "x"]
)
_TAGS = st.sampled_from(
    ["p", "div", "article", "main", "nav", "aside", "span", "a", "li", "header", "script", "rt"]
)


@st.composite
def html_documents(draw: st.DrawFn) -> str:
    """Nested, sometimes malformed, sometimes truncated HTML built from news-page parts."""

    def element(depth: int) -> str:
        tag, cls = draw(_TAGS), draw(_CLASSES)
        children = draw(st.lists(st.integers(0, 3), max_size=4 if depth < 3 else 0))
        inner = "".join(
            element(depth + 1) if kind == 0 else " ".join(draw(st.lists(_WORDS, max_size=60)))
            for kind in children
        )
        close = draw(st.sampled_from([f"</{tag}>", "", "<br>"]))
        return f'<{tag} class="{cls}">{inner}{close}'

    head = draw(st.sampled_from(["", meta("description", "A description &amp; more.")]))
    html = page("".join(element(0) for _ in range(draw(st.integers(0, 5)))), head=head)
    return html[: draw(st.integers(0, len(html)))]


def _well_formed(lede: Lede, max_chars: int) -> None:
    assert len(lede.text) <= max_chars
    assert (lede.kind == "") == (lede.text == "")
    assert lede.text == " ".join(lede.text.split())


@settings(max_examples=300, deadline=None)
@given(html=st.text(), max_chars=st.integers(1, 400))
def test_any_text_gives_a_well_formed_lede(html: str, max_chars: int) -> None:
    _well_formed(find_lede(html, max_chars), max_chars)


@settings(max_examples=300, deadline=None)
@given(html=html_documents(), max_chars=st.integers(1, 400))
def test_any_news_like_html_even_truncated_gives_a_well_formed_lede(
    html: str, max_chars: int
) -> None:
    _well_formed(find_lede(html, max_chars), max_chars)


_AROUND = [
    "<nav><a href='/'>Home</a> <a href='/world'>World</a></nav>",
    "<script>var state = {'page': 1};</script>",
    "<div class='related'><span>More stories</span></div>",
    "<header><h1>The Daily Courier</h1></header>",
    "<!-- comment --><br>",
]
# How a page may spell, or nearly spell, a paragraph's opening tag.
_P_SPELLINGS = ["<p>", "<P>", '<p class="x">', "<p\t>", "<p\n>", "<p/>", "<pre>", "<param>", "<px>"]


@st.composite
def articles_respelled(draw: st.DrawFn) -> str:
    """An article among news-page parts, each of its <p> tags spelled one of the ways above."""
    article = re.sub("<p>", lambda _: draw(st.sampled_from(_P_SPELLINGS)), ARTICLE)
    before, after = (draw(st.lists(st.sampled_from(_AROUND), max_size=4)) for _ in range(2))
    html = page("".join(before) + f"<article>{article}</article>" + "".join(after))
    return html[: draw(st.integers(0, len(html)))]


@settings(max_examples=300, deadline=None)
@given(html=articles_respelled())
def test_html_that_could_not_hold_an_article_never_gives_one(html: str) -> None:
    # The fast pass skips parsing a prefix that `could_hold_article` rules out: it must never
    # rule out a page whose lede is an article.
    if not could_hold_article(html.encode()):
        assert find_lede(html).kind != "article"


def test_a_page_whose_paragraphs_come_late_cannot_hold_an_article_in_its_prefix() -> None:
    whole = page("<script>" + "var state = 1;" * 5000 + "</script>" + ARTICLE).encode()
    prefix = whole[: whole.index(b"<p>")]
    assert could_hold_article(whole) and not could_hold_article(prefix)
