-- Retention (issue 14): result keys and sessions recorded before a cutoff
-- are deleted oldest first, a chunk at a time, through these indexes.
-- Both grow at their end: results are recorded in time order, and a
-- session's last request time only moves forward.
CREATE INDEX tool_results_at ON tool_results (at_ms);
CREATE INDEX sessions_last ON sessions (last_ms);
