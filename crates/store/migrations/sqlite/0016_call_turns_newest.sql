-- Each call turn's time (its response's), so that pairing a result through
-- the turn its request replays (`turns::FIND_CALL_BY_TURN`) reads the
-- newest few turns with that fingerprint, not every one of them. A session
-- that repeats one call turn (an agent that lists the same directory on
-- every turn, with ids the client rewrites) made each such result read
-- every repeat so far: k rows for the k-th. Rows written before this read
-- as time 0, the oldest. Keep in step with the other backend's 0016.
ALTER TABLE call_turns ADD COLUMN at_ms BIGINT NOT NULL DEFAULT 0;
DROP INDEX call_turns_by_fingerprint;
CREATE INDEX call_turns_by_fingerprint ON call_turns (session_no, turn_fp, at_ms);
