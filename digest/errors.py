"""One hierarchy of errors a user can act on.

Every `DigestError` carries a message that is shown as-is on one line by the CLI; each kind also
derives from the builtin a caller would expect, so `except ValueError` keeps working.
"""


class DigestError(Exception):
    """Base class: a problem the user can understand and act on."""


class ConfigError(DigestError, ValueError):
    """The configuration file is unreadable or holds an unknown key or a wrong type."""


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


class ResponseTooLargeError(FetchError):
    """The body exceeds the byte cap, counted after decompression."""


class FetchTimeoutError(FetchError, TimeoutError):
    """The server did not connect, answer or finish the body within the deadline."""


class ParseError(DigestError, ValueError):
    """A page could not be parsed: its parser failed, ran out of memory or was stopped."""


class ParseTimeoutError(ParseError, TimeoutError):
    """Parsing a page took longer than the time left for it; the parser was stopped."""


class SourceError(DigestError):
    """A headline source (DuckDuckGo, a feed) failed after its retries."""


class NoSourceError(DigestError, LookupError):
    """A category has nothing to fetch from: DuckDuckGo is off and no feed has the category."""


class NetworkUnreachableError(SourceError):
    """The search provider could not be reached at all."""


class StoreError(DigestError):
    """The database could not be opened, migrated or written."""


class RunExistsError(StoreError):
    """A run with this key was started before: that (job, period) is done or in progress."""


class InvalidSubscriberError(StoreError, ValueError):
    """A subscriber that cannot be stored: a malformed address, or an unknown time zone."""


class ClusterConflictError(StoreError):
    """Another process changed the stories of a category between a clustering's read and write."""
