#!/usr/bin/env bash
# The official Python SDKs (openai, anthropic from PyPI) through the gateway,
# streaming and not, against the mock provider. Prints a final line
# `sdk-e2e: N passed, M failed`; exits non-zero on any failure.
#
#   bash .ci/sdk_e2e.sh
set -euo pipefail
ci_suite=sdk-e2e
. "$(dirname "$0")/lib.sh"
venv="$target/sdk-venv"
key="sk-sdk-e2e-key-$$"

# --- the SDKs, pinned, in a venv under the target directory
ci_pip "$venv" openai==3.57.0 anthropic==2.14.0
"$venv/bin/python" -c 'import openai, anthropic; print("== SDKs: openai", openai.__version__, "anthropic", anthropic.__version__)'

ci_build
ci_start_mock sdk --api-key "$key"
db="sqlite://$tmp/toolwarden.db"
ci_start_gateway sdk env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -- --database "$db" \
  --openai-upstream "$mock_url" --anthropic-upstream "$mock_url"

rc=0
env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_BASE_URL \
  "$venv/bin/python" .ci/sdk_e2e.py drive --gateway "$gw_url" --mock "$mock_url" \
  --key "$key" --expect "$tmp/expect.json" || rc=$?

# Graceful stop (SIGTERM drains the recorder), then read the counts.
ci_stop "$gw_pid" "the gateway" || rc=1
if [ "$rc" -ne 0 ]; then
  echo "--- gateway stderr"; tail -n 40 "$tmp/sdk-gw.err" || true
fi

"$venv/bin/python" .ci/sdk_e2e.py check --toolwarden "$tw" --database "$db" --expect "$tmp/expect.json" || rc=1
exit "$rc"
