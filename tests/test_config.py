"""Configuration: lookup order, strict validation with messages that name the key."""

from __future__ import annotations

import contextlib
import re
import tomllib
import types
import typing
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import BaseModel

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


@pytest.mark.parametrize("name", ["America", "9" * 300])
def test_a_time_zone_naming_a_folder_or_too_long_is_rejected_by_name(name: str):
    with pytest.raises(ConfigError, match="unknown time zone"):
        parse_config({"schedule": {"timezone": name}})


def _wrong_values(annotation: object) -> list[object]:
    """Values a TOML file can hold that are not of the field's type (nor coercible by intent)."""
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin is typing.Annotated:
        return _wrong_values(args[0])
    if origin in (typing.Union, types.UnionType):
        return _wrong_values(args[0]) if len(args) == 1 else []
    if origin is typing.Literal:
        return [1, True, [str(args[0])]]
    if annotation is bool:
        return ["yes", "true", 1, 0]
    if annotation is int:
        return ["8", 2.0, True]
    if annotation is float:
        return ["1.5", True]
    if annotation is str:
        return [5, True, ["x"]]
    if origin is list:
        return ["a, b", 3]
    if origin is dict:
        return ["a=b", ["a"]]
    return []


def _section_model(annotation: object) -> type[BaseModel] | None:
    """The model of a [section] (or an optional one), else None: lists of tables are values."""
    for candidate in typing.get_args(annotation) or (annotation,):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _sections() -> list[tuple[str, type[BaseModel]]]:
    """Every [section] of the file and its model, nested ones ("stories.embeddings") too
    (`path` is not a key of the file)."""
    found = []

    def walk(prefix: str, model: type[BaseModel]) -> None:
        for name, field in model.model_fields.items():
            if typing.get_origin(field.annotation) is list:
                continue
            inner = _section_model(field.annotation)
            if inner is not None:
                key = f"{prefix}.{name}" if prefix else name
                found.append((key, inner))
                walk(key, inner)

    walk("", Config)
    return found


def _keys(model: type[BaseModel]) -> list[tuple[str, typing.Any]]:
    """The keys of a section that are values, not sections of their own."""
    return [
        (inner.alias or name, inner)
        for name, inner in model.model_fields.items()
        if typing.get_origin(inner.annotation) is list or _section_model(inner.annotation) is None
    ]


WRONG = [
    (section, key, value)
    for section, model in _sections()
    for key, inner in _keys(model)
    for value in _wrong_values(inner.rebuild_annotation())
]


def test_every_key_is_checked_for_its_type():
    every = {(section, key) for section, model in _sections() for key, _ in _keys(model)}
    covered = {(section, key) for section, key, _ in WRONG}
    assert every == covered
    assert ("stories.embeddings", "input_prefix") in every


@pytest.mark.parametrize(("section", "key", "value"), WRONG, ids=lambda v: repr(v))
def test_a_wrong_type_for_any_key_is_rejected_by_name(section, key, value):
    data: dict[str, typing.Any] = {}
    table = data
    for part in section.split("."):
        table = table.setdefault(part, {})
    table[key] = value
    if section == "llm":
        table |= {"model": "m"} if key != "model" else {}
    with pytest.raises(ConfigError, match=rf"'{section}\.{key}'"):
        parse_config(data)


def test_an_embeddings_section_is_optional_and_strict():
    assert Config().stories.embeddings is None
    config = parse_config(
        {"stories": {"embeddings": {"base_url": "http://127.0.0.1:9/v1", "model": "e5"}}}
    )
    assert config.stories.embeddings is not None
    assert config.stories.embeddings.model == "e5"
    with pytest.raises(ConfigError, match=r"unknown key 'stories\.embeddings\.modle'"):
        parse_config({"stories": {"embeddings": {"modle": "e5"}}})


@pytest.mark.parametrize("value", ["yes", "true", 1, "1"])
def test_the_ssrf_switch_is_never_turned_on_by_something_that_is_not_true(value):
    with pytest.raises(ConfigError, match=r"'fetch\.allow_private_networks'.*boolean"):
        parse_config({"fetch": {"allow_private_networks": value}})


@pytest.mark.parametrize("feed", [{"url": 5, "category": "world"}, "https://example.org/rss"])
def test_a_feed_of_the_wrong_shape_is_rejected(feed):
    with pytest.raises(ConfigError, match=r"'sources\.feeds\.0"):
        parse_config({"sources": {"feeds": [feed]}})


def test_integers_stand_for_floats_as_toml_writes_them():
    config = parse_config({"crawl": {"page_timeout": 30}, "stories": {"window_hours": 24}})
    assert config.crawl.page_timeout == 30.0 and config.stories.window_hours == 24.0


def test_the_queue_needs_postgresql():
    with pytest.raises(ConfigError, match=r"queue\.enabled = true needs PostgreSQL"):
        parse_config({"queue": {"enabled": True}})
    on_pg = parse_config(
        {"queue": {"enabled": True}, "database": {"url": "postgresql+psycopg://u@h/db"}}
    )
    assert on_pg.queue.enabled and on_pg.queue.stalled_after == 30.0
    assert parse_config({}).queue.enabled is False


def _is_float(annotation: object) -> bool:
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin is typing.Annotated or origin in (typing.Union, types.UnionType):
        return len(args) >= 1 and _is_float(args[0])
    return annotation is float


FLOATS = [
    (section, key)
    for section, model in _sections()
    for key, inner in _keys(model)
    if _is_float(inner.rebuild_annotation())
]


@pytest.mark.parametrize("value", ["inf", "+inf", "-inf", "nan", "1e309"])
@pytest.mark.parametrize(("section", "key"), FLOATS, ids=lambda v: str(v))
def test_no_number_in_the_file_is_infinite_or_not_a_number(tmp_path, section, key, value):
    """`serve.header_timeout = inf` held a slow client for ever: every duration (every float
    of the file) is finite, refused by name otherwise."""
    extra = 'model = "m"\n' if section == "llm" else ""
    path = tmp_path / "digest.toml"
    path.write_text(f"[{section}]\n{extra}{key} = {value}\n")
    with pytest.raises(ConfigError, match=rf"'{section}\.{key}'.*finite"):
        load_config(path)


def test_every_timeout_is_among_the_checked_numbers():
    timeouts = {(s, k) for s, model in _sections() for k, _ in _keys(model) if "timeout" in k}
    assert ("serve", "header_timeout") in FLOATS and ("channels", "timeout") in FLOATS
    assert timeouts <= set(FLOATS)


@pytest.mark.parametrize("key", ["collect_every", "deliver_every"])
@pytest.mark.parametrize("value", ["1000000000d", "99999999999999999999s", "٣m", "3 m 2"])
def test_an_interval_out_of_range_or_in_other_digits_is_refused_by_name(key, value):
    with pytest.raises(ConfigError, match=rf"'schedule\.{key}'"):
        parse_config({"schedule": {key: value}})


@pytest.mark.parametrize("value", ["1000000000d", "5s", "٣h", "3 m 2", "-1h", "00"])
def test_an_alert_period_that_is_no_interval_is_refused_by_name(value):
    with pytest.raises(ConfigError, match=r"'memory\.alert_every'"):
        parse_config({"memory": {"alert_every": value}})


def test_alerts_are_spaced_6_hours_unless_told_otherwise():
    assert parse_config({}).memory.alert_period() == timedelta(hours=6)
    assert parse_config({"memory": {"alert_every": "0"}}).memory.alert_period() == timedelta(0)
    assert parse_config({"memory": {"alert_every": "90m"}}).memory.alert_period() == timedelta(
        minutes=90
    )


def _starter_lines(text: str) -> list[tuple[str, str, str, str]]:
    """Each `key = value` line of a starter file, commented out or not: (section, key, value
    as written, its trailing comment)."""
    out, section = [], ""
    for raw in text.splitlines():
        line = raw.strip().removeprefix("#").strip()
        if header := re.match(r"^\[\[?([\w.]+)\]\]?(?:\s*#.*)?$", line):
            section = header.group(1)
            continue
        if not (found := re.match(r"^(\w+) = (.+)$", line)):
            continue
        key, rest = found.groups()
        # The value is the longest start of the rest that TOML reads; a comment follows it.
        for cut in [*(i for i, c in enumerate(rest) if c == "#"), len(rest)]:
            with contextlib.suppress(tomllib.TOMLDecodeError):
                tomllib.loads(f"v = {rest[:cut]}")
                out.append((section, key, rest[:cut].strip(), rest[cut + 1 :].strip()))
                break
    return out


def _model_at(path: str) -> type[BaseModel]:
    model: type[BaseModel] = Config
    for name in path.split("."):
        annotation = model.model_fields[name].annotation
        while not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            annotation = next(
                a for a in typing.get_args(annotation) if a is not type(None)
            )  # `X | None` and `list[X]`
        model = annotation
    return model


def test_every_value_digest_init_shows_is_the_default_or_says_it_is_an_example(tmp_path):
    """`digest init` says "the values shown are the defaults": a commented `context_tokens =
    4096` read as the default where `digest llm check` assumed 2048. A value shown where the
    setting has none (unset, an empty list) must say it is an example."""
    from click.testing import CliRunner

    from digest.cli import cli

    target = tmp_path / "digest.toml"
    assert CliRunner().invoke(cli, ["init", str(target)]).exit_code == 0
    lines = _starter_lines(target.read_text(encoding="utf-8"))
    assert len(lines) > 60  # the file's settings were read, commented ones too
    wrong = []
    for section, key, written, comment in lines:
        model = _model_at(section)
        name = next(n for n, f in model.model_fields.items() if key in (n, f.alias))
        field = model.model_fields[name]
        if field.is_required():
            continue  # a feed's url: no default to show
        default = field.get_default(call_default_factory=True)
        value = tomllib.loads(f"v = {written}")["v"]
        if value == default:
            continue
        if default in (None, [], {}) and re.search(r"\be\.g\.|\bunset\b", comment):
            continue
        wrong.append(f"[{section}] {key} = {written} (the default: {default!r})")
    assert wrong == []
