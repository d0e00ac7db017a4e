"""Content cache (bounded LRU with expiry) and failure cache (expiring, counted per host)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from digest.fetch.cache import FailureCache, TTLCache, host_of


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_least_recently_used_entry_is_evicted_first() -> None:
    cache: TTLCache[str, int] = TTLCache(2, 60)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recently used
    cache.put("c", 3)
    assert cache.get("b") is None
    assert (cache.get("a"), cache.get("c")) == (1, 3)


def test_entries_expire_after_their_ttl() -> None:
    clock = FakeClock()
    cache: TTLCache[str, str] = TTLCache(10, 60, clock=clock)
    cache.put("url", "lede")
    clock.advance(59)
    assert cache.get("url") == "lede"
    clock.advance(1)
    assert cache.get("url") is None
    assert len(cache) == 0


def test_putting_again_renews_the_ttl() -> None:
    clock = FakeClock()
    cache: TTLCache[str, str] = TTLCache(10, 60, clock=clock)
    cache.put("url", "old")
    clock.advance(50)
    cache.put("url", "new")
    clock.advance(50)
    assert cache.get("url") == "new"


@given(
    st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers()), max_size=60), st.integers(1, 5)
)
def test_cache_never_holds_more_than_maxsize(ops: list[tuple[str, int]], maxsize: int) -> None:
    cache: TTLCache[str, int] = TTLCache(maxsize, 60)
    for key, value in ops:
        cache.put(key, value)
        assert len(cache) <= maxsize
        assert cache.get(key) == value  # the newest entry is always kept


def test_failed_url_is_skipped_until_its_failure_expires() -> None:
    clock = FakeClock()
    failures = FailureCache(300, clock=clock)
    failures.record_failure("http://a.example/1", "timed out")
    found = failures.check("http://a.example/1")
    assert found is not None and found.reason == "timed out"
    assert failures.check("http://a.example/2") is None  # one failure does not condemn the host
    clock.advance(300)
    assert failures.check("http://a.example/1") is None


def test_host_failing_repeatedly_is_skipped_for_a_while() -> None:
    clock = FakeClock()
    failures = FailureCache(300, host_limit=3, clock=clock)
    for i in range(3):
        failures.record_failure(f"http://slow.example/{i}", "timed out")
    assert failures.host_failures("http://slow.example/x") == 3
    skipped = failures.check("http://slow.example/other")
    assert skipped is not None and skipped.host_wide
    assert failures.check("http://fast.example/other") is None
    clock.advance(301)
    assert failures.check("http://slow.example/other") is None


def test_success_resets_the_host_count() -> None:
    failures = FailureCache(300, host_limit=2)
    failures.record_failure("http://h.example/1", "refused")
    failures.record_success("http://h.example/2")
    failures.record_failure("http://h.example/3", "refused")
    assert failures.check("http://h.example/4") is None


def test_page_specific_failures_do_not_count_against_the_host() -> None:
    failures = FailureCache(300, host_limit=2)
    for i in range(5):
        failures.record_failure(f"http://h.example/{i}", "HTTP 404", count_for_host=False)
    assert failures.host_failures("http://h.example/") == 0
    assert failures.check("http://h.example/new") is None


def test_old_host_failures_fall_out_of_the_window() -> None:
    clock = FakeClock()
    failures = FailureCache(100, host_limit=3, clock=clock)
    failures.record_failure("http://h.example/1", "x")
    clock.advance(60)
    failures.record_failure("http://h.example/2", "x")
    clock.advance(60)  # the first failure is now older than the window
    failures.record_failure("http://h.example/3", "x")
    assert failures.host_failures("http://h.example/") == 2
    assert failures.check("http://h.example/4") is None


def test_host_of_includes_the_port() -> None:
    assert host_of("http://Example.com/a") == "example.com:80"
    assert host_of("https://example.com:8443/a") == "example.com:8443"
    assert host_of("not a url") == ""
