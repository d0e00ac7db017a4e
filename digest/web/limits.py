"""Who may call the API and /mcp: the bearer-token rule, then a token bucket per client."""

from __future__ import annotations

import hashlib
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
    """The one rule of /api/v1 and /mcp, checked before either reads a request.

    With a token configured, every request must bear it (else 401), and the token is checked
    before any rate: a client flooding without it behind the same proxy address never spends
    what the token's holder is allowed. Requests bearing it share one bucket (the token's);
    those without, at most `bucket`'s rate of 401s per address, then 429, so guessing it stays
    slow and refusing stays as cheap as it is. Without a token (`token` None), only this machine
    (`local`) is answered, each address at its own rate (429 with Retry-After beyond); off it,
    403. `name` and `setting` say in a refusal what refused and which setting names the token."""

    name: str
    setting: str
    token: str | None
    local: bool
    bucket: RateLimit
    _unauthorised: RateLimit = field(init=False)
    _token_key: str = field(init=False)

    def __post_init__(self) -> None:
        self._unauthorised = RateLimit(rate=self.bucket.rate, burst=self.bucket.burst)
        digest = hashlib.sha256(self.token.encode()).hexdigest() if self.token else ""
        self._token_key = f"token:{digest[:32]}"  # not an address, and not the token itself

    def refusal(self, client: str, authorization: str | None, now: float) -> Refusal | None:
        """None when `client`'s request (its Authorization header) may go on at `now`
        (monotonic seconds), else why not."""
        if self.token is None:
            if not self.local:
                return Refusal(
                    403,
                    f"{self.name} is not open on this address without a token: name an "
                    f"environment variable that holds one in the config ([serve] "
                    f"{self.setting}), or listen on localhost",
                    {},
                )
            return _over(self.bucket.take(client, now), "too many requests: slow down")
        if bearer_ok(authorization, self.token):
            return _over(self.bucket.take(self._token_key, now), "too many requests: slow down")
        over = _over(
            self._unauthorised.take(client, now),
            "too many requests without the token: slow down",
        )
        return over or Refusal(
            401,
            "send the token as Authorization: Bearer <token>",
            {"WWW-Authenticate": 'Bearer realm="digest"'},
        )


def _over(wait: float, why: str) -> Refusal | None:
    """429 with Retry-After when a bucket says to `wait` (seconds), else None."""
    if not wait:
        return None
    return Refusal(429, why, {"Retry-After": str(max(1, math.ceil(wait)))})
