#!/usr/bin/env bash
# Endurance soak (issue 14): the gateway (release build, recording to
# SQLite) under sustained load through all four dialects, streaming and
# not, on 127.0.0.1; RSS, recorder backlog and dropped events sampled every
# 10 s; at the end the database's counts are checked against what was sent.
#
#   scripts/soak.sh            short mode: 150 s (CI-sized, < 3 min of load)
#   scripts/soak.sh full       10 minutes
#   scripts/soak.sh SECONDS    any length
#
# Environment: SOAK_CONNS (default 8) connections; TOOLWARDEN_* memory
# bounds (TOOLWARDEN_DATABASE_CACHE_KIB, TOOLWARDEN_RECORD_QUEUE_CAPACITY,
# …) are applied to the gateway as `toolwarden serve` reads them;
# SOAK_LOG (default target/soak-<mode>.log) keeps the report;
# TOOLWARDEN_SOAK_JSONL=PATH also writes the JSONL log there (bounded by
# TOOLWARDEN_JSONL_ROTATE_MIB / TOOLWARDEN_JSONL_KEEP) and reports its files.
# Exit status 0 only when: no error and no request over 1 s, 0 events
# dropped, exact counts, and (runs of 2 min or more) RSS at the end within
# 10 % of RSS after the first minute.
set -euo pipefail

cd "$(dirname "$0")/.."
mode="${1:-short}"
case "$mode" in
    short) seconds=150 ;;
    full) seconds=600 ;;
    *[!0-9]* | '') echo "usage: $0 [short|full|SECONDS]" >&2; exit 2 ;;
    *) seconds="$mode" ;;
esac
conns="${SOAK_CONNS:-8}"
log="${SOAK_LOG:-target/soak-$mode.log}"

export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
cargo build --release --locked -p toolwarden-bench >&2
mkdir -p "$(dirname "$log")"
echo "soak: $seconds s, $conns connections; report in $log" >&2
./target/release/toolwarden-bench --soak "$seconds" --conns "$conns" 2>&1 | tee "$log"
