#!/usr/bin/env bash
# Voice sockets read through the gateway with the real SDKs: the `openai`
# Python SDK's `client.realtime.connect()` and google-genai's
# `client.aio.live.connect()` (both pinned below; google-genai with an API
# key and in Vertex AI mode), each against a scripted upstream
# (.ci/voice_e2e.py) speaking the real event shapes. Checks the calls,
# results, failures and Live tokens in /metrics, counted once, and the
# Vertex socket's path and Bearer token upstream. Fails loudly.
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
vertex_port=$(ci_free_port)
ci_start_gateway voice env -u OPENAI_API_KEY -u GOOGLE_APPLICATION_CREDENTIALS -- \
  --database "sqlite://$tmp/voice.db" \
  --openai-upstream "http://127.0.0.1:$openai_port" \
  --gemini-upstream "http://127.0.0.1:$gemini_port" \
  --vertex-upstream "http://127.0.0.1:$vertex_port"
env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u GOOGLE_API_KEY -u GEMINI_API_KEY \
  -u GOOGLE_CLOUD_PROJECT -u GOOGLE_CLOUD_LOCATION -u GOOGLE_GENAI_USE_VERTEXAI \
  "$venv/bin/python" .ci/voice_e2e.py --gateway "$gw_url" \
  --openai-port "$openai_port" --gemini-port "$gemini_port" --vertex-port "$vertex_port"
echo "voice-e2e: passed"
