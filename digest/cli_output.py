"""How results look on a terminal: rich tables, kept apart from the commands themselves."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from digest.collect import CollectReport
from digest.models import Extract, Item


def _console() -> Console:
    return Console(soft_wrap=False)


def _when(item: Item) -> str:
    p = item.headline.published
    return p.strftime("%Y-%m-%d %H:%M") if p else ""


def print_items(items: list[Item], *, title: str) -> None:
    console = _console()
    if not items:
        console.print(f"{title}: nothing found")
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
            f"{h.title}\n[dim]{h.url}[/dim]",
            h.source,
            _when(item),
            e.full_content or f"[dim]{h.snippet or '(' + e.status + ')'}[/dim]",
        )
    console.print(table)


def extract_json(e: Extract) -> dict[str, Any]:
    return {
        "url": e.url,
        "full_content": e.full_content,
        "status": e.status,
        "http_status": e.http_status,
        "final_url": e.final_url,
        "error": e.error,
    }


def print_extracts(results: list[Extract]) -> None:
    table = Table(show_lines=True, expand=True)
    table.add_column("url", ratio=1)
    table.add_column("status", no_wrap=True)
    table.add_column("lede", ratio=3)
    for e in results:
        table.add_row(e.url, e.status, e.full_content or f"[dim]{e.error or ''}[/dim]")
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
        console.print(f"[red]failed[/red] {f.source}: {f.error}")
    console.print(f"{report.headlines} headlines in {report.elapsed:.1f} s")
