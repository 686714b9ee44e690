#!/usr/bin/env python3
"""The lookup that pairs a result with its call through the replayed turn
(`store::turns::FIND_CALL_BY_TURN`), before and after migration 0016, on a
session that repeated one call turn K times (all answered but the last):
the two tables reduced to the columns the query reads, SQLite through
python3's sqlite3. Prints microseconds per lookup for each.

    python3 scripts/turn_lookup_bench.py [K]
"""

import sqlite3
import sys
import time

K = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
con = sqlite3.connect(":memory:")
con.executescript("""
CREATE TABLE call_turns (request_id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
    turn_fp BIGINT NOT NULL, session_no INTEGER NOT NULL, at_ms BIGINT NOT NULL);
CREATE TABLE tool_calls (id INTEGER PRIMARY KEY, request_id TEXT, call_index INTEGER,
    call_at_ms BIGINT, result_at_ms BIGINT, tool TEXT, UNIQUE (request_id, call_index));
""")
con.executemany("INSERT INTO call_turns VALUES (?,?,?,?,?)",
                [(f"r{k}", "s", 77, 1, 1000 * k) for k in range(K)])
con.executemany(
    "INSERT INTO tool_calls (request_id, call_index, call_at_ms, result_at_ms, tool) VALUES (?,?,?,?,?)",
    [(f"r{k}", 0, 1000 * k, 1000 * k + 500 if k < K - 1 else None, "list") for k in range(K)])
ORDER = "ORDER BY (c.call_at_ms <= ?4) DESC, c.call_at_ms DESC, c.id DESC LIMIT 1"
CASES = [
    ("before (0003's index, every turn joined)",
     "CREATE INDEX call_turns_by_fingerprint ON call_turns (session_no, turn_fp)",
     "SELECT c.id FROM call_turns t JOIN tool_calls c ON c.request_id = t.request_id "
     "AND c.call_index = ?3 WHERE t.session_no = ?1 AND t.turn_fp = ?2 "
     "AND c.result_at_ms IS NULL " + ORDER),
    ("after (0016's index, the newest 8 turns)",
     "CREATE INDEX call_turns_by_fingerprint ON call_turns (session_no, turn_fp, at_ms)",
     "SELECT c.id FROM (SELECT t.request_id FROM call_turns t WHERE t.session_no = ?1 "
     "AND t.turn_fp = ?2 ORDER BY t.at_ms DESC LIMIT 8) AS newest JOIN tool_calls c "
     "ON c.request_id = newest.request_id AND c.call_index = ?3 "
     "WHERE c.result_at_ms IS NULL " + ORDER),
]
for name, index, query in CASES:
    con.execute("DROP INDEX IF EXISTS call_turns_by_fingerprint")
    con.execute(index)
    args = (1, 77, 0, 10**12)
    found = con.execute(query, args).fetchall()
    n = 50
    started = time.perf_counter()
    for _ in range(n):
        con.execute(query, args).fetchall()
    took = (time.perf_counter() - started) / n
    print(f"{name}: {K} identical turns, {took * 1e6:.0f} µs per lookup (found row {found[0][0]})")
