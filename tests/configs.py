"""The test configuration, written once: a `digest.toml` for tests that run the real CLI.

Every test config reaches the local news web on loopback (`fetch.allowed_networks`), retries
DuckDuckGo never (the fake answers at once) and reads pages over plain HTTP without robots.txt,
unless a test says otherwise; `write_config(folder, sources={...}, crawl={...})` merges a test's
own sections over these defaults (a value of None removes a key).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

DEFAULTS: dict[str, dict[str, Any]] = {
    "sources": {"categories": ["technology", "world"], "ddg_retries": 0},
    "fetch": {"allowed_networks": ["127.0.0.1/32"]},
    "crawl": {"mode": "http", "respect_robots": False},
}


def feed(url: str, category: str = "technology") -> dict[str, str]:
    return {"url": url, "category": category}


def config_text(**sections: Mapping[str, Any] | None) -> str:
    """The TOML of the defaults with `sections` merged in (a section of None is left out)."""
    merged: dict[str, dict[str, Any]] = {name: dict(values) for name, values in DEFAULTS.items()}
    for name, values in sections.items():
        if values is None:
            merged.pop(name, None)
            continue
        section = merged.setdefault(name, {})
        for key, value in values.items():
            if value is None:
                section.pop(key, None)
            else:
                section[key] = value
    return tomli_w.dumps(merged)


def write_config(folder: Path, **sections: Mapping[str, Any] | None) -> Path:
    """Write `folder/digest.toml` (see `config_text`) and return the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "digest.toml").write_text(config_text(**sections), encoding="utf-8")
    return folder
