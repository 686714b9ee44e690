-- Each session's first turn (the fingerprint of its conversation's system
-- prompt and first user message, `toolwarden_wire`'s `first_turn_hash`),
-- so that a result a fork of a conversation resends as new — its parent
-- was cut after it sent the result and before the model answered it, and
-- the fork (Claude Code's `--fork-session`, `codex exec fork`) carries it
-- as new under a new session id — is found answered in the parent: the
-- newest sessions with the same first turn (`bulk::kin_probe_rows!`).
-- Keep in step with the other backend's 0022.
--
-- Additive: the column is filled from a session's first result that
-- carries it (a gateway of this version), once; sessions recorded before
-- keep NULL and are never probed. Partial, so they take no index entry.
ALTER TABLE sessions ADD COLUMN first_turn BIGINT;
CREATE INDEX sessions_by_first_turn ON sessions (first_turn, no) WHERE first_turn IS NOT NULL;
