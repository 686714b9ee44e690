//! Re-sent notifications of firing alerts (`repeat_interval`): the latest
//! repeat of each alert ([`Store::alert_repeats`]) and its claim
//! ([`Store::claim_alert_repeat`]). As with transitions, gateways sharing
//! one database race for each repeat and exactly one wins: one
//! notification per repeat, not one per gateway.

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::store::{Pool, Store};

/// One row of `alert_repeats`: the latest repeat of an alert's firing
/// notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertRepeat {
    /// The alert (`rule|tool|model|instance`).
    pub alert_key: String,
    /// The firing transition repeated (its `seq` in `alert_transitions`).
    pub seq: i64,
    /// 1 for the first repeat of that transition, then 2, …
    pub repeat_no: i64,
    /// When it was sent (unix ms).
    pub at_ms: i64,
    /// The gateway that sent it.
    pub gateway: String,
}

const SELECT_SQL: &str = "SELECT alert_key, seq, repeat_no, at_ms, gateway FROM alert_repeats";
/// Inserts the alert's row, or moves it on to a later (`seq`, `repeat_no`):
/// a claim another gateway made first leaves the row as it is (0 rows).
const CLAIM_SQL: &str = "INSERT INTO alert_repeats (alert_key, seq, repeat_no, at_ms, gateway) \
    VALUES ($1, $2, $3, $4, $5) \
    ON CONFLICT (alert_key) DO UPDATE SET seq = excluded.seq, repeat_no = excluded.repeat_no, \
    at_ms = excluded.at_ms, gateway = excluded.gateway \
    WHERE alert_repeats.seq < excluded.seq \
    OR (alert_repeats.seq = excluded.seq AND alert_repeats.repeat_no < excluded.repeat_no)";

type RepeatRow = (String, i64, i64, i64, String);

macro_rules! repeat_fns {
    ($all:ident, $claim:ident, $pool:ty) => {
        async fn $all(pool: &$pool) -> Result<Vec<AlertRepeat>, sqlx::Error> {
            let rows: Vec<RepeatRow> = sqlx::query_as(SELECT_SQL).fetch_all(pool).await?;
            Ok(rows
                .into_iter()
                .map(|(alert_key, seq, repeat_no, at_ms, gateway)| AlertRepeat {
                    alert_key,
                    seq,
                    repeat_no,
                    at_ms,
                    gateway,
                })
                .collect())
        }

        async fn $claim(pool: &$pool, r: &AlertRepeat) -> Result<bool, sqlx::Error> {
            let done = sqlx::query(CLAIM_SQL)
                .bind(&r.alert_key)
                .bind(r.seq)
                .bind(r.repeat_no)
                .bind(r.at_ms)
                .bind(&r.gateway)
                .execute(pool)
                .await?;
            Ok(done.rows_affected() == 1)
        }
    };
}

repeat_fns!(all_sqlite, claim_sqlite, sqlx::SqlitePool);
repeat_fns!(all_postgres, claim_postgres, sqlx::PgPool);

// === impl Store (alert repeats) ===

impl Store {
    /// The latest repeat of every alert that was repeated.
    pub async fn alert_repeats(&self) -> Result<Vec<AlertRepeat>, StoreError> {
        match self.pool() {
            Pool::Sqlite(p) => all_sqlite(p).await,
            Pool::Postgres(p) => all_postgres(p).await,
        }
        .map_err(StoreError::query)
    }

    /// Records `r` unless the alert's row already holds this repeat or a
    /// later one (another gateway claimed it first): `true` when this call
    /// recorded it, i.e. the caller is the one that sends it.
    pub async fn claim_alert_repeat(&self, r: &AlertRepeat) -> Result<bool, StoreError> {
        match self.pool() {
            Pool::Sqlite(p) => claim_sqlite(p, r).await,
            Pool::Postgres(p) => claim_postgres(p, r).await,
        }
        .map_err(StoreError::query)
    }
}
