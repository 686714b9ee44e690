#!/usr/bin/env bash
# The Responses API's WebSocket mode through the gateway with real clients:
# the official `openai` Python SDK's `client.responses.connect()` (pinned
# below) and the Codex CLI (npm, pinned) with a custom provider that has
# `supports_websockets = true` (no `supports_websockets = false`), each
# against the mock provider speaking WebSocket mode. Fails loudly.
#
#   bash .ci/ws_e2e.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target="${CARGO_TARGET_DIR:-$root/target}"
OPENAI_SDK_VERSION=3.57.0   # has client.responses.connect()
CODEX_VERSION=0.169.0
venv="$target/ws-venv"
codex_dir="$target/ws-codex"
key="sk-ws-e2e-key-$$"

# --- clients
if [ ! -x "$venv/bin/python" ]; then python3 -m venv "$venv"; fi
if ! "$venv/bin/python" -c "import openai, websockets, sys; sys.exit(openai.__version__ != '$OPENAI_SDK_VERSION')" 2>/dev/null; then
  echo "== pip install openai[realtime]==$OPENAI_SDK_VERSION"
  "$venv/bin/pip" install -q --disable-pip-version-check "openai[realtime]==$OPENAI_SDK_VERSION"
fi
codex="$codex_dir/node_modules/.bin/codex"
if [ ! -x "$codex" ] || [ "$("$codex" --version 2>/dev/null)" != "codex-cli $CODEX_VERSION" ]; then
  echo "== npm install @openai/codex@$CODEX_VERSION"
  mkdir -p "$codex_dir"
  npm install --no-audit --no-fund --silent --prefix "$codex_dir" "@openai/codex@$CODEX_VERSION"
fi
echo "== clients: openai $("$venv/bin/python" -c 'import openai; print(openai.__version__)'), $("$codex" --version)"

echo "== cargo build (toolwarden, mock-provider)"
cargo build -q -p toolwarden -p toolwarden-mock-provider
tw="$target/debug/toolwarden"
mockbin="$target/debug/mock-provider"

tmp=$(mktemp -d)
pids=""
cleanup() {
  for pid in $pids; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# start_pair NAME MOCK-ARGS...: a mock and a gateway in front of it; sets
# $mock_url and $gw_url.
start_pair() {
  local name=$1; shift
  "$mockbin" --listen 127.0.0.1:0 --api-key "$key" "$@" >"$tmp/$name-mock.out" 2>"$tmp/$name-mock.err" &
  pids="$pids $!"
  for _ in $(seq 1 100); do grep -q '^listening on ' "$tmp/$name-mock.out" 2>/dev/null && break; sleep 0.05; done
  mock_url=$(sed -n 's/^listening on //p' "$tmp/$name-mock.out")
  [ -n "$mock_url" ] || { echo "ws-e2e: the mock did not start"; cat "$tmp/$name-mock.err"; exit 1; }
  local port
  port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  env -u OPENAI_API_KEY "$tw" serve --listen "127.0.0.1:$port" --database "sqlite://$tmp/$name.db" \
    --openai-upstream "$mock_url" >"$tmp/$name-gw.out" 2>"$tmp/$name-gw.err" &
  pids="$pids $!"
  gw_url="http://127.0.0.1:$port"
  for _ in $(seq 1 100); do curl -sf "$gw_url/healthz" >/dev/null 2>&1 && break; sleep 0.05; done
  curl -sf "$gw_url/healthz" >/dev/null || { echo "ws-e2e: the gateway did not start"; cat "$tmp/$name-gw.err"; exit 1; }
  echo "== $name: mock at $mock_url, gateway at $gw_url"
}

rc=0
# --- the openai SDK (the mock makes two calls per tool turn)
start_pair sdk --calls 2
env -u OPENAI_API_KEY -u OPENAI_BASE_URL "$venv/bin/python" .ci/ws_e2e.py sdk \
  --gateway "$gw_url" --mock "$mock_url" --key "$key" || rc=1

# --- the Codex CLI: `codex exec` with a scratch HOME, a failing and a
# succeeding command scripted at the mock.
"$venv/bin/python" .ci/ws_e2e.py codex-script "$tmp/codex-script.jsonl"
start_pair codex --script "$tmp/codex-script.jsonl"
home="$tmp/home"; work="$tmp/work"
mkdir -p "$home/.codex" "$work"
cat >"$home/.codex/config.toml" <<TOML
model = "gpt-5"
model_provider = "toolwarden"
approval_policy = "never"

[model_providers.toolwarden]
name = "OpenAI through toolwarden"
base_url = "$gw_url/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
supports_websockets = true
TOML
echo "== codex exec (WebSocket mode through the gateway)"
(cd "$work" && env -u OPENAI_BASE_URL HOME="$home" CODEX_HOME="$home/.codex" OPENAI_API_KEY="$key" \
  timeout 120 "$codex" exec --skip-git-repo-check --json \
  "Run the command false, then run echo toolwarden-ok, then tell me what happened." \
  >"$tmp/codex.out" 2>"$tmp/codex.err" </dev/null) || { echo "codex exec failed:"; tail -20 "$tmp/codex.err"; rc=1; }
sleep 0.5
"$venv/bin/python" .ci/ws_e2e.py codex-check --gateway "$gw_url" --mock "$mock_url" --out "$tmp/codex.out" || {
  rc=1; echo "--- codex output"; cat "$tmp/codex.out"; tail -20 "$tmp/codex.err"; }

if [ "$rc" -ne 0 ]; then echo "ws-e2e: FAILED"; exit 1; fi
echo "ws-e2e: passed"
