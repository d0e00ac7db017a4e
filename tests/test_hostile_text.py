"""Terminal escapes and bidi controls planted in headlines, ledes and errors reach no reader.

One collection from the local news web and a scripted DuckDuckGo, whose titles carry a screen
clear (ESC[2J), an OSC 52 clipboard write, a spoofed OSC 8 hyperlink, a one-character C1 CSI
(U+009B) and bidi overrides (U+202E and kin); then every command that prints to a terminal, and
everything publishing renders (archive pages, story pages, Atom feeds, the search index, the
email), is checked: the text is there, the controls are not.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email import message_from_bytes
from email.policy import default as default_policy
from pathlib import Path

import pytest

from tests import configs
from tests.configs import write_config
from tests.conftest import CliResult, run_cli
from tests.fake_ddgs import write_script
from tests.newsweb import Article, NewsWeb, Route, render_article, render_rss

pytestmark = pytest.mark.slow

CLEAR = "\x1b[2J"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"  # OSC 52: "rm -rf ~" into the clipboard
LINK = "\x1b]8;;https://evil.example/login\x1b\\"  # OSC 8: what follows links elsewhere
LINK_END = "\x1b]8;;\x1b\\"
CSI = "\x9b31m"  # C1 CSI: ESC[ in one character
RLO, PDF, RLI, PDI, RLM = "\u202e", "\u202c", "\u2067", "\u2069", "\u200f"

# What must not reach a reader: C0 controls but tab and newline, DEL, C1, the bidi controls.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Written as escapes, they come back as themselves in JavaScript (the search index).
UNSAFE_ESCAPED = re.compile(
    r"\\u(00[01][0-9a-f]|007f|00[89][0-9a-f]|061c|200[ef]|202[a-e]|206[6-9])", re.IGNORECASE
)
SGR = re.compile(r"\x1b\[[0-9;]*m")  # rich's own colours, on a terminal


def assert_inert(text: str, *, terminal: bool = False) -> None:
    """No control or bidi character in `text`; on a terminal, only rich's colour codes."""
    if terminal:
        text = SGR.sub("", text)
    found = sorted({f"U+{ord(c):04X}" for c in UNSAFE.findall(text)})
    assert not found, f"{found} in {text[:2000]!r}"


def hostile_articles(token: str) -> tuple[Article, Article]:
    """Two articles of today: one for DuckDuckGo (any character), one for a feed (only what XML
    can carry: C1 and bidi controls)."""
    now = datetime.now(UTC).replace(microsecond=0)
    harbour = Article(
        slug=f"harbour-{token}",
        category="technology",
        title=f"Harbour cranes {CLEAR}return to work {CLIPBOARD}after the strike",
        lede=(
            f"Dock workers {LINK}returned{LINK_END} to the harbour cranes on Monday {CSI}after a "
            f"{RLO}two-week{PDF} strike over night shifts, the port authority said in a statement "
            "published before the first ships were unloaded."
        ),
        paragraphs=(
            "The union said the agreement guarantees two rest days after every block of night "
            f"shifts {CLEAR}and a review of crane automation plans {CSI}within a year.",
            "Shipping lines had diverted eleven vessels to other ports during the stoppage, and "
            "the authority expects the backlog of containers to clear by the end of the week.",
        ),
        description=f"Cranes {CSI}move again {RLO}at the harbour{PDF}.",
        published=now,
    )
    reservoir = Article(
        slug=f"reservoir-{token}",
        category="technology",
        # No C1 in a feed's title: feedparser reads U+0080-U+009F there as Windows-1252.
        title=f"Reservoir levels {RLO}rise{PDF} again after {RLI}spring{PDI} rains{RLM}",
        lede=(
            f"The regional water board said on Tuesday that its reservoirs {CSI}were at "
            f"{RLO}eighty{PDF} per cent of capacity after the wettest April in a decade, lifting "
            "the hosepipe ban that had been in force since the previous summer."
        ),
        paragraphs=(
            "Engineers will use the spring to repair a leaking spillway at the largest of the "
            "three dams, a job postponed twice while water levels were too low to close it.",
        ),
        description=f"Reservoirs {RLI}refill{PDI} after a wet spring.",
        published=now,
    )
    return harbour, reservoir


@dataclass
class Hostile:
    """A work folder whose store holds the hostile collection, and what its jobs printed."""

    folder: Path
    script: Path
    harbour_url: str
    reports: dict[str, CliResult]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory, threaded_news_web: NewsWeb) -> Hostile:
    web = threaded_news_web
    folder = tmp_path_factory.mktemp("hostile")
    token = hashlib.sha1(str(folder).encode()).hexdigest()[:10]
    harbour, reservoir = hostile_articles(token)
    for article in (harbour, reservoir):
        web.add(Route(article.path, render_article(article)))
    feed = f"/feeds/hostile-{token}.rss"
    web.add(
        Route(
            feed,
            render_rss(web.url(""), "technology", [reservoir]),
            content_type="application/rss+xml; charset=utf-8",
        )
    )
    write_config(folder, sources={"feeds": [configs.feed(web.url(feed))]})
    row = {
        "date": datetime.now(UTC).isoformat(),
        "title": harbour.title
        + f" {LINK}(read more){LINK_END}",  # DuckDuckGo's title differs a little
        "body": harbour.description,
        "url": web.url(harbour.path),
        "image": None,
        "source": f"Wire {CSI}Service{RLO}",
    }
    script = write_script(
        folder / "ddgs.json",
        news={
            "technology news": [row],
            # This query fails with the search engine's own (hostile) message: status shows it.
            "world news": f"{CLEAR}server says {CLIPBOARD}no {RLO}thanks{PDF}{CSI}",
        },
        text={"harbour cranes": [{**row, "href": row["url"]}]},
    )
    assert run_cli("subscribers", "add", "reader@example.org", cwd=folder).code == 0
    reports = {
        # Logs go to the terminal too (stderr): this one logs each failed source.
        "collect": run_cli("--log-level", "info", "collect", cwd=folder, ddgs_script=script),
        "deepen": run_cli("deepen", cwd=folder),
        "publish": run_cli("publish", cwd=folder),
    }
    for name, result in reports.items():
        assert result.code == 0, (name, result.stdout, result.stderr)
    return Hostile(folder, script, web.url(harbour.path), reports)


def test_the_planted_text_is_in_the_store(hostile: Hostile) -> None:
    """The other tests are not vacuous: the controls were collected and stored as they came."""
    out = run_cli("news", "technology", "--json", cwd=hostile.folder)
    items = {item["title"][:9]: item for item in json.loads(out.stdout)}
    harbour, reservoir = items["Harbour c"], items["Reservoir"]
    assert CLEAR in harbour["title"] and CLIPBOARD in harbour["title"] and LINK in harbour["title"]
    assert CSI in harbour["source"] and CSI in harbour["full_content"]
    assert RLO in reservoir["title"] and RLI in reservoir["title"]


@pytest.mark.parametrize("job", ["collect", "deepen", "publish"])
def test_job_reports_show_no_terminal_controls(hostile: Hostile, job: str) -> None:
    result = hostile.reports[job]
    assert_inert(result.stdout)
    assert_inert(result.stderr)
    if job == "collect":  # the failing source's message is shown, without its controls
        assert "no thanks" in result.stdout and "no thanks" in result.stderr


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["news", "technology"], ["Harbour", "Reservoir", "strike", "Service"]),
        (["stories"], ["Harbour", "Reservoir", "rains"]),
        (["search", "harbour", "cranes"], ["Harbour", "cranes", "strike"]),
        (["query", "harbour", "cranes", "--local"], ["Harbour", "cranes"]),
        (["query", "harbour", "cranes", "--live"], ["Harbour", "cranes", "Dock"]),
        (["status"], ["no thanks", "ddg:news:world"]),
        (["deliveries"], ["reader@example.org", "sent"]),
        (["extract", "HARBOUR"], ["Dock workers", "returned", "two-week"]),
    ],
    ids=[
        "news",
        "stories",
        "search",
        "query-local",
        "query-live",
        "status",
        "deliveries",
        "extract",
    ],
)
def test_terminal_output_keeps_the_text_and_drops_the_controls(
    hostile: Hostile, args: list[str], shown: list[str]
) -> None:
    args = [hostile.harbour_url if a == "HARBOUR" else a for a in args]
    # FORCE_COLOR: rich writes for a terminal, its colour codes included, as a user sees it.
    result = run_cli(
        *args, cwd=hostile.folder, ddgs_script=hostile.script, env={"FORCE_COLOR": "1"}
    )
    assert result.code == 0, result.stderr
    assert_inert(result.stdout, terminal=True)
    assert_inert(result.stderr)
    plain = SGR.sub("", result.stdout)
    for text in shown:
        assert text in plain, (text, plain[:3000])


def test_json_output_keeps_the_data_but_escapes_what_a_terminal_would_act_on(
    hostile: Hostile,
) -> None:
    out = run_cli("news", "technology", "--json", cwd=hostile.folder)
    assert_inert(out.stdout)
    harbour = next(i for i in json.loads(out.stdout) if i["title"].startswith("Harbour"))
    assert CLEAR in harbour["title"] and RLO in harbour["source"]  # the data, exactly


def test_errors_on_stderr_show_no_terminal_controls(hostile: Hostile, tmp_path: Path) -> None:
    (tmp_path / "digest.toml").write_text('[sources]\ncategories = ["world"]\nddg_retries = 0\n')
    result = run_cli("news", "world", cwd=tmp_path, ddgs_script=hostile.script)
    assert result.code == 1
    assert "no thanks" in result.stderr
    assert_inert(result.stderr)


def rendered_files(hostile: Hostile) -> dict[str, str]:
    """Every page, feed and script of the archive, and both parts of every email, as text."""
    site = hostile.folder / "site"
    files = {
        p.relative_to(site).as_posix(): p.read_text("utf-8")
        for p in sorted(site.rglob("*"))
        if p.suffix in (".html", ".xml", ".js") and p.is_file()
    }
    for eml in sorted((hostile.folder / "outbox").glob("*.eml")):
        message = message_from_bytes(eml.read_bytes(), policy=default_policy)
        files[f"{eml.name} subject"] = str(message["Subject"])
        for kind in ("plain", "html"):
            part = message.get_body((kind,))
            assert part is not None
            files[f"{eml.name} {kind}"] = part.get_content()
    return files


RESERVOIR_CLEAN = "Reservoir levels rise again after spring rains"


def test_archive_pages_feeds_search_index_and_email_carry_no_controls(hostile: Hostile) -> None:
    files = rendered_files(hostile)
    kinds = {
        "story page": [n for n in files if n.startswith("20") and "/stories/" in n],
        "edition page": [n for n in files if n.startswith("20") and n.endswith("index.html")],
        "atom feed": [n for n in files if n.endswith(".xml")],
        "search index": ["search-index.js"],
        "email": [n for n in files if ".eml " in n],
    }
    for kind, names in kinds.items():
        assert names, kind
        shown = [n for n in names if RESERVOIR_CLEAN in files[n]]
        assert shown, f"no {kind} shows the reservoir title, cleaned"
    for name, text in files.items():
        assert_inert(text)
        if name.endswith(".js"):
            assert not UNSAFE_ESCAPED.search(text), name
    # Only the control characters go: what follows an ESC is text, and shows what was tried.
    harbour = [n for n in kinds["story page"] if "Harbour cranes [2Jreturn to work" in files[n]]
    assert harbour, "the harbour story has a page"
