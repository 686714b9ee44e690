-- Sessions numbered in the order the store first sees them, and every
-- index keyed by the session led by that number (issue 14). Keep in step
-- with the other backend's 0010.
--
-- Why: session ids are random (a client's UUID, a fingerprint's hex), so
-- an index led by one gives each conversation's rows a page of their own
-- among the whole history's, and every turn wrote one such page in each
-- of `tool_calls_call_session`, `tool_results`' key, `requests_session`
-- and `call_turns_by_fingerprint`: with 10 M rows of history, recording
-- cost 1.8× what it cost on an empty database. Led by the number, the
-- conversations under way sit together at the end of those indexes, on
-- the same few pages whatever the history (BENCHMARKS.md, "Session
-- numbers").
--
-- The writer numbers a batch's sessions first (inserting the sessions it
-- has not seen, with no requests yet) and writes each row with its
-- session's number; every lookup by session asks by number. The session
-- id stays in every table, as before, for readers.

-- `sessions` gains its number as its rowid (a rowid that is not an
-- `INTEGER PRIMARY KEY` may change on VACUUM).
CREATE TABLE sessions_numbered (
    no         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL UNIQUE,
    source     TEXT NOT NULL,
    first_ms   BIGINT NOT NULL,
    last_ms    BIGINT NOT NULL,
    requests   BIGINT NOT NULL
);
INSERT INTO sessions_numbered (session_id, source, first_ms, last_ms, requests)
    SELECT session_id, source, first_ms, last_ms, requests FROM sessions
    ORDER BY first_ms, session_id;
-- Sessions that only tool rows name (their requests were not recorded).
INSERT INTO sessions_numbered (session_id, source, first_ms, last_ms, requests)
    SELECT session_id, 'none', min(at_ms), max(at_ms), 0 FROM (
        SELECT session_id, at_ms FROM requests
        UNION ALL SELECT session_id, at_ms FROM tool_calls
        UNION ALL SELECT session_id, at_ms FROM tool_results
        UNION ALL SELECT session_id, 0 FROM call_turns
    ) AS named
    WHERE session_id NOT IN (SELECT session_id FROM sessions_numbered)
    GROUP BY session_id ORDER BY min(at_ms), session_id;
DROP TABLE sessions;
ALTER TABLE sessions_numbered RENAME TO sessions;

ALTER TABLE requests ADD COLUMN session_no INTEGER NOT NULL DEFAULT 0;
UPDATE requests SET session_no = (SELECT no FROM sessions s WHERE s.session_id = requests.session_id);
DROP INDEX requests_session;
CREATE INDEX requests_session ON requests (session_no);

ALTER TABLE tool_calls ADD COLUMN session_no INTEGER NOT NULL DEFAULT 0;
UPDATE tool_calls SET session_no = (SELECT no FROM sessions s WHERE s.session_id = tool_calls.session_id);
DROP INDEX tool_calls_call_session;
CREATE INDEX tool_calls_call_session ON tool_calls (session_no, call_id, call_at_ms);

ALTER TABLE call_turns ADD COLUMN session_no INTEGER NOT NULL DEFAULT 0;
UPDATE call_turns SET session_no = (SELECT no FROM sessions s WHERE s.session_id = call_turns.session_id);
DROP INDEX call_turns_by_fingerprint;
CREATE INDEX call_turns_by_fingerprint ON call_turns (session_no, turn_fp);

-- The result ledger is its key alone: without a rowid, a result is one
-- insert into one tree instead of a row plus an index entry.
CREATE TABLE tool_results_numbered (
    session_no    INTEGER NOT NULL,
    call_id       TEXT NOT NULL,
    message_index BIGINT NOT NULL,
    session_id    TEXT NOT NULL,
    request_id    TEXT NOT NULL,
    at_ms         BIGINT NOT NULL,
    PRIMARY KEY (session_no, call_id, message_index)
) WITHOUT ROWID;
INSERT INTO tool_results_numbered
    SELECT s.no, r.call_id, r.message_index, r.session_id, r.request_id, r.at_ms
    FROM tool_results r JOIN sessions s ON s.session_id = r.session_id;
DROP TABLE tool_results;
ALTER TABLE tool_results_numbered RENAME TO tool_results;
