-- The fingerprint of each response's tool calls (names and canonical
-- arguments, `toolwarden_wire::turn`), one row per response with calls.
-- A client may rewrite call ids between a response and its next request
-- (the Gemini CLI invents ids for Gemini's id-less calls): a result whose
-- id matches no recorded call finds its call through the fingerprint of
-- the model turn its request replays and the call's position in it
-- (`tool_calls.call_index`), by any gateway and across restarts.
CREATE TABLE call_turns (
    request_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    turn_fp    BIGINT NOT NULL
);
CREATE INDEX call_turns_by_fingerprint ON call_turns (session_id, turn_fp);
