"""How results look on a terminal: rich tables, kept apart from the commands themselves.

Everything is printed through `_console()`, whose console cleans the text of every segment it
renders (`clean_text`): a headline cannot clear the screen, write the clipboard (OSC 52), show a
link to somewhere else (OSC 8) or reverse itself with a bidi override. Rich's own styles are
control segments or wrap the cleaned text afterwards, so they still work.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape as _e
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from digest.render.counts import plural
from digest.render.sanitize import clean_text, needs_cleaning

if TYPE_CHECKING:  # each command imports the module of its own report, and no other's
    from digest.commands.editions_manage import ListedEdition, RemovedEdition
    from digest.commands.feeds_manage import AddedFeed, ImportReport
    from digest.commands.status import Status
    from digest.daemon import CycleReport
    from digest.jobs.collect import CollectReport
    from digest.jobs.deepen import DeepenReport
    from digest.jobs.publish import PublishReport
    from digest.models import Extract, Item, ListedFeed, SearchHit, SubscribedFeed, Subscriber
    from digest.ondemand.results import DeepAnswer, DeepExtract, QueryResult


class _CleanConsole(Console):
    """A console that prints page text but never the terminal controls hidden in it.

    Cleaning the rendered segments, not each string on its way in, means no command and no
    future table can forget it. The removed characters take no cells, so layouts stay right.
    """

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control is None and needs_cleaning(segment.text):
                segment = Segment(clean_text(segment.text), segment.style)
            yield segment


def _console() -> Console:
    return _CleanConsole(soft_wrap=False)


def _when(item: Item) -> str:
    p = item.headline.published
    return p.strftime("%Y-%m-%d %H:%M") if p else ""


def print_items(items: list[Item], *, title: str) -> None:
    console = _console()
    if not items:
        console.print(f"{_e(title)}: nothing found")
        return
    table = Table(title=title, show_lines=True, expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("headline", ratio=2)
    table.add_column("source", ratio=1)
    table.add_column("published", no_wrap=True)
    table.add_column("lede", ratio=3)
    for n, item in enumerate(items, 1):
        h, e = item.headline, item.extract
        table.add_row(
            str(n),
            f"{_e(h.title)}\n[dim]{_e(h.url)}[/dim]",
            _e(h.source),
            _when(item),
            _e(e.full_content) or f"[dim]{_e(h.snippet or '(' + e.status + ')')}[/dim]",
        )
    console.print(table)


def _hit(n: int, hit: SearchHit) -> Text:
    """One search result as plain text with styles: nothing from the page is read as markup."""
    out = Text()
    out.append(f"{n}. ", style="bold")
    out.append(hit.title, style="bold")
    names = ", ".join(o.name for o in hit.outlets)
    out.append(
        f"\n   {hit.published:%Y-%m-%d} · {hit.category or 'no category'} · "
        f"{plural(len(hit.outlets), 'outlet')}: {names}",
        style="dim",
    )
    if hit.snippet:
        snippet = Text(hit.snippet)
        for start, end in hit.highlights:
            snippet.stylize("bold yellow", start, end)
        out.append("\n   ")
        out.append_text(snippet)
    for o in hit.outlets:
        out.append(f"\n   {o.url}", style="cyan")
    return out


def print_search(hits: list[SearchHit], text: str) -> None:
    console = _console()
    if not hits:
        console.print(Text(f"nothing in the archive matches {text!r}"))
        return
    for n, hit in enumerate(hits, 1):
        console.print(_hit(n, hit))
        console.print()


def print_query(found: QueryResult) -> None:
    console = _console()
    if found.archive is not None:
        console.rule("from the archive")
        print_search(found.archive, found.query)
    if found.live_error:
        console.rule("live")
        console.print(Text(f"live search failed: {found.live_error}", style="red"))
    elif found.live is not None:
        print_items(found.live, title=f"live: {found.query}")


def print_extracts(results: list[Extract]) -> None:
    table = Table(show_lines=True, expand=True)
    table.add_column("url", ratio=1)
    table.add_column("status", no_wrap=True)
    table.add_column("lede", ratio=3)
    for e in results:
        table.add_row(_e(e.url), e.status, _e(e.full_content) or f"[dim]{_e(e.error or '')}[/dim]")
    _console().print(table)


def print_collect_report(report: CollectReport) -> None:
    console = _console()
    table = Table(title=f"collect run {report.run_id}: {report.status}", expand=False)
    for col in ("category", "headlines", "with lede", "new", "updated"):
        table.add_column(col, justify="left" if col == "category" else "right")
    for c in report.categories:
        table.add_row(c.category, str(c.headlines), str(c.with_lede), str(c.new), str(c.updated))
    console.print(table)
    for f in report.failures:
        console.print(f"[red]failed[/red] {_e(f.source)}: {_e(f.error)}")
    console.print(f"{plural(report.headlines, 'headline')} in {report.elapsed:.1f} s")


def print_deep_extracts(results: list[DeepExtract]) -> None:
    console = _console()
    for r in results:
        console.rule(_e(r.title or r.url))
        console.print(f"[dim]{_e(r.url)}[/dim]")
        if r.error or r.summary is None:
            console.print(f"[red]failed[/red]: {_e(r.error or 'not summarized')}")
            continue
        console.print(_e(r.summary.summary))
        keywords = ", ".join(r.summary.keywords)
        console.print(f"[dim]keywords: {_e(keywords)} · {r.summary.summarizer}[/dim]")
        if r.note:
            console.print(f"[dim]note: {_e(r.note)}[/dim]")


def print_answer(result: DeepAnswer) -> None:
    console = _console()
    console.print(_e(result.answer or "(no answer could be written from the sources)"))
    console.print()
    for n, src in enumerate(result.sources, 1):
        status = f" [red]({_e(src.error)})[/red]" if src.error else ""
        console.print(f"\\[{n}] {_e(src.title)}{status}\n    [dim]{_e(src.url)}[/dim]")
    console.print(f"[dim]answered by {result.answerer}[/dim]")


def print_stories(stories: list[dict[str, Any]]) -> None:
    console = _console()
    if not stories:
        console.print("no stories today (run `digest collect` and `digest deepen`)")
        return
    for s in stories:
        updated = " [yellow](updated)[/yellow]" if s["updated"] else ""
        console.rule(f"[bold]{_e(s['title'])}[/bold]{updated}")
        console.print(f"{_e(s['category'])} · {_e(s['coverage'])}")
        if s.get("shown_in"):
            console.print(f"[dim]the same event is shown in {_e(s['shown_in'])}[/dim]")
        console.print(_e(s["brief_summary"]) or "[dim](not summarized yet)[/dim]")
        for o in s["outlets"]:
            console.print(f"  • {_e(o['outlet'])}: {_e(o['url'])}")


def print_deepen_report(report: DeepenReport) -> None:
    from digest.jobs.clustering import NO_EMBEDDINGS

    console = _console()
    c = report.counts
    console.print(
        f"deepen run {report.run_id}: {report.status} · "
        f"{plural(c['stories'], 'story', 'stories')} · "
        f"{plural(c['crawled'], 'page')} read, {c['crawl_failed']} failed · "
        f"{c['summarized']} summarized "
        f"({c['llm']} by the LLM, {c['extractive']} extractive), {c['reused']} already done · "
        f"{c['tokens']} tokens · {report.elapsed:.1f} s"
    )
    if c.get("summarized"):
        console.print(
            f"{plural(c.get('llm_calls', 0), 'LLM call')} reading "
            f"{plural(c.get('sources_read', 0), 'outlet')} · "
            f"claims {c.get('claims_found', 0)} of {c.get('claims', 0)} found in the sources, "
            f"{c.get('sentences_removed', 0)} sentences removed, "
            f"{c.get('claims_rejected', 0)} summaries rejected by the check"
        )
    if report.crawl_mode:
        console.print(f"crawl mode: {report.crawl_mode} ({report.crawl_mode_reason})")
    if report.similarity == "embeddings":
        console.print(f"stories told apart by embeddings ({c.get('embedded', 0)} new vectors)")
    elif report.similarity_reason != NO_EMBEDDINGS:
        console.print(
            f"[yellow]stories told apart by their words alone[/yellow] "
            f"({c.get('embedded', 0)} new vectors before the endpoint failed)"
        )
    for e in report.errors:
        console.print(f"[red]failed[/red] {_e(e.source)}: {_e(e.error)}")


def print_publish_report(report: PublishReport) -> None:
    console = _console()
    c = report.counts
    emails = (  # no "sent" count: sending was not asked for (--no-send, a cycle without news)
        f"{c['sent']} sent, {c.get('already_sent', 0)} already sent, "
        f"{c.get('retrying', 0)} to retry, {c.get('failed', 0)} failed"
        if "sent" in c
        else "none sent"
    )
    console.print(
        f"publish run {report.run_id}: {report.status} · edition {report.day} "
        f"({report.edition_state}; {plural(c.get('stories', 0), 'story', 'stories')}, "
        f"{plural(c.get('headlines', 0), 'headline')}) · archive: "
        f"{plural(report.pages_written, 'page')} written, "
        f"{report.pages_unchanged} unchanged · emails: {emails} · {report.elapsed:.1f} s"
    )
    for e in report.errors:
        console.print(f"[red]failed[/red] {_e(e.source)}: {_e(e.error)}")


def print_cycle(cycle: CycleReport) -> None:
    """What `run --once` did, step by step, as the commands of each step report it."""
    if cycle.collect is not None:
        print_collect_report(cycle.collect)
    if cycle.deepen is not None:
        print_deepen_report(cycle.deepen)
    if cycle.publish is not None:
        print_publish_report(cycle.publish)


def print_deliveries(rows: list[Any]) -> None:
    if not rows:
        _console().print("no messages in the ledger yet")
        return
    _print_ledger(
        ("edition", "recipient (channel)"),
        [(r.edition_day.isoformat(), r.addressee, r) for r in rows],
    )


def print_alerts(rows: list[Any]) -> None:
    """The alert ledger as a table, in the delivery ledger's colors."""
    if not rows:
        _console().print("no alerts to followers yet")
        return
    _print_ledger(
        ("story", "follower (channel)"),
        [
            (f"{r.follow.story_id}: {r.follow.title}", f"{r.follow.email} ({r.channel})", r)
            for r in rows
        ],
    )


def _print_ledger(columns: tuple[str, str], rows: list[tuple[str, str, Any]]) -> None:
    """A ledger's rows (what, to whom, and the row with its state, attempts and last reply)
    as one table: the deliveries' and the alerts' alike."""
    table = Table(expand=True)
    for col in (*columns, "state", "attempts", "server reply"):
        table.add_column(col)
    for what, whom, r in rows:
        color = {"sent": "green", "failed": "red", "sending": "yellow"}.get(r.state, "")
        state = f"[{color}]{r.state}[/{color}]" if color else r.state
        table.add_row(_e(what), _e(whom), state, str(r.attempts), _e(r.last_reply or ""))
    _console().print(table)


def print_subscriber(sub: Subscriber) -> None:
    """One subscriber after `subscribers add/set`: every preference on a line or two."""
    prefs = sub.preferences
    line = f"{sub.email}: {', '.join(prefs.categories or ['all categories'])} ({prefs.timezone}"
    line += f", at {prefs.send_at})" if prefs.send_at else ")"
    click.echo(clean_text(line))
    extras = []
    if prefs.include:
        extras.append(f"include: {', '.join(prefs.include)}")
    if prefs.exclude:
        extras.append(f"exclude: {', '.join(prefs.exclude)}")
    if prefs.max_stories:
        extras.append(f"{prefs.max_stories} stories a category")
    if prefs.language:
        extras.append(f"language: {prefs.language}")
    if not prefs.send_email:
        extras.append("no email")
    for channel in sub.channels:
        extras.append(f"channel {channel.key}: {channel.url}")
    for extra in extras:
        click.echo(clean_text(f"  {extra}"))


def print_subscribers(subs: list[Subscriber]) -> None:
    """`subscribers list`: one line each (address, categories, zone and time, channels)."""
    for s in subs:
        prefs = s.preferences
        when = f"{prefs.timezone} {prefs.send_at}" if prefs.send_at else prefs.timezone
        rules = " rules" if prefs.include or prefs.exclude else ""
        channels = ["email"] if prefs.send_email else []
        channels += [c.key.partition(":")[0] for c in s.channels]
        line = f"{s.email}\t{', '.join(prefs.categories or ()) or 'all'}\t{when}\t"
        click.echo(clean_text(line + f"{'+'.join(channels) or 'none'}{rules}"))


def _last_runs(status: Status) -> Table:
    """The table of each job's last run: when, how long, what it counted, how many errors."""
    table = Table(title="last runs", expand=False)
    for col in ("job", "status", "started", "took", "counts", "errors"):
        table.add_column(col)
    for kind, r in status.last_runs.items():
        counts = ", ".join(f"{k} {v}" for k, v in r.counts.items() if isinstance(v, int) and v)
        took = f"{(r.finished_at - r.started_at).total_seconds():.2f} s" if r.finished_at else None
        table.add_row(
            kind,
            r.status,
            r.started_at.isoformat()[:19],
            took or "running",
            counts,
            str(len(r.errors)),
        )
    return table


def _print_last_deepen(console: Console, status: Status) -> None:
    """How the last deepen summarized: by the LLM or not, its claims, why it fell back."""
    last = status.llm_last_deepen
    if not last:
        return
    claims = last["claims"]
    console.print(
        f"summaries in the last deepen: {last['llm']} by the LLM, {last['extractive']} "
        f"extractive, {last['reused']} unchanged · {last['llm_calls']} LLM calls reading "
        f"{last['sources_read']} outlets · claims {claims['found']} of {claims['total']} "
        f"found, {claims['sentences_removed']} sentences removed, "
        f"{claims['summaries_rejected']} summaries rejected"
    )
    if last["over_budget"]:
        console.print(
            f"[yellow]{last['over_budget']} extractive: {_e('[llm] budget')} spent[/yellow]"
        )
    for why in last["why"]:
        console.print(f"[yellow]llm[/yellow]: {_e(why)}")


def print_status(status: Status) -> None:
    from digest.jobs.clustering import NO_EMBEDDINGS

    console = _console()
    running = "[green]running[/green]" if status.daemon_running else "[yellow]not running[/yellow]"
    console.print(f"daemon: {running}")
    console.print(f"next collect: {status.next_collect.isoformat()}")
    console.print(f"next publish: {status.next_publish.isoformat()}")
    console.print(_last_runs(status))
    for e in status.failing_sources:
        console.print(f"[red]failing source[/red] {_e(e['source'])}: {_e(e['error'])}")
    for host, pages in status.failing_hosts.items():
        console.print(f"[yellow]failing host[/yellow] {_e(host)}: {pages} page(s) late or failed")
    for f in status.failing_feeds:
        console.print(
            f"[red]failing feed[/red] {_e(f.url)} ({f.error_count}x): {_e(f.last_error or '')}"
        )
    console.print(f"LLM: {status.llm}; tokens today: {status.llm_tokens_today}")
    _print_last_deepen(console, status)
    last_used, _why = status.browser_last_used
    console.print(f"browser: configured {status.browser_configured}, last used {last_used or '-'}")
    used, why = status.similarity_last_used
    if status.embeddings_configured is None:
        console.print(
            f"embeddings: off (no {_e('[stories.embeddings]')}): stories by their words alone"
        )
    elif used == "lexical" and why not in (None, NO_EMBEDDINGS):
        console.print(
            f"embeddings: [red]{_e(status.embeddings_configured)} failed[/red] in the last "
            f"deepen, stories by their words alone: {_e(why or '')}"
        )
    else:
        console.print(
            f"embeddings: {_e(status.embeddings_configured)}, last deepen used "
            f"{used or '-'}; {status.article_vectors} article vectors stored"
        )
    console.print(f"deliveries: {ledger_line(status.deliveries)}")
    for d in status.failed_deliveries:
        console.print(
            f"[red]failed {'email' if d.channel == 'email' else 'message'}[/red] "
            f"{d.edition_day.isoformat()} to {_e(d.addressee)}: "
            f"{_e(d.last_reply or '')}"
        )
    if any(status.alerts.values()):  # alerts to the followers of stories, by state
        console.print(f"alerts: {ledger_line(status.alerts)}")
    print_queue(console, status)
    size, count = status.database_bytes, status.articles["articles"]
    console.print(
        f"database: {size / 1e6:.1f} MB, {count} articles"
        if size is not None
        else f"database: {count} articles"
    )


def print_queue(console: Any, status: Status) -> None:
    """The task queue: tasks waiting, running and failed per kind, and the live workers."""
    queue = status.queue
    if queue is None:
        console.print("queue: off (the work runs in this process)")
        return
    alive = ", ".join(f"#{w.id} ({w.running} running)" for w in queue.workers)
    console.print(f"queue: {len(queue.workers)} live worker(s){': ' + alive if alive else ''}")
    if not queue.tasks:
        console.print("queue: no task waiting, running or failed")
        return
    table = Table(title="tasks", expand=False)
    for col in ("kind", "waiting", "running", "failed"):
        table.add_column(col)
    for kind, states in sorted(queue.tasks.items()):
        table.add_row(kind, *(str(states.get(k, 0)) for k in ("waiting", "running", "failed")))
    console.print(table)


def ledger_line(counts: dict[str, int]) -> str:
    """The ledger's emails per state on one line ("0 pending, 0 sending, 2 sent, 1 failed");
    failed and stuck ones stand out in colour."""
    if not any(counts.values()):
        return "none yet"
    colors = {"failed": "red", "sending": "yellow"}
    parts = []
    for state, n in counts.items():
        text = f"{n} {_e(state)}"
        color = colors.get(state) if n else None
        parts.append(f"[{color}]{text}[/{color}]" if color else text)
    return ", ".join(parts)


# --- feeds -------------------------------------------------------------------------------------

SKIPPED_SHOWN = 10


def print_added_feed(added: AddedFeed) -> None:
    console = _console()
    f = added.feed
    shown = f.name or added.title or f.url
    where = f", found on {_e(added.page_url)}" if added.page_url else ""
    console.print(
        f"added {_e(f.url)} to {_e(f.category)}: {_e(shown)} ({added.entries} entries now){where}"
    )


def print_removed_feed(feed: SubscribedFeed) -> None:
    _console().print(f"removed {_e(feed.url)} ({_e(feed.category)})")


def print_feeds(feeds: list[ListedFeed]) -> None:
    console = _console()
    if not feeds:
        console.print("no feeds: add one with digest feeds add URL, or import FILE.opml")
        return
    table = Table(show_lines=False, expand=True)
    for column in ("category", "feed", "in", "health"):
        table.add_column(column, overflow="fold")
    for f in feeds:
        title = f"{_e(f.title)}\n" if f.title else ""
        stored = "config" if f.in_config else f"db ({f.source})"
        table.add_row(_e(f.category), f"{title}{_e(f.url)}", stored, _health(f))
    console.print(table)
    failing = sum(1 for f in feeds if f.state and f.state.error_count)
    console.print(f"{len(feeds)} feed(s), {failing} failing")


def _health(f: ListedFeed) -> str:
    s = f.state
    if s is None or s.last_checked_at is None:
        return "not fetched yet"
    if s.error_count:
        ok = s.last_ok_at.isoformat()[:16] if s.last_ok_at else "never"
        error = _e(s.last_error or "")
        return f"[red]{s.error_count} failure(s) in a row[/red]: {error} (last ok {ok})"
    return f"ok {s.last_ok_at.isoformat()[:16]}" if s.last_ok_at else "ok"


def print_import_report(report: ImportReport) -> None:
    console = _console()
    console.print(
        f"{_e(report.source)}: imported {len(report.imported)}, "
        f"{len(report.duplicates)} duplicate(s), {len(report.skipped)} skipped"
    )
    per_category: dict[str, int] = {}
    for f in report.imported:
        per_category[f.category] = per_category.get(f.category, 0) + 1
    for category, n in per_category.items():
        console.print(f"  {_e(category)}: {n}")
    for url, why in report.skipped[:SKIPPED_SHOWN]:
        console.print(f"[yellow]skipped[/yellow] {_e(url)}: {_e(why)}")
    if len(report.skipped) > SKIPPED_SHOWN:
        console.print(f"... and {len(report.skipped) - SKIPPED_SHOWN} more skipped")
    if report.unplaced:
        folders = ", ".join(
            f"{_e(name) if name else '(no folder)'} ({n})" for name, n in report.unplaced.items()
        )
        console.print(
            f"folders that name no configured category: {folders}; "
            "give --category to import their feeds into one"
        )


# --- editions ----------------------------------------------------------------------------------


def print_editions(found: list[ListedEdition]) -> None:
    """`editions list`: one line an edition (day, stories, headlines, messages per state)."""
    if not found:
        click.echo("no editions yet")
        return
    for e in found:
        messages = ", ".join(f"{n} {state}" for state, n in e.deliveries.items()) or "none"
        click.echo(
            clean_text(
                f"{e.day.isoformat()}\t{e.stories} stories, {e.headlines} headlines\t"
                f"messages: {messages}"
            )
        )


def print_removed_edition(removed: RemovedEdition) -> None:
    """`editions remove`: what went, and what the ledger keeps."""
    click.echo(
        f"removed the edition of {removed.day.isoformat()}: archive written again "
        f"({removed.pages_removed} pages removed, {removed.pages_written} written)"
    )
    if removed.sent:
        click.echo(
            f"digest: warning: {removed.sent} message(s) of it were sent already: they stay "
            "in the ledger (digest deliveries) and the day is not sent to them again",
            err=True,
        )
    if removed.skipped:
        click.echo(f"{removed.skipped} message(s) of it not sent yet are skipped")
