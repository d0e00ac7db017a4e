"""Logging: one line per event on stderr, as text for people or JSON for machines."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        event = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            event["exception"] = self.formatException(record.exc_info)
        from digest.render.sanitize import escape_json_for_terminal  # only once there is a line

        return escape_json_for_terminal(json.dumps(event, ensure_ascii=False))


class TextFormatter(logging.Formatter):
    """One line per event; messages quote sources (titles, errors), so they are cleaned like
    pages before they reach a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        from digest.render.sanitize import clean_text  # only once there is a line

        return clean_text(super().format(record))


def setup_logging(level: str, fmt: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper()))
