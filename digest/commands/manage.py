"""What a user manages from the command line: subscribers, the delivery ledger, the database.

Each function is one command's work, so that the CLI only parses arguments and prints results.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

from digest.app import App
from digest.config import STARTER, Config
from digest.deliver.ledger import Delivery
from digest.errors import DigestError, SubscriberExistsError
from digest.models import Subscriber
from digest.runtime.threads import off_loop
from digest.store import SqlLedger, normalize_email, open_store
from digest.store.alert_admin import AlertRow
from digest.subscribers.preferences import PreferenceChanges, apply_changes, defaults

# STARTER's `crawl.executable_path` line, which `starter` fills in.
STARTER_BROWSER = (
    "# executable_path = \"/usr/bin/chromium\"   # unset: Playwright's download, else the system's"
)


def starter() -> tuple[str, str]:
    """`digest init`'s config file, with the browser the deep crawl will use on this machine
    (`digest.crawl.browser.browser_candidates`) in its `executable_path` comment, and that
    browser in a few words. The setting stays commented: unset, the same browser is found
    wherever the file is used (a container, another machine)."""
    from digest.crawl.browser import playwright_download, system_browser

    own, system = playwright_download(), system_browser()
    if own is not None:
        found = f"Playwright's Chromium ({own})"
    elif system is not None:
        found = f"the system's {system}"
    else:
        found = ""
    if found:
        line = f'# executable_path = "{system or "/usr/bin/chromium"}"   # unset: {found}'
        said = f"deep crawl browser: {found}"
    else:
        line = (
            '# executable_path = "/usr/bin/chromium"   # none found: apt-get install chromium, '
            "or playwright install chromium"
        )
        said = "no browser found: pages are read over HTTP (apt-get install chromium)"
    return STARTER.replace(STARTER_BROWSER, line), said


def upgrade_database(config: Config) -> None:
    """Create or migrate the configured database to the latest schema."""
    open_store(config.database_url()).close()


async def add_subscriber(app: App, email: str, changes: PreferenceChanges) -> Subscriber:
    """Subscribe `email` with the defaults (`digest.subscribers.preferences.defaults`: every
    category, the configuration's zone) and `changes` made to them. Everything is checked
    before anything is written. An address that is subscribed already is refused
    (SubscriberExistsError, naming `subscribers set`) and keeps every preference it had."""
    from digest.deliver.push_types import check_url

    # Off the loop: a channel's URL is parsed by its type (Apprise's, say); from the command
    # line no host is looked up (`from_page` is False), so it ends by itself.
    prefs = await off_loop(
        apply_changes, defaults(app.config), changes, app.config, check_channel=check_url
    )
    store = await app.face()
    try:
        sub = await store.add_subscriber(
            email, categories=prefs.categories, timezone=prefs.timezone
        )
    except SubscriberExistsError as err:
        address = normalize_email(email)
        raise SubscriberExistsError(
            f"{err}, nothing changed: `digest subscribers set {address} --categories ... "
            "--timezone ...` changes the preferences given and keeps the others"
        ) from None
    if prefs == sub.preferences:
        return sub
    saved = await store.save_preferences(sub.email, prefs)
    assert saved is not None  # just added
    return saved


async def set_subscriber(app: App, email: str, changes: PreferenceChanges) -> Subscriber:
    """Change the preferences `changes` names of the subscriber `email`, the others left as
    they are; DigestError when nobody has that address."""
    store = await app.face(create=False)
    current = await store.subscriber(email)
    if current is None:
        raise DigestError(f"no subscriber {email!r} (add them with `digest subscribers add`)")
    from digest.deliver.push_types import check_url

    prefs = await off_loop(  # as in `add_subscriber`: no host looked up
        apply_changes, current.preferences, changes, app.config, check_channel=check_url
    )
    saved = await store.save_preferences(current.email, prefs)
    if saved is None:
        raise DigestError(f"no subscriber {email!r}: removed meanwhile")
    return saved


async def subscribers(app: App) -> list[Subscriber]:
    """Every subscriber, by address."""
    store = await app.face(create=False)
    return await store.subscribers()


async def remove_subscriber(app: App, email: str) -> None:
    """Unsubscribe `email`; DigestError when it was not subscribed."""
    store = await app.face(create=False)
    if not await store.remove_subscriber(email):
        raise DigestError(f"no subscriber {email!r}")


async def deliveries(app: App) -> list[Delivery]:
    """The delivery ledger, newest edition first."""
    store = await app.face(create=False)
    return await store.deliveries()


async def alerts(app: App) -> list[AlertRow]:
    """The alert ledger (alerts to followers of stories), newest alert first."""
    store = await app.face(create=False)
    return await store.alert_rows()


async def resend_alerts(app: App) -> list[AlertRow]:
    """Re-open the stuck and failed rows of each follow's latest alert for the next run."""
    store = await app.face(create=False)
    return await store.resend_alerts(datetime.now(UTC))


async def abandon_alerts(app: App) -> list[AlertRow]:
    """Give up the stuck and pending rows of open alerts (they end failed, never sent)."""
    store = await app.face(create=False)
    return await store.abandon_alerts(datetime.now(UTC))


async def resend(app: App, day: date) -> list[Delivery]:
    """Re-open the stuck and failed messages (every channel) of the edition of `day` for the
    next publish."""
    from digest.deliver.sender import resend as reopen

    store = await app.face(create=False)
    return await reopen(SqlLedger(store), day, datetime.now(UTC))
