-- Pairing lookups whose cost does not grow with the table or with reuse of
-- a call id or a session (issue 14). Keep in step with sqlite/0004_*.
--
-- Before: every lookup searched (call_id, session_id) and then filtered
-- the rows it found on a result column, so a client or provider that
-- reuses one call id in one session made each lookup read every row ever
-- recorded under that pair. Now the rows a pairing can still use are in
-- partial indexes of their own, ordered by time, and each lookup reads at
-- most a few of them (the newest, bounded by the batch).

-- Calls still waiting for their result, newest last.
CREATE INDEX tool_calls_open ON tool_calls (call_id, session_id, call_at_ms, id)
    WHERE result_at_ms IS NULL;
-- Results still waiting for their call (result-only rows), oldest first.
CREATE INDEX tool_calls_orphan ON tool_calls (call_id, session_id, result_at_ms, id)
    WHERE request_id IS NULL;
-- The newest call of an id in a session (a result's tool name), in order.
DROP INDEX tool_calls_call_session;
CREATE INDEX tool_calls_call_session ON tool_calls (call_id, session_id, call_at_ms);
-- The calls of a response by id, in order.
DROP INDEX tool_calls_response;
CREATE INDEX tool_calls_response ON tool_calls (response_id, call_id, call_at_ms);
