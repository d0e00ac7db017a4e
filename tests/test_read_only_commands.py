"""Commands that only read never make a database: run in the wrong folder (or before the first
`digest collect`), they say where they looked and how to start one, and exit 1. `search`
checks its category as every other command does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from digest.errors import NoDatabaseError
from digest.store import open_store
from tests import storefixtures
from tests.configs import write_config
from tests.conftest import run_cli
from tests.fake_ddgs import news_rows, write_script
from tests.newsweb import ARTICLES, NewsWeb

db_url = storefixtures.db_url

READ_ONLY = [
    ["search", "harbour"],
    ["search", "harbour", "--category", "world"],
    ["query", "--local", "harbour"],
    ["stories"],
    ["status"],
    ["deliveries"],
    ["deliveries", "--resend", "2026-01-02"],
    ["alerts"],
    ["alerts", "--resend"],
    ["alerts", "--abandon"],
    ["subscribers", "list"],
    ["subscribers", "set", "a@example.org", "--send-at", "07:00"],
    ["subscribers", "remove", "a@example.org"],
    ["feeds", "list"],
    ["feeds", "export"],
    ["feeds", "remove", "https://example.org/feed.xml"],
    ["editions", "list"],
    ["editions", "remove", "2026-01-02"],
]


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("digest: error:"), stderr
    return lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("args", READ_ONLY, ids=" ".join)
def test_a_read_only_command_in_a_folder_without_digest_makes_no_database(
    tmp_path: Path, args: list[str]
) -> None:
    result = run_cli(*args, cwd=tmp_path)

    assert result.code == 1
    line = one_error_line(result.stderr)
    assert line.startswith(f"digest: error: no database at {tmp_path / 'digest.db'} ")
    assert "no digest.toml here" in line and "--config" in line and "`digest init`" in line
    assert list(tmp_path.iterdir()) == []  # no digest.db, no -wal, no folder


@pytest.mark.slow
def test_with_a_config_the_error_names_it_and_how_to_start(tmp_path: Path) -> None:
    write_config(tmp_path, database={"url": "sqlite:///data/digest.db"})

    result = run_cli("search", "harbour", cwd=tmp_path)

    assert result.code == 1
    assert one_error_line(result.stderr) == (
        f"digest: error: no database at {tmp_path / 'data' / 'digest.db'} (database.url of "
        f"{tmp_path / 'digest.toml'}): `digest collect` starts it, `digest db upgrade` makes it "
        "empty"
    )
    assert not (tmp_path / "data").exists()
    # Once there is one, the same command reads it.
    assert run_cli("db", "upgrade", cwd=tmp_path).code == 0
    found = run_cli("search", "harbour", cwd=tmp_path)
    assert found.code == 0 and "nothing in the archive matches" in found.stdout


@pytest.mark.slow
def test_query_without_a_database_answers_from_the_web_and_makes_none(
    tmp_path: Path, threaded_news_web: NewsWeb
) -> None:
    article = ARTICLES[0]
    rows = [{"title": r["title"], "href": r["url"], "body": r["body"]} for r in
            news_rows(threaded_news_web, [article])]  # fmt: skip
    script = write_script(tmp_path / "script.json", text={"harbour": rows})
    write_config(tmp_path)

    result = run_cli("query", "harbour", "--json", cwd=tmp_path, ddgs_script=script)

    assert result.code == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["archive"] == [] and answer["live"][0]["title"] == article.title
    assert not (tmp_path / "digest.db").exists()


@pytest.mark.slow
def test_search_refuses_an_unknown_category_as_every_command_does(tmp_path: Path) -> None:
    write_config(tmp_path)
    assert run_cli("db", "upgrade", cwd=tmp_path).code == 0

    search = run_cli("search", "harbour", "--category", "tech", cwd=tmp_path)
    stories = run_cli("stories", "--category", "tech", cwd=tmp_path)

    assert search.code == stories.code == 1
    assert search.stdout == ""  # not "nothing in the archive matches"
    assert (
        one_error_line(search.stderr)
        == one_error_line(stories.stderr)
        == ("digest: error: unknown category 'tech' (configured: technology, world)")
    )
    # A configured one, in any case, is searched.
    assert run_cli("search", "harbour", "--category", "World", cwd=tmp_path).code == 0


def test_opening_to_read_makes_no_database_on_either_backend(db_url: str) -> None:
    with pytest.raises(NoDatabaseError) as missing:
        open_store(db_url, create=False)

    if db_url.startswith("sqlite"):
        path = Path(db_url.removeprefix("sqlite:///"))
        assert str(missing.value) == f"no database at {path}"
        assert not path.exists()
    else:  # the schema exists, empty: it is left so
        assert str(missing.value).endswith("holds no digest tables yet")
        assert "postgresql+psycopg://postgres@" in str(missing.value)
        engine = create_engine(db_url)
        try:
            assert inspect(engine).get_table_names() == []
        finally:
            engine.dispose()
    # Made by a command that writes, it opens to read.
    open_store(db_url).close()
    with open_store(db_url, create=False) as store:
        assert store.subscribers() == []


def test_a_sqlite_uri_is_checked_by_its_file(tmp_path: Path) -> None:
    path = tmp_path / "digest.db"
    uri = f"sqlite:///file:{path}?mode=rwc&uri=true"
    with pytest.raises(NoDatabaseError, match=f"no database at {path}$"):
        open_store(uri, create=False)
    assert not path.exists()
