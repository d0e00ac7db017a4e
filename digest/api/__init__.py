"""The read-only JSON API (/api/v1/) that `digest serve` and the daemon mount: editions,
stories and search in the shapes the commands' `--json` print, for scripts and apps."""

from digest.api.routes import PREFIX, add_api_routes

__all__ = ["PREFIX", "add_api_routes"]
