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
# The daemon answers the archive and the unsubscribe links of its emails here ([serve] in
# digest.toml); point email.unsubscribe_url at the address readers reach it by.
EXPOSE 8000
STOPSIGNAL SIGTERM
# First start: write /data/digest.toml (commented defaults) pointing the crawler at the
# distribution's Chromium and serving on every interface of the container from the daemon;
# edit it on the volume afterwards.
CMD ["sh", "-c", "[ -f digest.toml ] || { digest init && sed -i -e 's|^# executable_path = .*|executable_path = \"/usr/bin/chromium\"|' -e 's|^host = \"127.0.0.1\"|host = \"0.0.0.0\"|' -e 's|^daemon = false|daemon = true|' digest.toml; }; exec digest --log-format json --log-level info run"]
