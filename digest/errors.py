"""One hierarchy of errors a user can act on.

Every `DigestError` carries a message that is shown as-is on one line by the CLI; each kind also
derives from the builtin a caller would expect, so `except ValueError` keeps working.
"""

import signal


class DigestError(Exception):
    """Base class: a problem the user can understand and act on."""


class ConfigError(DigestError, ValueError):
    """The configuration file is unreadable or holds an unknown key or a wrong type."""


class TokenError(ConfigError):
    """A setting names an environment variable for a token that is unset, empty or holds what
    no client can send: the server it guards refuses to start rather than answer without it."""


class UnknownCategoryError(DigestError, ValueError):
    """A category was asked for that the configuration does not define."""


class InvalidQueryError(DigestError, ValueError):
    """A search query that cannot be sent (empty, too long)."""


class InvalidURLError(DigestError, ValueError):
    """A URL that is not an absolute http(s) URL with a host."""


class FetchError(DigestError, OSError):
    """Fetching a page or feed failed (timeout, refused connection, bad status, too large)."""


class BlockedAddressError(FetchError):
    """The URL resolves to an address the SSRF guard refuses (loopback, private, link-local...)."""


class UnexpectedContentTypeError(FetchError):
    """The response's media type is not one the caller accepts; `content_type` names it."""

    def __init__(self, message: str, content_type: str) -> None:
        super().__init__(message)
        self.content_type = content_type


class ResponseTooLargeError(FetchError):
    """The body exceeds the byte cap, counted after decompression."""


class FetchTimeoutError(FetchError, TimeoutError):
    """The server did not connect, answer or finish the body within the deadline."""


class ParseError(DigestError, ValueError):
    """A page could not be parsed: its parser failed, ran out of memory or was stopped."""


class ParseTimeoutError(ParseError, TimeoutError):
    """Parsing a page took longer than the time left for it; the parser was stopped."""


class ParseOverrunError(ParseTimeoutError):
    """The parser process used more CPU time on a page than the page was allowed: the page's
    shape, not a busy machine, made it late."""


class SourceError(DigestError):
    """A headline source (DuckDuckGo, a feed) failed after its retries."""


class NoSourceError(DigestError, LookupError):
    """A category has nothing to fetch from: DuckDuckGo is off and no feed has the category."""


class NetworkUnreachableError(SourceError):
    """The search provider could not be reached at all."""


class StoreError(DigestError):
    """The database could not be opened, migrated or written."""


class NoDatabaseError(StoreError, LookupError):
    """A command that only reads found no database where the config points: it makes none."""


class RunExistsError(StoreError):
    """A run with this key was started before: that (job, period) is done or in progress."""


class SubscriberExistsError(StoreError, ValueError):
    """`subscribers add` of an address that is subscribed already (`subscribers set` changes it)."""


class InvalidSubscriberError(StoreError, ValueError):
    """A subscriber that cannot be stored: a malformed address, or an unknown time zone."""


class InvalidPreferenceError(DigestError, ValueError):
    """A subscriber's preference digest cannot take (an unknown language, a malformed send
    time); the message says which and why, for the CLI and the preferences page alike."""


class InvalidChannelError(InvalidPreferenceError):
    """Not an Apprise URL digest can send to, or one a subscriber may not set themselves (an
    environment placeholder, a private address from the preferences page)."""


class ClusterConflictError(StoreError):
    """Another process changed the stories of a category between a clustering's read and write."""


class EmbeddingError(DigestError):
    """The embeddings endpoint failed after its retries (timeout, refused, an error status) or
    answered something that is not one vector per text; the message is one line. Clustering
    then uses lexical similarity for that run."""


class SummarizeError(DigestError):
    """The LLM failed after its retries, or its output stayed invalid; the message is one line.

    Callers fall back to the extractive summarizer (the `Summarizer` facade does so itself).
    `prompt_tokens` and `completion_tokens` count what the failed attempt still used.
    """

    def __init__(self, message: str, *, prompt_tokens: int = 0, completion_tokens: int = 0):
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens


class ListenError(DigestError, OSError):
    """`digest serve` (or the daemon's server) cannot listen: the port is taken, say."""


class DaemonLockLostError(DigestError):
    """The daemon's lock was taken away while it ran (its PostgreSQL session ended)."""


class DaemonRunningError(DigestError):
    """Another daemon holds the database."""


class InvalidEditionDayError(DigestError, ValueError):
    """An edition asked for a day it cannot be made of (a future day, a day with no articles)."""


class NoSuchEditionError(DigestError, LookupError):
    """No edition of that day is stored."""


class RunInterrupted(DigestError):
    """A signal (Ctrl+C, SIGTERM) stopped a command or the cycle of `run --once` part-way: the
    CLI exits 128 + the signal's number (130, 143), as a shell reports a process the signal
    ended. (The daemon's stop is no failure: its interrupted job is logged, the exit is 0.)"""

    def __init__(self, step: str, signum: int) -> None:
        self.step = step
        self.signum = signum
        super().__init__(f"interrupted during {step} ({signal.Signals(signum).name})")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class BrowserUnavailableError(DigestError, RuntimeError):
    """No browser could be started (missing executable, crawl4ai/Playwright not installed...)."""


class PdfError(DigestError, ValueError):
    """A PDF could not be converted to text (unreadable, too big, too slow, out of memory)."""


class AddressError(DigestError, ValueError):
    """Not an address digest can send to; `reason` is the validator's explanation."""

    def __init__(self, address: object, reason: str) -> None:
        super().__init__(f"not an email address: {address!r} ({reason})")
        self.reason = reason


class FeedError(SourceError):
    """A feed could not be fetched, or what came back is not a usable RSS/Atom document."""


class DeliveryError(DigestError, OSError):
    """A message could not be handed to the mail server (or written to the outbox).

    `reply` is the server's reply (or what happened to the connection), kept in the ledger.
    `maybe_delivered` is true when the failure came after the message data went out and before
    the server confirmed it: the server may have accepted it anyway (see `digest.deliver.sender`).
    `transport_down` is true when the failure is the server's or the connection's, not this
    message's (refused connection, failed login or TLS): the rest of the run would fail the same.
    """

    def __init__(
        self,
        message: str,
        *,
        reply: str,
        code: int | None = None,
        maybe_delivered: bool = False,
        transport_down: bool = False,
    ) -> None:
        super().__init__(message)
        self.reply = reply
        self.code = code
        self.maybe_delivered = maybe_delivered
        self.transport_down = transport_down

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.reply


class TemporaryDeliveryError(DeliveryError):
    """Worth retrying later: a 4xx reply, a dropped or refused connection, a timeout."""


class PermanentDeliveryError(DeliveryError):
    """Retrying will not help: a 5xx reply, a refused or malformed recipient."""


class InvalidRecipientError(PermanentDeliveryError):
    """The recipient's address breaks the address rule (`digest.deliver.address`): their email
    is not built and no server is asked. It fails that recipient's row, never the others'."""


class InvalidTransition(DigestError, ValueError):
    """A delivery ledger row cannot make this move from its current state."""


class OpmlError(DigestError, ValueError):
    """An OPML file that cannot be read safely: not well-formed, not OPML, too big, or declaring
    entities (an entity bomb, an external entity). Nothing of it is imported."""


class NoFeedFoundError(FeedError):
    """A URL given to `digest feeds add` is neither a feed nor a page that advertises one."""


class DuplicateFeedError(DigestError, ValueError):
    """The feed is in the config file or the database already (compared by canonical URL)."""


class NotSubscribedError(DigestError, LookupError):
    """No feed of the database has this URL (a feed of the config file is removed there)."""
