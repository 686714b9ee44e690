//! What a collector's successful answer says it kept. A collector that
//! takes only part of a batch still answers success (HTTP 200, gRPC `OK`)
//! and says so in the response message's `partial_success`: how many spans
//! it rejected and why (OTLP specification, "Partial Success"). Those spans
//! are lost, not exported, and the request must not be sent again.

use std::io::Read as _;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
use prost::Message as _;

/// The most of a collector's `error_message` quoted in a warning.
const MESSAGE_CHARS: usize = 200;

/// The most bytes a gzipped gRPC answer is inflated to.
const MAX_ANSWER: u64 = 64 * 1024;

/// A batch the collector took: how many of its spans it rejected, and the
/// message it gave (empty if none).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Accepted {
    /// Spans rejected (at most the batch's).
    pub(super) rejected: u64,
    /// The collector's `error_message` (a warning even with nothing
    /// rejected), cut to [`MESSAGE_CHARS`].
    pub(super) message: String,
}

// === impl Accepted ===

impl Accepted {
    /// An OTLP/HTTP answer of success: its body, an
    /// `ExportTraceServiceResponse` (empty, or one that does not decode:
    /// everything kept).
    pub(super) fn from_http(body: &[u8]) -> Accepted {
        ExportTraceServiceResponse::decode(body)
            .map(Accepted::from_response)
            .unwrap_or_default()
    }

    /// A gRPC answer of `OK`: its body, the response message in its
    /// length-prefixed frame, compressed when its flag says so and the
    /// answer's `grpc-encoding` is `gzip` (none, or a frame that does not
    /// read: everything kept).
    pub(super) fn from_grpc(body: &[u8], gzip: bool) -> Accepted {
        let Some((&flag, rest)) = body.split_first() else {
            return Accepted::default();
        };
        let Some((len, rest)) = rest.split_first_chunk::<4>() else {
            return Accepted::default();
        };
        let len = u32::from_be_bytes(*len) as usize;
        let Some(message) = rest.get(..len) else {
            return Accepted::default();
        };
        match flag {
            0 => Accepted::from_http(message),
            1 if gzip => {
                let mut plain = Vec::new();
                let inflated = flate2::read::GzDecoder::new(message)
                    .take(MAX_ANSWER)
                    .read_to_end(&mut plain);
                match inflated {
                    Ok(_) => Accepted::from_http(&plain),
                    Err(_) => Accepted::default(),
                }
            }
            _ => Accepted::default(),
        }
    }

    fn from_response(response: ExportTraceServiceResponse) -> Accepted {
        let Some(partial) = response.partial_success else {
            return Accepted::default();
        };
        Accepted {
            rejected: u64::try_from(partial.rejected_spans).unwrap_or(0),
            message: partial.error_message.chars().take(MESSAGE_CHARS).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTracePartialSuccess;
    use proptest::prelude::*;

    use super::*;

    fn response(rejected: i64, message: &str) -> Vec<u8> {
        ExportTraceServiceResponse {
            partial_success: Some(ExportTracePartialSuccess {
                rejected_spans: rejected,
                error_message: message.into(),
            }),
        }
        .encode_to_vec()
    }

    fn framed(flag: u8, message: &[u8]) -> Vec<u8> {
        let mut out = vec![flag];
        out.extend_from_slice(&(message.len() as u32).to_be_bytes());
        out.extend_from_slice(message);
        out
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn a_partial_success_is_read_over_http_and_grpc() {
        let partial = Accepted {
            rejected: 2,
            message: "2 spans too old".into(),
        };
        let body = response(2, "2 spans too old");
        assert_eq!(Accepted::from_http(&body), partial);
        assert_eq!(Accepted::from_grpc(&framed(0, &body), false), partial);
        assert_eq!(Accepted::from_grpc(&framed(1, &gzip(&body)), true), partial);
        // A warning with nothing rejected.
        assert_eq!(
            Accepted::from_http(&response(0, "slow down")),
            Accepted {
                rejected: 0,
                message: "slow down".into()
            }
        );
        // Everything kept: no body, an empty message, no partial_success,
        // a negative count, a compressed frame without `grpc-encoding`.
        for kept in [
            Accepted::from_http(b""),
            Accepted::from_http(&ExportTraceServiceResponse::default().encode_to_vec()),
            Accepted::from_http(&response(-3, "")),
            Accepted::from_grpc(b"", false),
            Accepted::from_grpc(&framed(0, b""), false),
            Accepted::from_grpc(&framed(1, &gzip(&body)), false),
        ] {
            assert_eq!(kept, Accepted::default());
        }
        let long = "x".repeat(1000);
        assert_eq!(
            Accepted::from_http(&response(1, &long)).message.len(),
            MESSAGE_CHARS
        );
    }

    proptest! {
        /// Any bytes a collector answers are read without a panic.
        #[test]
        fn any_answer_reads(body in proptest::collection::vec(any::<u8>(), 0..64), gzip in any::<bool>()) {
            let _ = Accepted::from_http(&body);
            let _ = Accepted::from_grpc(&body, gzip);
        }
    }
}
