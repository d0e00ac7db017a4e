"""Tables, as SQLAlchemy models. Migrations in `migrations/versions/` create exactly this.

Constraint names come from a naming convention so that Alembic batch migrations on SQLite (which
rebuild a table) and PostgreSQL refer to the same names.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any, ClassVar, cast

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

RUN_STATUSES = ("running", "ok", "partial", "failed", "interrupted")
# digest.deliver.ledger.STATES (not imported: the store does not load the mail code).
DELIVERY_STATES = ("pending", "sending", "sent", "failed", "skipped")
FEED_ORIGINS = ("cli", "opml")  # digest.models.FeedOrigin


class UTCDateTime(TypeDecorator[datetime]):
    """Aware datetimes in, aware UTC datetimes out, on every backend.

    SQLite has no time zone type: values are stored as naive UTC text and marked UTC again on the
    way out. PostgreSQL stores `timestamptz`. Naive datetimes are refused: they are ambiguous.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value.isoformat()}: pass an aware datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        date: Date(),
        dict[str, Any]: JSON,
        list[Any]: JSON,
    }


class Article(Base):
    """One article, keyed by its canonical URL; seeing it again updates the row."""

    __tablename__ = "articles"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    url: Mapped[str] = mapped_column(String, unique=True)  # canonical_url(original_url)
    original_url: Mapped[str] = mapped_column(String)  # as the source first gave it
    title: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String, default="")
    category: Mapped[str | None] = mapped_column(String)
    published: Mapped[datetime | None]
    snippet: Mapped[str] = mapped_column(Text, default="")
    image: Mapped[str | None] = mapped_column(Text)
    lede: Mapped[str] = mapped_column(Text, default="")  # Extract.full_content
    extract_status: Mapped[str] = mapped_column(String, default="skipped")
    http_status: Mapped[int | None] = mapped_column(Integer)
    extract_error: Mapped[str | None] = mapped_column(Text)
    origin: Mapped[str] = mapped_column(String, default="")  # "ddg:news", "feed:<url>", ...
    first_seen: Mapped[datetime]
    last_seen: Mapped[datetime]
    fetched_at: Mapped[datetime | None]  # when the stored extraction was made
    story_id: Mapped[int | None] = mapped_column(ForeignKey("stories.id", ondelete="SET NULL"))
    # The deep crawl: main text, its sha256 (hex), and how the latest attempt went. A failed
    # attempt never replaces a good text; without one, the latest attempt says why.
    text: Mapped[str | None] = mapped_column(Text)
    text_hash: Mapped[str | None] = mapped_column(String)
    crawled_at: Mapped[datetime | None]
    crawl_status: Mapped[str | None] = mapped_column(String)  # ok, pdf, empty, error
    crawl_error: Mapped[str | None] = mapped_column(Text)
    fetched_by: Mapped[str | None] = mapped_column(String)  # browser, http
    # The latest summary's brief and text, kept by Store.save_summary: the archive search
    # (digest.store.search) indexes it with the article, so one row holds every word to find.
    summary_text: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        # "Did we collect this category since ...?"
        Index("ix_articles_category_last_seen", "category", "last_seen"),
        Index("ix_articles_story_id", "story_id"),
        # "The other copies of this text": a new summary is indexed for search with each.
        Index("ix_articles_text_hash", "text_hash"),
    )

    @classmethod
    def recent(cls) -> ColumnElement[datetime]:
        """When an article counts as news: its publication time, else when we first saw it."""
        return func.coalesce(cls.published, cls.first_seen, type_=UTCDateTime())


class ArticleVector(Base):
    """An article's sentence vector in one embedding space (digest.embeddings): made once, kept
    with the article. The vector is packed float32, little-endian (1.5 KB for 384 numbers)."""

    __tablename__ = "article_vectors"

    article_id: Mapped[int] = mapped_column(
        ForeignKey("articles.id", ondelete="CASCADE"), primary_key=True
    )
    model: Mapped[str] = mapped_column(String, primary_key=True)  # digest.embeddings.Embedder.space
    dimensions: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime]


class Run(Base):
    """One run of a job (collect, deepen, publish) with what it did and what went wrong."""

    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String)
    # One row per (job, period), e.g. "collect:technology:2025-01-31": the scheduler's guard
    # against running a period twice. NULL for ad-hoc runs.
    key: Mapped[str | None] = mapped_column(String, unique=True)
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    status: Mapped[str] = mapped_column(String, default="running")
    counts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    errors: Mapped[list[Any]] = mapped_column(default=list)  # [{"source": ..., "error": ...}]
    # The process doing it, "host/boot/pid/start" (digest.store.owners); NULL before 0005.
    owner: Mapped[str | None] = mapped_column(String)

    __table_args__ = (
        CheckConstraint(f"status IN {RUN_STATUSES!r}", name="status"),
        Index("ix_runs_started_at", "started_at"),
    )


class Feed(Base):
    """What we know about one RSS/Atom feed between fetches: validators and error counts."""

    __tablename__ = "feeds"

    url: Mapped[str] = mapped_column(String, primary_key=True)
    category: Mapped[str] = mapped_column(String)
    title: Mapped[str | None] = mapped_column(String)
    etag: Mapped[str | None] = mapped_column(String)
    last_modified: Mapped[str | None] = mapped_column(String)
    error_count: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    last_ok_at: Mapped[datetime | None]
    last_checked_at: Mapped[datetime | None]


class StoredFeed(Base):
    """A feed subscribed from the command line or an OPML file (`digest feeds`), collected beside
    the config file's; its fetch state is a `feeds` row like theirs, keyed by the same `url`."""

    __tablename__ = "subscribed_feeds"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    url: Mapped[str] = mapped_column(String, unique=True)  # fetched as it is
    canonical: Mapped[str] = mapped_column(String, unique=True)  # canonical_url(url): no twins
    category: Mapped[str] = mapped_column(String)
    name: Mapped[str | None] = mapped_column(String)
    site_url: Mapped[str | None] = mapped_column(String)
    origin: Mapped[str] = mapped_column(String)  # "cli" or "opml"
    added_at: Mapped[datetime]

    __table_args__ = (
        CheckConstraint(f"origin IN {FEED_ORIGINS!r}", name="origin"),
        Index("ix_subscribed_feeds_category", "category"),
    )


class Story(Base):
    """The same event told by one or more articles (digest.stories.cluster decides which)."""

    __tablename__ = "stories"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    category: Mapped[str] = mapped_column(String)
    title: Mapped[str] = mapped_column(Text)  # its representative article's
    first_seen: Mapped[datetime]  # earliest first_seen of its articles
    last_seen: Mapped[datetime]  # latest last_seen of its articles
    updated_at: Mapped[datetime | None]  # the last clustering that added an outlet to it
    article_count: Mapped[int] = mapped_column(Integer, default=0)
    outlet_count: Mapped[int] = mapped_column(Integer, default=0)
    score: Mapped[float] = mapped_column(Float, default=0.0)  # digest.stories.rank, when clustered

    # "Today's stories of a category."
    __table_args__ = (Index("ix_stories_category_last_seen", "category", "last_seen"),)


class StoredSummary(Base):
    """A summary of one article's text by one summarizer; never made twice for the same text."""

    __tablename__ = "summaries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    article_id: Mapped[int] = mapped_column(ForeignKey("articles.id", ondelete="CASCADE"))
    content_hash: Mapped[str] = mapped_column(String)  # of what was summarized
    summarizer: Mapped[str] = mapped_column(String)  # "extractive" or "llm:<model>"
    title: Mapped[str] = mapped_column(Text)
    summary: Mapped[str] = mapped_column(Text)
    brief_summary: Mapped[str] = mapped_column(Text)
    keywords: Mapped[list[Any]] = mapped_column(default=list)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime]

    __table_args__ = (
        UniqueConstraint("content_hash", "summarizer"),
        Index("ix_summaries_article_id", "article_id"),
        Index("ix_summaries_created_at", "created_at"),
    )


class StoredTranslation(Base):
    """A story's headline, brief and summary in another language, made once per original text,
    language and translator (digest.summarize.translator). Keyed by a hash of the text, not by
    a summary or story row: every story that shows the same text shares it. `error` set: the
    translation was refused (a claim did not survive it) and readers get the original."""

    __tablename__ = "translations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source_hash: Mapped[str] = mapped_column(String)  # of the original headline, brief, summary
    language: Mapped[str] = mapped_column(String)  # ISO 639-1, translated into
    translator: Mapped[str] = mapped_column(String)  # "llm:<model>"
    source_language: Mapped[str] = mapped_column(String)  # ISO 639-1, translated from
    title: Mapped[str] = mapped_column(Text)
    brief_summary: Mapped[str] = mapped_column(Text)
    summary: Mapped[str] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime]

    __table_args__ = (
        UniqueConstraint("source_hash", "language", "translator"),
        Index("ix_translations_created_at", "created_at"),
    )


class StoredStorySummary(Base):
    """A summary of one story written from several of its outlets' texts (`sources`, as
    [{"name", "url", "title"}], what its citations [1], [2], ... point to), with its claim
    check; never made twice for the same texts (`sources_hash`) by the same summarizer."""

    __tablename__ = "story_summaries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    story_id: Mapped[int] = mapped_column(ForeignKey("stories.id", ondelete="CASCADE"))
    sources_hash: Mapped[str] = mapped_column(String)
    summarizer: Mapped[str] = mapped_column(String)  # "extractive" or "llm:<model>"
    summary: Mapped[str] = mapped_column(Text)
    brief_summary: Mapped[str] = mapped_column(Text)
    keywords: Mapped[list[Any]] = mapped_column(default=list)
    sources: Mapped[list[Any]] = mapped_column(default=list)
    claims: Mapped[int] = mapped_column(Integer, default=0)
    claims_found: Mapped[int] = mapped_column(Integer, default=0)
    sentences_removed: Mapped[int] = mapped_column(Integer, default=0)
    note: Mapped[str] = mapped_column(Text, default="")  # why extractive, when it is
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime]

    __table_args__ = (
        UniqueConstraint("story_id", "sources_hash", "summarizer"),
        Index("ix_story_summaries_created_at", "created_at"),
    )


class StoredSubscriber(Base):
    """Who gets the email digest: an address (lower-cased), its categories and time zone."""

    __tablename__ = "subscribers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String, unique=True)
    # NULL (not JSON null): every category.
    categories: Mapped[list[Any] | None] = mapped_column(JSON(none_as_null=True))
    timezone: Mapped[str] = mapped_column(String)
    token: Mapped[str] = mapped_column(String, unique=True)  # the unsubscribe link's secret
    created_at: Mapped[datetime]
    # Preferences (digest.models.Preferences), since 0008. NULL send_at: schedule.publish_at;
    # NULL max_stories: every story; NULL language: each story as written.
    send_at: Mapped[str | None] = mapped_column(String)
    include_terms: Mapped[list[Any]] = mapped_column(default=list)
    exclude_terms: Mapped[list[Any]] = mapped_column(default=list)
    max_stories: Mapped[int | None] = mapped_column(Integer)
    language: Mapped[str | None] = mapped_column(String)
    send_email: Mapped[bool] = mapped_column(Boolean, default=True)


class StoredChannel(Base):
    """A subscriber's channel besides email: an Apprise URL as given (placeholders unresolved)."""

    __tablename__ = "channels"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    subscriber_id: Mapped[int] = mapped_column(ForeignKey("subscribers.id", ondelete="CASCADE"))
    url: Mapped[str] = mapped_column(Text)
    key: Mapped[str] = mapped_column(String)  # digest.models.channel_key(url): the ledger's name
    position: Mapped[int] = mapped_column(Integer)  # the subscriber's order
    created_at: Mapped[datetime]

    __table_args__ = (UniqueConstraint("subscriber_id", "key"),)


class StoredSecret(Base):
    """A secret the service made for itself (the preferences page's CSRF key), kept in the
    database so that every process serving the same deployment shares it."""

    __tablename__ = "secrets"

    name: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[str] = mapped_column(String)
    created_at: Mapped[datetime]


class StoredEdition(Base):
    """One day's edition (digest.models.Edition as JSON); building it again updates the row."""

    __tablename__ = "editions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    day: Mapped[date] = mapped_column(unique=True)
    content_hash: Mapped[str] = mapped_column(String)  # of the payload without generated_at
    payload: Mapped[dict[str, Any]]
    generated_at: Mapped[datetime]  # the payload's generated_at
    updated_at: Mapped[datetime]  # when the row was last written (created or content changed)


class StoredDelivery(Base):
    """The delivery ledger: one message of one edition to one recipient on one channel
    (digest.deliver.ledger)."""

    __tablename__ = "deliveries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    edition_day: Mapped[date]
    recipient: Mapped[str] = mapped_column(String)
    # "email", or a channel's key (digest.models.channel_key); since 0008.
    channel: Mapped[str] = mapped_column(String, default="email")
    state: Mapped[str] = mapped_column(String)
    attempts: Mapped[int] = mapped_column(Integer)
    next_attempt_at: Mapped[datetime | None]
    last_reply: Mapped[str | None] = mapped_column(Text)
    message_id: Mapped[str | None] = mapped_column(String)
    updated_at: Mapped[datetime | None]

    __table_args__ = (
        UniqueConstraint("edition_day", "recipient", "channel"),
        CheckConstraint(f"state IN {DELIVERY_STATES!r}", name="state"),
        Index("ix_deliveries_state", "state"),
    )


# "Today's headlines of a category", newest first: what Store.headlines filters and sorts by.
Index("ix_articles_category_recent", Article.category, Article.recent())
# "The newest articles that match a search": PostgreSQL walks it instead of testing every row's
# text for a common word (430 -> 63 ms at 100,000 articles; digest.store.search).
Index("ix_articles_recent", Article.recent())

metadata = Base.metadata
articles = cast(Table, Article.__table__)
runs = cast(Table, Run.__table__)
feeds = cast(Table, Feed.__table__)
subscribed_feeds = cast(Table, StoredFeed.__table__)
stories = cast(Table, Story.__table__)
summaries = cast(Table, StoredSummary.__table__)
story_summaries = cast(Table, StoredStorySummary.__table__)
subscribers = cast(Table, StoredSubscriber.__table__)
editions = cast(Table, StoredEdition.__table__)
deliveries = cast(Table, StoredDelivery.__table__)
article_vectors = cast(Table, ArticleVector.__table__)
channels = cast(Table, StoredChannel.__table__)
secrets = cast(Table, StoredSecret.__table__)
translations = cast(Table, StoredTranslation.__table__)
