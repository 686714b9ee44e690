-- Each write of folded counts (`aggregate::DroppedFlush`) names itself and
-- numbers its rows, so that writing it again after a failure whose outcome
-- is unknown (the connection lost around the commit) cannot add its
-- counts twice: a row already written is a conflict, and skipped. Rows
-- written before this have no flush. Keep in step with the other
-- backend's 0017.
ALTER TABLE dropped_tool_counts ADD COLUMN flush_id TEXT;
ALTER TABLE dropped_tool_counts ADD COLUMN flush_row BIGINT;
CREATE UNIQUE INDEX dropped_tool_counts_once ON dropped_tool_counts (flush_id, flush_row)
    WHERE flush_id IS NOT NULL;
