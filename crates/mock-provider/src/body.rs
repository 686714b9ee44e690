//! Response bodies: whole, or chunk by chunk with delays, ending normally,
//! with a connection reset, or never.

use std::{
    collections::VecDeque,
    io,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use http_body::Frame;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};

/// The mock's response body type.
pub(crate) type Body = BoxBody<Bytes, io::Error>;

/// How a chunked body ends after its last chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Normally.
    Finish,
    /// Normally, after this pause (a provider that keeps the stream open
    /// briefly after its final event).
    Linger(Duration),
    /// With an error: hyper aborts the connection mid-body.
    Reset,
    /// Never: the response stays open until the client goes away.
    Stall,
}

/// A whole body.
pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

/// Counts a body as an open stream while it exists.
struct OpenGuard(Arc<AtomicU64>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

struct State {
    chunks: VecDeque<Bytes>,
    delay: Duration,
    flush_each: bool,
    end: End,
    first: bool,
    _guard: OpenGuard,
}

/// The chunks written one by one, `delay` before each after the first
/// (`flush_each`: each in its own write even without a delay).
pub(crate) fn chunked(
    chunks: Vec<Bytes>,
    delay: Duration,
    flush_each: bool,
    end: End,
    open_streams: Arc<AtomicU64>,
) -> Body {
    open_streams.fetch_add(1, Ordering::Relaxed);
    let state = State {
        chunks: chunks.into(),
        delay,
        flush_each,
        end,
        first: true,
        _guard: OpenGuard(open_streams),
    };
    let stream = futures_util::stream::unfold(Some(state), |state| async move {
        let mut st = state?;
        if let Some(chunk) = st.chunks.pop_front() {
            if !st.first && !st.delay.is_zero() {
                tokio::time::sleep(st.delay).await;
            } else if !st.first && st.flush_each {
                // Pending once: hyper writes out what it holds before
                // this chunk, so each goes in its own write.
                tokio::task::yield_now().await;
            }
            st.first = false;
            return Some((Ok(Frame::data(chunk)), Some(st)));
        }
        match st.end {
            End::Finish => None,
            End::Linger(pause) => {
                tokio::time::sleep(pause).await;
                None
            }
            End::Reset => {
                // Let what was sent reach the wire first: the connection
                // dies after the chunks, not instead of them.
                tokio::time::sleep(Duration::from_millis(5)).await;
                Some((
                    Err(io::Error::new(
                        io::ErrorKind::ConnectionReset,
                        "mock provider: reset mid-stream",
                    )),
                    None,
                ))
            }
            End::Stall => {
                std::future::pending::<()>().await;
                None
            }
        }
    });
    StreamBody::new(stream).boxed()
}
