"""The Jinja2 environment shared by the archive and the HTML digest, and its helpers.

Autoescape is on for every template (HTML and Atom alike) and undefined names fail loudly.
Scraped text reaches templates as plain strings, so it is always escaped; scraped URLs become
links only through `external()`, which keeps plain http(s) links (`safe_url`) and shows the text
alone otherwise.
"""

from __future__ import annotations

import base64
import hashlib
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, tzinfo
from functools import cache
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import jinja2
from markupsafe import Markup, escape

from digest import messages
from digest.models import (
    Disagreement,
    Edition,
    EditionHeadline,
    EditionSection,
    EditionStory,
    Outlet,
    WhatsNew,
)
from digest.render import corrections, layout
from digest.render.counts import plural
from digest.render.headlines import clean_headline, first_sentence, outlets_line
from digest.render.sanitize import clean_text, needs_cleaning, safe_url
from digest.schedule import known_zone
from digest.stories.language import RIGHT_TO_LEFT, language_name

__all__ = [
    "PAGE_CSP",
    "SEARCH_CSP",
    "clean_edition",
    "environment",
    "inline_style_csp",
    "reader_environment",
    "search_script",
    "stylesheet",
]

# The policy of every archive page but search.html: nothing loads but the archive's own
# stylesheet. No scripts, no images, fonts, frames or forms; <base> cannot redirect relative
# links. Referrers are off separately (<meta name="referrer">), so following an outlet link leaks
# nothing.
PAGE_CSP = "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'"
# The one page that runs a script: search.html loads the archive's own search.js and the index
# (files next to it; nothing inline, no eval) and its GET form submits to itself.
SEARCH_CSP = (
    "default-src 'none'; style-src 'self'; script-src 'self'; base-uri 'none'; form-action 'self'"
)

_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()


def inline_style_csp(css: str) -> str:
    """The page policy for a document that carries its stylesheet inline (pinned by hash)."""
    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode("ascii")
    return f"default-src 'none'; style-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"


@cache
def environment() -> jinja2.Environment:
    """The archive's environment: operator-facing pages, in English."""
    return _build()


@cache
def reader_environment(language: str | None) -> jinja2.Environment:
    """The environment of what is sent to a reader (the email's parts, the chat digest): the
    archive's, with the i18n extension and the message catalogue of the reader's language
    (`messages.catalogue`), so that `_()` and `ngettext()` in those templates say the frame in
    it. English is the msgids themselves, so an English reader's copy is what it was."""
    env = _build(("jinja2.ext.i18n",))
    env.install_gettext_translations(  # type: ignore[attr-defined]
        messages.catalogue(language), newstyle=True
    )
    return env


def _build(extensions: Sequence[str] = ()) -> jinja2.Environment:
    # Templates are installed as the package `digest.templates` (pyproject maps templates/ there).
    env = jinja2.Environment(
        extensions=list(extensions),
        loader=jinja2.PackageLoader("digest.templates", ""),
        # Everything is escaped (HTML, Atom, strings) but the plain-text parts and the compact
        # digest's Markdown (its own filter, `md`, escapes that).
        autoescape=jinja2.select_autoescape(
            enabled_extensions=(), disabled_extensions=("txt", "md"), default=True
        ),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    env.globals.update(
        link=link,
        external=external,
        plural=plural,
        story_count=story_count,
        language_groups=language_groups,
        lang_attrs=lang_attrs,
        mark_corrected=corrections.mark_corrected,
        paths=SimpleNamespace(
            edition=layout.edition_path,
            category=layout.category_path,
            story=layout.story_path,
            category_feed=layout.category_feed_path,
            slug=layout.category_slug,
        ),
    )
    env.filters.update(
        paragraphs=paragraphs,
        long_date=long_date,
        short_date=short_date,
        local_time=local_time,
        iso_time=iso_time,
        category_name=category_name,
        outlet_name=outlet_name,
        summarizer_label=summarizer_label,
        claims_line=claims_line,
        language_name=language_name,
        plural=plural,
        first_sentence=first_sentence,
        outlets_line=outlets_line,
        wrap=wrap,
        md=md,
        md_url=md_url,
        correction_line=corrections.correction_line,
        subject_phrase=corrections.subject_phrase,
        attributed=attributed,
        dispute_line=corrections.dispute_line,
    )
    return env


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")


def attributed(d: Disagreement, language: str | None = "en") -> str:
    """Where outlets disagree, each value with who reports it: "at least 30, according to A
    and B; 45, according to C" (`corrections.attributed_values`, in `language`)."""
    return corrections.attributed_values(d, language)


def md(text: str) -> str:
    """Text for a Markdown template: its special characters escaped, so that it shows as
    typed and never as markup (a scraped "[click](javascript:...)" stays text)."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_url(url: str) -> str:
    """A checked (`safe_url`) URL as a Markdown link target: what would end it encoded."""
    return url.replace("(", "%28").replace(")", "%29").replace(" ", "%20").replace("<", "%3C")


@cache
def stylesheet() -> str:
    """The archive's stylesheet (templates/archive/style.css)."""
    return _static("archive/style.css")


@cache
def search_script() -> str:
    """The search page's script (templates/archive/search.js)."""
    return _static("archive/search.js")


def _static(name: str) -> str:
    env = environment()
    assert env.loader is not None
    source, _, _ = env.loader.get_source(env, name)
    return source


def inline_css() -> Markup:
    return Markup(stylesheet())  # our own file, not scraped text


# -- links (Python, not macros: they run tens of thousands of times per archive) ----------------


def link(href: str | None, text: str, class_: str | None = None) -> Markup:
    """A link into the archive, or the text alone when the target is out of reach."""
    cls = f' class="{escape(class_)}"' if class_ else ""
    if href:
        return Markup(f'<a href="{escape(href)}"{cls}>{escape(text)}</a>')
    return Markup(f"<span{cls}>{escape(text)}</span>")


def external(url: str, text: str, title: str | None = None) -> Markup:
    """A link out to an outlet when its URL is plain http(s); otherwise the text alone."""
    href = safe_url(url)
    if href is None:
        return Markup(f'<span class="unlinked">{escape(text)}</span>')
    tip = f' title="{escape(title)}"' if title else ""
    return Markup(
        f'<a href="{escape(href)}" rel="noopener noreferrer nofollow"{tip}>{escape(text)}</a>'
    )


# -- filters -------------------------------------------------------------------------------------


def paragraphs(text: str) -> list[str]:
    """Plain text split into the paragraphs a summary was written in (one per line)."""
    return [p.strip() for p in text.splitlines() if p.strip()]


def long_date(day: date) -> str:
    return f"{_WEEKDAYS[day.weekday()]} {day.day} {_MONTHS[day.month - 1]} {day.year}"


def short_date(day: date) -> str:
    return f"{day.day} {_MONTHS[day.month - 1][:3]} {day.year}"


def zone(name: str) -> tzinfo:
    return known_zone(name) or UTC


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def local_time(moment: datetime, timezone: str, day: date | None = None) -> str:
    """ "14:05 CET" when the moment is on `day`, else "28 Nov 2026, 22:10 CET"."""
    local = _aware(moment).astimezone(zone(timezone))
    clock = f"{local:%H:%M} {local.tzname() or ''}".rstrip()
    if day is not None and local.date() == day:
        return clock
    return f"{short_date(local.date())}, {clock}"


def iso_time(moment: datetime, timezone: str) -> str:
    """The moment in the edition's time zone, for a <time datetime="..."> attribute."""
    return _aware(moment).astimezone(zone(timezone)).replace(microsecond=0).isoformat()


def rfc3339(moment: datetime) -> str:
    """An Atom date: UTC, seconds precision."""
    utc = _aware(moment).astimezone(UTC).replace(microsecond=0)
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")


def category_name(category: str) -> str:
    return category[:1].upper() + category[1:]


def wrap(text: str, indent: str = "", first: str | None = None, width: int = 72) -> str:
    """Plain text wrapped for a text/plain part (`first` prefixes the first line, `indent` the
    others); URLs and long words are never broken."""
    return textwrap.fill(
        text,
        width=width,
        initial_indent=indent if first is None else first,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


def clip(text: str, limit: int) -> str:
    """The text on one line, cut at a word boundary to at most `limit` characters (with "…")."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-–—") + "…"


def story_count(edition: Edition) -> int:
    return sum(len(s.stories) for s in edition.sections)


def outlet_name(outlet: Outlet) -> str:
    """The outlet's name, or the host of its link when the source gave no name."""
    if outlet.name.strip():
        return outlet.name.strip()
    host = urlsplit(outlet.url).hostname if safe_url(outlet.url) else None
    return clean_text(host or "source").removeprefix("www.")  # URLs are not cleaned


@dataclass(frozen=True, slots=True)
class LanguageGroup:
    """A story's outlets in one language; `code` "" holds those whose language is not known."""

    code: str
    name: str  # the language's own name ("Deutsch"), "" for the unknown group
    outlets: tuple[Outlet, ...]


def language_groups(outlets: Sequence[Outlet]) -> list[LanguageGroup]:
    """The outlets by language: the languages with most outlets first (ties: in story order),
    outlets in story order within each, those without a known language last. An edition stored
    before languages were detected gives one group with code ""."""
    groups: dict[str, list[Outlet]] = {}
    for o in outlets:
        code = o.language if language_name(o.language) else ""
        groups.setdefault(code, []).append(o)
    order = sorted(groups, key=lambda c: (c == "", -len(groups[c])))  # a stable sort
    return [LanguageGroup(c, language_name(c), tuple(groups[c])) for c in order]


def lang_attrs(code: str) -> Markup:
    """` lang="de"` (and ` dir="rtl"` for a right-to-left language) for a known language code,
    nothing for any other value."""
    if not language_name(code):
        return Markup("")
    direction = ' dir="rtl"' if code in RIGHT_TO_LEFT else ""
    return Markup(f' lang="{escape(code)}"{direction}')


def summarizer_label(summarizer: str) -> str:
    if summarizer.startswith("llm:"):
        return f"summarized by {summarizer[4:]}"
    return "extractive summary" if summarizer == "extractive" else summarizer


def claims_line(story: EditionStory) -> str:
    """What the claim check said of a story's summary, for a reader ("" when it was not run)."""
    if story.claims is None:
        return ""
    found = story.claims_found if story.claims_found is not None else story.claims
    line = f"Claims checked against the sources: {found} of {story.claims} found"
    if story.sentences_removed:
        n = story.sentences_removed
        line += f"; {n} sentence{'' if n == 1 else 's'} with unfound claims removed"
    return line + "."


# -- scraped text --------------------------------------------------------------------------------


def clean_edition(edition: Edition) -> Edition:
    """The edition with the characters no reader should get (`clean_text`) removed from its text,
    and its headlines without their outlet's name or a section label (`clean_headline`).

    Every archive renderer (pages, feeds, the search index) takes its editions through here, so
    it is the one place where scraped text enters rendering: one stray control character cannot
    make a feed unparseable, and a bidi override cannot disguise a title. Escaping is still the
    templates' job.
    """
    sections = tuple(_clean_section(s) for s in edition.sections)
    if all(a is b for a, b in zip(sections, edition.sections, strict=True)):
        return edition
    return replace(edition, sections=sections)


def _clean_section(section: EditionSection) -> EditionSection:
    stories = tuple(_clean_story(s) for s in section.stories)
    headlines = tuple(_clean_headline(h) for h in section.headlines)
    if (
        not needs_cleaning(section.category)
        and all(a is b for a, b in zip(stories, section.stories, strict=True))
        and all(a is b for a, b in zip(headlines, section.headlines, strict=True))
    ):
        return section  # the common case: nothing to remove, nothing to copy
    return replace(
        section, category=clean_text(section.category), stories=stories, headlines=headlines
    )


def _clean_memory(story: EditionStory) -> EditionStory:
    """A story's timeline, disputes and corrections (scraped text) as a reader may see it."""
    events = story.timeline
    texts = [t for e in events for t in (e.outlet, e.text, e.value, e.previous, e.subject)]
    texts += [t for d in story.disagreements for r in d.reported for t in (r.value, *r.outlets)]
    texts += [t for c in story.corrections for t in (c.said, c.now, c.sentence, *c.outlets)]
    if not any(map(needs_cleaning, texts)):
        return story
    return replace(
        story,
        timeline=tuple(
            replace(
                e,
                outlet=clean_text(e.outlet),
                text=clean_text(e.text),
                value=clean_text(e.value),
                previous=clean_text(e.previous),
                subject=clean_text(e.subject),
            )
            for e in events
        ),
        disagreements=tuple(
            replace(
                d,
                reported=tuple(
                    replace(r, value=clean_text(r.value), outlets=tuple(map(clean_text, r.outlets)))
                    for r in d.reported
                ),
            )
            for d in story.disagreements
        ),
        corrections=tuple(
            replace(
                c,
                said=clean_text(c.said),
                now=clean_text(c.now),
                sentence=clean_text(c.sentence),
                outlets=tuple(map(clean_text, c.outlets)),
            )
            for c in story.corrections
        ),
    )


def _clean_story(story: EditionStory) -> EditionStory:
    story = _clean_memory(story)
    texts = (story.category, story.title, story.brief_summary, story.summary, story.summarizer)
    news = story.whats_new
    if (
        not any(map(needs_cleaning, (*texts, story.summary_note)))
        and all(k and k == k.strip() and not needs_cleaning(k) for k in story.keywords)
        and not any(map(_outlet_needs_cleaning, (*story.outlets, *story.cited)))
        and (news is None or not _news_needs_cleaning(news))
    ):
        title = _story_headline(story.title, story.outlets)
        return story if title == story.title else replace(story, title=title)
    return replace(
        story,
        category=clean_text(story.category),
        title=_story_headline(clean_text(story.title), story.outlets),
        brief_summary=clean_text(story.brief_summary),
        summary=clean_text(story.summary),
        keywords=tuple(k for k in (clean_text(k).strip() for k in story.keywords) if k),
        summarizer=clean_text(story.summarizer),
        outlets=tuple(map(_clean_outlet, story.outlets)),
        cited=tuple(map(_clean_outlet, story.cited)),
        summary_note=clean_text(story.summary_note),
        whats_new=None
        if news is None
        else replace(
            news,
            outlets=tuple(map(_clean_outlet, news.outlets)),
            facts=tuple(
                replace(f, outlet=clean_text(f.outlet), text=clean_text(f.text)) for f in news.facts
            ),
        ),
    )


def _story_headline(title: str, outlets: Sequence[Outlet]) -> str:
    return clean_headline(title, [clean_text(o.name) for o in outlets])


def _outlet_needs_cleaning(outlet: Outlet) -> bool:
    return needs_cleaning(outlet.name) or needs_cleaning(outlet.title)


def _news_needs_cleaning(news: WhatsNew) -> bool:
    return any(map(_outlet_needs_cleaning, news.outlets)) or any(
        needs_cleaning(f.outlet) or needs_cleaning(f.text) for f in news.facts
    )


def _clean_outlet(outlet: Outlet) -> Outlet:
    return replace(outlet, name=clean_text(outlet.name), title=clean_text(outlet.title))


def _clean_headline(headline: EditionHeadline) -> EditionHeadline:
    texts = (headline.title, headline.source, headline.lede, *headline.outlets)
    if not any(map(needs_cleaning, texts)):
        title = clean_headline(headline.title, headline.names)
        return headline if title == headline.title else replace(headline, title=title)
    outlets = tuple(map(clean_text, headline.outlets))
    source = clean_text(headline.source)
    return replace(
        headline,
        title=clean_headline(clean_text(headline.title), outlets or (source,)),
        source=source,
        lede=clean_text(headline.lede),
        outlets=outlets,
    )


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
