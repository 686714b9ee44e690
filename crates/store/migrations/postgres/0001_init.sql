-- toolwarden schema v1 (PostgreSQL). Keep in step with sqlite/0001_init.sql:
-- the two differ only in the surrogate key of tool_calls and its fillfactor.

CREATE TABLE sessions (
    session_id TEXT PRIMARY KEY,
    source     TEXT NOT NULL,
    first_ms   BIGINT NOT NULL,
    last_ms    BIGINT NOT NULL,
    requests   BIGINT NOT NULL
);

CREATE TABLE requests (
    request_id          TEXT PRIMARY KEY,
    session_id          TEXT NOT NULL,
    at_ms               BIGINT NOT NULL,
    provider            TEXT NOT NULL,
    dialect             TEXT,
    path                TEXT NOT NULL,
    model               TEXT,
    status              BIGINT NOT NULL,
    streaming           BIGINT NOT NULL,
    upstream_latency_ms DOUBLE PRECISION NOT NULL,
    first_byte_ms       DOUBLE PRECISION,
    overhead_us         DOUBLE PRECISION NOT NULL,
    input_tokens        BIGINT,
    output_tokens       BIGINT,
    response_id         TEXT,
    repair_mode         TEXT NOT NULL,
    repairs             BIGINT NOT NULL,
    parse_error         TEXT,
    error               TEXT
);
CREATE INDEX requests_at ON requests (at_ms);
CREATE INDEX requests_session ON requests (session_id);

CREATE TABLE request_repairs (
    request_id TEXT NOT NULL,
    idx        BIGINT NOT NULL,
    defect     TEXT NOT NULL,
    PRIMARY KEY (request_id, idx)
);

-- One row per tool call with its result. No index covers a result column,
-- so pairing a result never touches an index. A result whose call was never
-- recorded gets a row of its own (request_id NULL) that a late call merges into.
CREATE TABLE tool_calls (
    id                BIGSERIAL PRIMARY KEY,
    session_id        TEXT NOT NULL,
    call_id           TEXT NOT NULL,
    tool              TEXT NOT NULL,
    provider          TEXT NOT NULL,
    model             TEXT,
    at_ms             BIGINT NOT NULL,
    request_id        TEXT,
    call_index        BIGINT,
    response_id       TEXT,
    arguments_bytes   BIGINT,
    call_at_ms        BIGINT,
    result_request_id TEXT,
    message_index     BIGINT,
    failed            BIGINT,
    basis             TEXT,
    content_bytes     BIGINT,
    excerpt           TEXT,
    result_at_ms      BIGINT,
    exec_ms           DOUBLE PRECISION,
    UNIQUE (request_id, call_index)
) WITH (fillfactor = 50);
-- (call_id, session_id) serves lookups by both and by call id alone.
CREATE INDEX tool_calls_call_session ON tool_calls (call_id, session_id);
CREATE INDEX tool_calls_response ON tool_calls (response_id);
CREATE INDEX tool_calls_at ON tool_calls (at_ms);

-- The dedup ledger of results: a result resent in later turns, or seen by
-- several gateways at once, is inserted once.
CREATE TABLE tool_results (
    session_id    TEXT NOT NULL,
    call_id       TEXT NOT NULL,
    message_index BIGINT NOT NULL,
    request_id    TEXT NOT NULL,
    at_ms         BIGINT NOT NULL,
    PRIMARY KEY (session_id, call_id, message_index)
);

-- Calls and errors per (session, request, tool).
CREATE VIEW tool_aggregates AS
SELECT session_id,
       COALESCE(request_id, result_request_id) AS request_id,
       tool,
       COUNT(*) AS calls,
       SUM(CASE WHEN failed = 1 THEN 1 ELSE 0 END) AS errors
FROM tool_calls
GROUP BY session_id, COALESCE(request_id, result_request_id), tool;
