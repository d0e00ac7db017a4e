"""The email digest's two parts, HTML and plain text, rendered from an edition.

The HTML part uses a table layout with its CSS inlined (css-inline), loads nothing remote (no
images, no tracking pixels) and stays under a byte budget (`digest.deliver.message.HTML_BUDGET`,
below Gmail's clipping size): a large edition loses headlines first, then stories, then whole
sections, and says so with a link to the full edition in the archive. Scraped text is cleaned
here and escaped by the templates (the archive's environment, `templating.environment`); links
are http(s) only (`safe_url`). `digest.deliver` builds and sends messages from these parts.

An edition leads: after the masthead, "Top stories" (the edition's `lead`: the highest ranked
across the reader's categories, each a linked headline and the first sentence of its brief;
none for a reader of one category, which opens with them already; the first of them, or
without them the first story, set larger: headline and brief), then the contents (each
category with its story count, linking to its heading in the mail), then the categories. A
lead story keeps its whole entry in its category, so a reader who jumps to a category from the
contents misses nothing; the lead is a short preview of it. Headlines
are shown without their outlet's name after them or a section label before them
(`digest.render.headlines`), and link to the story's page in the archive when the archive has
a URL, else to the first outlet. Each category shows a bounded number of "More headlines", and
counts the rest, linked to its page in the archive.

Everything the email itself says is in the reader's language when the message catalogue has it
(`digest.messages`, issue 38): the templates' marked words (`templating.reader_environment`),
the lines built here and the dates; English is the catalogue's msgids, so an English reader's
email is what it was.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, tzinfo
from functools import cache
from urllib.parse import urljoin

import css_inline

from digest import messages
from digest.edition.front_page import lead_stories
from digest.models import (
    Correction,
    Edition,
    EditionHeadline,
    EditionMention,
    EditionStory,
    WhatsNew,
)
from digest.render.corrections import correction_line, dispute_line, short_day
from digest.render.headlines import clean_headline, first_sentence, outlets_line
from digest.render.layout import category_path, category_slug, edition_path, relative, story_path
from digest.render.sanitize import clean_text, safe_url
from digest.render.templating import clip, reader_environment
from digest.stories.language import language_name

__all__ = [
    "HEADLINES_PER_CATEGORY",
    "LEAD_STORIES",
    "SinceLast",
    "archive_page",
    "headline_line",
    "render_email",
    "since_last",
    "story_mark",
    "text_line",
    "untitled",
]

# The defaults of [publish] lead_stories and headlines_per_category.
LEAD_STORIES = 3
HEADLINES_PER_CATEGORY = 5

# An upper bound on the bytes inlining removes from a page: its <style> block (about 4 KB).
_STYLE_BLOCK_BYTES = 8_000

# Scraped text is cut to these lengths (characters), at a word boundary.
TITLE_CHARS = 200
BRIEF_CHARS = 500
LEDE_CHARS = 220
NAME_CHARS = 60
OUTLETS_SHOWN = 5  # links per story; the rest are counted ("and 3 more")
NEW_OUTLETS_SHOWN = 3  # names on a story's "New:" line
FACT_CHARS = 200
SINCE_FACTS = 3  # new facts on a reader's "Since your last digest" line
SUBJECT_CHARS = 150
LEAD_LINE_CHARS = 160  # a lead story's one line: its brief's first sentence, cut to this
# Something that looks like an HTML tag. Titles and ledes sometimes carry markup from their
# feed; it is noise in both parts (the HTML part would show it escaped), so it goes.
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,500}>")
_SPACE = re.compile(r"\s+")
# Zero-width characters: invisible, and able to disguise a subject. Controls and bidi controls
# go by the rule every renderer shares (`clean_text`).
_ZERO_WIDTH = re.compile("[\u200b-\u200d\u2060-\u2065\ufeff]")


def render_email(
    edition: Edition,
    *,
    categories: tuple[str, ...] | None,
    tz: tzinfo,
    title: str,
    archive: str | None,
    unsubscribe: str,
    recipient: str,
    budget: int,
    preferences: str | None = None,
    lead: int = LEAD_STORIES,
    headlines: int = HEADLINES_PER_CATEGORY,
    follow: str | None = None,
    language: str | None = None,
) -> tuple[str, str]:
    """(HTML, plain text) of `edition` (already restricted to `categories`) for `recipient`,
    the HTML within `budget` bytes; `preferences` is the link to their preferences page,
    `follow` their link to follow a story, "{story}" standing for the story's id.
    `archive` is the edition's page in the archive (its story and category pages are beside
    it); `lead` stories open the email, `headlines` "More headlines" at most per category.
    `language`: the reader's; the lines the service says of a story (coverage, where outlets
    disagree, corrections) are in it when the catalogue has it, else in English
    (`digest.messages.edition_language`)."""
    view = _view(
        edition,
        categories,
        tz,
        title=title,
        archive=archive,
        unsubscribe=unsubscribe,
        recipient=recipient,
        preferences=preferences,
        lead=lead,
        headlines=headlines,
        follow=follow,
        language=messages.edition_language(language),
    )
    view, html_part = _fit(view, budget)
    return html_part, _render_text(view)


# -- what the templates see ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Link:
    text: str
    url: str | None


@dataclass(frozen=True, slots=True)
class _StoryView:
    title: str
    url: str | None  # the story's page in the archive, else the first outlet's link
    brief: str
    outlet_count: int
    outlets: tuple[_Link, ...]  # at most OUTLETS_SHOWN, with a followable URL
    more_outlets: int
    updated: bool
    # The "New:" line of a story that outlets joined since its earlier edition: who joined
    # ("Der Spiegel, FAZ"; "" when nothing is new), the first fact they add and its language.
    new_outlets: str = ""
    new_fact: str = ""
    new_lang: str = ""
    # In a reader's own copy: the story's language when it is not theirs ("English"), or that
    # it was translated for them ("translated from English by the model"); `lang` is its
    # text's language.
    mark: str = ""
    lang: str = ""
    page: str | None = None  # its page in the archive
    # In a reader's copy, an updated story told against the last digest they received, shown
    # instead of its brief.
    since: SinceLast | None = None
    # Story memory (issue 31): where its outlets disagree ("The death toll: at least 30,
    # according to B; 45, according to C") and the corrections this edition makes of what an
    # earlier one said ("Correction: the death toll was 30, not 12, as reported on 3 December"),
    # in the reader's language (issue 38), as is `coverage` ("Covered by 3 outlets").
    disputes: tuple[str, ...] = ()
    corrections: tuple[str, ...] = ()
    follow_url: str | None = None  # the reader's link to follow it (`[memory] follow_url`)
    coverage: str = ""


@dataclass(frozen=True, slots=True)
class _HeadlineView:
    title: str
    url: str | None
    source: str
    lede: str


@dataclass(frozen=True, slots=True)
class _MentionView:
    """A story of this category shown in another section: "Also in Technology: <title>"."""

    title: str
    category: str
    outlet_count: int
    url: str | None  # its page in the archive, when the archive has a base URL


@dataclass(frozen=True, slots=True)
class _LeadView:
    """A story of "Top stories": its headline, one line, and where it is from."""

    title: str
    url: str | None
    line: str
    section: str  # its category's name
    outlet_count: int
    lang: str = ""


@dataclass(frozen=True, slots=True)
class _SectionView:
    name: str
    stories: tuple[_StoryView, ...]
    headlines: tuple[_HeadlineView, ...]
    anchor: str = ""  # the id of its heading, linked from the contents
    all_headlines: int = 0  # the edition's headlines of this category, shown or not
    archive_url: str | None = None  # its page in the archive
    mentions: tuple[_MentionView, ...] = ()

    @property
    def more_headlines(self) -> int:
        """The category's headlines this email does not show (they are in the archive)."""
        return max(0, self.all_headlines - len(self.headlines))


@dataclass(frozen=True, slots=True)
class _EmailView:
    title: str
    day: str  # "Tuesday 4 March 2025"
    compiled: str  # "07:00 CET"
    preheader: str
    categories: str  # "technology, world" ("tecnología, internacional") or "" for all
    sections: tuple[_SectionView, ...]
    archive_url: str | None
    unsubscribe_url: str
    recipient: str
    preferences_url: str | None = None
    lead: tuple[_LeadView, ...] = ()  # "Top stories"
    total_stories: int = 0
    total_headlines: int = 0
    trimmed: bool = False
    shown_stories: int = 0
    shown_headlines: int = 0
    disagree: str = "Outlets disagree."  # before each disagreement, in the reader's language
    language: str = "en"  # the reader's edition language: the frame's and the dates'

    @property
    def contents(self) -> str:
        """The categories with the stories each shows: "Technology (5), World (4)"."""
        return ", ".join(f"{s.name} ({len(s.stories)})" for s in self.sections)


def _view(
    edition: Edition,
    categories: tuple[str, ...] | None,
    tz: tzinfo,
    *,
    title: str,
    archive: str | None,
    unsubscribe: str,
    recipient: str,
    preferences: str | None = None,
    lead: int = LEAD_STORIES,
    headlines: int = HEADLINES_PER_CATEGORY,
    follow: str | None = None,
    language: str = "en",
) -> _EmailView:
    day = edition.day
    sections = tuple(
        _SectionView(
            name=_category_name(s.category, language),
            stories=tuple(
                _story(st, archive_page(archive, day, st.id), follow, language) for st in s.stories
            ),
            headlines=tuple(_headline(h, language) for h in s.headlines[:headlines]),
            anchor=f"c-{category_slug(s.category)}",
            all_headlines=len(s.headlines),
            archive_url=archive_page(archive, day, category=s.category),
            mentions=tuple(_mention(m, day, archive, language) for m in s.mentions),
        )
        for s in edition.sections
    )
    top = tuple(
        _lead(s, archive_page(archive, day, s.id), language) for s in lead_stories(edition, lead)
    )
    stories = sum(len(s.stories) for s in sections)
    shown = sum(len(s.headlines) for s in sections)
    preview = [t.title for t in top] or [st.title for s in sections for st in s.stories]
    compiled = _aware(edition.generated_at).astimezone(tz)
    return _EmailView(
        title=text_line(title, 80) or "digest",
        day=messages.long_day(edition.day, language),
        compiled=f"{compiled:%H:%M} {compiled.tzname() or ''}".rstrip(),
        preheader=clip(" · ".join(preview[:3]), 140),
        categories=messages.categories_named(categories or (), language),
        sections=sections,
        lead=top,
        archive_url=archive,
        unsubscribe_url=unsubscribe,
        recipient=recipient,
        preferences_url=preferences,
        total_stories=stories,
        total_headlines=shown,
        shown_stories=stories,
        shown_headlines=shown,
        disagree=messages.catalogue(language).gettext("Outlets disagree."),
        language=language,
    )


def archive_page(
    edition_url: str | None, day: date, story: int | None = None, *, category: str | None = None
) -> str | None:
    """The absolute URL of a story's (or a category's) page in the archive, found beside the
    edition's page `edition_url`; None without one."""
    if not edition_url:
        return None
    target = story_path(day, story) if story is not None else category_path(day, category or "")
    return safe_url(urljoin(edition_url, relative(edition_path(day), target)))


def headline_line(title: str, outlets: Iterable[str], limit: int) -> str:
    """A headline as every part of a digest shows it: one clean line (`text_line`), without
    its outlet's name after it or a section label before it (`clean_headline`)."""
    names = [text_line(o, NAME_CHARS) for o in outlets]
    return text_line(clean_headline(text_line(title, 4 * limit), names), limit)


def _story(
    story: EditionStory,
    page: str | None = None,
    follow: str | None = None,
    language: str = "en",
) -> _StoryView:
    outlets = story.outlets
    links = [_Link(text_line(o.name, NAME_CHARS) or _host(o.url), safe_url(o.url)) for o in outlets]
    followable = [link for link in links if link.url]
    first = followable[0].url if followable else None
    since = since_last(story.whats_new, language=language)
    disputes = _disputes(story, language)
    n = len(story.outlets)
    title = headline_line(story.title, (o.name for o in outlets), TITLE_CHARS) or untitled(language)
    covered = messages.catalogue(language).ngettext(
        "Covered by %(n)s outlet", "Covered by %(n)s outlets", n
    )
    follow_url = follow.replace("{story}", str(story.id)) if follow else None
    if since is not None:  # what is new to this reader, not the whole summary again
        return _StoryView(
            title=title,
            url=page or first,
            brief="",
            outlet_count=len(story.outlets),
            outlets=tuple(followable[:OUTLETS_SHOWN]),
            more_outlets=len(outlets) - len(followable[:OUTLETS_SHOWN]),
            updated=story.updated,
            mark=story_mark(story, language),
            lang=story.language if language_name(story.language) else "",
            page=page,
            since=since,
            # Where outlets disagree and the follow link: as on the whole story.
            disputes=disputes,
            follow_url=follow_url,
            coverage=covered % {"n": n},
        )
    new = _new_line(story.whats_new, language)
    return _StoryView(
        title=title,
        url=page or first,
        brief=text_line(story.brief_summary or story.summary, BRIEF_CHARS),
        outlet_count=len(story.outlets),
        outlets=tuple(followable[:OUTLETS_SHOWN]),
        # Counted like "Covered by": an outlet whose link is not followable is one more too.
        more_outlets=len(outlets) - len(followable[:OUTLETS_SHOWN]),
        updated=story.updated,
        new_outlets=new.get("new_outlets", ""),
        new_fact=new.get("new_fact", ""),
        new_lang=new.get("new_lang", ""),
        mark=story_mark(story, language),
        lang=story.language if language_name(story.language) else "",
        page=page,
        disputes=disputes,
        corrections=_corrections(story.corrections, language),
        follow_url=follow_url,
        coverage=covered % {"n": n},
    )


def _disputes(story: EditionStory, language: str = "en") -> tuple[str, ...]:
    """A story's disagreements, one line each in `language`: the subject and each outlet's
    value; none for a subject the catalogue cannot name."""
    lines = (text_line(dispute_line(d, language), FACT_CHARS) for d in story.disagreements)
    return tuple(line for line in lines if line)


def _corrections(corrections: Iterable[Correction], language: str) -> tuple[str, ...]:
    """The corrections' lines in `language` (`correction_line`), those it can say."""
    lines = (text_line(correction_line(c, language), FACT_CHARS) for c in corrections)
    return tuple(line for line in lines if line)


def _lead(story: EditionStory, page: str | None, language: str = "en") -> _LeadView:
    first = next((u for o in story.outlets if (u := safe_url(o.url))), None)
    brief = text_line(story.brief_summary or story.summary, 4 * LEAD_LINE_CHARS)
    news = story.whats_new
    if news is not None and news.for_reader:  # to this reader, the story's news
        brief = text_line(news.facts[0].text if news.facts else "", 4 * LEAD_LINE_CHARS)
    return _LeadView(
        title=headline_line(story.title, (o.name for o in story.outlets), TITLE_CHARS)
        or untitled(language),
        url=page or first,
        line=clip(first_sentence(brief), LEAD_LINE_CHARS),
        section=_category_name(story.category, language),
        outlet_count=len(story.outlets),
        lang=story.language if language_name(story.language) else "",
    )


def untitled(language: str = "en") -> str:
    """What a story or headline without a title is called, in the reader's language."""
    return messages.catalogue(language).gettext("(untitled)")


def story_mark(story: EditionStory, language: str | None = "en") -> str:
    """What a reader's copy says about a story's language: "translated from English by the
    model" when the LLM translated it for them, "English" when it is not in their language and
    was not translated, else "". An English reader reads a language by its own name
    ("Deutsch"); a reader of a catalogued language by theirs for it ("Englisch",
    `messages.language_called`)."""
    code = messages.edition_language(language)
    if story.translated_from and language_name(story.translated_from):
        if code == "en":
            return f"translated from {language_name(story.translated_from)} by the model"
        say = messages.catalogue(code).gettext
        called = messages.language_called(story.translated_from, code)
        return say("translated from %(language)s by the model") % {"language": called}
    if not story.language or not language_name(story.language) or code == "en":
        return language_name(story.language) if story.language else ""
    called = messages.language_called(story.language, code)
    return called[:1].upper() + called[1:]


def _outlet_names(names: list[str], language: str) -> str:
    """ "Reuters, AP, AFP and 2 more": the first `NEW_OUTLETS_SHOWN`, the rest counted."""
    shown = ", ".join(names[:NEW_OUTLETS_SHOWN])
    if len(names) > NEW_OUTLETS_SHOWN:
        more = messages.catalogue(language).gettext("%(names)s and %(n)s more")
        shown = more % {"names": shown, "n": len(names) - NEW_OUTLETS_SHOWN}
    return shown


def _new_line(news: WhatsNew | None, language: str = "en") -> dict[str, str]:
    """The parts of a story's "New:" line: the outlets that joined it since its earlier edition
    and the first fact they add."""
    if news is None or not news.outlets:
        return {}
    names = [text_line(o.name, NAME_CHARS) or _host(o.url) for o in news.outlets]
    shown = _outlet_names(names, language)
    first = news.facts[0] if news.facts else None
    return {
        "new_outlets": shown,
        "new_fact": text_line(first.text, FACT_CHARS) if first else "",
        "new_lang": first.language if first and language_name(first.language) else "",
    }


def _mention(
    mention: EditionMention, day: date, archive: str | None, language: str = "en"
) -> _MentionView:
    """The mention's link is the story's archive page, next to the edition's (`archive`)."""
    return _MentionView(
        title=headline_line(mention.title, (), TITLE_CHARS) or untitled(language),
        category=_category_name(mention.category, language),
        outlet_count=mention.outlet_count,
        url=archive_page(archive, day, mention.story_id),
    )


@dataclass(frozen=True, slots=True)
class SinceLast:
    """What a reader's copy says of a story updated since the last digest they received
    (`WhatsNew.for_reader`), instead of its summary: "Since your last digest (3 December): New:
    Reuters, AP — <fact> — <fact>", then a line per correction of what they were sent."""

    day: str  # "3 December"
    outlets: str = ""  # who joined: "Reuters, AP"
    facts: tuple[_Fact, ...] = ()
    corrections: tuple[str, ...] = ()
    language: str = "en"  # the reader's: the words around the outlets and facts

    @property
    def line(self) -> str:
        say = messages.catalogue(self.language).gettext
        new = say("New:")
        parts = [f"{new} {self.outlets}"] if self.outlets else []
        parts += (f.text for f in self.facts)
        since = say("Since your last digest (%(day)s):") % {"day": self.day}
        return " ".join([since, " — ".join(parts)]).strip()


@dataclass(frozen=True, slots=True)
class _Fact:
    text: str
    lang: str = ""


def since_last(
    news: WhatsNew | None, facts: int = SINCE_FACTS, *, language: str = "en"
) -> SinceLast | None:
    """`SinceLast` of a story in a reader's copy updated since their last digest; None for any
    other story."""
    if news is None or not news.for_reader:
        return None
    names = [text_line(o.name, NAME_CHARS) or _host(o.url) for o in news.outlets]
    return SinceLast(
        day=short_day(news.since, language),
        outlets=_outlet_names(names, language),
        facts=tuple(
            _Fact(t, f.language if language_name(f.language) else "")
            for f in news.facts[:facts]
            if (t := text_line(f.text, FACT_CHARS))
        ),
        corrections=_corrections(news.corrections, language),
        language=language,
    )


def _headline(headline: EditionHeadline, language: str = "en") -> _HeadlineView:
    return _HeadlineView(
        title=headline_line(headline.title, headline.names, TITLE_CHARS) or untitled(language),
        url=safe_url(headline.url),
        source=outlets_line([text_line(n, NAME_CHARS) for n in headline.names], language=language),
        lede=text_line(headline.lede, LEDE_CHARS),
    )


# -- staying under the size budget ---------------------------------------------------------------


def _cap(view: _EmailView, *, stories: int, headlines: int, sections: int) -> _EmailView:
    kept = tuple(
        replace(s, stories=s.stories[:stories], headlines=s.headlines[:headlines])
        for s in view.sections[:sections]
    )
    shown_s = sum(len(s.stories) for s in kept)
    shown_h = sum(len(s.headlines) for s in kept)
    return replace(
        view,
        sections=kept,
        shown_stories=shown_s,
        shown_headlines=shown_h,
        trimmed=(shown_s, shown_h) != (view.total_stories, view.total_headlines),
    )


def _largest(low: int, high: int, fits: Callable[[int], bool]) -> int | None:
    """The largest n in [low, high] with fits(n), assuming fits is monotone; None if none."""
    if not fits(low):
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _fit(view: _EmailView, budget: int) -> tuple[_EmailView, str]:
    """The view trimmed until its HTML fits `budget` bytes: headlines go first, then stories,
    then whole sections from the end. Each cap applies per section, so every category keeps
    its top items."""
    rendered: dict[tuple[int, int, int], tuple[_EmailView, str]] = {}

    def attempt(stories: int, headlines: int, sections: int) -> tuple[_EmailView, str]:
        key = (stories, headlines, sections)
        if key not in rendered:
            capped = _cap(view, stories=stories, headlines=headlines, sections=sections)
            rendered[key] = (capped, _render_html(capped))
        return rendered[key]

    def fits(stories: int, headlines: int, sections: int) -> bool:
        capped = _cap(view, stories=stories, headlines=headlines, sections=sections)
        # Inlining only adds style attributes (and drops the <style> block): a page that is
        # already too large before it cannot fit after, and needs no costly inlining to know.
        if len(_render_page(capped).encode("utf-8")) - _STYLE_BLOCK_BYTES > budget:
            return False
        return len(attempt(stories, headlines, sections)[1].encode("utf-8")) <= budget

    most_s = max((len(s.stories) for s in view.sections), default=0)
    most_h = max((len(s.headlines) for s in view.sections), default=0)
    count = len(view.sections)
    if fits(most_s, most_h, count):
        return attempt(most_s, most_h, count)
    h = _largest(0, most_h, lambda n: fits(most_s, n, count))
    if h is not None:
        return attempt(most_s, h, count)
    s = _largest(1, most_s, lambda n: fits(n, 0, count)) if most_s else None
    if s is not None:
        return attempt(s, 0, count)
    kept = _largest(0, count, lambda n: fits(1, 0, n))
    if kept is None:
        raise ValueError(f"an empty digest does not fit in {budget} bytes")
    return attempt(1, 0, kept)


# -- rendering -----------------------------------------------------------------------------------


@cache
def _inliner() -> css_inline.CSSInliner:
    # keep_at_rules leaves @media rules in a <style> (they cannot be inlined) for small screens.
    return css_inline.CSSInliner(keep_at_rules=True, minify_css=True, load_remote_stylesheets=False)


# The classes the @media rules of digest.html use; every other class has been inlined and only
# costs bytes (a full edition repeats them hundreds of times).
_KEPT_CLASSES = frozenset(
    {
        *("frame", "masthead", "notice", "section", "story-title", "archive", "footer", "empty"),
        *("lead", "lead-title", "contents", "lead-top", "story-top", "top-text"),
    }
)
_CLASS_ATTR = re.compile(r' class="([^"]*)"')


def _drop_inlined_classes(page: str) -> str:
    def keep(match: re.Match[str]) -> str:
        kept = [c for c in match.group(1).split() if c in _KEPT_CLASSES]
        return f' class="{" ".join(kept)}"' if kept else ""

    return _CLASS_ATTR.sub(keep, page)


def _render_page(view: _EmailView) -> str:
    return reader_environment(view.language).get_template("email/digest.html").render(v=view)


def _render_html(view: _EmailView) -> str:
    return _drop_inlined_classes(_inliner().inline(_render_page(view)))


def _render_text(view: _EmailView) -> str:
    text = reader_environment(view.language).get_template("email/digest.txt").render(v=view)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


# -- small helpers -------------------------------------------------------------------------------


def text_line(value: str | None, limit: int) -> str:
    """Scraped text as one clean line: entities decoded, tag-like markup and controls removed,
    whitespace collapsed, cut at a word boundary. Escaping is still the template's job."""
    if not value:
        return ""
    plain = _ZERO_WIDTH.sub("", clean_text(_TAG.sub(" ", html.unescape(value))))
    return clip(_SPACE.sub(" ", plain).strip(), limit)


def _host(url: str) -> str:
    match = re.match(r"^[a-z][a-z0-9+.-]*://([^/:?#]+)", url.strip(), re.IGNORECASE)
    return match.group(1).lower() if match else "link"


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _category_name(category: str, language: str = "en") -> str:
    """A category's heading in the reader's language ("Tecnología"); one the operator named
    freely, as written (`messages.category_name`)."""
    return messages.category_name(text_line(category, NAME_CHARS), language)
