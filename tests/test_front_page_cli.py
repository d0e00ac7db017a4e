"""The front page benchmark's CLI part never runs the commands on the host's network."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench import front_page_cli
from bench.front_page import Row
from bench.front_page_cli import NotIsolated, bing_news_feed, inside, namespace_command
from digest.fetch.feed_parser import parse_feed


def test_without_unshare_the_bench_says_so_and_runs_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(NotIsolated, match=r"needs `unshare`.*not run"):
        namespace_command(["--dataset", "x.csv"])


def test_outside_a_namespace_the_commands_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ran: list[object] = []
    monkeypatch.setattr(front_page_cli, "only_loopback", lambda: ["eth0"])
    monkeypatch.setattr(front_page_cli, "run_commands", lambda *args: ran.append(args))
    with pytest.raises(NotIsolated, match=r"besides loopback \(eth0\)"):
        inside(["--dataset", str(tmp_path / "x.csv"), "--out", str(tmp_path / "out.json")])
    assert ran == []
    assert not (tmp_path / "out.json").exists()


def test_the_bing_shaped_feed_reads_as_the_publishers_articles() -> None:
    row = Row(
        id="7",
        title="Fed holds rates",
        url="http://www.latimes.com/business/fed-20140310.story",
        publisher="Los Angeles Times",
        category="business",
        story="s1",
        seen=datetime(2014, 3, 10, 17, 35, tzinfo=UTC),
    )
    feed = bing_news_feed("business", [row])
    (headline,) = parse_feed(feed, feed_url="http://127.0.0.1/b.rss", category="business").headlines
    assert (headline.title, headline.source, headline.url) == (row.title, row.publisher, row.url)
    assert headline.published == row.seen
