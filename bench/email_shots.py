"""Screenshots of an email digest as a reader opens it, and how tall it is, at 1280 and 390 px.

Run from the repository root (Debian's Chromium, as the browser tests use):

    .venv/bin/python bench/email_shots.py --out shots --name after

The edition is `tests.mailfixtures.front_page_edition`: a Google News-shaped day's two busiest
categories, five stories each (1 to 14 outlets, headlines still carrying their publisher) and
ten more headlines each. It is read from this script's own tree by file path, so the same
edition can be rendered by another checkout's code: put that checkout first on PYTHONPATH
(`PYTHONPATH=/tmp/before .venv/bin/python bench/email_shots.py --name before`) and its
`digest` renders it. Writes NAME-1280.png, NAME-390.png (full page) and NAME.html into --out,
and prints the subject and each page height.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from email.message import EmailMessage
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "mailfixtures.py"
WIDTHS = ((1280, 800), (390, 844))
CHROMIUM = "/usr/bin/chromium"
if "PYTHONPATH" not in os.environ and str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this tree's code, unless another checkout is asked for


def _fixtures() -> object:
    spec = importlib.util.spec_from_file_location("email_shot_fixtures", FIXTURES)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def email_html() -> tuple[str, str]:
    """(subject, HTML part) of the edition, rendered by whichever `digest` is importable."""
    from digest.deliver import Recipient, build_message

    fx = _fixtures()
    msg: EmailMessage = build_message(
        fx.front_page_edition(),  # type: ignore[attr-defined]
        Recipient("reader@example.com", timezone="Europe/Berlin"),
        fx.CONFIG,  # type: ignore[attr-defined]
        archive_url=fx.ARCHIVE_URL,  # type: ignore[attr-defined]
        unsubscribe_url=fx.UNSUBSCRIBE_URL,  # type: ignore[attr-defined]
    )
    body = msg.get_body(("html",))
    assert body is not None
    return str(msg["Subject"]), str(body.get_content())


def shoot(page_file: Path, out: Path, name: str) -> dict[str, int]:
    """Full-page screenshots at each width; the page's height (px) at each."""
    from playwright.sync_api import sync_playwright

    heights = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for width, height in WIDTHS:
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(page_file.as_uri())
                heights[f"{width}"] = page.evaluate("document.documentElement.scrollHeight")
                heights[f"{width}_scroll_width"] = page.evaluate(
                    "document.documentElement.scrollWidth"
                )
                page.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)
                page.close()
        finally:
            browser.close()
    return heights


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("shots"))
    parser.add_argument("--name", default="after")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    subject, html = email_html()
    page_file = args.out / f"{args.name}.html"
    page_file.write_text(html, encoding="utf-8")
    heights = shoot(page_file, args.out, args.name)
    print(json.dumps({"name": args.name, "subject": subject, "height_px": heights}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
