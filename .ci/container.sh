#!/usr/bin/env bash
# The project's container image, built for real on this machine for tests/test_container.py.
#
# No registry serves base images here and, inside a container, pip's registries fail TLS
# verification; so, once per machine and kept under /var/cache/digest-ci:
#   - podman, runc and debootstrap from Debian's packages when missing (crun fails on this
#     machine's cgroups and rlimits: a containers.conf selects runc and cgroupfs);
#   - a Debian base image made with debootstrap from the mirror apt already uses, holding
#     python3, python3-venv and Chromium (`tar | podman import`), rebuilt only when its
#     package list changes;
#   - a wheelhouse of the project's dependencies built on the host with `pip wheel`, keyed on
#     the list of them in pyproject.toml;
#   - the image from the project's own Dockerfile on that base, installing from the wheelhouse
#     with `--no-index`; tagged with the hash of what goes into it, so an unchanged tree is not
#     rebuilt, and a changed one reuses podman's cached layers up to the first changed file.
#
# Prints, on stdout only, the variables the test reads, as shell lines:
#     container_env="$(bash .ci/container.sh)" && eval "$container_env"
# Progress and errors go to stderr. DIGEST_CI_CACHE moves the cache (default
# /var/cache/digest-ci, else ~/.cache/digest-ci when that is not writable);
# DIGEST_CI_DEBIAN_MIRROR overrides the mirror found in apt's sources.
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE=bookworm
# python3 and python3-venv: the image's virtualenv; tzdata: zoneinfo; chromium: the deep crawl;
# libatomic1: Playwright's Node.js driver needs it (Chromium's dependencies do not bring it).
# dbus-x11: debootstrap takes the first of alternatives and cannot resolve a virtual package;
# Chromium's GTK needs dconf-service, which needs "default-dbus-session-bus | dbus-session-bus",
# and dbus-x11 provides the second.
BASE_PACKAGES=python3,python3-venv,tzdata,chromium,libatomic1,dbus-x11
IMAGE=localhost/digest

cache="${DIGEST_CI_CACHE:-/var/cache/digest-ci}"
if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
  cache="${HOME}/.cache/digest-ci"
  mkdir -p "$cache"
fi
dir="$cache/container"
mkdir -p "$dir"
say() { echo "container: $*" >&2; }
started=$SECONDS

# One build at a time (CI and a developer on the same machine): the others wait for it.
exec 8>"$cache/.container.lock"
flock 8
# What a run cut short (SIGKILL, a lost machine) left half-made.
rm -rf "$dir"/rootfs.* "$dir"/wheels-*.part

# The tools, from Debian's packages.
missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
# Debian's own python3 builds the wheelhouse: the image's python3 is the same package, and pip
# picks versions for the interpreter it runs on (a newer 3.11.x on the PATH may get wheels
# that refuse 3.11.2).
/usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
fi

# runc and cgroupfs: crun and the systemd cgroup manager fail on this machine; no default
# ulimits, which the machine's own limits refuse.
conf="$dir/containers.conf"
cat >"$conf.part" <<'EOF'
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"

[containers]
default_ulimits = []
EOF
mv "$conf.part" "$conf"
export CONTAINERS_CONF="$conf"

# Containers of tests that were killed before removing them (podman stopped them, see
# tests/test_container.py); running ones may be another test's.
podman ps --all --quiet --filter name=digest-test- --filter status=exited \
  | xargs -r podman rm >/dev/null || true

# The mirror apt uses (deb822 sources or a classic sources.list line).
mirror="${DIGEST_CI_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null \
    | awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}')"
fi
if [ -z "$mirror" ]; then
  mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
    | awk '$1 == "deb" && $0 ~ /debian/ && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' \
    | head -1)"
fi
mirror="${mirror:-http://deb.debian.org/debian}"

# The base image: named for what it holds, built once.
base_key="$(printf '%s\n' "$SUITE" "$BASE_PACKAGES" "$mirror" minbase | sha256sum | cut -c1-12)"
base="$IMAGE-base:$SUITE-$base_key"
if ! podman image exists "$base"; then
  say "building the base $base with debootstrap from $mirror (a few minutes)"
  root="$(mktemp -d "$dir/rootfs.XXXXXX")"
  trap 'rm -rf "$root"' EXIT
  mkdir -p "$dir/debs"  # the downloaded packages, kept for the next base
  if ! debootstrap --variant=minbase --include="$BASE_PACKAGES" --cache-dir="$dir/debs" \
    "$SUITE" "$root" "$mirror" >&2; then
    tail -n 40 "$root/debootstrap/debootstrap.log" >&2 || true
    say "debootstrap failed"
    exit 1
  fi
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | podman import --change 'CMD ["/bin/bash"]' - "$base" >&2
  rm -rf "$root"
  trap - EXIT
  say "base built in $((SECONDS - started)) s"
fi

# The wheelhouse: what the Dockerfile installs (the dependencies, the postgres extra, the
# build backend) as wheels built on the host, with the same Debian release and Python as the
# image's. Keyed on that list and the Python, not on the rest of pyproject.toml.
requirements="$(/usr/bin/python3 - <<'EOF'
import tomllib

with open("pyproject.toml", "rb") as f:
    meta = tomllib.load(f)
project = meta["project"]
wanted = [*project["dependencies"], *project["optional-dependencies"]["postgres"]]
print(*wanted, *meta["build-system"]["requires"], sep="\n")
EOF
)"
python="$(/usr/bin/python3 -c 'import platform; print(platform.python_version())')"
wheel_key="$(printf '%s\n' "$python" "$requirements" | sha256sum | cut -c1-16)"
wheels="$dir/wheels-$wheel_key"
if [ ! -f "$wheels/.ok" ]; then
  say "building the wheelhouse $wheels for Python $python (pip wheel; minutes the first time)"
  builder="$dir/pip-venv-$python"
  if [ ! -x "$builder/bin/pip" ]; then
    rm -rf "$builder"
    /usr/bin/python3 -m venv "$builder"
  fi
  rm -rf "$wheels" "$wheels.part"
  mkdir -p "$wheels.part"
  printf '%s\n' "$requirements" >"$wheels.part/requirements.txt"
  "$builder/bin/pip" wheel -q --disable-pip-version-check --wheel-dir "$wheels.part" \
    -r "$wheels.part/requirements.txt" >&2
  touch "$wheels.part/.ok"
  mv "$wheels.part" "$wheels"
  find "$dir" -maxdepth 1 -name 'wheels-*' ! -name "wheels-$wheel_key" -exec rm -rf {} + || true
  say "wheelhouse built ($(find "$wheels" -name '*.whl' | wc -l) wheels) at $((SECONDS - started)) s"
fi

# The image: tagged with the hash of everything that goes into it.
image_key="$(
  {
    printf '%s\n' "$base" "$wheel_key"
    find .ci/container.sh Dockerfile .dockerignore pyproject.toml README.md digest migrations \
      templates -type f \
      ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  } | sha256sum | cut -c1-16
)"
image="$IMAGE:ci-$image_key"
if ! podman image exists "$image"; then
  say "building $image on $base"
  # The docker format: OCI images have no HEALTHCHECK (podman drops it, with a warning).
  podman build --format docker --runtime runc --network host --pull=never \
    --build-arg "BASE=$base" --build-arg "PIP_OPTIONS=--quiet --no-index --find-links /wheels" \
    --volume "$wheels:/wheels:ro" --tag "$image" --file Dockerfile . >&2
  # The images of older trees go, then older bases (another package list): the layers the
  # new image shares with them stay, as the cache of the next build.
  podman images --format '{{.Repository}}:{{.Tag}}' "$IMAGE" \
    | { grep -E ":ci-" || true; } | grep -vxF "$image" | xargs -r podman rmi >&2 || true
  podman images --format '{{.Repository}}:{{.Tag}}' "$IMAGE-base" \
    | grep -vxF "$base" | xargs -r podman rmi >&2 || true
  podman image prune --force >/dev/null || true  # what no image uses (old requirements stages)
fi
say "ready: $image ($((SECONDS - started)) s)"

printf 'export CONTAINERS_CONF=%q\n' "$conf"
printf 'export DIGEST_TEST_CONTAINER_IMAGE=%q\n' "$image"
