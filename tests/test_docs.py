"""Documentation that cannot drift: every command, option and config key is documented, and every
link between the pages leads somewhere.

As sqlite-utils does it: the test walks the real click command tree and the real config model, so
a new command, option or key fails here until it is in the README or a page of docs/.
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path

import click
import pytest
from pydantic import BaseModel

from digest.cli import cli
from digest.config import Config

ROOT = Path(__file__).resolve().parent.parent
PAGES = {
    path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
}
DOCS = "\n".join(PAGES.values())
WHERE = "README.md or docs/"


def commands(group: click.Group = cli, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        found.append(path)
        if isinstance(command, click.Group):
            found += commands(command, path)
    return found


def command(path: tuple[str, ...]) -> click.Command:
    current: click.Command = cli
    for name in path:
        assert isinstance(current, click.Group)
        current = current.commands[name]
    return current


def options(cmd: click.Command) -> list[click.Option]:
    return [p for p in cmd.params if isinstance(p, click.Option)]


def command_row(top: str) -> str:
    """The table row of a top-level command (all of its subcommands share it), wherever it is."""
    rows = [line for line in DOCS.splitlines() if line.startswith(f"| `digest {top}")]
    assert rows, f"`digest {top}` has no row in a command table of {WHERE}"
    return " ".join(rows)


def section_model(annotation: object) -> type[BaseModel] | None:
    """A config field's section: itself, optional (`[llm]`) or a list (`[[sources.feeds]]`)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) in (
        typing.Union,
        list,
    ):
        for arg in typing.get_args(annotation):
            if (model := section_model(arg)) is not None:
                return model
    return None


def config_names(model: type[BaseModel] = Config, prefix: str = "") -> tuple[set[str], set[str]]:
    """The config file's sections and keys, dotted (`stories.embeddings`, `email.from`)."""
    sections: set[str] = set()
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        dotted = prefix + (field.alias or name)
        if (sub := section_model(field.annotation)) is not None:
            sections.add(dotted)
            more_sections, more_keys = config_names(sub, dotted + ".")
            sections |= more_sections
            keys |= more_keys
        else:
            keys.add(dotted)
    return sections, keys


SECTIONS, KEYS = config_names()


def outside_code(text: str) -> str:
    """The text of a page without its fenced code blocks (neither headings nor links there)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)


def toml_keys(text: str) -> set[str]:
    """The dotted keys written, or shown commented out, in the ```toml blocks of a page."""
    found = set()
    for block in re.findall(r"^```toml\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        section = ""
        for line in block.splitlines():
            if header := re.match(r"#?\s*\[\[?([\w.]+)\]\]?", line):
                section = header[1]
            elif section and (key := re.match(r"#?\s*(\w+)\s*=", line)):
                found.add(f"{section}.{key[1]}")
    return found


def named_keys(text: str) -> set[str]:
    """The config names a page's prose gives: `serve.host`, `[llm] budget`, `[queue]`."""
    tops = {section.split(".")[0] for section in SECTIONS}
    found = {name for name in re.findall(r"`([\w.]+)`", text) if name.split(".")[0] in tops}
    found |= {f"{section}.{key}" for section, key in re.findall(r"`\[([\w.]+)\] (\w+)", text)}
    found |= {
        name for name in re.findall(r"`\[\[?([\w.]+)\]\]?", text) if name.split(".")[0] in tops
    }
    return {name for name in found if "." in name or name in SECTIONS}


def documented_keys() -> set[str]:
    return {name for text in PAGES.values() for name in toml_keys(text) | named_keys(text)}


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    return {slug(h) for h in re.findall(r"^#+ (.+)$", outside_code(text), flags=re.MULTILINE)}


def relative_links(text: str) -> list[str]:
    links = re.findall(r"\[[^\]]*\]\(([^)\s]+)\)", outside_code(text))
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


@pytest.mark.parametrize("path", commands(), ids=" ".join)
def test_every_command_has_help_and_a_row_in_the_docs(path: tuple[str, ...]) -> None:
    cmd = command(path)
    assert (cmd.help or "").strip(), f"`digest {' '.join(path)}` has no help text"
    row = command_row(path[0])
    if len(path) > 1:
        assert f"`{path[-1]}" in row or f"{' '.join(path)}" in row, (
            f"`digest {' '.join(path)}` is not in the row for `digest {path[0]}` in {WHERE}"
        )


@pytest.mark.parametrize("path", commands(), ids=" ".join)
def test_every_option_has_help_and_is_in_the_docs(path: tuple[str, ...]) -> None:
    cmd = command(path)
    row = command_row(path[0])
    for option in options(cmd):
        flag = max(option.opts, key=len)
        assert (option.help or "").strip(), f"`digest {' '.join(path)} {flag}` has no help text"
        if option.hidden or flag == "--help":
            continue
        assert flag in row, f"`digest {' '.join(path)} {flag}` is not in {WHERE}"


def test_global_options_are_in_the_docs() -> None:
    for option in options(cli):
        flag = max(option.opts, key=len)
        assert (option.help or "").strip(), f"`digest {flag}` has no help text"
        if flag not in ("--help", "--version"):
            assert f"`{flag}" in DOCS, f"the global option {flag} is not in {WHERE}"


def test_the_docs_list_no_command_that_does_not_exist() -> None:
    tops = {path[0] for path in commands()}
    for page, text in PAGES.items():
        for line in text.splitlines():
            if line.startswith("| `digest "):
                name = line.split("`digest ", 1)[1].split()[0].rstrip("`")
                assert name in tops, f"{page} documents `digest {name}`, which does not exist"


def test_every_config_key_is_documented() -> None:
    documented = documented_keys()
    missing = sorted(KEYS - documented)
    assert not missing, f"config keys documented nowhere in {WHERE}: {', '.join(missing)}"


def test_the_docs_name_no_config_key_that_does_not_exist() -> None:
    for page, text in PAGES.items():
        unknown = sorted((toml_keys(text) | named_keys(text)) - KEYS - SECTIONS)
        assert not unknown, f"{page} names config keys that do not exist: {', '.join(unknown)}"


def test_the_config_reference_shows_every_section() -> None:
    shown = {name.rsplit(".", 1)[0] for name in toml_keys(PAGES["docs/configuration.md"])}
    assert shown >= SECTIONS, f"sections missing from docs/configuration.md: {SECTIONS - shown}"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page: str) -> None:
    for link in relative_links(PAGES[page]):
        target, _, anchor = link.partition("#")
        path = (ROOT / page).parent / target if target else ROOT / page
        assert path.exists(), f"{page} links to {link}, which does not exist"
        if anchor:
            assert path.suffix == ".md", f"{page} links to an anchor in a non-Markdown file: {link}"
            text = path.read_text(encoding="utf-8")
            assert anchor in anchors(text), f"{page} links to {link}: no such heading"


def test_the_readme_links_every_page_of_the_docs() -> None:
    links = relative_links(PAGES["README.md"])
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in links}
    for page in PAGES:
        if page.startswith("docs/"):
            assert (ROOT / page).resolve() in linked, f"the README does not link {page}"
