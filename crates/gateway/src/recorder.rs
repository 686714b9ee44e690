//! The one integration point with `toolwarden-store`: everything the
//! gateway uses from it is re-exported here, so the rest of the crate names
//! `crate::recorder::…` only.

pub use toolwarden_store::Recorder;
pub(crate) use toolwarden_store::{
    Event, Observer, RecorderCounters, RecorderOptions, RequestRecord, StatsQuery, Store,
    ToolCallRecord, ToolResultRecord, TurnRef,
};
// Issue 14: the store's bounds come from the gateway's config.
pub(crate) use toolwarden_store::StoreOptions;
