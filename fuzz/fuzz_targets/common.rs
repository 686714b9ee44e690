//! Shared by the fuzz targets: the first input byte picks the dialect.
//!
//! `TW_FUZZ_DIALECTS=anthropic,openai-chat` restricts the dialects (by
//! default all four are fuzzed).

use std::sync::OnceLock;

use toolwarden_wire::Dialect;

/// The dialect for this input and the rest of the input.
pub fn split(data: &[u8]) -> Option<(Dialect, &[u8])> {
    static ENABLED: OnceLock<Vec<Dialect>> = OnceLock::new();
    let enabled = ENABLED.get_or_init(|| match std::env::var("TW_FUZZ_DIALECTS") {
        Ok(list) => list.split(',').filter_map(|d| d.trim().parse().ok()).collect(),
        Err(_) => Dialect::ALL.to_vec(),
    });
    let (&first, rest) = data.split_first()?;
    let dialect = *enabled.get(usize::from(first) % enabled.len().max(1))?;
    Some((dialect, rest))
}
