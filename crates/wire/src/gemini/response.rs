//! A whole Gemini response body (`generateContent`), or a whole streamed
//! JSON array: read chunk by chunk by the stream state.

use super::stream::{Chunk, StreamState};
use crate::{ResponseView, WireError};

/// See [`crate::response_view`]: a body, or a whole streamed JSON array.
pub(crate) fn response_view(body: &[u8]) -> Result<ResponseView, WireError> {
    let mut state = StreamState::default();
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        let chunks: Vec<Chunk<'_>> = serde_json::from_slice(body)?;
        for c in chunks {
            state.on_chunk(c);
        }
    } else {
        let chunk: Chunk<'_> = serde_json::from_slice(body)?;
        state.on_chunk(chunk);
    }
    Ok(state.view())
}
