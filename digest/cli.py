"""The command line: parse arguments, build the app from config, call one function, print.

No business logic lives here. Every `DigestError` becomes one line on stderr and exit status 1;
Ctrl+C or SIGTERM during a command, "interrupted during STEP" and 130 or 143 (but for the
servers, `digest run` and `digest serve`, for which a stop is what was asked: "stopped" and 0,
from the program's first import on: `digest.runtime.stops`).
"""

from __future__ import annotations

import os
import sys

from digest.runtime import stops

if os.path.basename(sys.argv[0]) == "digest":  # the program (not an import): before click
    stops.catch_early()  # and the configuration load, a server's SIGTERM or Ctrl+C is held

import asyncio
import atexit
import gc
import json
import logging
import signal
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from digest.config import Config, load_config
from digest.errors import DigestError, RunInterrupted

if TYPE_CHECKING:
    from digest.app import App
    from digest.runtime.progress import Progress
    from digest.summarize.check import ServerCheck

T = TypeVar("T")
log = logging.getLogger("digest")
# The commands that run until stopped: SIGTERM is a stop asked, from their start (`stops`).
SERVERS = ("serve", "run")


class _Group(click.Group):
    """Turns domain errors into one clear line and a non-zero exit, never a traceback."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except RunInterrupted as err:
            _fail(str(err), code=err.exit_code)
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


def _fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"digest: error: {_clean(message)}", err=True)
    sys.exit(code)


def _clean(message: str) -> str:
    """Messages quote sources (a feed's reply, a search engine's error): cleaned like pages."""
    from digest.render.sanitize import clean_text

    return clean_text(message)


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

    return _until_signal(_step_name(ctx), main)


def _step_name(ctx: click.Context) -> str:
    """The command as the user typed it, without the program: "collect", "feeds add"."""
    return ctx.command_path.partition(" ")[2] or ctx.command_path


def _until_signal(step: str, main: Callable[[], Awaitable[T]]) -> T:
    """Run `main` in a new event loop; Ctrl+C or SIGTERM cancels it, so that a job's run is
    recorded as interrupted on the way out, and raises RunInterrupted naming `step` (exit
    status 130 or 143). Without this, SIGTERM would end the process before any cleanup."""
    received: list[int] = []

    async def guarded() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def stop(signum: int) -> None:
            received.append(signum)
            task.cancel()

        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop, signum)
        try:
            return await main()
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)

    _collect_from_now_on()
    try:
        return asyncio.run(guarded())
    except asyncio.CancelledError:
        if not received:
            raise
        raise RunInterrupted(step, received[0]) from None


def _progress(ctx: click.Context) -> AbstractContextManager[Progress]:
    """The progress of a long command, shown on a terminal only (`digest.commands.progress_bar`); a
    context manager whose value the jobs take as their `progress`."""
    from digest.commands.progress_bar import TerminalProgress, wanted

    obj = ctx.find_root().obj or {}
    return TerminalProgress(wanted(obj.get("log_format", "text"), obj.get("log_level", "warning")))


def _echo_json(data: Any) -> None:
    from digest.render.sanitize import escape_json_for_terminal

    # The same data for a parser; nothing a terminal would act on when it is not piped.
    click.echo(escape_json_for_terminal(json.dumps(data, ensure_ascii=False, indent=2)))


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
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="One line per event; json for machines.",
)
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
@click.version_option(package_name="digest")
@click.pass_context
def cli(
    ctx: click.Context, config_path: str | None, log_level: str, log_format: str, debug: bool
) -> None:
    """digest: a self-hosted news digest. Headlines per topic, answers on demand."""
    from digest.commands.logs import setup_logging

    if ctx.invoked_subcommand not in SERVERS:
        stops.one_shot()  # SIGTERM as ever (`run` decides with its --once)

    setup_logging(log_level, log_format)
    ctx.obj = {
        "config_path": config_path,
        "debug": debug,
        "log_format": log_format,
        "log_level": log_level,
    }


@cli.command()
@click.argument("path", type=click.Path(dir_okay=False), default="digest.toml")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def init(path: str, force: bool) -> None:
    """Write a commented starter config file (default ./digest.toml)."""
    from digest.commands.manage import starter

    target = Path(path)
    if target.exists() and not force:
        raise DigestError(f"{target} already exists (use --force to overwrite)")
    text, browser = starter()
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as err:
        raise DigestError(f"cannot write {target}: {err.strerror or err}") from None
    click.echo(f"wrote {target} ({browser})")
    click.echo('next: add feeds with "digest feeds add URL" (sources.ddg = false: feeds only)')


@cli.group()
def db() -> None:
    """Database maintenance."""


@db.command("upgrade")
@click.pass_context
def db_upgrade(ctx: click.Context) -> None:
    """Create or migrate the database to the latest schema."""
    from digest.commands.manage import upgrade_database

    config = _config(ctx)
    upgrade_database(config)
    click.echo(f"database is up to date: {_redact(config.database_url())}")


def _redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@cli.command()
@click.argument("category")
@click.option(
    "--limit", default=8, show_default=True, type=click.IntRange(1, 500), help="Headlines shown."
)
@click.option("--live", is_flag=True, help="Fetch live even if headlines were collected today.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def news(ctx: click.Context, category: str, limit: int, live: bool, as_json: bool) -> None:
    """Today's headlines for CATEGORY, each with a short lede from its page."""
    from digest.commands.printing import print_items
    from digest.ondemand import quick as ondemand

    items = _run(ctx, lambda app: ondemand.news(app, category, limit=limit, live=live))
    if as_json:
        _echo_json([i.to_json() for i in items])
    else:
        print_items(items, title=f"{category}: today's headlines")


@cli.command()
@click.argument("words", nargs=-1, required=True, metavar="TEXT...")
@click.option("--k", default=6, show_default=True, type=click.IntRange(1, 50), help="Results.")
@click.option("--local", "where", flag_value="local", help="Only the stored archive (offline).")
@click.option("--live", "where", flag_value="live", help="Only the live web search.")
@click.option(
    "--deep", is_flag=True, help="Crawl and summarize the live results, then answer from them."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def query(
    ctx: click.Context,
    words: tuple[str, ...],
    k: int,
    where: str | None,
    deep: bool,
    as_json: bool,
) -> None:
    """What is the news on TEXT: what the archive already knows, then a live web search whose
    results each get a lede from their page in about a second.

    With --deep, the top K live results are crawled and summarized and a short answer citing
    them as [1], [2], ... is written from their texts only.
    """
    from digest.commands.printing import print_answer, print_query
    from digest.ondemand import quick as ondemand

    text = " ".join(words)

    if deep:
        if where == "local":
            raise click.UsageError("--deep answers from live sources: drop --local")
        result = _run(ctx, lambda app: ondemand.query_deep(app, text, k=k))
        _echo_json(result.to_json()) if as_json else print_answer(result)
        return
    local, live = where in (None, "local"), where in (None, "live")
    found = _run(ctx, lambda app: ondemand.query_both(app, text, k=k, local=local, live=live))
    _echo_json(found.to_json()) if as_json else print_query(found)


@cli.command()
@click.argument("words", nargs=-1, required=True, metavar="TEXT...")
@click.option("--category", help="Only stories of this category.")
@click.option(
    "--since",
    metavar="DATE|Nd",
    help="Only stories published since DATE (YYYY-MM-DD) or in the last N days (e.g. 30d).",
)
@click.option(
    "--limit", default=10, show_default=True, type=click.IntRange(1, 200), help="Stories shown."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a list.")
@click.pass_context
def search(
    ctx: click.Context,
    words: tuple[str, ...],
    category: str | None,
    since: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Search the stored archive (offline) for TEXT in headlines, ledes, texts and summaries.

    Words must all match; "a phrase" matches in order; -word excludes; OR gives alternatives.
    One result per story, best first, with the matching passage highlighted. Quote the
    search to keep its "phrases": digest search '"interest rates" -mortgage'. A search that
    starts with "-" goes after "--": digest search -- -coal power.
    """
    from digest.commands.printing import print_search
    from digest.ondemand import quick as ondemand

    text = " ".join(words)

    config = _config(ctx)
    start = _parse_since(since, config)
    hits = _run(
        ctx,
        lambda app: ondemand.search_archive(app, text, category=category, since=start, limit=limit),
    )
    if as_json:
        _echo_json([h.to_json() for h in hits])
    else:
        print_search(hits, text)


def _parse_since(value: str | None, config: Config) -> datetime | None:
    """`--since`: a date (midnight in the configured time zone) or a number of days back."""
    from digest.errors import InvalidQueryError
    from digest.ondemand.params import parse_since

    if value is None:
        return None
    try:
        return parse_since(value, config.schedule.timezone)
    except InvalidQueryError as err:
        raise click.BadParameter(str(err), param_hint="--since") from None


@cli.command()
@click.argument("urls", nargs=-1, required=True)
@click.option("--deep", is_flag=True, help="Crawl (browser), extract the main text, summarize.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def extract(ctx: click.Context, urls: tuple[str, ...], deep: bool, as_json: bool) -> None:
    """Fast extraction of URLs: one result per URL, in the order given.

    With --deep: title, main text, summary, brief summary and keywords of each URL.
    """
    from digest.commands.printing import print_deep_extracts, print_extracts
    from digest.ondemand import quick as ondemand

    ondemand.check_urls(list(urls))  # a typo fails before anything is fetched
    if deep:
        deep_results = _run(ctx, lambda app: ondemand.extract_deep(app, list(urls)))
        if as_json:
            _echo_json([r.to_json() for r in deep_results])
        else:
            print_deep_extracts(deep_results)
        refused = [r.error for r in deep_results if r.error and "blocked" in r.error]
        if refused:
            _fail(refused[0])
        return
    results = _run(ctx, lambda app: ondemand.extract(app, list(urls)))
    if as_json:
        _echo_json([e.to_json() for e in results])
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
    from digest.commands.printing import print_collect_report
    from digest.jobs import collect as collecting

    config = _config(ctx)
    for c in categories:
        config.check_category(c)
    with _progress(ctx) as progress:
        report = _run(
            ctx,
            lambda app: collecting.collect_claiming(
                app, list(categories) or None, progress=progress
            ),
        )
    print_collect_report(report)
    if report.status == "failed":
        _fail(f"nothing collected: {len(report.failures)} source(s) failed")


@cli.command()
@click.option("--category", "categories", multiple=True, help="Only this category (repeatable).")
@click.option("--top", type=click.IntRange(1, 100), help="Stories per category [config: 5].")
@click.pass_context
def deepen(ctx: click.Context, categories: tuple[str, ...], top: int | None) -> None:
    """Crawl, extract and summarize the top stories of each category."""
    from digest.commands.printing import print_deepen_report
    from digest.jobs import deepen as deepening

    config = _config(ctx)
    for c in categories:
        config.check_category(c)
    with _progress(ctx) as progress:
        report = _run(
            ctx,
            lambda app: deepening.deepen(app, list(categories) or None, top=top, progress=progress),
        )
    print_deepen_report(report)
    if report.status == "failed":
        _fail(f"nothing could be read: {len(report.failed_pages)} page(s) failed")


@cli.command()
@click.option("--category", help="Only this category.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a list.")
@click.pass_context
def stories(ctx: click.Context, category: str | None, as_json: bool) -> None:
    """Today's stories with their outlets and summaries."""
    from digest.commands.printing import print_stories
    from digest.ondemand.quick import todays_stories_json

    found = _run(ctx, lambda app: todays_stories_json(app, category))
    _echo_json(found) if as_json else print_stories(found)


def _parse_day(value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (YYYY-MM-DD)") from None


@cli.command()
@click.option(
    "--date",
    "day",
    help="Edition day, YYYY-MM-DD (default: today in the config's zone); not a future day, "
    "nor a past one without articles collected on it.",
)
@click.option("--no-send", is_flag=True, help="Build the edition and the archive; send no email.")
@click.pass_context
def publish(ctx: click.Context, day: str | None, no_send: bool) -> None:
    """Build the day's edition, render the archive, email every subscriber (once)."""
    from digest.commands.printing import print_publish_report
    from digest.jobs import publish as publishing

    the_day = _parse_day(day)
    with _progress(ctx) as progress:
        report = _run(
            ctx,
            lambda app: publishing.publish_claiming(
                app, the_day, send=not no_send, progress=progress
            ),
        )
    print_publish_report(report)
    if report.status == "failed":
        _fail("publishing failed")


@cli.command()
@click.option("--port", type=click.IntRange(1, 65535), help="Port [config: 8000].")
@click.option("--host", help="Address to listen on [config: 127.0.0.1].")
@click.pass_context
def serve(ctx: click.Context, port: int | None, host: str | None) -> None:
    """Serve the archive for a preview, and answer unsubscribe links. SIGTERM or Ctrl+C stops
    it: "stopped", exit status 0."""
    stops.server()  # from here a SIGTERM is the stop asked, before the server's loop too
    from digest.web.server import serve as serving

    config = _config(ctx).serve
    host, port = host or config.host, port or config.port
    try:
        _run(ctx, lambda app: serving(app, host=host, port=port))
    except RunInterrupted as stop:  # Ctrl+C, `systemctl stop`: asked for, not a failure
        _stopped(stop.signum)


def _stopped(signum: int) -> None:
    """A server's requested stop (SIGTERM, Ctrl+C), said once: exit status 0."""
    click.echo(f"digest: stopped ({signal.Signals(signum).name})", err=True)


@cli.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Answer an assistant over MCP (the Model Context Protocol) on stdin and stdout.

    Read-only tools: search_archive, todays_stories, story, quick_answer; the latest edition as
    a resource. Add to an assistant's MCP servers as the command `digest` with the arguments
    `--config /path/to/digest.toml mcp`. Over HTTP: [serve] mcp = true, then /mcp.
    """
    from digest.mcp.stdio import serve_stdio

    _run(ctx, serve_stdio)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--resend", "resend_day", help="Re-send the stuck and failed messages of YYYY-MM-DD.")
@click.pass_context
def deliveries(ctx: click.Context, as_json: bool, resend_day: str | None) -> None:
    """The delivery ledger: who got which edition on which channel, with the servers' replies."""
    from digest.commands import manage
    from digest.commands.printing import print_deliveries

    day = _parse_day(resend_day)

    async def load(app):
        if day is not None:
            reopened = await manage.resend(app, day)
            click.echo(f"{len(reopened)} message(s) will be sent again by the next publish")
        return await manage.deliveries(app)

    rows = _run(ctx, load)
    if as_json:
        _echo_json([r.to_json() for r in rows])
    else:
        print_deliveries(rows)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--resend",
    is_flag=True,
    help="Re-send the stuck and failed messages of each follow's latest alert at the next run.",
)
@click.option(
    "--abandon", is_flag=True, help="Give up the stuck and pending messages of open alerts."
)
@click.pass_context
def alerts(ctx: click.Context, as_json: bool, resend: bool, abandon: bool) -> None:
    """The alert ledger: what followers of stories were sent, on which channel, with replies."""
    from digest.commands import manage
    from digest.commands.printing import print_alerts

    if resend and abandon:
        raise click.UsageError("--resend and --abandon cannot be used together")

    async def load(app):
        if resend:
            reopened = await manage.resend_alerts(app)
            click.echo(f"{len(reopened)} alert message(s) will be sent again by the next run")
        if abandon:
            given_up = await manage.abandon_alerts(app)
            click.echo(f"{len(given_up)} alert message(s) abandoned: they will not be sent")
        return await manage.alerts(app)

    rows = _run(ctx, load)
    if as_json:
        _echo_json([r.to_json() for r in rows])
    else:
        print_alerts(rows)


@cli.group()
def subscribers() -> None:
    """Who gets the digest, and how: categories, rules, time, language, channels."""


def _preference_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options `subscribers add` and `subscribers set` share, one or two per preference,
    as the table of preferences (`digest.subscribers.preferences.FIELDS`) gives them."""
    from digest.subscribers.preferences import FIELDS, MAX_STORIES

    for option in reversed([o for field in FIELDS for o in field.options]):
        given: dict[str, Any] = {"help": option.help}
        if option.kind == "count":
            given["type"] = click.IntRange(0, MAX_STORIES)
        elif option.kind == "repeat":
            given["multiple"] = True
        elif option.kind == "flag":
            given["is_flag"] = True
        elif option.kind == "switch":
            given["default"] = None  # neither given: unchanged
        command = click.option(option.flags, option.dest, **given)(command)
    return command


@subscribers.command("add")
@click.argument("email")
@_preference_options
@click.pass_context
def subscribers_add(ctx: click.Context, email: str, **given: Any) -> None:
    """Add a subscriber, with their preferences.

    EMAIL is checked by the rule sending uses: ASCII before the @, a domain with a dot
    (internationalized ones too; not localhost or another special-use name). It is stored
    lower-cased. An address that is subscribed already is refused and left as it is: `digest
    subscribers set EMAIL ...` changes it.
    """
    from digest.commands import manage
    from digest.commands.printing import print_subscriber
    from digest.subscribers.preferences import cli_changes

    changes = cli_changes(given)
    print_subscriber(_run(ctx, lambda app: manage.add_subscriber(app, email, changes)))


@subscribers.command("set")
@click.argument("email")
@_preference_options
@click.pass_context
def subscribers_set(ctx: click.Context, email: str, **given: Any) -> None:
    """Change some of a subscriber's preferences; what is not given stays as it is.

    --channel adds a channel (after --no-channels: replaces them). Changes apply from the next
    edition: one already sent or skipped stays so.
    """
    from digest.commands import manage
    from digest.commands.printing import print_subscriber
    from digest.subscribers.preferences import cli_changes

    changes = cli_changes(given)
    print_subscriber(_run(ctx, lambda app: manage.set_subscriber(app, email, changes)))


@subscribers.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a list.")
@click.pass_context
def subscribers_list(ctx: click.Context, as_json: bool) -> None:
    """List the subscribers (--json: with every preference)."""
    from digest.commands import manage
    from digest.commands.printing import print_subscribers

    subs = _run(ctx, manage.subscribers)
    if as_json:
        _echo_json([s.to_json() for s in subs])
        return
    print_subscribers(subs)


@subscribers.command("remove")
@click.argument("email")
@click.pass_context
def subscribers_remove(ctx: click.Context, email: str) -> None:
    """Remove a subscriber."""
    from digest.commands import manage

    _run(ctx, lambda app: manage.remove_subscriber(app, email))
    click.echo(f"removed {email}")


@cli.group()
def feeds() -> None:
    """The feeds collected: the config file's and those added here (kept in the database)."""


@feeds.command("add")
@click.argument("url")
@click.option("--category", help="A configured category (default: the feed's own, if it is one).")
@click.option("--name", help="Shown as the source (default: the feed's own title).")
@click.pass_context
def feeds_add(ctx: click.Context, url: str, category: str | None, name: str | None) -> None:
    """Subscribe to the feed at URL, or to the first feed that the page at URL advertises.

    The URL is fetched as every feed is (the address guard, the size limit) and must give an
    RSS or Atom feed, or an HTML page with a <link rel="alternate"> to one. A feed that is in
    the config file or the database already, by its canonical URL, is not added again.
    """
    from digest.commands import feeds_manage
    from digest.commands.printing import print_added_feed

    added = _run(ctx, lambda app: feeds_manage.add_feed(app, url, category=category, name=name))
    print_added_feed(added)


@feeds.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def feeds_list(ctx: click.Context, as_json: bool) -> None:
    """Every feed, from the config file and the database, with its health."""
    from digest.commands import feeds_manage
    from digest.commands.printing import print_feeds

    found = _run(ctx, feeds_manage.list_feeds)
    _echo_json([f.to_json() for f in found]) if as_json else print_feeds(found)


@feeds.command("remove")
@click.argument("url")
@click.pass_context
def feeds_remove(ctx: click.Context, url: str) -> None:
    """Unsubscribe from a feed added with add or import (the config file's are removed there)."""
    from digest.commands import feeds_manage
    from digest.commands.printing import print_removed_feed

    print_removed_feed(_run(ctx, lambda app: feeds_manage.remove_feed(app, url)))


@feeds.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE.opml")
@click.option(
    "--category",
    help="For feeds whose folders name no configured category (default: they are skipped).",
)
@click.pass_context
def feeds_import(ctx: click.Context, file: Path, category: str | None) -> None:
    """Subscribe to the feeds of an OPML file (any reader's export), without fetching them.

    A feed goes in the configured category that its folder names (case ignored), else in
    --category, else it is skipped and reported. A malformed file, or one that declares XML
    entities, imports nothing.
    """
    from digest.commands import feeds_manage
    from digest.commands.printing import print_import_report

    with _progress(ctx) as progress:
        report = _run(
            ctx,
            lambda app: feeds_manage.import_opml(app, file, category=category, progress=progress),
        )
    print_import_report(report)


@feeds.command("export")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.pass_context
def feeds_export(ctx: click.Context, file: Path | None) -> None:
    """Write every feed as OPML 2.0, one folder per category, to FILE (default: stdout)."""
    from digest.commands import feeds_manage

    exported = _run(ctx, lambda app: feeds_manage.export_opml(app, file))
    if file is None:
        sys.stdout.buffer.write(exported.data)
        sys.stdout.flush()
    else:
        click.echo(f"wrote {exported.feeds} feed(s) in {exported.categories} categories to {file}")


@cli.group()
def editions() -> None:
    """The editions published: list them, or remove one made by mistake."""


@editions.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a list.")
@click.pass_context
def editions_list(ctx: click.Context, as_json: bool) -> None:
    """Every edition, newest first: its stories and headlines, and its messages in the ledger."""
    from digest.commands import editions_manage
    from digest.commands.printing import print_editions

    found = _run(ctx, editions_manage.list_editions)
    _echo_json([e.to_json() for e in found]) if as_json else print_editions(found)


@editions.command("remove")
@click.argument("day", metavar="DATE")
@click.pass_context
def editions_remove(ctx: click.Context, day: str) -> None:
    """Remove the edition of DATE (YYYY-MM-DD) and write the archive again without it: its
    pages go, the index, latest.html and the feeds are rebuilt.

    Messages of it already sent stay in the ledger (`digest deliveries` keeps the record of
    who got it; they are not sent that day again); messages not sent yet are skipped, so nobody
    gets an edition that is gone. The day may be published again.
    """
    from digest.commands import editions_manage
    from digest.commands.printing import print_removed_edition

    the_day = _parse_day(day)
    assert the_day is not None
    print_removed_edition(_run(ctx, lambda app: editions_manage.remove_edition(app, the_day)))


@cli.group()
def llm() -> None:
    """The LLM server of [llm]."""


@llm.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a summary.")
@click.pass_context
def llm_check(ctx: click.Context, as_json: bool) -> None:
    """Probe the [llm] server with one short request: the model, its context window and where
    that came from, how fast it reads and writes, whether its JSON output is constrained, and
    about how long a story's summary will take."""
    from digest.summarize.check import check, describe

    async def probe(app: App) -> ServerCheck:
        summarizer = await app.summarizer()
        if summarizer.llm is None:
            raise DigestError("no [llm] section in the configuration: summaries are extractive")
        return await check(summarizer.llm)

    found = _run(ctx, probe)
    if as_json:
        _echo_json(found.to_json())
    else:
        for line in describe(found):
            click.echo(line)


@cli.command()
@click.option(
    "--dir",
    "folder",
    default="digest-demo",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The demo's own folder: its database, archive (site/) and outbox.",
)
@click.pass_context
def demo(ctx: click.Context, folder: Path) -> None:
    """A sample run without internet: synthetic feeds served on this machine (127.0.0.1),
    collected, grouped into stories, summarized and published in DIR/site. Its own folder: your
    configuration and database are not touched."""
    from digest.commands.demo import run_demo
    from digest.commands.printing import print_cycle

    _collect_from_now_on()
    with _progress(ctx) as progress:
        cycle = asyncio.run(run_demo(folder, progress))
    print_cycle(cycle)
    if cycle.failures:
        _fail("; ".join(cycle.failures))
    click.echo(
        f"demo edition (synthetic news): {folder / 'site' / 'latest.html'}; "
        f'next: "digest init", then add your own feeds with "digest feeds add URL"'
    )


@cli.command()
@click.option("--once", is_flag=True, help="One full cycle (collect, deepen, publish), then exit.")
@click.pass_context
def run(ctx: click.Context, once: bool) -> None:
    """Run the daemon in the foreground: collect, deepen and publish on schedule (and serve the
    archive and unsubscribe links when serve.daemon is on).

    SIGTERM or Ctrl+C stops it cleanly: "digest: stopped" on stderr, exit status 0; in the
    middle of a step, the step's run is recorded as interrupted and that line names the step.
    A second signal while it stops ends it at once (exit status 130 or 143). One daemon per
    database.

    With --once, the exit status is 1 when a step failed (every source failed, no page could be
    read, no email could be sent), naming the step on stderr; a step that only partly failed is
    reported there too. When no source answered, the archive still gets an edition page saying
    why (no email is sent), and the last line says what to do next. Ctrl+C or SIGTERM stops
    the cycle, naming the step on stderr, with exit status 130 (Ctrl+C) or 143 (SIGTERM).
    """
    if once:  # a cycle cut short by SIGTERM names its step, as ever
        stops.one_shot()
    else:
        stops.server()
    from digest.daemon import run_daemon

    config = _config(ctx)
    _collect_from_now_on()
    if once:  # each step of the cycle and how far it got, on a terminal
        with _progress(ctx) as progress:
            cycle = asyncio.run(run_daemon(config, once=True, progress=progress))
    else:  # the daemon's logs tell its jobs
        cycle = asyncio.run(run_daemon(config, server=_daemon_server))
    from digest.daemon import Stopped

    if isinstance(cycle, Stopped):  # asked for: said once, exit status 0
        click.echo(f"digest: {cycle}", err=True)
        return
    if cycle is None:
        return
    from digest.commands.printing import print_cycle

    print_cycle(cycle)
    for warning in cycle.warnings:
        click.echo(f"digest: warning: {_clean(warning)}", err=True)
    if cycle.failures:
        click.echo(f"digest: error: {_clean('; '.join(cycle.failures))}", err=True)
        if cycle.next_step:  # the last word: what to do about it
            click.echo(f"digest: {cycle.next_step}", err=True)
        sys.exit(1)


def _daemon_server(app: App) -> AbstractAsyncContextManager[Path]:
    """What the daemon serves with `serve.daemon` on: `digest serve`'s server at the configured
    address (aiohttp and the handlers imported only then)."""
    from digest.web.server import running

    return running(app, host=app.config.serve.host, port=app.config.serve.port)


@cli.command()
@click.option(
    "--concurrency",
    default=4,
    show_default=True,
    type=click.IntRange(1, 256),
    help="Tasks this worker runs at once.",
)
@click.option(
    "--metrics-port",
    type=click.IntRange(1, 65535),
    help="Serve Prometheus metrics on this port.",
)
@click.pass_context
def worker(ctx: click.Context, concurrency: int, metrics_port: int | None) -> None:
    """Run the tasks the daemon and the CLI jobs enqueue ([queue] enabled, PostgreSQL): on any
    number of machines sharing the database. SIGTERM or Ctrl+C: the running tasks finish."""
    from digest.worker import run_worker

    config = _config(ctx)
    _collect_from_now_on()
    asyncio.run(run_worker(config, concurrency=concurrency, metrics_port=metrics_port))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a summary.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Next runs, last runs with counts and errors, failing sources, tokens, ledger, database."""
    from digest.commands.printing import print_status
    from digest.commands.status import status as load_status

    found = _run(ctx, load_status)
    _echo_json(found.to_json()) if as_json else print_status(found)


def main() -> None:
    """The `digest` program: one command, then exit."""
    # Starting a command makes some 60,000 objects that live until exit (modules, classes,
    # SQLAlchemy's and pydantic's tables). The collector would walk them again and again while
    # they are imported, and all of them once more at exit, to find nothing: 0.1 s of a 0.4 s
    # store command (bench/startup.py). So it is off until the command's work starts
    # (_collect_from_now_on) and leaves them out from then on; at exit it leaves every object
    # to the process's end (the command closes its files and connections itself).
    gc.disable()
    atexit.register(gc.freeze)
    stops.catch_early()  # held (as `digest` did from its first import) until the command is known
    try:
        cli(prog_name="digest")
    finally:
        stops.one_shot()  # no command ran (--help, a usage error): SIGTERM as ever


def _collect_from_now_on() -> None:
    """The command's imports are made and its work starts: the collector runs again, over the
    objects made from now on."""
    gc.freeze()
    gc.enable()


if __name__ == "__main__":
    main()
