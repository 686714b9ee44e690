#!/usr/bin/env bash
# Dashboard end-to-end test in headless Chromium (issue 6 §4).
#
# Installs what it needs (Debian's chromium, playwright-core from npm),
# builds and starts the mock provider and the gateway on free loopback
# ports, then runs e2e/dashboard/dashboard.test.mjs, which sends traffic
# with failing tools through the gateway and checks the page. Saves a
# screenshot to target/dashboard.png. Last line: `dashboard-e2e: N passed,
# M failed`; non-zero exit on any failure. Processes are killed on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="$TARGET/debug"
TOOLWARDEN="${TOOLWARDEN_BIN:-$BIN/toolwarden}" # override to test another build
WORK="$(mktemp -d)"
PIDS=()

cleanup() {
  local rc=$?
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ]; then
    for log in "$WORK"/*.log; do
      [ -f "$log" ] || continue
      echo "--- $(basename "$log") (last 40 lines)"
      tail -n 40 "$log"
    done
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
  echo "dashboard-e2e: $*" >&2
  echo "dashboard-e2e: 0 passed, 1 failed"
  exit 1
}

# --- what the test needs
if [ ! -x /usr/bin/chromium ]; then
  echo "installing Debian's chromium"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
[ -x /usr/bin/chromium ] || fail "/usr/bin/chromium is missing"
(cd e2e/dashboard && npm ci --no-audit --no-fund --loglevel=error)

cargo build -q -p toolwarden -p toolwarden-mock-provider || fail "cargo build of toolwarden and mock-provider failed"
[ -x "$TOOLWARDEN" ] || fail "$TOOLWARDEN was not built"
[ -x "$BIN/mock-provider" ] || fail "$BIN/mock-provider was not built"
"$TOOLWARDEN" serve --help >/dev/null 2>&1 || fail "\`toolwarden serve\` is not available in $TOOLWARDEN"

# --- free loopback ports (asked of the kernel, then released)
free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
MOCK_PORT="$(free_port)"
GW_PORT="$(free_port)"
while [ "$GW_PORT" = "$MOCK_PORT" ]; do GW_PORT="$(free_port)"; done

wait_for() { # url, what
  for _ in $(seq 1 150); do
    if curl -s -o /dev/null "$1"; then return 0; fi
    sleep 0.2
  done
  fail "$2 did not come up at $1"
}

"$BIN/mock-provider" --listen "127.0.0.1:$MOCK_PORT" >"$WORK/mock-provider.log" 2>&1 &
PIDS+=($!)
wait_for "http://127.0.0.1:$MOCK_PORT/v1/models" "mock provider"

MOCK="http://127.0.0.1:$MOCK_PORT"
"$TOOLWARDEN" serve --listen "127.0.0.1:$GW_PORT" --database "sqlite://$WORK/dashboard.db" \
  --openai-upstream "$MOCK" --anthropic-upstream "$MOCK" --gemini-upstream "$MOCK" \
  >"$WORK/gateway.log" 2>&1 &
PIDS+=($!)
wait_for "http://127.0.0.1:$GW_PORT/healthz" "gateway"

mkdir -p "$ROOT/target"
GATEWAY_URL="http://127.0.0.1:$GW_PORT" SCREENSHOT="$ROOT/target/dashboard.png" \
  node e2e/dashboard/dashboard.test.mjs
