"""Who may call the API and /mcp: a token bucket per client, and the bearer-token rule."""

from __future__ import annotations

import hmac
import ipaddress
import math
from dataclasses import dataclass, field
from typing import NamedTuple


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


class Refusal(NamedTuple):
    """Why a request is not answered: its status, the reason in words, headers to send."""

    status: int
    why: str
    headers: dict[str, str]


@dataclass
class Gate:
    """The one rule of /api/v1 and /mcp, checked before either reads a request: a client over
    its rate gets 429 with Retry-After; with a token configured (`token`, read from the
    environment once, as the server is built) every request must bear it (401); off this
    machine (`local` false) one must be configured (403). `name` and `setting` say in a refusal
    what refused and which setting names the token."""

    name: str
    setting: str
    token: str | None
    local: bool
    bucket: RateLimit

    def refusal(self, client: str, authorization: str | None, now: float) -> Refusal | None:
        """None when `client`'s request (its Authorization header) may go on at `now`
        (monotonic seconds), else why not."""
        wait = self.bucket.take(client, now)
        if wait:
            retry = str(max(1, math.ceil(wait)))
            return Refusal(429, "too many requests: slow down", {"Retry-After": retry})
        if self.token is not None:
            if bearer_ok(authorization, self.token):
                return None
            return Refusal(
                401,
                "send the token as Authorization: Bearer <token>",
                {"WWW-Authenticate": 'Bearer realm="digest"'},
            )
        if self.local:
            return None
        return Refusal(
            403,
            f"{self.name} is not open on this address without a token: name an environment "
            f"variable that holds one in the config ([serve] {self.setting}), or listen on "
            "localhost",
            {},
        )
