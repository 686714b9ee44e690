#!/usr/bin/env bash
# Voice sockets read through the gateway with the real SDKs: the `openai`
# Python SDK's `client.realtime.connect()` and google-genai's
# `client.aio.live.connect()` (both pinned below), each against a scripted
# upstream (.ci/voice_e2e.py) speaking the real event shapes. Checks the
# calls, results and failures in /metrics, counted once. Fails loudly.
#
#   bash .ci/voice_e2e.sh
set -euo pipefail
ci_suite=voice-e2e
. "$(dirname "$0")/lib.sh"
OPENAI_SDK_VERSION=3.57.0   # has client.realtime.connect() (GA events)
GENAI_SDK_VERSION=3.6.1     # sends {"tool_response":{"functionResponses":…}}
venv="$target/voice-venv"

ci_pip "$venv" "openai[realtime]==$OPENAI_SDK_VERSION" "google-genai==$GENAI_SDK_VERSION"
ci_build

openai_port=$(ci_free_port)
gemini_port=$(ci_free_port)
ci_start_gateway voice env -u OPENAI_API_KEY -- --database "sqlite://$tmp/voice.db" \
  --openai-upstream "http://127.0.0.1:$openai_port" \
  --gemini-upstream "http://127.0.0.1:$gemini_port"
env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u GOOGLE_API_KEY -u GEMINI_API_KEY \
  "$venv/bin/python" .ci/voice_e2e.py --gateway "$gw_url" \
  --openai-port "$openai_port" --gemini-port "$gemini_port"
echo "voice-e2e: passed"
