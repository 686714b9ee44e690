-- A session's rows side by side (issue 14). Call ids are random, so an
-- index led by one puts each new call on a page of its own: once the
-- table is larger than a batch, every call dirtied a page of
-- `tool_calls_call_session` alone, written to the log and back. Led by
-- the session, the calls of one turn go to one page, the page of the
-- conversation's earlier calls.
--
-- It holds result-only rows again (they land on the same page), so the
-- calls of a session — `toolwarden stats`' and the dashboard's session
-- view — are read through it instead of the whole table. The lookups by
-- call id alone go through the indexes keyed by it: open calls
-- (`tool_calls_open`) and result-only rows (`tool_calls_orphan`).
-- Keep in step with the other backend's 0008.
DROP INDEX tool_calls_call_session;
CREATE INDEX tool_calls_call_session ON tool_calls (session_id, call_id, call_at_ms);
