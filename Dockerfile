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
# A config at /data/digest.toml is used when present; otherwise the built-in defaults.
CMD ["digest", "collect"]
