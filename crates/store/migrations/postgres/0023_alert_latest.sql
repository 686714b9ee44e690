-- Each alert's latest transition (issue 14: state that grows with
-- history). The evaluation round read the latest transition of every
-- alert ever raised from `alert_transitions`, a scan of the whole table
-- each round and a result that grew with every tool a client named until
-- retention removed it. This table holds one row per alert, written in
-- the same transaction as the transition a claim inserts (only when it is
-- the alert's newest), so a round reads the firing alerts and the latest
-- resolved ones by index. Keep in step with the other backend's 0023.
CREATE TABLE alert_latest (
    alert_key  TEXT NOT NULL PRIMARY KEY,
    seq        BIGINT NOT NULL,
    state      TEXT NOT NULL,
    rule       TEXT NOT NULL,
    tool       TEXT NOT NULL,
    model      TEXT NOT NULL,
    instance   TEXT NOT NULL,
    value      DOUBLE PRECISION NOT NULL,
    threshold  DOUBLE PRECISION NOT NULL,
    volume     BIGINT NOT NULL,
    started_ms BIGINT NOT NULL,
    at_ms      BIGINT NOT NULL,
    gateway    TEXT NOT NULL
);
CREATE INDEX alert_latest_by_state ON alert_latest (state, at_ms);
INSERT INTO alert_latest (alert_key, seq, state, rule, tool, model, instance, value,
    threshold, volume, started_ms, at_ms, gateway)
SELECT alert_key, seq, state, rule, tool, model, instance, value, threshold, volume,
    started_ms, at_ms, gateway
FROM alert_transitions t
WHERE seq = (SELECT MAX(seq) FROM alert_transitions u WHERE u.alert_key = t.alert_key);
