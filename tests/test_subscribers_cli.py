"""`digest subscribers add/set/list --json` with every preference, as a user types them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.configs import write_config
from tests.conftest import run_cli

pytestmark = pytest.mark.slow

HOOK = "json://hooks.example.org/digest"
NTFY = "ntfy://{env:NTFY_TOKEN}@ntfy.example.org/news"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return write_config(tmp_path, schedule={"timezone": "Europe/Berlin"})


def listed(workdir: Path) -> list[dict]:
    result = run_cli("subscribers", "list", "--json", cwd=workdir)
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def test_add_takes_every_preference_and_list_json_shows_them_all(workdir: Path) -> None:
    result = run_cli(
        "subscribers", "add", "Reader@Example.org",
        "--categories", "world,technology",
        "--timezone", "America/New_York",
        "--send-at", "6:30",
        "--include", 'interest rates, "Bank of England", Fed',
        "--exclude", "crypto",
        "--max-stories", "3",
        "--language", "DE",
        "--channel", HOOK,
        "--channel", NTFY,
        cwd=workdir,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert "reader@example.org: world, technology (America/New_York, at 06:30)" in result.stdout
    assert "include: interest rates, Bank of England, Fed" in result.stdout
    (sub,) = listed(workdir)
    assert sub == {
        "email": "reader@example.org",
        "categories": ["world", "technology"],
        "timezone": "America/New_York",
        "send_at": "06:30",
        "include": ["interest rates", "Bank of England", "Fed"],
        "exclude": ["crypto"],
        "max_stories": 3,
        "language": "de",
        "email_digest": True,
        "channels": [
            {"url": HOOK, "key": sub["channels"][0]["key"]},
            {"url": NTFY, "key": sub["channels"][1]["key"]},
        ],
    }
    assert sub["channels"][0]["key"].startswith("json:")
    assert sub["channels"][1]["key"].startswith("ntfy:")


def test_set_changes_only_what_it_is_given(workdir: Path) -> None:
    assert run_cli("subscribers", "add", "r@example.org", "--channel", HOOK, cwd=workdir).code == 0
    result = run_cli(
        "subscribers", "set", "r@example.org", "--send-at", "18:00", "--exclude", "football",
        "--channel", NTFY, "--no-email", cwd=workdir,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    (sub,) = listed(workdir)
    assert (sub["timezone"], sub["send_at"], sub["exclude"]) == (
        "Europe/Berlin",
        "18:00",
        ["football"],
    )
    assert [c["url"] for c in sub["channels"]] == [HOOK, NTFY]  # --channel adds
    assert sub["email_digest"] is False and sub["categories"] == []

    reset = run_cli(
        "subscribers", "set", "r@example.org", "--send-at", "", "--exclude", "", "--no-channels",
        "--channel", NTFY, "--email", "--max-stories", "0", cwd=workdir,
    )  # fmt: skip
    assert reset.code == 0, reset.stderr
    (sub,) = listed(workdir)
    assert (sub["send_at"], sub["exclude"], sub["max_stories"]) == (None, [], None)
    assert [c["url"] for c in sub["channels"]] == [NTFY] and sub["email_digest"] is True


def test_adding_an_existing_subscriber_is_refused_pointing_to_set(workdir: Path) -> None:
    first = run_cli(
        "subscribers", "add", "r@example.org", "--categories", "world", "--timezone", "Asia/Tokyo",
        "--include", "fed", "--channel", HOOK, cwd=workdir,
    )  # fmt: skip
    assert first.code == 0, first.stderr
    before = listed(workdir)

    again = run_cli("subscribers", "add", "R@example.org", cwd=workdir)

    assert again.code == 1
    (line,) = again.stderr.splitlines()
    assert line.startswith("digest: error: r@example.org is subscribed already, nothing changed")
    assert "`digest subscribers set r@example.org --categories ..." in line
    # Their categories and time zone are not reset to the defaults, nor anything else.
    assert listed(workdir) == before
    assert (before[0]["categories"], before[0]["timezone"]) == (["world"], "Asia/Tokyo")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--send-at", "25:00"], "not a time of day: '25:00'"),
        (["--language", "xx"], "unknown language 'xx'"),
        (["--channel", "nosuch://x"], "Apprise knows no service nosuch://"),
        (["--channel", "tgram://bad"], "Apprise cannot use"),
        (["--categories", "gardening"], "unknown category 'gardening'"),
        (["--timezone", "Mars/Olympus"], "unknown time zone 'Mars/Olympus'"),
        (["--max-stories", "500"], "500 is not in the range 0<=x<=100"),
    ],
)
def test_a_bad_preference_is_one_line_and_nothing_is_written(
    workdir: Path, args: list[str], message: str
) -> None:
    assert run_cli("db", "upgrade", cwd=workdir).code == 0
    result = run_cli("subscribers", "add", "r@example.org", *args, cwd=workdir)
    assert result.code != 0
    assert message in result.stderr and "Traceback" not in result.stderr
    assert listed(workdir) == []


def test_set_of_an_unknown_subscriber_says_so(workdir: Path) -> None:
    assert run_cli("db", "upgrade", cwd=workdir).code == 0
    result = run_cli("subscribers", "set", "nobody@example.org", "--send-at", "07:00", cwd=workdir)
    assert result.code == 1
    assert result.stderr.strip() == (
        "digest: error: no subscriber 'nobody@example.org' (add them with `digest subscribers add`)"
    )


def test_the_plain_list_shows_each_subscribers_time_and_channels(workdir: Path) -> None:
    run_cli(
        "subscribers", "add", "a@example.org", "--send-at", "06:00", "--channel", HOOK, cwd=workdir
    )
    run_cli(
        "subscribers",
        "add",
        "b@example.org",
        "--no-email",
        "--channel",
        NTFY,
        "--include",
        "x",
        cwd=workdir,
    )
    lines = run_cli("subscribers", "list", cwd=workdir).stdout.splitlines()
    assert lines == [
        "a@example.org\tall\tEurope/Berlin 06:00\temail+json",
        "b@example.org\tall\tEurope/Berlin\tntfy rules",
    ]
