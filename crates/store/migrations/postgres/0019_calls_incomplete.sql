-- A request whose response passed `response_parse_limit`: the calls and
-- arguments past it were not kept, so its calls may be incomplete (1).
-- Old rows: 0 (the metric `too_large` alone said so then).
ALTER TABLE requests ADD COLUMN calls_incomplete BIGINT NOT NULL DEFAULT 0;
