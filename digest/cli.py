"""The command line: parse arguments, build the app from config, call one function, print.

No business logic lives here. Every `DigestError` becomes one line on stderr and exit status 1.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from digest.config import STARTER, Config, load_config
from digest.errors import DigestError

T = TypeVar("T")
log = logging.getLogger("digest")


class _Group(click.Group):
    """Turns domain errors into one clear line and a non-zero exit, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DigestError as err:
            _fail(str(err))
        except KeyboardInterrupt:
            _fail("interrupted", code=130)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as err:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            _fail(f"internal error: {type(err).__name__}: {err} (run with --debug for details)")


def _fail(message: str, code: int = 1) -> None:
    click.echo(f"digest: error: {message}", err=True)
    sys.exit(code)


def _config(ctx: click.Context) -> Config:
    obj = ctx.obj
    if "config" not in obj:
        obj["config"] = load_config(obj["config_path"])
    return obj["config"]


def _run(ctx: click.Context, fn: Callable[[Any], Awaitable[T]]) -> T:
    """Build the app from config and run one coroutine with it: the only event loop."""
    from digest.app import App

    config = _config(ctx)

    async def main() -> T:
        async with App(config) as app:
            return await fn(app)

    return asyncio.run(main())


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


@click.group(cls=_Group)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Config file (default: $DIGEST_CONFIG, else ./digest.toml, else built-in defaults).",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="warning",
    show_default=True,
    help="Log verbosity (logs go to stderr).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
@click.version_option(package_name="digest")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, log_level: str, debug: bool) -> None:
    """digest: a self-hosted news digest. Headlines per topic, answers on demand."""
    logging.basicConfig(
        level=getattr(logging, log_level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    ctx.obj = {"config_path": config_path, "debug": debug}


@cli.command()
@click.argument("path", type=click.Path(dir_okay=False), default="digest.toml")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def init(path: str, force: bool) -> None:
    """Write a commented starter config file (default ./digest.toml)."""
    target = Path(path)
    if target.exists() and not force:
        raise DigestError(f"{target} already exists (use --force to overwrite)")
    try:
        target.write_text(STARTER, encoding="utf-8")
    except OSError as err:
        raise DigestError(f"cannot write {target}: {err.strerror or err}") from None
    click.echo(f"wrote {target}")


@cli.group()
def db() -> None:
    """Database maintenance."""


@db.command("upgrade")
@click.pass_context
def db_upgrade(ctx: click.Context) -> None:
    """Create or migrate the database to the latest schema."""
    from digest.store.engine import open_store

    config = _config(ctx)
    store = open_store(config.database_url())
    store.close()
    click.echo(f"database is up to date: {_redact(config.database_url())}")


def _redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@cli.command()
@click.argument("category")
@click.option("--limit", default=8, show_default=True, type=click.IntRange(1, 500))
@click.option("--live", is_flag=True, help="Fetch live even if headlines were collected today.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def news(ctx: click.Context, category: str, limit: int, live: bool, as_json: bool) -> None:
    """Today's headlines for CATEGORY, each with a short lede from its page."""
    from digest import ondemand
    from digest.cli_output import print_items

    items = _run(ctx, lambda app: ondemand.news(app, category, limit=limit, live=live))
    if as_json:
        _echo_json([i.to_json() for i in items])
    else:
        print_items(items, title=f"{category}: today's headlines")


@cli.command()
@click.argument("text")
@click.option("--k", default=6, show_default=True, type=click.IntRange(1, 50), help="Results.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def query(ctx: click.Context, text: str, k: int, as_json: bool) -> None:
    """Search the web for TEXT; each result gets a lede from its page in about a second."""
    from digest import ondemand
    from digest.cli_output import print_items

    items = _run(ctx, lambda app: ondemand.query(app, text, k=k))
    if as_json:
        _echo_json([i.to_json() for i in items])
    else:
        print_items(items, title=f"query: {text}")


@cli.command()
@click.argument("urls", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def extract(ctx: click.Context, urls: tuple[str, ...], as_json: bool) -> None:
    """Fast extraction of URLs: one result per URL, in the order given."""
    from digest import ondemand
    from digest.cli_output import extract_json, print_extracts

    ondemand.check_urls(list(urls))  # a typo fails before anything is fetched
    results = _run(ctx, lambda app: ondemand.extract(app, list(urls)))
    if as_json:
        _echo_json([extract_json(e) for e in results])
    else:
        print_extracts(results)
    blocked = [e for e in results if e.status == "blocked"]
    if blocked:
        _fail(blocked[0].error or f"blocked address: {blocked[0].url}")


@cli.command()
@click.option("--category", "categories", multiple=True, help="Only this category (repeatable).")
@click.pass_context
def collect(ctx: click.Context, categories: tuple[str, ...]) -> None:
    """One pass over all configured sources: headlines, fast extraction, store."""
    from digest import collect as collecting
    from digest.cli_output import print_collect_report

    config = _config(ctx)
    for c in categories:
        config.check_category(c)
    report = _run(ctx, lambda app: collecting.collect(app, list(categories) or None))
    print_collect_report(report)
    if report.status == "failed":
        _fail(f"nothing collected: {len(report.failures)} source(s) failed")


def main() -> None:
    cli(prog_name="digest")


if __name__ == "__main__":
    main()
