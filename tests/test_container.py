"""The Dockerfile's image, run for real with podman: its daemon runs a whole cycle (collect,
deepen in the image's Chromium, publish) against the local news web, its health check passes
while the daemon runs, the archive and the email land on the volume, and the archive it serves
answers.

`.ci/container.sh` builds the image on this machine (a debootstrap base, a wheelhouse, `podman
build`) and prints DIGEST_TEST_CONTAINER_IMAGE and CONTAINERS_CONF. Without them the test is
skipped, except in CI, where it fails. The container shares the host's network (`--network
host`): the news web and the daemon's server are on 127.0.0.1, and nothing else is reached.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from digest.config import Config, parse_config
from tests.configs import feed, write_config
from tests.conftest import ROOT, wait_for
from tests.newsweb import ARTICLES, NewsWeb, Route, render_rss
from tests.test_serve import free_port, get

TECH = [a for a in ARTICLES if a.category == "technology"]
CYCLE_TIMEOUT = 300.0  # seconds for the first cycle: Python, Chromium and the jobs start cold
# podman kills a test's container after this many seconds, should the test itself be killed
# before it removes it (.ci/container.sh removes such stopped ones).
LIFETIME = "900"


def container_image() -> str:
    """The image built by .ci/container.sh: skipped where it is missing, failed in CI."""
    image = os.environ.get("DIGEST_TEST_CONTAINER_IMAGE", "")
    reason = ""
    if not shutil.which("podman"):
        reason = "podman is not installed"
    elif not image:
        reason = "no image: run `bash .ci/container.sh` and export what it prints"
    elif podman("image", "exists", image).returncode != 0:
        reason = f"the image {image} is not there: run `bash .ci/container.sh`"
    if not reason:
        return image
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the container test", pytrace=False)
    pytest.skip(reason)


def podman(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture
def containers() -> Iterator[Callable[[], str]]:
    """Names for this test's containers, which are removed afterwards whatever happened."""
    names: list[str] = []

    def new_name() -> str:
        names.append(f"digest-test-{uuid.uuid4().hex[:12]}")
        return names[-1]

    yield new_name
    for name in names:
        podman("rm", "--force", "--time", "5", name)
    left = [name for name in names if podman("container", "exists", name).returncode != 1]
    assert not left, f"containers left behind: {left}"


def todays_feed(web: NewsWeb) -> str:
    """A feed of the technology articles published now (the default feeds are a year old, too
    old to make stories of)."""
    now = datetime.now(UTC).replace(microsecond=0)
    articles = [replace(a, published=now) for a in TECH]
    path = "/feeds/technology-container.rss"
    web.add(Route(path, render_rss(web.url(""), "technology", articles), "application/rss+xml"))
    return web.url(path)


def volume(tmp_path: Path, web: NewsWeb, port: int) -> Path:
    """The /data folder: a config reading a feed of the news web, serving on `port` from the
    daemon, today's edition due at once; writable by the image's user (uid 1000)."""
    data = tmp_path / "data"
    write_config(
        data,
        sources={
            "categories": ["technology"],
            "ddg": False,
            "feeds": [feed(todays_feed(web))],
        },
        crawl={"mode": "auto", "executable_path": "/usr/bin/chromium"},
        serve={"daemon": True, "port": port},
        schedule={"publish_at": "00:00"},
        email={"unsubscribe_url": f"http://127.0.0.1:{port}/unsubscribe?token={{token}}"},
    )
    data.chmod(0o777)
    return data


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_image_runs_a_healthy_cycle_and_serves_its_archive(
    tmp_path: Path, threaded_news_web: NewsWeb, containers: Callable[[], str]
) -> None:
    image = container_image()
    container_name = containers()
    port = free_port()
    data = volume(tmp_path, threaded_news_web, port)
    mount = f"{data}:/data"

    # A one-off container on the same volume: the image's CLI creates the database.
    added = podman(
        "run", "--rm", "--network", "none", "-v", mount, image,
        "digest", "subscribers", "add", "reader@example.org",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr

    started = podman("run", "--detach", "--name", container_name, "--timeout", LIFETIME,
                     "--network", "host", "-v", mount, image)  # fmt: skip
    assert started.returncode == 0, started.stderr

    def logs() -> str:
        out = podman("logs", container_name)
        return (out.stdout + out.stderr)[-6000:]

    # The first publish writes the archive and emails the edition (an .eml in the outbox).
    done = wait_for(lambda: any(data.glob("outbox/*.eml")), CYCLE_TIMEOUT)
    assert done, logs()

    health = podman("healthcheck", "run", container_name, timeout=60)
    assert health.returncode == 0, f"unhealthy: {health.stdout}{health.stderr}\n{logs()}"

    status = podman("exec", container_name, "digest", "status", "--json", timeout=60)
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["daemon_running"] is True
    runs = report["last_runs"]
    assert {kind: runs[kind]["status"] for kind in ("collect", "deepen", "publish")} == {
        "collect": "ok",
        "deepen": "ok",
        "publish": "ok",
    }, logs()
    assert runs["collect"]["counts"]["headlines"] == len(TECH)
    # The deep crawl ran in the image's Chromium, not in the HTTP fallback.
    assert report["browser"]["last_used"] == "browser", json.dumps(runs["deepen"])

    assert (data / "site" / "index.html").is_file()
    (eml,) = data.glob("outbox/*.eml")
    assert "reader@example.org" in eml.read_text(encoding="utf-8", errors="replace")

    served = f"http://127.0.0.1:{port}"
    code, index = get(f"{served}/")
    edition = re.search(r'href="(\d{4}/\d{2}/\d{2}/index\.html)"', index)
    assert code == 200 and edition, index[:2000]
    code, page = get(f"{served}/{edition[1]}")
    assert code == 200 and TECH[0].title in page, page[:2000]

    # SIGTERM (the image's STOPSIGNAL) stops the daemon cleanly (exit status 0, also in the
    # middle of a step), well before podman's SIGKILL.
    stopped = podman("stop", "--time", "30", container_name, timeout=60)
    assert stopped.returncode == 0, stopped.stderr
    state = podman("inspect", "--format", "{{.State.ExitCode}}", container_name)
    assert state.stdout.strip() == "0", logs()

    # With no daemon on the volume, the same check says so.
    idle = containers()
    started = podman("run", "--detach", "--name", idle, "--timeout", LIFETIME,
                     "--network", "none", "-v", mount, image, "sleep", "300")  # fmt: skip
    assert started.returncode == 0, started.stderr
    health = podman("healthcheck", "run", idle, timeout=60)
    assert health.returncode != 0 and "unhealthy" in health.stdout + health.stderr


# The deployment files, read as a user's tools read them.


def test_the_dockerfile_builds_on_a_public_base_by_default() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    lines = dockerfile.splitlines()
    froms = [line for line in lines if line.startswith("FROM ")]
    assert froms == ["FROM ${BASE} AS requirements", "FROM ${BASE}"]
    assert "ARG BASE=python:3.11-slim-bookworm" in lines[: lines.index(froms[0])]
    assert 'ARG PIP_OPTIONS=""' in lines  # nothing but pip's defaults unless asked


def test_compose_runs_a_daemon_workers_and_postgres_on_one_config() -> None:
    import yaml  # PyYAML comes with crawl4ai and apprise

    compose = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    services = compose["services"]
    assert set(services) == {"postgres", "daemon", "worker"}
    daemon, worker = services["daemon"], services["worker"]
    assert daemon["command"][-1] == "run" and daemon["ports"] == ["8000:8000"]
    assert worker["command"][-3:] == ["worker", "--concurrency", "4"]
    assert "ports" not in worker and worker["deploy"]["replicas"] == 2
    for service in (daemon, worker):
        assert service["build"]["context"] == "."
        assert service["environment"]["DIGEST_CONFIG"] == "/etc/digest/digest.toml"
        assert service["configs"] == [{"source": "digest", "target": "/etc/digest/digest.toml"}]
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert "data:/data" in service["volumes"]
    assert compose["configs"]["digest"]["file"] == "./compose.digest.toml"

    operations = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    docker = operations.split("## Docker", 1)[1].split("\n## ", 1)[0]
    assert "docker compose up -d --scale worker=4" in docker
    assert "digest worker --concurrency 4" in docker


def test_the_compose_config_is_a_valid_config_on_postgres_with_the_queue_on() -> None:
    data = tomllib.loads((ROOT / "compose.digest.toml").read_text(encoding="utf-8"))
    assert data["queue"] == {"enabled": True}
    if "queue" not in Config.model_fields:  # the workers' settings arrive with `digest worker`
        data.pop("queue")
    config = parse_config(data, origin="compose.digest.toml", path=Path("/etc/digest/digest.toml"))
    # compose.yaml's PostgreSQL, and no password in the file (libpq reads PGPASSWORD).
    assert config.database.url == "postgresql+psycopg://digest@postgres/digest"
    assert (config.serve.host, config.serve.port, config.serve.daemon) == ("0.0.0.0", 8000, True)
    assert config.crawl.executable_path == "/usr/bin/chromium"
    # Absolute paths on the shared volume, not beside the read-only config.
    assert config.archive.dir == "/data/site" and config.email.outbox_dir == "/data/outbox"
