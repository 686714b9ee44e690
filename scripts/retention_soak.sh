#!/usr/bin/env bash
# Retention under load (issue 14): a soak on a database whose whole
# history is older than the retention period. The gateway's first
# retention pass deletes it while the soak runs; the soak's end check
# compares the database with what it sent, so it passes only if every old
# row went and nothing of the new traffic did.
#
#   scripts/retention_soak.sh [FILL_SECONDS [SOAK_SECONDS]]   (120, 240)
#
# 1. a soak of FILL_SECONDS at SOAK_CONNS (default 32) connections records
#    the history into DIR/history.db (DIR: RETENTION_DIR, default
#    target/retention-soak);
# 2. python3's sqlite3 ages it by 40 days (times shifted, session ids
#    prefixed so the new traffic's ids do not meet them);
# 3. a soak of SOAK_SECONDS on a copy, with the default retention (30
#    days); the retention counters are read from `/metrics` every 10 s
#    into DIR/metrics.log (needs curl and ss).
# Room needed: ~2.5 KB of database per request, twice the history.
set -euo pipefail

cd "$(dirname "$0")/.."
fill="${1:-120}"
soak="${2:-240}"
conns="${SOAK_CONNS:-32}"
dir="${RETENTION_DIR:-target/retention-soak}"
bench=./target/release/toolwarden-bench

export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
cargo build --release --locked -p toolwarden-bench >&2
mkdir -p "$dir"
rm -f "$dir"/history.db* "$dir"/aged.db*

echo "retention soak: recording $fill s of history" >&2
TOOLWARDEN_SOAK_DATABASE="sqlite://$dir/history.db" \
    "$bench" --soak "$fill" --conns "$conns" > "$dir/fill.log" 2>&1
tail -1 "$dir/fill.log" >&2

echo "retention soak: ageing it by 40 days" >&2
python3 - "$dir/history.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
d = 40 * 86_400_000
for sql in [
    f"UPDATE requests SET at_ms = at_ms - {d}, session_id = 'old-' || session_id",
    f"UPDATE tool_calls SET at_ms = at_ms - {d}, call_at_ms = call_at_ms - {d}, "
    f"result_at_ms = result_at_ms - {d}, session_id = 'old-' || session_id",
    f"UPDATE tool_results SET at_ms = at_ms - {d}, session_id = 'old-' || session_id",
    f"UPDATE sessions SET first_ms = first_ms - {d}, last_ms = last_ms - {d}, "
    "session_id = 'old-' || session_id",
    "UPDATE call_turns SET session_id = 'old-' || session_id",
    f"UPDATE dropped_tool_counts SET at_ms = at_ms - {d}",
]:
    db.execute(sql)
db.commit()
rows = sum(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
           for t in ["requests", "request_repairs", "call_turns", "tool_calls", "tool_results", "sessions"])
print(f"{rows} rows to delete", file=sys.stderr)
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
db.close()
EOF
mv "$dir/history.db" "$dir/aged.db"

poll() {
    sleep 3
    local pid port
    pid=$(pgrep -f -- "--serve-gateway .*$dir/aged.db" | head -1)
    port=$(ss -ltnp | grep "pid=$pid," | grep -o '127.0.0.1:[0-9]*' | head -1)
    while kill -0 "$pid" 2>/dev/null; do
        echo "$(date +%T) $(curl -s "http://$port/metrics" | grep '^toolwarden_retention' | tr '\n' ' ')"
        sleep 10
    done
}
echo "retention soak: $soak s at $conns connections while the pass deletes the history" >&2
poll > "$dir/metrics.log" &
TOOLWARDEN_SOAK_DATABASE="sqlite://$dir/aged.db" \
    "$bench" --soak "$soak" --conns "$conns" 2>&1 | tee "$dir/soak.log"
wait
grep 'completed"} 1' "$dir/metrics.log" | head -1 >&2
