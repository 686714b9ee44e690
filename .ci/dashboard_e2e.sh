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
ci_suite=dashboard-e2e
. "$(dirname "$0")/lib.sh"

cleanup() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    for log in "$tmp"/*.out "$tmp"/*.err; do
      [ -s "$log" ] || continue
      echo "--- $(basename "$log") (last 40 lines)"
      tail -n 40 "$log"
    done
  fi
  ci_cleanup
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
  DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Retries=3 install -y -qq chromium >/dev/null
fi
[ -x /usr/bin/chromium ] || fail "/usr/bin/chromium is missing"
(cd e2e/dashboard && npm ci --no-audit --no-fund --loglevel=error)

ci_build || fail "cargo build of toolwarden and mock-provider failed"
tw="${TOOLWARDEN_BIN:-$tw}" # override to test another build
[ -x "$tw" ] || fail "$tw was not built"
[ -x "$mockbin" ] || fail "$mockbin was not built"
"$tw" serve --help >/dev/null 2>&1 || fail "\`toolwarden serve\` is not available in $tw"

ci_start_mock dashboard || fail "the mock provider did not start"
ci_start_gateway dashboard --database "sqlite://$tmp/dashboard.db" \
  --openai-upstream "$mock_url" --anthropic-upstream "$mock_url" --gemini-upstream "$mock_url" ||
  fail "the gateway did not come up"

mkdir -p "$root/target"
GATEWAY_URL="$gw_url" SCREENSHOT="$root/target/dashboard.png" \
  node e2e/dashboard/dashboard.test.mjs
