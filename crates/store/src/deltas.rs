//! What a batch adds to its sessions ([`SessionDeltas`]) and the saturating
//! integer conversion the writers share: a leaf that `write` and `bulk` both
//! import, so neither imports the other for them.

use crate::event::RequestRecord;

/// Sessions touched by the new requests of a batch, folded per session.
#[derive(Debug, Default)]
pub(crate) struct SessionDeltas(std::collections::BTreeMap<String, SessionDelta>);

#[derive(Debug)]
pub(crate) struct SessionDelta {
    pub source: String,
    pub first_ms: i64,
    pub last_ms: i64,
    pub requests: i64,
}

/// Saturating conversion for sizes and counts.
pub(crate) fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

// === impl SessionDeltas ===

impl SessionDeltas {
    pub(crate) fn add(&mut self, r: &RequestRecord) {
        let d = self
            .0
            .entry(r.session_id.clone())
            .or_insert_with(|| SessionDelta {
                source: r.session_source.clone(),
                first_ms: r.at_ms,
                last_ms: r.at_ms,
                requests: 0,
            });
        d.first_ms = d.first_ms.min(r.at_ms);
        d.last_ms = d.last_ms.max(r.at_ms);
        d.requests += 1;
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// In session-id order, so concurrent batches lock rows in one order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&String, &SessionDelta)> {
        self.0.iter()
    }
}
