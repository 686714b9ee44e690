#!/usr/bin/env bash
# Issue 18: the official cloud clients (openai.AzureOpenAI, google-genai with
# vertexai=True, anthropic.AnthropicVertex, anthropic.AnthropicBedrock; pinned
# below) through the gateway to the mock provider, which checks Azure's
# api-key, Vertex's Bearer token and Bedrock's SigV4 signature (the gateway
# re-signs with the AWS key from its environment); and boto3 with a Bedrock
# API key through a second gateway serving HTTPS (`--tls-cert`). Prints
# `cloud-e2e: N passed, M failed`; exits non-zero on any failure.
#
#   bash .ci/cloud_e2e.sh
set -euo pipefail
ci_suite=cloud-e2e
. "$(dirname "$0")/lib.sh"
venv="$target/cloud-venv"
pins=(openai==3.63.0 "anthropic[bedrock,vertex]==2.17.0" google-genai==3.6.1 boto3==1.44.18 botocore==1.44.18 google-auth==2.63.1)
azure_key="azure-e2e-key-$$"
aws_key_id="AKIDCLOUDE2E"
aws_secret="cloud-e2e/secret-$$"
bedrock_api_key="ABSKY2xvdWQtZTJl$$"

# --- the clients, in their own venv under the target directory
ci_pip "$venv" "${pins[@]}"

ci_build
ci_start_mock cloud --api-key "$azure_key" --aws-key "$aws_key_id:$aws_secret" --bedrock-api-key "$bedrock_api_key" --calls 2 \
  --cut-stream toolwarden.cut-midstream-v1:1
# The gateway's AWS credentials come from its environment (the standard
# variables); HOME points nowhere so no developer profile is read.
ci_start_gateway cloud env -i PATH="$PATH" HOME="$tmp" AWS_ACCESS_KEY_ID="$aws_key_id" \
  AWS_SECRET_ACCESS_KEY="$aws_secret" -- --database "sqlite://$tmp/toolwarden.db" \
  --azure-upstream "$mock_url" --vertex-upstream "$mock_url" \
  --bedrock-upstream "$mock_url" --bedrock-region us-east-1

plain_url=$gw_url
# The same gateway serving HTTPS with the test certificate (localhost and
# 127.0.0.1, signed by the test CA): boto3 sends a Bedrock API key only
# over HTTPS.
tls=crates/gateway/tests/tls
ci_start_gateway cloud-https env -i PATH="$PATH" HOME="$tmp" -- \
  --database "sqlite://$tmp/toolwarden-https.db" --azure-upstream "$mock_url" \
  --bedrock-upstream "$mock_url" --bedrock-region us-east-1 \
  --tls-cert "$tls/server.pem" --tls-key "$tls/server.key"

rc=0
env -i PATH="$PATH" HOME="$tmp" "$venv/bin/python" .ci/cloud_e2e.py \
  --gateway "$plain_url" --mock "$mock_url" \
  --azure-key "$azure_key" --aws-key "$aws_key_id:$aws_secret" --bedrock-api-key "$bedrock_api_key" \
  --https-gateway "$gw_url" --ca "$tls/ca.pem" || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "--- gateway stderr"; tail -n 40 "$tmp/cloud-gw.err" || true
  echo "--- HTTPS gateway stderr"; tail -n 40 "$tmp/cloud-https-gw.err" || true
fi
exit "$rc"
