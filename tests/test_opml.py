"""OPML: the exports of real readers, hostile files, and what an import decides.

The files in tests/opml/ follow each reader's own export code and documentation:
- feedly.opml: Feedly's "My subscriptions in feedly Cloud" (OPML 1.0; folders with text and
  title; feeds with type="rss", text, title, xmlUrl, htmlUrl), as SparkleMuffin's OPML notes
  show a real export;
- miniflux.opml: Miniflux v2's serializer (internal/reader/opml): OPML 2.0, the miniflux
  namespace for its own settings, a folder outline with text only, feeds with title, text,
  type="rss", xmlUrl, htmlUrl, description, its default category "All";
- freshrss.opml: FreshRSS's export view (app/views/helpers/export/opml.phtml through lib_opml):
  OPML 2.0, folders with text only, feeds with text, type (rss, or HTML+XPath for pages it
  scrapes itself), xmlUrl, htmlUrl, description and frss: attributes.
"""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from digest.commands.feeds_manage import plan_import
from digest.errors import OpmlError
from digest.sources.opml import (
    MAX_OPML_BYTES,
    MAX_OPML_NESTING,
    OpmlDocument,
    OpmlFeed,
    parse_opml,
    render_opml,
)

HERE = Path(__file__).resolve().parent / "opml"
CATEGORIES = ("technology", "world")
NOW = datetime(2025, 12, 1, 9, 30, tzinfo=UTC)


def read(name: str) -> OpmlDocument:
    return parse_opml((HERE / name).read_bytes(), source=name)


def plan(doc: OpmlDocument, *, existing: set[str] | None = None, fallback: str | None = None):
    return plan_import(
        doc, categories=CATEGORIES, existing=existing or set(), fallback=fallback, now=NOW
    )


def placed(report) -> dict[str, str]:
    return {f.url: f.category for f in report.imported}


# --- the readers' exports ----------------------------------------------------------------------


def test_feedly_export_files_each_feed_under_its_folder() -> None:
    doc = read("feedly.opml")
    assert doc.title == "My subscriptions in feedly Cloud"
    assert [(f.title, f.folders) for f in doc.feeds] == [
        ("Ars Technica", ("Technology",)),
        ("Python Insider", ("Technology",)),
        ("BBC News - World", ("World news",)),
        ("Al Jazeera – Breaking News", ("WORLD",)),
        ("Serious Eats", ("Cooking",)),
    ]
    assert doc.feeds[0].site_url == "https://arstechnica.com"

    report = plan(doc)
    assert placed(report) == {
        "https://feeds.arstechnica.com/arstechnica/index": "technology",
        "https://feeds.feedburner.com/PythonInsider": "technology",
        "https://www.aljazeera.com/xml/rss/all.xml": "world",  # "WORLD": case is ignored
    }
    assert report.imported[0].name == "Ars Technica"
    assert report.imported[0].origin == "opml"
    assert report.unplaced == {"World news": 1, "Cooking": 1}
    assert [why for _url, why in report.skipped] == [
        "folder 'World news' is no configured category",
        "folder 'Cooking' is no configured category",
    ]


def test_miniflux_export_with_its_own_attributes_and_a_twin_url() -> None:
    doc = read("miniflux.opml")
    assert doc.title == "Miniflux"
    lwn = doc.feeds[1]
    assert (lwn.title, lwn.url, lwn.kind, lwn.folders) == (
        "LWN.net",
        "https://lwn.net/headlines/rss",
        "rss",
        ("technology",),
    )

    report = plan(doc, fallback="world")
    # "All" is no configured category: --category world takes it in.
    assert placed(report) == {
        "https://hnrss.org/frontpage": "world",
        "https://lwn.net/headlines/rss": "technology",
        "https://www.theverge.com/rss/index.xml?utm_source=miniflux": "technology",
        "https://rss.dw.com/rdf/rss-en-all": "world",
    }
    # The same feed again with another host case and the default port is a duplicate.
    assert report.duplicates == ("https://LWN.net:443/headlines/rss",)
    assert report.skipped == () and report.unplaced == {}


def test_freshrss_export_skips_the_pages_it_scrapes_itself() -> None:
    doc = read("freshrss.opml")
    report = plan(doc)
    assert placed(report) == {
        "https://krebsonsecurity.com/feed/": "technology",  # " Technology ": spaces ignored
        "https://www.reutersagency.com/feed/?best-topics=world": "world",
    }
    skipped = dict(report.skipped)
    assert skipped["https://example.org/news"] == "type 'HTML+XPath' is not an RSS or Atom feed"
    assert report.unplaced == {"Uncategorized": 1, "Tech & Science": 1}


def test_feeds_already_there_or_twice_in_the_file_are_duplicates() -> None:
    doc = read("feedly.opml")
    twice = OpmlDocument("x", (*doc.feeds, doc.feeds[0]))
    report = plan(twice, existing={"https://feeds.feedburner.com/PythonInsider"})
    assert report.duplicates == (
        "https://feeds.feedburner.com/PythonInsider",
        "https://feeds.arstechnica.com/arstechnica/index",
    )
    assert len(report.imported) == 2


def test_the_nearest_folder_that_names_a_category_wins() -> None:
    data = b"""<?xml version="1.0"?>
<opml version="1.1" xmlns:rssowl="http://www.rssowl.org"><head><title>RSSOwl</title></head><body>
  <outline text="My Feeds" rssowl:isSet="true">
    <outline text="World">
      <outline text="Europe">
        <outline type="rss" title="Nested" xmlUrl="https://n.example/rss"/>
      </outline>
      <outline text="Technology">
        <outline type="rss" title="Inner" xmlUrl="https://i.example/rss"/>
      </outline>
    </outline>
  </outline>
  <outline type="rss" text="By attribute" xmlUrl="https://c.example/rss"
           category="/News/Technology,/Misc"/>
  <outline type="rss" text="At the top" xmlUrl="https://t.example/rss"/>
</body></opml>"""
    doc = parse_opml(data)
    assert doc.feeds[0].folders == ("My Feeds", "World", "Europe")
    assert doc.feeds[0].title == "Nested"  # title stands in for a missing text
    assert doc.feeds[2].categories == ("News", "Technology", "Misc")
    report = plan(doc)
    assert placed(report) == {
        "https://n.example/rss": "world",
        "https://i.example/rss": "technology",
        "https://c.example/rss": "technology",
    }
    assert report.skipped == (("https://t.example/rss", "in no folder"),)
    assert report.unplaced == {"": 1}


def test_urls_that_are_not_http_are_skipped_with_the_reason() -> None:
    data = b"""<opml version="2.0"><body><outline text="world">
  <outline text="a" xmlUrl="javascript:alert(1)"/>
  <outline text="b" xmlUrl="feed.xml"/>
  <outline text="c" xmlUrl="  https://ok.example/rss  "/>
  <outline text="d" XMLURL="https://upper.example/rss"/>
  <outline text="no url" htmlUrl="https://site.example/"/>
</outline></body></opml>"""
    report = plan(parse_opml(data))
    assert placed(report) == {
        "https://ok.example/rss": "world",
        "https://upper.example/rss": "world",
    }
    assert [u for u, _ in report.skipped] == ["javascript:alert(1)", "feed.xml"]
    assert "only http and https" in report.skipped[0][1]


def test_an_export_reads_back_as_the_same_feeds() -> None:
    feeds = [
        OpmlFeed("https://a.example/rss?x=1&y=2", "A & B <news>", "https://a.example/"),
        OpmlFeed("https://b.example/atom", ""),
    ]
    data = render_opml([("technology", feeds), ("world", feeds[:1])], title="t", created=NOW)
    back = parse_opml(data)
    assert [(f.url, f.title, f.site_url, f.folders, f.kind) for f in back.feeds] == [
        (
            "https://a.example/rss?x=1&y=2",
            "A & B <news>",
            "https://a.example/",
            ("technology",),
            "rss",
        ),
        ("https://b.example/atom", "https://b.example/atom", None, ("technology",), "rss"),
        ("https://a.example/rss?x=1&y=2", "A & B <news>", "https://a.example/", ("world",), "rss"),
    ]
    assert b"<dateCreated>Mon, 01 Dec 2025 09:30:00 GMT</dateCreated>" in data


def test_an_export_holds_no_terminal_controls_but_means_the_same() -> None:
    title = "Evil\x1b]52;c;aGk=\x07 \x9b2J \u202eliame\u202c"
    data = render_opml(
        [("world", [OpmlFeed("https://e.example/rss", title)])], title="t", created=NOW
    )
    assert not any(c in data.decode() for c in "\x1b\x07\x9b\u202e\u202c")
    assert parse_opml(data).feeds[0].title == "Evil]52;c;aGk= \x9b2J \u202eliame\u202c"


# --- files that are refused whole ----------------------------------------------------------------

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE opml [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<opml version="2.0"><body><outline text="&lol9;" xmlUrl="https://a.example/rss"/></body></opml>
"""
FILE_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE opml [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<opml version="2.0"><body><outline text="&secret;" xmlUrl="https://a.example/rss"/></body></opml>
"""
BROKEN = b"""<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0"><head><title>Half an export</title></head><body>
<outline text="world"><outline text="A" xmlUrl="https://a.example/rss"/>
<outline text="B" xmlUrl="https://b.example/rss?a=1&b=2"/>
"""


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (BROKEN, "is not well-formed XML: not well-formed (invalid token): line 4"),
        (BILLION_LAUGHS, "declares an entity ('lol')"),
        (FILE_ENTITY, "declares an external entity ('secret')"),
        (b"", "is not well-formed XML: no element found"),
        (b"\xff\xfe\x00garbage", "is not well-formed XML"),
        (b'<?xml version="1.0" encoding="x-martian"?><opml/>', "cannot be decoded"),
        (b"<rss version='2.0'><channel/></rss>", "is not an OPML file: its root element is <rss>"),
        (b"<opml version='2.0'><head/></opml>", "is not an OPML file: it has no <body>"),
        (b"<opml><body><outline text='&nbsp;'/></body></opml>", "undefined entity"),
    ],
    ids=[
        "broken",
        "billion-laughs",
        "file-entity",
        "empty",
        "binary",
        "encoding",
        "rss",
        "no-body",
        "html-entity",
    ],
)
def test_a_file_that_cannot_be_read_safely_is_one_clear_error(data: bytes, reason: str) -> None:
    with pytest.raises(OpmlError) as caught:
        parse_opml(data, source="subs.opml")
    message = str(caught.value)
    assert message.startswith("subs.opml ")
    assert reason in message
    assert "\n" not in message


def test_a_file_over_the_limit_is_refused_before_it_is_parsed() -> None:
    with pytest.raises(OpmlError, match="over the 10 MB limit"):
        parse_opml(b" " * (MAX_OPML_BYTES + 1))


async def test_nothing_is_fetched_for_a_dtd_or_an_external_entity(news_web) -> None:
    dtd = news_web.url("/feeds/subscriptions.dtd")
    with_dtd = f"""<?xml version="1.0"?>
<!DOCTYPE opml SYSTEM "{dtd}">
<opml version="2.0"><body><outline text="world">
<outline text="A" xmlUrl="https://a.example/rss"/></outline></body></opml>""".encode()
    assert [f.url for f in parse_opml(with_dtd).feeds] == ["https://a.example/rss"]

    parameter_entity = f"""<?xml version="1.0"?>
<!DOCTYPE opml [<!ENTITY % remote SYSTEM "{dtd}"> %remote;]>
<opml version="2.0"><body/></opml>""".encode()
    with pytest.raises(OpmlError, match="declares an external entity"):
        parse_opml(parameter_entity)
    assert news_web.total_hits == 0


def nested(depth: int, *, feeds_on_the_way: bool = False) -> bytes:
    """`depth` folders, one in the other, around a feed (and one feed in each, if asked)."""
    on_the_way = b'<outline text="w" xmlUrl="https://w.example/rss"/>' if feeds_on_the_way else b""
    return (
        b"<opml><head><title>Deep</title></head><body>"
        + (b'<outline text="world">' + on_the_way) * depth
        + b'<outline text="deep" xmlUrl="https://deep.example/rss"/>'
        + b"</outline>" * depth
        + b"</body></opml>"
    )


def test_folders_nested_to_the_limit_are_read() -> None:
    doc = parse_opml(nested(MAX_OPML_NESTING, feeds_on_the_way=True))
    assert doc.title == "Deep"
    assert [len(f.folders) for f in doc.feeds] == [
        *range(1, MAX_OPML_NESTING + 1),
        MAX_OPML_NESTING,
    ]
    assert doc.feeds[-1].url == "https://deep.example/rss"


@pytest.mark.parametrize("depth", [MAX_OPML_NESTING + 1, 300_000])
def test_folders_nested_past_the_limit_are_one_clear_error(depth: int) -> None:
    # 300,000 levels (8.4 MB) once took 135 s and 293 MB: the walk copied every folder path.
    with pytest.raises(OpmlError) as caught:
        parse_opml(nested(depth), source="deep.opml")
    assert str(caught.value) == (
        f"deep.opml is refused: its outlines nest more than {MAX_OPML_NESTING} deep "
        "(a reader's folders nest two or three)"
    )


def test_deep_elements_that_are_not_folders_are_skipped() -> None:
    junk = b"<x>" * 200_000 + b"</x>" * 200_000
    data = (
        b"<opml><body>" + junk + b'<outline text="world"><outline xmlUrl="https://a.example/rss">'
    )
    data += junk + b"</outline></outline></body></opml>"
    assert [(f.url, f.folders) for f in parse_opml(data).feeds] == [
        ("https://a.example/rss", ("world",))
    ]


# --- any input -----------------------------------------------------------------------------------

_FRAGMENTS = st.sampled_from(
    [
        "<opml version='2.0'>",
        "<opml>",
        "</opml>",
        "<head><title>t</title></head>",
        "<body>",
        "</body>",
        "<outline text='world'>",
        "<outline text='Technology' title='x'>",
        "</outline>",
        "<outline type='rss' text='a' xmlUrl='https://a.example/rss'/>",
        "<outline xmlUrl='javascript:x' category='/world,/a/b'/>",
        "<outline XMLURL='http://127.0.0.1:9/x' type='HTML+XPath'/>",
        "<!DOCTYPE opml [<!ENTITY e 'x'>]>",
        "<!DOCTYPE opml SYSTEM 'http://127.0.0.1:9/x.dtd'>",
        "<!DOCTYPE opml [<!ENTITY % p SYSTEM 'http://127.0.0.1:9/p'> %p;]>",
        "&e;",
        "&amp;",
        "<![CDATA[x]]>",
        "<!-- c -->",
        "<?pi x?>",
        "<?xml version='1.0' encoding='utf-16'?>",
        "\x00",
        "é",
    ]
)


_NAME = st.one_of(st.sampled_from(["World", " technology ", "Cooking", ""]), st.text(max_size=12))
_URL = st.one_of(
    st.sampled_from(["https://a.example/rss", "http://127.0.0.1:9/feed", "ftp://x/", "feed.xml"]),
    st.text(max_size=30),
)
_FEED_OUTLINE = st.builds(
    lambda name, url, kind: (
        f"<outline text={quoteattr(name)} xmlUrl={quoteattr(url)} type={quoteattr(kind)}/>"
    ),
    _NAME,
    _URL,
    st.sampled_from(["rss", "atom", "HTML+XPath", ""]),
)
_OUTLINES = st.recursive(
    _FEED_OUTLINE,
    lambda inner: st.builds(
        lambda name, kids: f"<outline text={quoteattr(name)}>{''.join(kids)}</outline>",
        _NAME,
        st.lists(inner, max_size=4),
    ),
    max_leaves=20,
)
# Well-formed OPML most of the time (a name with a character XML cannot hold breaks it).
_DOCUMENTS = st.builds(
    lambda prolog, outlines: f"{prolog}<opml version='2.0'><body>{''.join(outlines)}</body></opml>",
    st.sampled_from(["", "<?xml version='1.0'?>", "<!DOCTYPE opml SYSTEM 'http://127.0.0.1:9/d'>"]),
    st.lists(_OUTLINES, max_size=5),
).map(lambda text: text.encode("utf-8", "surrogatepass"))


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the OPML parser tried to connect somewhere")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.binary(max_size=2000),
        st.lists(st.one_of(_FRAGMENTS, st.text(max_size=20)), max_size=30).map(
            lambda parts: "".join(parts).encode("utf-8", "surrogatepass")
        ),
        _DOCUMENTS,
    )
)
def test_any_input_is_a_document_or_an_opml_error_and_nothing_is_fetched(
    no_network: None, data: bytes
) -> None:
    try:
        doc = parse_opml(data)
    except OpmlError as err:
        assert str(err) and "\n" not in str(err)
        return
    for feed in doc.feeds:
        assert feed.url and feed.url == feed.url.strip()
    plan(doc, fallback="world")  # and the import's decisions take whatever it gave


@settings(max_examples=200)
@given(st.text(max_size=60), st.text(max_size=60))
def test_any_name_survives_an_export(title: str, category: str) -> None:
    data = render_opml(
        [(category, [OpmlFeed("https://a.example/rss", title)])], title=title, created=NOW
    )
    (feed,) = parse_opml(data).feeds
    assert feed.url == "https://a.example/rss"
    assert feed.title  # the URL stands in for a name that was nothing but spaces or controls
