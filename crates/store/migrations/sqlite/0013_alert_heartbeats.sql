-- Alerts (issue 19): the gateways evaluating alerts, by instance name, and
-- when each last did. A per-gateway alert (`events_dropped`) is resolved by
-- the gateway that raised it; once that instance has not been seen for long
-- enough (stopped, or restarted under a new name, as a container gets a new
-- hostname) any gateway may resolve it. Each gateway writes its own row
-- every round and forgets those gone stale.
CREATE TABLE alert_heartbeats (
    instance TEXT PRIMARY KEY,
    seen_ms  BIGINT NOT NULL
);
