"""Who may call the API: a token bucket per client, and the bearer-token rule off localhost."""

from __future__ import annotations

import hmac
import ipaddress
import os
from dataclasses import dataclass, field


@dataclass
class RateLimit:
    """A token bucket per client: `rate` requests a second on average, `burst` at once."""

    rate: float
    burst: int
    max_clients: int = 10_000  # past this many, the fullest buckets are forgotten
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)

    def take(self, client: str, now: float) -> float:
        """Spend one request of `client` at `now` (monotonic seconds): 0 when allowed, else
        the seconds until one is."""
        tokens, then = self._buckets.get(client, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + max(0.0, now - then) * self.rate)
        if tokens < 1.0:
            self._buckets[client] = (tokens, now)
            return (1.0 - tokens) / self.rate
        if client not in self._buckets and len(self._buckets) >= self.max_clients:
            self._forget_full(now)
        self._buckets[client] = (tokens - 1.0, now)
        return 0.0

    def _forget_full(self, now: float) -> None:
        for key, (tokens, then) in list(self._buckets.items()):
            if tokens + (now - then) * self.rate >= self.burst:
                del self._buckets[key]
        if len(self._buckets) >= self.max_clients:
            self._buckets.clear()


def is_loopback(host: str) -> bool:
    """Whether a listening address is this machine only ("localhost", 127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def bearer_ok(header: str | None, token: str) -> bool:
    """Whether an Authorization header carries `token` as its bearer token."""
    if not header or not token:
        return False
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    given = given.strip()
    return given.isascii() and hmac.compare_digest(given.encode(), token.encode())


def token_problem(header: str | None, env_name: str, *, local: bool) -> tuple[int, str] | None:
    """The one token rule of /api/v1 and /mcp: None when the request may go on, else the
    status and why not. With a token configured (the environment variable `env_name` holds
    one), every request must bear it (401); off this machine one must be configured (403)."""
    token = os.environ.get(env_name, "") if env_name else ""
    if token:
        if bearer_ok(header, token):
            return None
        return 401, "send the token as Authorization: Bearer <token>"
    if local:
        return None
    return 403, (
        "not open on this address without a token: name an environment variable that holds "
        "one in the config, or listen on localhost"
    )
