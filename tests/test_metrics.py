"""The Prometheus endpoint, scraped over real HTTP and read with prometheus_client's own parser:
what a dashboard would show after the daemon ran a cycle against the local peers (news web,
OpenAI-compatible server, SMTP server, a webhook), and the endpoint's own behaviour."""

from __future__ import annotations

import email.utils
import re
import signal
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp import ClientSession
from prometheus_client.parser import text_string_to_metric_families

from digest.config import Config, MetricsConfig
from digest.errors import DigestError
from digest.runtime import metrics
from digest.summarize import ArticleInput, Summarizer
from tests import llmserver
from tests.configs import feed, write_config
from tests.conftest import ROOT, run_cli, serve_in_thread, start_daemon, wait_for
from tests.fake_ddgs import write_script
from tests.llmserver import LLMServer
from tests.newsweb import ARTICLES, Route
from tests.receivers import Receivers
from tests.smtpserver import SmtpServer
from tests.test_serve import free_port

TECH = [a for a in ARTICLES if a.category == "technology"]
llm_server = llmserver.llm_server  # the fixture, as tests/test_summarize.py takes it
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    """Every sample of an exposition, by (name, labels)."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=")
        return parse(response.read().decode())


@pytest.fixture
def receivers() -> Iterator[Receivers]:
    yield from serve_in_thread(Receivers())


def test_the_endpoint_is_off_and_on_loopback_by_default():
    config = Config().metrics
    assert (config.enabled, config.host, config.port) == (False, "127.0.0.1", 9464)


async def test_every_series_is_there_from_the_start_in_both_formats():
    async with (
        await metrics.serve_metrics("127.0.0.1", 0) as server,
        ClientSession() as http,
    ):
        async with http.get(server.url) as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            samples = parse(await response.text())
        openmetrics = "application/openmetrics-text; version=1.0.0"
        async with http.get(server.url, headers={"Accept": openmetrics}) as response:
            assert response.headers["Content-Type"].startswith("application/openmetrics-text")
            assert (await response.text()).endswith("# EOF\n")
        async with http.get(server.url.removesuffix("metrics")) as response:
            assert response.status == 404  # nothing else is served
    for job in metrics.JOBS:
        for outcome in metrics.OUTCOMES:
            assert ("digest_runs_total", frozenset({("job", job), ("outcome", outcome)})) in samples
    for kind in ("prompt", "completion"):
        assert value(samples, "digest_llm_tokens_total", kind=kind) >= 0
    assert value(samples, "digest_messages_sent_total", channel="email") >= 0
    assert ("digest_workers_live", frozenset()) in samples
    assert value(samples, "process_resident_memory_bytes") > 0
    # A metric of the global registry never shows up at our endpoint.
    assert not any(name.startswith("python_gc") for name, _ in samples)


async def test_a_taken_port_is_a_clear_error_and_off_serves_nothing():
    async with await metrics.serve_metrics("127.0.0.1", 0) as server:
        with pytest.raises(DigestError, match=rf"cannot serve metrics on 127.0.0.1:{server.port}"):
            await metrics.serve_metrics("127.0.0.1", server.port)
    async with metrics.serving(MetricsConfig()) as off:
        assert off is None
    # A worker's port override serves even when [metrics] is off (several workers, one host).
    async with metrics.serving(MetricsConfig(), port=0) as on:
        assert on is not None and on.port > 0
        async with ClientSession() as http, http.get(on.url) as response:
            assert response.status == 200


async def test_llm_calls_tokens_and_summaries_as_the_server_saw_them(llm_server: LLMServer):
    """A server that refuses json_schema (as llama-cpp-python's does), answers, then fails:
    one call unsupported, one ok with the tokens it reported, one error (and its summary
    extractive)."""
    llm_server.json_schema = "http500"
    chip = ARTICLES[0]
    text = "\n\n".join([chip.lede, *chip.paragraphs])
    article = ArticleInput(url="https://news.example/chip.html", title=chip.title, text=text)
    async with (
        await metrics.serve_metrics("127.0.0.1", 0) as server,
        Summarizer(llm_server.config(), api_key="k") as summarizer,
        ClientSession() as http,
    ):

        async def scrape_here() -> Samples:
            async with http.get(server.url) as response:
                return parse(await response.text())

        before = await scrape_here()
        ok = await summarizer.summarize(article)
        llm_server.always("error500")
        fallback = await summarizer.summarize(article)
        after = await scrape_here()

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert ok.summarizer == "llm:fake-model" and fallback.summarizer == "extractive"
    assert moved("digest_llm_calls_total", outcome="unsupported") == 1
    assert moved("digest_llm_calls_total", outcome="ok") == 1
    assert moved("digest_llm_calls_total", outcome="error") == 1
    assert moved("digest_llm_call_duration_seconds_count") == 3
    assert moved("digest_llm_tokens_total", kind="prompt") == ok.prompt_tokens > 0
    assert moved("digest_llm_tokens_total", kind="completion") == ok.completion_tokens > 0
    assert moved("digest_summaries_total", method="llm") == 1
    assert moved("digest_summaries_total", method="extractive") == 1


async def test_the_queue_gauges_show_what_a_worker_set():
    """The contract with `digest worker`: it sets the gauges, the endpoint shows them."""
    metrics.queue_jobs.labels("deliver", "waiting").set(3)
    metrics.queue_jobs.labels("deliver", "running").set(1)
    metrics.workers_live.set(2)
    try:
        async with (
            await metrics.serve_metrics("127.0.0.1", 0) as server,
            ClientSession() as http,
            http.get(server.url) as response,
        ):
            samples = parse(await response.text())
    finally:  # the registry is the process's: leave it as other tests expect it
        metrics.queue_jobs.clear()
        metrics.workers_live.set(0)
    assert value(samples, "digest_queue_jobs", kind="deliver", state="waiting") == 3
    assert value(samples, "digest_queue_jobs", kind="deliver", state="running") == 1
    assert value(samples, "digest_workers_live") == 2


def test_the_docs_list_every_metric_and_no_other():
    operations = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    section = operations.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(digest_\w+)`", section, re.MULTILINE))
    ours = {
        family.name + ("_total" if family.type == "counter" else "")
        for family in metrics.REGISTRY.collect()
        if family.name.startswith("digest_")
    }
    assert listed == ours


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_daemon_counts_what_a_cycle_did(
    tmp_path: Path, threaded_news_web, threaded_llm_server, receivers: Receivers
):
    web = threaded_news_web
    fresh = "/feeds/metrics-technology.rss"  # today's items, so that there are stories to deepen
    items = "".join(
        f"<item><title>{a.title}</title><link>{web.url(a.path)}</link>"
        f"<pubDate>{email.utils.format_datetime(datetime.now(UTC))}</pubDate></item>"
        for a in TECH
    )
    web.add(
        Route(
            fresh,
            f"<rss version='2.0'><channel><title>Fresh</title>{items}</channel></rss>".encode(),
            content_type="application/rss+xml",
        )
    )
    port = free_port()
    with SmtpServer() as smtp:
        write_config(
            tmp_path,
            sources={
                "categories": ["technology"],
                "ddg": False,
                # The second feed is not there (404): one source failure.
                "feeds": [feed(web.url(fresh)), feed(web.url("/feeds/missing.rss"))],
            },
            llm={"base_url": threaded_llm_server.url, "model": "fake-model", "max_retries": 0},
            email={"transport": "smtp", "host": "127.0.0.1", "port": smtp.port, "security": "none"},
            schedule={"publish_at": "00:00"},  # today's edition is due at once
            metrics={"enabled": True, "port": port},
        )
        readers = ["ann@example.org", "bob@example.org", "cid@example.org"]
        for reader in readers:
            assert run_cli("subscribers", "add", reader, cwd=tmp_path).code == 0
        hook = receivers.json_url("metrics")
        added = run_cli("subscribers", "add", "dee@example.org", "--channel", hook, cwd=tmp_path)
        assert added.code == 0, added.stderr
        smtp.fail("550")  # the first email is refused for good
        script = write_script(tmp_path / "ddgs.json")
        daemon = start_daemon(tmp_path, script)
        url = f"http://127.0.0.1:{port}/metrics"

        def published() -> bool:
            try:
                samples = scrape(url)
            except OSError:  # not listening yet
                return False
            return value(samples, "digest_run_duration_seconds_count", job="publish") == 1

        try:
            assert wait_for(published, 150), (tmp_path / "daemon.log").read_text()[-3000:]
            samples = scrape(url)
            daemon.send_signal(signal.SIGTERM)
            assert daemon.wait(timeout=30) == 0
        finally:
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait()

    # Four readers, one refused: three emails arrived, and the endpoint says three, one failed.
    assert len(smtp.received) == 3
    assert value(samples, "digest_messages_sent_total", channel="email") == 3
    assert value(samples, "digest_messages_failed_total", channel="email", outcome="failed") == 1
    hooked = len(receivers.of("metrics"))
    assert value(samples, "digest_messages_sent_total", channel="json") == hooked == 1
    # The missing feed failed; the other's items were collected.
    assert value(samples, "digest_source_failures_total", kind="feed") == 1
    assert value(samples, "digest_source_failures_total", kind="ddg") == 0
    assert value(samples, "digest_articles_collected_total", category="technology") == len(TECH)
    assert value(samples, "digest_runs_total", job="collect", outcome="partial") == 1
    assert value(samples, "digest_run_duration_seconds_count", job="collect") == 1
    assert value(samples, "digest_run_last_success_timestamp_seconds", job="collect") > 0
    deepened = [
        value(samples, "digest_runs_total", job="deepen", outcome=o) for o in ("ok", "partial")
    ]
    assert sum(deepened) == 1
    assert value(samples, "digest_runs_total", job="publish", outcome="partial") == 1
    # Summaries came from the LLM server, which reported its tokens.
    assert value(samples, "digest_stories_deepened_total") > 0
    assert value(samples, "digest_summaries_total", method="llm") > 0
    calls = [value(samples, "digest_llm_calls_total", outcome=o) for o in ("ok", "error")]
    assert calls[0] > 0 and sum(calls) == len(threaded_llm_server.completions)
    assert value(samples, "digest_llm_call_duration_seconds_count") == sum(calls)
    # The fake server's prompt tokens are the words of the messages it answered.
    answered = [r for r in threaded_llm_server.completions if r.status == 200]
    words = sum(len(str(m["content"]).split()) for r in answered for m in r.body["messages"])
    assert value(samples, "digest_llm_tokens_total", kind="prompt") == words > 0
    assert value(samples, "digest_llm_tokens_total", kind="completion") > 0
    assert value(samples, "digest_pages_crawled_total", outcome="ok") > 0
    with pytest.raises(OSError):
        scrape(url)  # the endpoint stopped with the daemon
