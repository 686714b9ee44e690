#!/usr/bin/env bash
# The gateway's CPU a request at a paced, low rate (BENCHMARKS.md, "The
# commit's walk of the page cache"): a Python mock answering every request
# with one tool call (`paced/mock.py`), a client sending RATE requests a
# second, each a session of its own with four results of calls the gateway
# never saw (`paced/client.py`), and a `toolwarden-bench --serve-gateway`
# child recording to SQLite. Each thread's CPU (schedstat, in ns) and
# voluntary context switches (wake-ups) from /proc/PID/task/*/, over SECS
# seconds, after 20 s at the same rate; the process's CPU is their sum.
#
#   scripts/paced.sh BENCH_BIN RATE SECS [ROWS]
#
# ROWS (default 0): result-only rows and their ledger keys put into the
# database first (random ids, with sqlite3), so that it starts at a size
# (600,000 rows: ~290 MB).
set -euo pipefail
bin=$(realpath "$1"); rate=$2; secs=$3; rows=${4:-0}
here=$(cd "$(dirname "$0")/paced" && pwd)
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
if [ "$rows" -gt 0 ]; then
  # Migrated by the gateway itself (no upstream needed), then filled.
  coproc F { exec "$bin" --serve-gateway http://127.0.0.1:9 "sqlite://$d/g.db" - 2>/dev/null; }
  read -r _ <&"${F[0]}"; exec {F[1]}>&-; wait "$F_PID" 2>/dev/null || true
  sqlite3 "$d/g.db" > /dev/null <<SQL
PRAGMA journal_mode=WAL;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < $rows)
INSERT INTO tool_calls (session_id, session_no, call_id, tool, provider, at_ms,
  result_request_id, message_index, failed, basis, content_bytes, excerpt, result_at_ms)
SELECT 'fp-' || hex(randomblob(8)), 1000000 + i / 4, 'toolu_' || hex(randomblob(12)),
  'read_file', 'anthropic', 1700000000000 + i, 'req-' || (i / 4), i % 4, i % 4 = 0,
  'content', 1000, 'excerpt ' || hex(randomblob(20)), 1700000000000 + i FROM n;
INSERT INTO tool_results (session_no, call_id, message_index, session_id, request_id, at_ms)
SELECT session_no, call_id, message_index, session_id, result_request_id, at_ms FROM tool_calls;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
fi
python3 "$here/mock.py" > "$d/mock.port" & mock=$!
trap 'kill $mock 2>/dev/null; rm -rf "$d"' EXIT
sleep 0.5; mport=$(cat "$d/mock.port")
coproc G { exec "$bin" --serve-gateway "http://127.0.0.1:$mport" "sqlite://$d/g.db" - 2>"$d/gateway.err"; }
read -r line <&"${G[0]}"; addr=${line##* }; gport=${addr##*:}
# Per thread (name and id): voluntary switches and nanoseconds on a CPU
# (schedstat's first field: finer than the ticks of /proc/PID/stat, which
# over these runs are 30–125 µs a request).
switches() {
  for t in /proc/"$G_PID"/task/*; do
    printf '%s:%s %s %s\n' "$(tr ' ' _ < "$t/comm")" "${t##*/}" \
      "$(awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status")" "$(cut -d' ' -f1 "$t/schedstat")"
  done | sort
}
python3 "$here/client.py" "$gport" "$rate" 20 > /dev/null
switches > "$d/s0"
n=$(python3 "$here/client.py" "$gport" "$rate" "$secs")
switches > "$d/s1"
# The process's CPU: that of its threads alive at both ends (a thread
# that came and went in between would be missed; none does here).
join "$d/s0" "$d/s1" | awk -v n="$n" -v rate="$rate" -v db="$(du -sh "$d/g.db" | cut -f1)" '
  { cpu += $5 - $3 }
  END { printf "rate=%s requests=%d cpu_us_per_request=%d database=%s\n", rate, n, cpu / 1000 / n, db }'
join "$d/s0" "$d/s1" | awk -v n="$n" '($4 - $2) + ($5 - $3) > 0 {
  printf "%s wake-ups a request: %.2f, CPU us a request: %d\n", $1, ($4 - $2) / n, ($5 - $3) / 1000 / n}'
exec {G[1]}>&-; wait "$G_PID" 2>/dev/null || true
