#!/usr/bin/env bash
# The official Python SDKs (openai, anthropic from PyPI) through the gateway,
# streaming and not, against the mock provider; the gateway exports its spans
# over OTLP/gRPC, gzipped, to a real collector (grpcio, opentelemetry-proto) that
# refuses its first call. Prints a final line
# `sdk-e2e: N passed, M failed`; exits non-zero on any failure.
#
#   bash .ci/sdk_e2e.sh
set -euo pipefail
ci_suite=sdk-e2e
. "$(dirname "$0")/lib.sh"
venv="$target/sdk-venv"
key="sk-sdk-e2e-key-$$"

# --- the SDKs, pinned, in a venv under the target directory
ci_pip "$venv" openai==3.63.0 anthropic==2.17.0 grpcio==1.76.0 opentelemetry-proto==1.45.2
"$venv/bin/python" -c 'import openai, anthropic; print("== SDKs: openai", openai.__version__, "anthropic", anthropic.__version__)'

ci_build
ci_start_mock sdk --api-key "$key"

# --- a real OTLP/gRPC collector (it refuses its first call: UNAVAILABLE)
ci_spawn "$venv/bin/python" .ci/otlp_grpc_collector.py --port-file "$tmp/collector.port" \
  --out "$tmp/spans.jsonl" --refuse 1 2>"$tmp/collector.err"
for ((i = 0; i < 200; i++)); do [ -s "$tmp/collector.port" ] && break; sleep 0.05; done
[ -s "$tmp/collector.port" ] || { echo "sdk-e2e: the collector did not start" >&2; cat "$tmp/collector.err" >&2; exit 1; }
collector="http://127.0.0.1:$(cat "$tmp/collector.port")"
echo "== OTLP/gRPC collector at $collector"

db="sqlite://$tmp/toolwarden.db"
ci_start_gateway sdk env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY \
  OTEL_EXPORTER_OTLP_ENDPOINT="$collector" OTEL_EXPORTER_OTLP_PROTOCOL=grpc OTEL_EXPORTER_OTLP_COMPRESSION=gzip \
  OTEL_EXPORTER_OTLP_HEADERS=x-team=ml OTEL_SERVICE_NAME=sdk-e2e-gateway -- --database "$db" \
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

"$venv/bin/python" .ci/sdk_e2e.py check --toolwarden "$tw" --database "$db" --expect "$tmp/expect.json" \
  --spans "$tmp/spans.jsonl" || rc=1
exit "$rc"
