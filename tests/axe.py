"""axe-core, the accessibility engine, run in a page that Playwright opened in Chromium.

The script is the one the axe-playwright-python wheel ships (a test dependency): nothing is
fetched at test time. axe runs its default rules (WCAG 2.x A and AA, and best practices) but
those named in `skip`; a page passes with no violation at all. `violations` is for Playwright's
sync pages, `violations_async` for its async ones; both give one readable line per violated
rule, with an example element.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import axe_playwright_python

AXE_SCRIPT = (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text("utf-8")

# Evaluated after AXE_SCRIPT: only what a failure message needs crosses back to Python. No
# preload: axe would fetch the page's stylesheets again (for one rule, css-orientation-lock),
# which the archive's Content-Security-Policy rightly blocks and the tests report.
_RUN = """(skip) => axe.run(document, {
  resultTypes: ["violations"],
  preload: false,
  rules: Object.fromEntries(skip.map(id => [id, {enabled: false}])),
}).then(r => r.violations.map(v => ({
  id: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
  html: v.nodes[0].html, why: v.nodes[0].failureSummary,
})))"""


def _describe(found: list[dict[str, Any]]) -> list[str]:
    return [
        f"{v['id']} ({v['impact']}, {v['count']} element(s)): {v['help']}; e.g. {v['html']}: "
        f"{' '.join(str(v['why']).split())}"
        for v in found
    ]


def violations(page: Any, skip: Iterable[str] = ()) -> list[str]:
    """The accessibility violations of the page open in `page` (Playwright's sync API)."""
    page.evaluate(AXE_SCRIPT)
    return _describe(page.evaluate(_RUN, list(skip)))


async def violations_async(page: Any, skip: Iterable[str] = ()) -> list[str]:
    """The same for a page of Playwright's async API."""
    await page.evaluate(AXE_SCRIPT)
    return _describe(await page.evaluate(_RUN, list(skip)))
