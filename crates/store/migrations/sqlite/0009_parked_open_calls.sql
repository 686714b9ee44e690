-- Open calls in two partial indexes (issue 14): the ones still expected
-- (`tool_calls_open`) and the ones open for longer than the writer's
-- parking age (`tool_calls_parked`; see `crate::parking`). Keep in step
-- with the other backend's 0009.
--
-- Why: every call goes into an index of open calls led by its random call
-- id, and out again when its result pairs it: a page written twice per
-- call once the index is larger than a batch. When that index also holds
-- every call that will never be answered (abandoned runs, a tenth of the
-- calls in the history bench), it grows with the history, and so did the
-- cost of recording an event. Now the writer moves calls open for longer
-- than the parking age out of `tool_calls_open`, a few thousand at a time,
-- so it holds the traffic's open calls and not the history's. Every
-- lookup of open calls reads both indexes (the parked one only when the
-- open one has too few), so a late result still pairs with its call.
--
-- The calls open when this runs are parked at once: they are as old as the
-- gateway's last run.
ALTER TABLE tool_calls ADD COLUMN parked INTEGER NOT NULL DEFAULT 0;
DROP INDEX tool_calls_open;
UPDATE tool_calls SET parked = 1 WHERE result_at_ms IS NULL;
CREATE INDEX tool_calls_open ON tool_calls (call_id, session_id, call_at_ms)
    WHERE result_at_ms IS NULL AND parked = 0;
CREATE INDEX tool_calls_parked ON tool_calls (call_id, session_id, call_at_ms)
    WHERE result_at_ms IS NULL AND parked = 1;
