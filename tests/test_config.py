"""Configuration: lookup order, strict validation with messages that name the key."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime

import pytest

from digest.config import STARTER, Config, load_config, parse_config
from digest.errors import ConfigError, UnknownCategoryError


def test_starter_file_is_valid_and_equals_the_defaults():
    starter = parse_config(tomllib.loads(STARTER))
    assert starter.model_dump() == Config().model_dump()


def test_explicit_path_beats_environment_and_local_file(tmp_path, monkeypatch):
    (tmp_path / "digest.toml").write_text('[sources]\nregion = "local"\n')
    env = tmp_path / "env.toml"
    env.write_text('[sources]\nregion = "env"\n')
    explicit = tmp_path / "explicit.toml"
    explicit.write_text('[sources]\nregion = "explicit"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DIGEST_CONFIG", str(env))
    assert load_config(explicit).sources.region == "explicit"
    assert load_config().sources.region == "env"
    monkeypatch.delenv("DIGEST_CONFIG")
    assert load_config().sources.region == "local"
    (tmp_path / "digest.toml").unlink()
    assert load_config().sources.region == "us-en"


def test_unknown_key_is_rejected_by_name():
    with pytest.raises(ConfigError, match=r"unknown key 'fetch\.allow_privat_networks'"):
        parse_config({"fetch": {"allow_privat_networks": True}})


def test_wrong_type_is_rejected_by_name():
    with pytest.raises(ConfigError, match=r"'sources\.results_per_category'"):
        parse_config({"sources": {"results_per_category": "many"}})


def test_feed_in_unconfigured_category_is_rejected():
    with pytest.raises(ConfigError, match=r"feeds\[0\].*'gardening'"):
        parse_config({"sources": {"feeds": [{"url": "https://x/rss", "category": "gardening"}]}})


def test_unreadable_and_invalid_files_give_one_line(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[sources\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_relative_sqlite_path_resolves_against_the_config_file(tmp_path):
    cfg = tmp_path / "conf" / "digest.toml"
    cfg.parent.mkdir()
    cfg.write_text('[database]\nurl = "sqlite:///data/digest.db"\n')
    assert load_config(cfg).database_url() == f"sqlite:///{tmp_path}/conf/data/digest.db"


def test_unknown_category_names_the_configured_ones():
    with pytest.raises(UnknownCategoryError, match=r"gardening.*technology"):
        Config().check_category("gardening")
    assert Config().check_category(" Finance ") == "finance"


def test_today_starts_at_local_midnight():
    config = parse_config({"schedule": {"timezone": "America/New_York"}})
    # 03:00 UTC on the 2nd is still the 1st in New York (UTC-5 in winter).
    start = config.today_start(datetime(2026, 12, 2, 3, 0, tzinfo=UTC))
    assert start.isoformat() == "2026-12-01T00:00:00-05:00"


def test_unknown_time_zone_is_rejected():
    with pytest.raises(ConfigError, match="unknown time zone"):
        parse_config({"schedule": {"timezone": "Mars/Olympus"}})
