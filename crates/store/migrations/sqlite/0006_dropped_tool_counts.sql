-- Per-tool counts of events the recorder could not write in detail (issue
-- 14): when its queue is full (or the database refuses an event, or the
-- shutdown deadline passes) the event is folded into an in-memory
-- aggregate, and the writer appends that aggregate here whenever it has
-- room. `toolwarden stats` adds these rows to the detailed ones so the
-- totals per tool stay exact. `at_ms` is the start of the minute the
-- events happened in; `calls` counts the rows `tool_calls` would have had
-- (calls, and results whose call was not known), `results` the results,
-- `failures` the failed results.
CREATE TABLE dropped_tool_counts (
    at_ms    BIGINT NOT NULL,
    provider TEXT NOT NULL,
    model    TEXT,
    tool     TEXT NOT NULL,
    calls    BIGINT NOT NULL,
    results  BIGINT NOT NULL,
    failures BIGINT NOT NULL
);
CREATE INDEX dropped_tool_counts_at ON dropped_tool_counts (at_ms);
