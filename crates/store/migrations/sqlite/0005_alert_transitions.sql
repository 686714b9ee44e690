-- Alert state changes (issue 19). One row per transition of one alert;
-- `seq` counts its transitions (odd: firing, even: resolved). Several
-- gateways evaluating the same data race to insert the next `seq`: the
-- primary key lets exactly one win, and only the winner notifies.
CREATE TABLE alert_transitions (
    alert_key  TEXT NOT NULL,
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
    gateway    TEXT NOT NULL,
    PRIMARY KEY (alert_key, seq)
);
CREATE INDEX alert_transitions_at ON alert_transitions (at_ms);
