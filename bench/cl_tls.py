"""The CL-TLS collection (github.com/MorenoLaQuatra/CL-TLS) as articles: read from its git
directory (`fetch github:MorenoLaQuatra/CL-TLS`) or from a folder exported from it, never copied
into the project. Layout LANG/TOPIC/YYYY-MM-DD/NAME.txt: one scraped page a file, the site's
header and footer lines kept, no outlet named.

**Outlets, by the site's boilerplate** (the rule): a line is boilerplate when it is short (at
most 120 characters) and stands among the first 4 or the last 10 lines of at least two files of
different days of the same language. Two files sharing a boilerplate line are one outlet (and
so on transitively: the groups are the connected files). An outlet is named by the first (in
sorted order) of its boilerplate lines with a "©", "copyright" or a site's address in it, else
by its most shared boilerplate line (the first in sorted order of those), cut to 40
characters; a file sharing no boilerplate line is an outlet of its own ("site <name>").

**Title, lede and text** (what a collect and a deep crawl would have given): boilerplate lines
and lines of fewer than 4 words are dropped; the title is the first line left of 4 to 30
words, the lede the next line left of at least 12 words (else the title), the main text every
line left from the title on with at least 8 words, one paragraph each.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

HEAD, TAIL, SHORT = 4, 10, 120
# A line that names its site: a copyright line, or one with a site's address in it.
_NAMED = re.compile(r"©|copyright|\b[\w-]+\.(?:com|es|fr|it|net|org|info|ch)\b", re.I)
_NAME = re.compile(
    r"^(?P<lang>[a-z]{2})/(?P<topic>[a-z]+)/(?P<day>\d{4}-\d{2}-\d{2})/(?P<stem>[^/]+)\.txt$"
)


@dataclass(frozen=True, slots=True)
class Article:
    id: str  # "es/syria/2017-04-07/ext_194"
    lang: str
    topic: str
    day: date
    outlet: str
    title: str
    lede: str
    text: str
    raw: str


class Source:
    """The collection, a git directory or a plain folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.git = (path / "HEAD").exists() and (path / "objects").is_dir()

    def names(self, prefixes: Sequence[str]) -> list[str]:
        if self.git:
            out = subprocess.run(
                [
                    "git",
                    "--git-dir",
                    str(self.path),
                    "ls-tree",
                    "-r",
                    "--name-only",
                    "HEAD",
                    "--",
                    *prefixes,
                ],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()
        else:
            out = [
                p.relative_to(self.path).as_posix()
                for prefix in prefixes
                for p in (self.path / prefix).rglob("*.txt")
            ]
        return sorted(n for n in out if _NAME.match(n))

    def read(self, name: str) -> str:
        if self.git:
            return subprocess.run(
                ["git", "--git-dir", str(self.path), "show", f"HEAD:{name}"],
                check=True,
                capture_output=True,
            ).stdout.decode("utf-8", "replace")
        return (self.path / name).read_text(encoding="utf-8", errors="replace")


def _lines(raw: str) -> list[str]:
    return [line.strip() for line in raw.splitlines() if line.strip()]


def _edges(lines: list[str]) -> set[str]:
    return {line for line in lines[:HEAD] + lines[-TAIL:] if len(line) <= SHORT}


def boilerplate(files: dict[str, str]) -> set[str]:
    """The lines standing at the head or foot of files of at least two different days."""
    days: dict[str, set[str]] = defaultdict(set)
    for name, raw in files.items():
        day = name.split("/")[2]
        for line in _edges(_lines(raw)):
            days[line].add(day)
    return {line for line, seen in days.items() if len(seen) >= 2}


def outlets(files: dict[str, str], shared: set[str]) -> dict[str, str]:
    """Each file's outlet name, by the boilerplate lines it shares (see the module's rule)."""
    parent = {n: n for n in files}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    first_with: dict[str, str] = {}
    edges = {n: _edges(_lines(raw)) & shared for n, raw in files.items()}
    for n, lines in edges.items():
        for line in lines:
            if line in first_with:
                parent[root(n)] = root(first_with[line])
            else:
                first_with[line] = n
    groups: dict[str, list[str]] = defaultdict(list)
    for n in files:
        groups[root(n)].append(n)
    named: dict[str, str] = {}
    for members in groups.values():
        counted = Counter(line for n in members for line in edges[n])
        marked = sorted(line for line in counted if _NAMED.search(line))
        if marked:
            name = marked[0]
        elif counted:
            name = min(counted, key=lambda line: (-counted[line], line))
        else:
            name = "site " + members[0].split("/", 1)[1].removesuffix(".txt")
        name = name[:40]
        for n in members:
            named[n] = name
    return named


def _words(line: str) -> int:
    return len(line.split())


def article_of(name: str, raw: str, outlet: str, shared: set[str]) -> Article | None:
    m = _NAME.match(name)
    assert m is not None
    kept = [line for line in _lines(raw) if line not in shared and _words(line) >= 4]
    start = next((i for i, line in enumerate(kept) if _words(line) <= 30), None)
    if start is None:
        return None
    title = kept[start]
    rest = kept[start + 1 :]
    lede = next((line for line in rest if _words(line) >= 12), title)
    body = [line for line in kept[start:] if _words(line) >= 8]
    return Article(
        id=name.removesuffix(".txt"),
        lang=m["lang"],
        topic=m["topic"],
        day=date.fromisoformat(m["day"]),
        outlet=outlet,
        title=title,
        lede=lede,
        text="\n\n".join(body),
        raw=raw,
    )


def articles(source: Source, lang: str, topics: Iterable[str]) -> list[Article]:
    """Every article of `lang` under `topics`, outlets told by the boilerplate of those topics
    (only theirs: a held-out topic is never read to group a dev topic)."""
    names = source.names([f"{lang}/{t}" for t in topics])
    files = {n: source.read(n) for n in names}
    shared = boilerplate(files)
    named = outlets(files, shared)
    found = [article_of(n, raw, named[n], shared) for n, raw in files.items()]
    return [a for a in found if a is not None]
