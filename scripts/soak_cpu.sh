#!/usr/bin/env bash
# The recording gateway's CPU a request under the soak's load, by kind of
# thread (BENCHMARKS.md, "Pages of 16 KiB: measured, not kept"):
# `toolwarden-bench --soak SECS --conns 32`, and each thread's CPU
# (schedstat, in ns) from /proc/PID/task/*/ of its `--serve-gateway` child
# at 20 s and at SECS - 10 s, summed by thread name (the proxy workers, the
# control runtime, SQLite's connection threads), over the requests the
# soak's table counts between.
#
#   scripts/soak_cpu.sh BENCH_BIN [SECS]
#
# SECS defaults to 90 (at least 40). The soak's own output goes to a
# temporary file, whose last lines (requests, RSS, verdict) follow.
set -euo pipefail
bin=$(realpath "$1"); secs=${2:-90}
[ "$secs" -ge 40 ] || { echo "SECS must be at least 40" >&2; exit 2; }
out=$(mktemp); trap 'rm -f "$out"' EXIT
"$bin" --soak "$secs" --conns 32 > "$out" 2>&1 &
soak=$!
sleep 3
# The bench's own gateway child, not another run's.
pid=$(pgrep -n -P "$soak" -f -- "--serve-gateway")
snap() {
  for t in /proc/"$pid"/task/*; do
    c=$(tr ' ' _ < "$t/comm"); echo "${c%%[0-9]*} $(cut -d' ' -f1 "$t/schedstat")"
  done | awk '{a[$1] += $2} END {for (k in a) print k, a[k]}' | sort
}
sleep 17; a=$(snap)
sleep $((secs - 30)); b=$(snap)
wait "$soak"
# The table's rows are 10 s apart; req/s × 10 is each row's requests.
n=$(awk -F'|' -v lo=20 -v hi=$((secs - 10)) '$2 + 0 > lo && $2 + 0 <= hi {s += $7 * 10} END {print s + 0}' "$out")
join <(echo "$a") <(echo "$b") | awk -v n="$n" '
  {printf "%s %.2f µs  ", $1, ($3 - $2) / 1000 / n; t += $3 - $2}
  END {printf "\nthe process: %.2f µs a request (%d requests)\n", t / 1000 / n, n}'
grep -E "^sent|^RSS|^soak:" "$out"
