#!/usr/bin/env bash
# The Responses API's WebSocket mode through the gateway with real clients:
# the official `openai` Python SDK's `client.responses.connect()` (pinned
# below), its beta `client.beta.responses.connect()` with
# `connection.response.inject(…)`, and the Codex CLI (npm, pinned) with
# a custom provider that has `supports_websockets = true` (no
# `supports_websockets = false`), each against the mock provider speaking
# WebSocket mode. Fails loudly.
#
#   bash .ci/ws_e2e.sh
set -euo pipefail
ci_suite=ws-e2e
. "$(dirname "$0")/lib.sh"
OPENAI_SDK_VERSION=3.63.0   # has client.responses.connect() and the beta connection.response.inject()
CODEX_VERSION=${TOOLWARDEN_E2E_CODEX:-0.171.0}
venv="$target/ws-venv"
codex_dir="${TOOLWARDEN_E2E_CACHE:-$target}/ws-codex"
key="sk-ws-e2e-key-$$"

# --- clients
ci_pip "$venv" "openai[realtime]==$OPENAI_SDK_VERSION"
ci_npm "$codex_dir" "@openai/codex@$CODEX_VERSION"
codex="$codex_dir/node_modules/.bin/codex"
echo "== clients: openai $("$venv/bin/python" -c 'import openai; print(openai.__version__)'), $("$codex" --version)"

ci_build

# start_pair NAME MOCK-ARGS...: a mock and a gateway in front of it; sets
# $mock_url and $gw_url.
start_pair() {
  local name=$1; shift
  ci_start_mock "$name" --api-key "$key" "$@"
  ci_start_gateway "$name" env -u OPENAI_API_KEY -- --database "sqlite://$tmp/$name.db" \
    --openai-upstream "$mock_url"
  echo "== $name: mock at $mock_url, gateway at $gw_url"
}

rc=0
# --- the openai SDK (the mock makes two calls per tool turn)
start_pair sdk --calls 2
env -u OPENAI_API_KEY -u OPENAI_BASE_URL "$venv/bin/python" .ci/ws_e2e.py sdk \
  --gateway "$gw_url" --mock "$mock_url" --key "$key" || rc=1

# --- the openai SDK's beta inject (`client.beta.responses.connect()`,
# `connection.response.inject(…)`): a response waiting for its outputs, one
# output in the inject for a call it never made, which `fix` mode takes out.
"$venv/bin/python" .ci/ws_e2e.py inject-script "$tmp/inject-script.jsonl"
start_pair inject --script "$tmp/inject-script.jsonl"
env -u OPENAI_API_KEY -u OPENAI_BASE_URL "$venv/bin/python" .ci/ws_e2e.py inject \
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
