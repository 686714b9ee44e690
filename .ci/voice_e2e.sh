#!/usr/bin/env bash
# Voice sockets read through the gateway with the real SDKs: the `openai`
# Python SDK's `client.realtime.connect()` and google-genai's
# `client.aio.live.connect()` (both pinned below; google-genai with an API
# key and in Vertex AI mode), each against a scripted upstream
# (.ci/voice_e2e.py) speaking the real event shapes. Checks the calls,
# results, failures and Live tokens in /metrics, counted once, and the
# Vertex socket's path and Bearer token upstream. Then google-genai in
# Vertex AI mode through a second gateway with no --vertex-upstream: the
# socket goes to the regional host its setup names,
# us-central1-aiplatform.googleapis.com, which --resolve leads to a TLS
# upstream on 127.0.0.1 (a certificate for that name from a CA made here,
# trusted with --upstream-ca); checks the name it saw as SNI and Host.
# Fails loudly.
#
#   bash .ci/voice_e2e.sh
set -euo pipefail
ci_suite=voice-e2e
. "$(dirname "$0")/lib.sh"
OPENAI_SDK_VERSION=3.63.0   # has client.realtime.connect() (GA events)
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
main_gw_url=$gw_url

# A CA and a certificate for the regional host, for its TLS upstream.
regional_host=us-central1-aiplatform.googleapis.com
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=voice-e2e CA" \
  -keyout "$tmp/ca.key" -out "$tmp/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=$regional_host" \
  -keyout "$tmp/regional.key" -out "$tmp/regional.csr" 2>/dev/null
printf 'subjectAltName=DNS:%s\n' "$regional_host" >"$tmp/regional.ext"
openssl x509 -req -in "$tmp/regional.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" \
  -CAcreateserial -days 2 -extfile "$tmp/regional.ext" -out "$tmp/regional.pem" 2>/dev/null
regional_port=$(ci_free_port)
ci_start_gateway voice-regional env -u OPENAI_API_KEY -u GOOGLE_APPLICATION_CREDENTIALS -- \
  --database "sqlite://$tmp/voice-regional.db" \
  --resolve "$regional_host:443:127.0.0.1:$regional_port" \
  --upstream-ca "$tmp/ca.pem"
regional_gw_url=$gw_url

env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u GOOGLE_API_KEY -u GEMINI_API_KEY \
  -u GOOGLE_CLOUD_PROJECT -u GOOGLE_CLOUD_LOCATION -u GOOGLE_GENAI_USE_VERTEXAI \
  "$venv/bin/python" .ci/voice_e2e.py --gateway "$main_gw_url" \
  --openai-port "$openai_port" --gemini-port "$gemini_port" --vertex-port "$vertex_port" \
  --regional-gateway "$regional_gw_url" --regional-port "$regional_port" \
  --regional-cert "$tmp/regional.pem" --regional-key "$tmp/regional.key"
echo "voice-e2e: passed"
