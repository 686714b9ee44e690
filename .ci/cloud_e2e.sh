#!/usr/bin/env bash
# Issue 18: the official cloud clients (openai.AzureOpenAI, google-genai with
# vertexai=True, anthropic.AnthropicVertex, anthropic.AnthropicBedrock; pinned
# below) through the gateway to the mock provider, which checks Azure's
# api-key, Vertex's Bearer token and Bedrock's SigV4 signature (the gateway
# re-signs with the AWS key from its environment). Prints
# `cloud-e2e: N passed, M failed`; exits non-zero on any failure.
#
#   bash .ci/cloud_e2e.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$target/cloud-venv"
pins=(openai==3.57.0 "anthropic[bedrock,vertex]==2.14.0" google-genai==3.6.1 boto3==1.44.8 botocore==1.44.8 google-auth==2.63.0)
azure_key="azure-e2e-key-$$"
aws_key_id="AKIDCLOUDE2E"
aws_secret="cloud-e2e/secret-$$"

# --- the clients, in their own venv under the target directory
if [ ! -x "$venv/bin/python" ]; then
  echo "== python venv at $venv"
  python3 -m venv "$venv"
fi
want=$(printf '%s\n' "${pins[@]}" | sed 's/\[.*\]//' | sort)
have=$("$venv/bin/pip" freeze --disable-pip-version-check 2>/dev/null | grep -iE '^(openai|anthropic|google-genai|boto3|botocore|google-auth)==' | sort || true)
if [ "$(echo "$want" | tr 'A-Z' 'a-z')" != "$(echo "$have" | tr 'A-Z' 'a-z')" ]; then
  echo "== pip install ${pins[*]}"
  "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}" || {
    echo "cloud-e2e: cannot install the pinned clients"; exit 1; }
fi

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

"$mockbin" --listen 127.0.0.1:0 --api-key "$azure_key" --aws-key "$aws_key_id:$aws_secret" --calls 2 \
  --cut-stream toolwarden.cut-midstream-v1:1 \
  >"$tmp/mock.out" 2>"$tmp/mock.err" &
mock_pid=$!
for _ in $(seq 1 100); do
  grep -q '^listening on ' "$tmp/mock.out" 2>/dev/null && break
  sleep 0.05
done
mock_url=$(sed -n 's/^listening on //p' "$tmp/mock.out")
if [ -z "$mock_url" ]; then
  echo "cloud-e2e: the mock provider did not start:"; cat "$tmp/mock.err"; exit 1
fi
echo "== mock provider at $mock_url"

port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The gateway's AWS credentials come from its environment (the standard
# variables); HOME points nowhere so no developer profile is read.
env -i PATH="$PATH" HOME="$tmp" AWS_ACCESS_KEY_ID="$aws_key_id" AWS_SECRET_ACCESS_KEY="$aws_secret" \
  "$tw" serve --listen "127.0.0.1:$port" --database "sqlite://$tmp/toolwarden.db" \
  --azure-upstream "$mock_url" --vertex-upstream "$mock_url" \
  --bedrock-upstream "$mock_url" --bedrock-region us-east-1 >"$tmp/gw.out" 2>"$tmp/gw.err" &
gw_pid=$!
for _ in $(seq 1 100); do
  grep -q 'listening on' "$tmp/gw.err" 2>/dev/null && break
  sleep 0.05
done
echo "== gateway at http://127.0.0.1:$port (pid $gw_pid)"

rc=0
env -i PATH="$PATH" HOME="$tmp" "$venv/bin/python" .ci/cloud_e2e.py \
  --gateway "http://127.0.0.1:$port" --mock "$mock_url" \
  --azure-key "$azure_key" --aws-key "$aws_key_id:$aws_secret" || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "--- gateway stderr"; tail -n 40 "$tmp/gw.err" || true
fi
exit "$rc"
