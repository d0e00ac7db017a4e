"""SCRATCH (issue 40's worked example): the jsonl:// push type, checked, built and sent through
the registry like any channel."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path

import pytest

from digest.config import parse_config
from digest.deliver.notification import build_notification
from digest.deliver.push_types import Channels, check_url
from digest.deliver.transport import OutboxTransport
from digest.errors import InvalidChannelError
from digest.models import Channel, channel_key
from digest.subscribers.preferences import PreferenceChanges, Preferences, apply_changes
from tests.editions import make_edition

CONFIG = parse_config({})


def test_a_jsonl_channel_is_taken_from_the_operator_and_gets_the_digest(tmp_path: Path) -> None:
    url = f"jsonl://{tmp_path / 'out.jsonl'}"
    changes = PreferenceChanges(add_channels=(url,))
    prefs = apply_changes(Preferences(), changes, CONFIG, check_channel=check_url)
    assert prefs.channels == (url,)
    with pytest.raises(InvalidChannelError):
        apply_changes(Preferences(), changes, CONFIG, from_page=True, check_channel=check_url)
    msg = build_notification(
        make_edition(date(2026, 1, 2)),
        "r@example.org",
        Channel(url, channel_key(url)),
        archive_url=None,
        preferences_url="https://example.org/p",
        title="digest",
        sender="digest@example.org",
    )
    channels = Channels.of_types(OutboxTransport(str(tmp_path)), {}, CONFIG.channels)
    asyncio.run(channels.send(msg))
    asyncio.run(channels.aclose())
    line = json.loads((tmp_path / "out.jsonl").read_text())
    assert line["to"] == "r@example.org"
    assert line["id"] == msg.message_id
