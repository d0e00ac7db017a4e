"""The tables, as SQLAlchemy Core `Table`s on one `MetaData`. Migrations in `migrations/versions/`
create exactly this.

Constraint names come from a naming convention so that Alembic batch migrations on SQLite (which
rebuild a table) and PostgreSQL refer to the same names.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.sql.elements import ColumnElement

from digest.store.tables_base import (
    DELIVERY_STATES,
    FEED_ORIGINS,
    RUN_STATUSES,
    UTCDateTime,
    metadata,
)
from digest.subscribers.preferences import FIELDS

# One article, keyed by its canonical URL; seeing it again updates the row.
articles = Table(
    "articles",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("url", String, nullable=False, unique=True),  # canonical_url(original_url)
    Column("original_url", String, nullable=False),  # as the source first gave it
    Column("title", Text, nullable=False),
    Column("source", String, nullable=False, default=""),
    Column("category", String),
    Column("published", UTCDateTime()),
    Column("snippet", Text, nullable=False, default=""),
    Column("image", Text),
    Column("lede", Text, nullable=False, default=""),  # Extract.full_content
    Column("extract_status", String, nullable=False, default="skipped"),
    Column("http_status", Integer),
    Column("extract_error", Text),
    Column("origin", String, nullable=False, default=""),  # "ddg:news", "feed:<url>", ...
    Column("first_seen", UTCDateTime(), nullable=False),
    Column("last_seen", UTCDateTime(), nullable=False),
    Column("fetched_at", UTCDateTime()),  # when the stored extraction was made
    Column("story_id", Integer, ForeignKey("stories.id", ondelete="SET NULL")),
    # The deep crawl: main text, its sha256 (hex), and how the latest attempt went. A failed
    # attempt never replaces a good text; without one, the latest attempt says why.
    Column("text", Text),
    Column("text_hash", String),
    Column("crawled_at", UTCDateTime()),
    Column("crawl_status", String),  # ok, pdf, empty, error
    Column("crawl_error", Text),
    Column("fetched_by", String),  # browser, http
    # The latest summary's brief and text, kept by Store.save_summary: the archive search
    # (digest.store.search) indexes it with the article, so one row holds every word to find.
    Column("summary_text", Text),
    # "Did we collect this category since ...?"
    Index("ix_articles_category_last_seen", "category", "last_seen"),
    Index("ix_articles_story_id", "story_id"),
    # "The other copies of this text": a new summary is indexed for search with each.
    Index("ix_articles_text_hash", "text_hash"),
)


def article_recent() -> ColumnElement[datetime]:
    """When an article counts as news: its publication time, else when we first saw it."""
    return func.coalesce(articles.c.published, articles.c.first_seen, type_=UTCDateTime())


# "Today's headlines of a category", newest first: what Store.headlines filters and sorts by.
Index("ix_articles_category_recent", articles.c.category, article_recent())
# "The newest articles that match a search": PostgreSQL walks it instead of testing every row's
# text for a common word (430 -> 63 ms at 100,000 articles; digest.store.search).
Index("ix_articles_recent", article_recent())

# An article's sentence vector in one embedding space (digest.stories.embeddings): made once,
# kept with the article. The vector is packed float32, little-endian (1.5 KB for 384 numbers).
article_vectors = Table(
    "article_vectors",
    metadata,
    Column("article_id", Integer, ForeignKey("articles.id", ondelete="CASCADE"), primary_key=True),
    Column("model", String, primary_key=True),  # digest.stories.embeddings.Embedder.space
    Column("dimensions", Integer, nullable=False),
    Column("vector", LargeBinary, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

# One run of a job (collect, deepen, publish) with what it did and what went wrong.
runs = Table(
    "runs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("kind", String, nullable=False),
    # One row per (job, period), e.g. "collect:technology:2025-01-31": the scheduler's guard
    # against running a period twice. NULL for ad-hoc runs.
    Column("key", String, unique=True),
    Column("started_at", UTCDateTime(), nullable=False),
    Column("finished_at", UTCDateTime()),
    Column("status", String, nullable=False, default="running"),
    Column("counts", JSON, nullable=False, default=dict),
    Column("errors", JSON, nullable=False, default=list),  # [{"source": ..., "error": ...}]
    # The process doing it, "host/boot/pid/start" (digest.store.owners); NULL before 0005.
    Column("owner", String),
    CheckConstraint(f"status IN {RUN_STATUSES!r}", name="status"),
    Index("ix_runs_started_at", "started_at"),
)

# What we know about one RSS/Atom feed between fetches: validators and error counts.
feeds = Table(
    "feeds",
    metadata,
    Column("url", String, primary_key=True),
    Column("category", String, nullable=False),
    Column("title", String),
    Column("etag", String),
    Column("last_modified", String),
    Column("error_count", Integer, nullable=False, default=0),
    Column("last_error", Text),
    Column("last_ok_at", UTCDateTime()),
    Column("last_checked_at", UTCDateTime()),
)

# A feed subscribed from the command line or an OPML file (`digest feeds`), collected beside the
# config file's; its fetch state is a `feeds` row like theirs, keyed by the same `url`.
subscribed_feeds = Table(
    "subscribed_feeds",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("url", String, nullable=False, unique=True),  # fetched as it is
    Column("canonical", String, nullable=False, unique=True),  # canonical_url(url): no twins
    Column("category", String, nullable=False),
    Column("name", String),
    Column("site_url", String),
    Column("origin", String, nullable=False),  # "cli" or "opml"
    Column("added_at", UTCDateTime(), nullable=False),
    CheckConstraint(f"origin IN {FEED_ORIGINS!r}", name="origin"),
    Index("ix_subscribed_feeds_category", "category"),
)

# The same event told by one or more articles (digest.stories.cluster decides which).
stories = Table(
    "stories",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("category", String, nullable=False),
    Column("title", Text, nullable=False),  # its representative article's
    Column("first_seen", UTCDateTime(), nullable=False),  # earliest first_seen of its articles
    Column("last_seen", UTCDateTime(), nullable=False),  # latest last_seen of its articles
    # The last clustering that added an outlet to it.
    Column("updated_at", UTCDateTime()),
    Column("article_count", Integer, nullable=False, default=0),
    Column("outlet_count", Integer, nullable=False, default=0),
    # digest.stories.rank, when clustered.
    Column("score", Float, nullable=False, default=0.0),
    # "Today's stories of a category."
    Index("ix_stories_category_last_seen", "category", "last_seen"),
)

# A summary of one article's text by one summarizer; never made twice for the same text.
summaries = Table(
    "summaries",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("article_id", Integer, ForeignKey("articles.id", ondelete="CASCADE"), nullable=False),
    Column("content_hash", String, nullable=False),  # of what was summarized
    Column("summarizer", String, nullable=False),  # "extractive" or "llm:<model>"
    Column("title", Text, nullable=False),
    Column("summary", Text, nullable=False),
    Column("brief_summary", Text, nullable=False),
    Column("keywords", JSON, nullable=False, default=list),
    Column("prompt_tokens", Integer, nullable=False, default=0),
    Column("completion_tokens", Integer, nullable=False, default=0),
    Column("created_at", UTCDateTime(), nullable=False),
    UniqueConstraint("content_hash", "summarizer"),
    Index("ix_summaries_article_id", "article_id"),
    Index("ix_summaries_created_at", "created_at"),
)

# A story's headline, brief and summary in another language, made once per original text,
# language and translator (digest.summarize.translator). Keyed by a hash of the text, not by a
# summary or story row: every story that shows the same text shares it. `error` set: the
# translation was refused (a claim did not survive it) and readers get the original.
translations = Table(
    "translations",
    metadata,
    Column("id", Integer, primary_key=True),
    # Of the original headline, brief and summary.
    Column("source_hash", String, nullable=False),
    Column("language", String, nullable=False),  # ISO 639-1, translated into
    Column("translator", String, nullable=False),  # "llm:<model>"
    Column("source_language", String, nullable=False),  # ISO 639-1, translated from
    Column("title", Text, nullable=False),
    Column("brief_summary", Text, nullable=False),
    Column("summary", Text, nullable=False),
    Column("error", Text),
    Column("prompt_tokens", Integer, nullable=False, default=0),
    Column("completion_tokens", Integer, nullable=False, default=0),
    Column("created_at", UTCDateTime(), nullable=False),
    UniqueConstraint("source_hash", "language", "translator"),
    Index("ix_translations_created_at", "created_at"),
)

# A summary of one story written from several of its outlets' texts (`sources`, as
# [{"name", "url", "title"}], what its citations [1], [2], ... point to), with its claim check;
# never made twice for the same texts (`sources_hash`) by the same summarizer.
story_summaries = Table(
    "story_summaries",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("story_id", Integer, ForeignKey("stories.id", ondelete="CASCADE"), nullable=False),
    Column("sources_hash", String, nullable=False),
    Column("summarizer", String, nullable=False),  # "extractive" or "llm:<model>"
    Column("summary", Text, nullable=False),
    Column("brief_summary", Text, nullable=False),
    Column("keywords", JSON, nullable=False, default=list),
    Column("sources", JSON, nullable=False, default=list),
    Column("claims", Integer, nullable=False, default=0),
    Column("claims_found", Integer, nullable=False, default=0),
    Column("sentences_removed", Integer, nullable=False, default=0),
    Column("note", Text, nullable=False, default=""),  # why extractive, when it is
    Column("prompt_tokens", Integer, nullable=False, default=0),
    Column("completion_tokens", Integer, nullable=False, default=0),
    Column("created_at", UTCDateTime(), nullable=False),
    UniqueConstraint("story_id", "sources_hash", "summarizer"),
    Index("ix_story_summaries_created_at", "created_at"),
)

_SQL_TYPES = {"string": String, "integer": Integer, "boolean": Boolean}  # a `Stored`'s type

# Who gets the email digest: an address (lower-cased), and every preference but the channels.
subscribers = Table(
    "subscribers",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("email", String, nullable=False, unique=True),
    Column("token", String, nullable=False, unique=True),  # the unsubscribe link's secret
    Column("created_at", UTCDateTime(), nullable=False),
    # Each preference's column, as its `Stored` in digest.subscribers.preferences.FIELDS says
    # (categories and timezone since 0001, the others since 0008).
    *(
        Column(
            s.column,
            JSON(none_as_null=True) if s.type == "json" else _SQL_TYPES[s.type],
            nullable=not s.required,
            default=s.default,
        )
        for s in (f.stored for f in FIELDS)
        if s is not None
    ),
)

# A subscriber's channel besides email: an Apprise URL as given (placeholders unresolved).
channels = Table(
    "channels",
    metadata,
    Column("id", Integer, primary_key=True),
    Column(
        "subscriber_id", Integer, ForeignKey("subscribers.id", ondelete="CASCADE"), nullable=False
    ),
    Column("url", Text, nullable=False),
    # digest.models.channel_key(url): the ledger's name.
    Column("key", String, nullable=False),
    Column("position", Integer, nullable=False),  # the subscriber's order
    Column("created_at", UTCDateTime(), nullable=False),
    UniqueConstraint("subscriber_id", "key"),
)

# A secret the service made for itself (the preferences page's CSRF key), kept in the database so
# that every process serving the same deployment shares it.
secrets = Table(
    "secrets",
    metadata,
    Column("name", String, primary_key=True),
    Column("value", String, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

# One day's edition (digest.models.Edition as JSON); building it again updates the row.
editions = Table(
    "editions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("day", Date, nullable=False, unique=True),
    Column("content_hash", String, nullable=False),  # of the payload without generated_at
    Column("payload", JSON, nullable=False),
    Column("generated_at", UTCDateTime(), nullable=False),  # the payload's generated_at
    # When the row was last written (created or content changed).
    Column("updated_at", UTCDateTime(), nullable=False),
)

# The delivery ledger: one message of one edition to one recipient on one channel
# (digest.deliver.ledger).
deliveries = Table(
    "deliveries",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("edition_day", Date, nullable=False),
    Column("recipient", String, nullable=False),
    # "email", or a channel's key (digest.models.channel_key); since 0008.
    Column("channel", String, nullable=False, default="email"),
    Column("state", String, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", UTCDateTime()),
    Column("last_reply", Text),
    Column("message_id", String),
    Column("updated_at", UTCDateTime()),
    UniqueConstraint("edition_day", "recipient", "channel"),
    CheckConstraint(f"state IN {DELIVERY_STATES!r}", name="state"),
    Index("ix_deliveries_state", "state"),
)


# The story-memory tables (0013) live in their own module on the same `metadata`; importing them
# here registers them wherever the schema is used.
from digest.store.memory_tables import follow_alerts, follows, story_events  # noqa: E402, F401
