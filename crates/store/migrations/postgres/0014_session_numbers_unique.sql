-- Sessions are found by their number (`sessions.no`) in retention's
-- sessions step (`DELETE … WHERE no IN (…)`) and everywhere a row names its
-- session (`session_no`). On SQLite the number is the table's primary key;
-- here it had no index, so the first retention pass over a long backlog read
-- every old session for each step, and nothing held the numbers unique.
CREATE UNIQUE INDEX sessions_no ON sessions (no);
