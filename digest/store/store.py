"""The `Store`: one object over the database, composed of a part per domain.

Each part is a mixin over `digest.store.base.StoreBase` in its own module, named for what it
keeps; a new table gets a schema entry (`schema.py`), a migration, and a part of its own here.
"""

from __future__ import annotations

from digest.store.alert_admin import AlertAdminMixin
from digest.store.articles import ArticlesMixin
from digest.store.deliveries import LedgerMixin
from digest.store.editions import EditionsMixin
from digest.store.engine import make_engine, require_database, upgrade
from digest.store.feed_states import FeedsMixin
from digest.store.health import HealthMixin
from digest.store.memory import MemoryMixin
from digest.store.runs import RunsMixin
from digest.store.search import SearchMixin
from digest.store.secrets import SecretsMixin
from digest.store.stories import StoriesMixin
from digest.store.story_summaries import StorySummariesMixin
from digest.store.subscribed_feeds import SubscribedFeedsMixin
from digest.store.subscribers import SubscribersMixin
from digest.store.summaries import SummariesMixin
from digest.store.translations import TranslationsMixin
from digest.store.vectors import VectorsMixin


class Store(
    ArticlesMixin,
    StoriesMixin,
    SummariesMixin,
    StorySummariesMixin,
    VectorsMixin,
    RunsMixin,
    FeedsMixin,
    SubscribersMixin,
    EditionsMixin,
    LedgerMixin,
    SearchMixin,
    HealthMixin,
    SubscribedFeedsMixin,
    SecretsMixin,
    TranslationsMixin,
    MemoryMixin,
    AlertAdminMixin,
):
    """Articles, stories, summaries (of articles and of stories), article vectors, runs, feed
    state, subscribers and their channels, editions, the delivery ledger, the service's own
    secrets, translations of stories, stories' timelines, and who follows which story with the
    alerts they are sent, in one SQLite or PostgreSQL database. See `open_store`."""


def open_store(url: str, *, create: bool = True) -> Store:
    """Open (creating or upgrading as needed) the database at `url`: what every command calls.

    With `create` False (commands that only read), a database that does not exist, or has no
    digest tables, is NoDatabaseError and nothing is made: a command run in the wrong folder
    must not leave an empty database there."""
    if not create:
        require_database(url)
    engine = make_engine(url)
    try:
        upgrade(engine, create=create)
    except BaseException:
        engine.dispose()
        raise
    return Store(engine)
