-- Alerts: the latest re-sent notification (`repeat_interval`) of each alert,
-- one row per alert. Gateways sharing the database race to move the row
-- on to the next repeat of the firing transition `seq`; the conditional
-- upsert lets exactly one win, and only the winner notifies.
CREATE TABLE alert_repeats (
    alert_key TEXT PRIMARY KEY,
    seq       BIGINT NOT NULL,
    repeat_no BIGINT NOT NULL,
    at_ms     BIGINT NOT NULL,
    gateway   TEXT NOT NULL
);
