-- `tool_calls_call_session` holds calls only again, as 0007 made it
-- and 0008 undid (issue 14). 0008 put result-only rows back in it so
-- that a session's rows were read through an index; 0015's
-- `tool_calls_session_newest` (led by the session's number too) has
-- served those reads since, so a result-only row's entry here served one
-- probe alone: "has this session named this call id", which now asks this
-- index for calls and `tool_calls_orphan` for result-only rows (the two
-- partial indexes split the session's rows between them). A result-only
-- row costs one index entry fewer: on agent-like traffic whose results
-- answer calls the gateway never saw, ~6 % of the database and one B-tree
-- insert a result (BENCHMARKS.md, "A session's calls alone"). Every
-- lookup through it says `request_id IS NOT NULL`. Keep in step with the
-- other backend's 0024.
DROP INDEX tool_calls_call_session;
CREATE INDEX tool_calls_call_session ON tool_calls (session_no, call_id, call_at_ms)
    WHERE request_id IS NOT NULL;
