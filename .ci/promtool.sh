#!/usr/bin/env bash
# deploy/prometheus/toolwarden.rules.yml: `promtool check rules` and
# `promtool test rules` (Debian package `prometheus`, 2.42 on bookworm;
# installed if missing). A few seconds once installed.
#
#   bash .ci/promtool.sh
set -euo pipefail
cd "$(dirname "$0")/../deploy/prometheus"

if ! command -v promtool >/dev/null 2>&1; then
  echo "== apt-get install prometheus (for promtool)"
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o Acquire::Retries=3 install -y -qq --no-install-recommends \
    'prometheus=2.42.*' >/dev/null
fi
command -v promtool >/dev/null 2>&1 || { echo "promtool: not installed and cannot install it" >&2; exit 1; }
echo "== $(promtool --version 2>&1 | head -1)"
promtool check rules toolwarden.rules.yml
promtool test rules toolwarden.rules.test.yml
