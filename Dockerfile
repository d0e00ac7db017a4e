# digest in a container: data (database, archive, outbox, config) lives on the /data volume.
#
# Any Debian bookworm base with Python 3.11 and its venv module will do: the default is the
# public python image; .ci/container.sh builds one with debootstrap (Chromium included) and
# installs from a wheelhouse it mounts at /wheels:
#   podman build --format docker --build-arg BASE=localhost/digest-base:... \
#     --build-arg PIP_OPTIONS="--no-index --find-links /wheels" -v "$PWD/wheels:/wheels:ro" .
ARG BASE=python:3.11-slim-bookworm

# The list of dependencies, read from pyproject.toml: the layer that installs them is rebuilt
# when the list changes, not at every change of the code or of the tools' settings.
FROM ${BASE} AS requirements
COPY pyproject.toml /src/
RUN python3 -c 'import tomllib; p = tomllib.load(open("/src/pyproject.toml", "rb")); d = p["project"]; print(*d["dependencies"], *d["optional-dependencies"]["postgres"], *p["build-system"]["requires"], sep="\n")' >/requirements.txt

FROM ${BASE}
# Chromium from the distribution's packages, as .ci/run installs it (used by the deep crawl),
# and libatomic1, without which Playwright's own Node.js driver does not start (and the crawl
# falls back to plain HTTP); a base that has both needs no package index.
RUN dpkg -s chromium libatomic1 >/dev/null 2>&1 \
 || { apt-get update \
      && apt-get install -y --no-install-recommends chromium libatomic1 \
      && rm -rf /var/lib/apt/lists/*; }

# A virtualenv of its own: Debian's python3 refuses pip installs into the system (PEP 668),
# and the public image's python is then used the same way.
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONUNBUFFERED=1 \
    VIRTUAL_ENV=/opt/digest PATH=/opt/digest/bin:$PATH
ARG PIP_OPTIONS=""
RUN python3 -m venv /opt/digest

COPY --from=requirements /requirements.txt /tmp/
RUN pip install $PIP_OPTIONS -r /tmp/requirements.txt && rm /tmp/requirements.txt

WORKDIR /src
COPY pyproject.toml README.md ./
COPY digest ./digest
COPY migrations ./migrations
COPY templates ./templates
RUN pip install $PIP_OPTIONS --no-deps . && cd / && rm -rf /src && digest --help >/dev/null

RUN useradd --create-home --uid 1000 digest && mkdir /data && chown digest /data
USER digest
WORKDIR /data
VOLUME /data
# A config at /data/digest.toml is used when present; otherwise the built-in defaults
# (SQLite in /data/digest.db, the archive in /data/site, emails in /data/outbox).
# Healthy while the daemon holds its lock and `digest status` can read the database; every
# minute, so that a supervisor (compose's depends_on) hears about it soon after the start.
HEALTHCHECK --interval=1m --timeout=30s --start-period=2m --retries=3 \
  CMD digest status --json | python -c "import json,sys; sys.exit(0 if json.load(sys.stdin)['daemon_running'] else 1)"
# The daemon answers the archive and the unsubscribe links of its emails here ([serve] in
# digest.toml); point email.unsubscribe_url at the address readers reach it by.
EXPOSE 8000
STOPSIGNAL SIGTERM
# First start: write /data/digest.toml (commented defaults) pointing the crawler at the
# distribution's Chromium and serving on every interface of the container from the daemon;
# edit it on the volume afterwards.
CMD ["sh", "-c", "[ -f digest.toml ] || { digest init && sed -i -e 's|^# executable_path = .*|executable_path = \"/usr/bin/chromium\"|' -e 's|^host = \"127.0.0.1\"|host = \"0.0.0.0\"|' -e 's|^daemon = false|daemon = true|' digest.toml; }; exec digest --log-format json --log-level info run"]
