//! The PostgreSQL suite (issue 5): a mock provider and TWO gateways
//! in-process on one PostgreSQL database (a fresh schema per test), and a
//! client alternating between them turn by turn.
//!
//! Set `TOOLWARDEN_TEST_POSTGRES_URL` (e.g. `URL=$(bash .ci/pg.sh start)`)
//! to run the PostgreSQL parts; without it they print a loud `SKIPPED` line
//! and pass, and only the SQLite and no-database parts run.
//!
//! - `alternate`: multi-turn tool conversations in all four dialects,
//!   streaming and not, plus Responses continuations over
//!   `previous_response_id`; exact counts on both gateways and the same
//!   answers from SQLite with a single gateway;
//! - `continuation`: a continuation's result written before its call (by
//!   the other gateway) is merged with the late call;
//! - `race`: one request sent to both gateways at once counts once, and so
//!   does one turn sent to both at once as a continuation and as the whole
//!   history;
//! - `retention`: a gateway's retention pass yields to another gateway's
//!   step under way on the same database;
//! - `reused`: another run's answer under a reused id (`name#0`) counts
//!   when its call went through the other gateway;
//! - `rewritten`: Gemini calls recorded by one gateway, answered through
//!   the other under ids the client invented, pair through the replayed
//!   turn's fingerprint;
//! - `unreachable`: a database that cannot be reached stops the start with
//!   an error naming it (password redacted).

// The e2e helpers are shared by path; not every one is used here.
#![allow(dead_code, missing_debug_implementations)]

#[path = "e2e/convo.rs"]
pub mod convo;
#[path = "e2e/support.rs"]
pub mod support;

mod postgres {
    pub mod cluster;
    pub mod scenario;
    pub mod slow;

    mod alternate;
    mod continuation;
    mod fork;
    mod race;
    mod retention;
    mod reused;
    mod rewritten;
    mod threads;
    mod unreachable;
}
