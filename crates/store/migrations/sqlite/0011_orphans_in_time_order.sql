-- Result-only rows (results whose call was never recorded) indexed so that
-- recording one touches the last page of its indexes, not a random one
-- (issue 14). Keep in step with postgres/0011_*.
--
-- Why: `tool_calls_orphan` was led by the call id, random for real agents
-- (`toolu_01…`), so every result-only row went to a random page of an
-- index that held every such row ever recorded: once that index outgrew
-- the page cache, each one cost a page read and a page written to the WAL
-- (and again at the checkpoint). A gateway that never sees the calls (the
-- soak: every request a session of its own, answering calls it never saw)
-- then records more slowly the longer it runs.
--
-- Now the two lookups of a late call (a call recorded after its result)
-- each have an index whose new entries come last:
-- - in the call's own session: `tool_calls_orphan`, led by the session's
--   number (numbers are handed out in order, so a new session's rows go
--   to the end, and a long session's to its own few pages);
-- - in any session: `tool_calls_orphan_by_time`, by the call id's last
--   two characters (up to 3,844 runs for ids in base 62, each in time
--   order) and then the result's time, so the lookup reads only the rows
--   of its run recorded from `RESULT_LEAD_MS` before the call on (the only
--   rows a late call may complete): about 1/3,844 of the result-only rows
--   of that minute. A batch's rows go to the last page of their runs,
--   a set of pages that stays in the cache whatever the history (one
--   character would leave 62 runs, and the lookup 1/62 of the minute's
--   rows to read: measured, twice the cost of an event in traffic that
--   mixes calls with results of calls never seen).
DROP INDEX tool_calls_orphan;
CREATE INDEX tool_calls_orphan ON tool_calls (session_no, call_id, result_at_ms)
    WHERE request_id IS NULL;
CREATE INDEX tool_calls_orphan_by_time ON tool_calls (substr(call_id, -2), result_at_ms, call_id)
    WHERE request_id IS NULL;
