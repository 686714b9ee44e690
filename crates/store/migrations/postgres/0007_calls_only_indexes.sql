-- Result-only rows (a result whose call was never recorded: `request_id`
-- NULL) are found through `tool_calls_orphan` alone (issue 14). The two
-- indexes below now hold calls only: a result-only row costs one insert
-- into an index keyed by its random call id instead of three. Every
-- lookup through them says so (`request_id IS NOT NULL`, or a
-- `response_id =` that result-only rows, having none, never match).
-- Keep in step with the other backend's 0007.
DROP INDEX tool_calls_call_session;
CREATE INDEX tool_calls_call_session ON tool_calls (call_id, session_id, call_at_ms)
    WHERE request_id IS NOT NULL;
DROP INDEX tool_calls_response;
CREATE INDEX tool_calls_response ON tool_calls (response_id, call_id, call_at_ms)
    WHERE response_id IS NOT NULL;
