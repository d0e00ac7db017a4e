# digest in a container: data (database, archive, outbox, config) lives on the /data volume.
FROM python:3.11-slim-bookworm

# Chromium from the distribution's packages, as .ci/run installs it (used by the deep crawl).
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium \
 && rm -rf /var/lib/apt/lists/*

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY digest ./digest
COPY migrations ./migrations
COPY templates ./templates
RUN pip install --no-cache-dir '.[postgres]' && rm -rf /src

RUN useradd --create-home --uid 1000 digest && mkdir /data && chown digest /data
USER digest
WORKDIR /data
VOLUME /data
# A config at /data/digest.toml is used when present; otherwise the built-in defaults
# (SQLite in /data/digest.db, the archive in /data/site, emails in /data/outbox).
# Healthy while the daemon holds its lock and `digest status` can read the database.
HEALTHCHECK --interval=5m --timeout=30s --start-period=2m \
  CMD digest status --json | python -c "import json,sys; sys.exit(0 if json.load(sys.stdin)['daemon_running'] else 1)"
EXPOSE 8000
STOPSIGNAL SIGTERM
# First start: write /data/digest.toml (commented defaults) pointing the crawler at the
# distribution's Chromium; edit it on the volume afterwards.
CMD ["sh", "-c", "[ -f digest.toml ] || { digest init && sed -i 's|^# executable_path = .*|executable_path = \"/usr/bin/chromium\"|' digest.toml; }; exec digest --log-format json --log-level info run"]
