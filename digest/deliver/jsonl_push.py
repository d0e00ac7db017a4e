"""SCRATCH (issue 40's worked example): a push channel type of its own, `jsonl:///path`: each
notification appended to a local file as one JSON line."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from digest.deliver.push import Notification
from digest.deliver.transport import SendResult
from digest.errors import InvalidChannelError

if TYPE_CHECKING:
    from digest.config import ChannelsConfig


class JsonlTransport:
    name = "jsonl"

    def scope(self, msg: Notification) -> str:
        return f"jsonl:{msg.url.removeprefix('jsonl://')}"

    async def send(self, msg: Notification) -> SendResult:
        line = {"to": msg.recipient, "title": msg.title, "text": msg.text, "id": msg.message_id}
        _append(Path(msg.url.removeprefix("jsonl://")), json.dumps(line) + "\n")
        return SendResult(reply="jsonl: written")

    async def aclose(self) -> None:
        return None


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(text)


class JsonlType:
    name = "jsonl"

    def claims(self, url: str) -> bool:
        return url.strip().startswith("jsonl://")

    def check(self, url: str, *, from_page: bool, config: ChannelsConfig) -> str:
        if from_page:
            raise InvalidChannelError("jsonl:// channels are the operator's")
        return url.strip()

    def shown(self, url: str) -> str:
        return url

    def body_limit(self, url: str) -> int | None:
        return None

    def transport(self, environ: Mapping[str, str], config: ChannelsConfig) -> JsonlTransport:
        return JsonlTransport()


JSONL = JsonlType()
