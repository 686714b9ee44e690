#!/usr/bin/env bash
# The official Python SDKs (openai, anthropic from PyPI) through the gateway,
# streaming and not, against the mock provider. Prints a final line
# `sdk-e2e: N passed, M failed`; exits non-zero on any failure.
#
#   bash .ci/sdk_e2e.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$target/sdk-venv"
key="sk-sdk-e2e-key-$$"

# --- the SDKs, in a venv under the target directory
if [ ! -x "$venv/bin/python" ]; then
  echo "== python venv at $venv"
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import openai, anthropic' 2>/dev/null; then
  echo "== pip install openai anthropic"
  "$venv/bin/pip" install -q --disable-pip-version-check openai anthropic
fi
"$venv/bin/python" -c 'import openai, anthropic; print("== SDKs: openai", openai.__version__, "anthropic", anthropic.__version__)'

# --- the binaries
echo "== cargo build (toolwarden, mock-provider)"
cargo build -q -p toolwarden -p toolwarden-mock-provider
tw="$target/debug/toolwarden"
mockbin="$target/debug/mock-provider"

tmp=$(mktemp -d)
mock_pid=""
gw_pid=""
cleanup() {
  for pid in $gw_pid $mock_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# --- the mock provider (any free port; it prints its URL)
"$mockbin" --listen 127.0.0.1:0 --api-key "$key" >"$tmp/mock.out" 2>"$tmp/mock.err" &
mock_pid=$!
for _ in $(seq 1 100); do
  grep -q '^listening on ' "$tmp/mock.out" 2>/dev/null && break
  sleep 0.05
done
mock_url=$(sed -n 's/^listening on //p' "$tmp/mock.out")
if [ -z "$mock_url" ]; then
  echo "sdk-e2e: the mock provider did not start:"; cat "$tmp/mock.err"; exit 1
fi
echo "== mock provider at $mock_url"

# --- the gateway
port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
db="sqlite://$tmp/toolwarden.db"
env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY "$tw" serve --listen "127.0.0.1:$port" --database "$db" \
  --openai-upstream "$mock_url" --anthropic-upstream "$mock_url" >"$tmp/gw.out" 2>"$tmp/gw.err" &
gw_pid=$!
echo "== gateway at http://127.0.0.1:$port (pid $gw_pid)"

rc=0
env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_BASE_URL \
  "$venv/bin/python" .ci/sdk_e2e.py drive --gateway "http://127.0.0.1:$port" --mock "$mock_url" \
  --key "$key" --expect "$tmp/expect.json" || rc=$?

# Graceful stop (SIGTERM drains the recorder), then read the counts.
kill -TERM "$gw_pid" 2>/dev/null || true
for _ in $(seq 1 100); do
  kill -0 "$gw_pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$gw_pid" 2>/dev/null; then
  echo "sdk-e2e: the gateway did not stop within 10 s of SIGTERM"; rc=1
fi
wait "$gw_pid" 2>/dev/null || true
gw_pid=""
if [ "$rc" -ne 0 ]; then
  echo "--- gateway stderr"; tail -n 40 "$tmp/gw.err" || true
fi

"$venv/bin/python" .ci/sdk_e2e.py check --toolwarden "$tw" --database "$db" --expect "$tmp/expect.json" || rc=1
exit "$rc"
