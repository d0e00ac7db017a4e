"""Who may call the API: a token bucket per client, and the bearer-token rule off localhost."""

from __future__ import annotations

import hmac
import ipaddress
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
