//! OTLP/gRPC (`otlp_protocol = "grpc"`): the export call's request head,
//! and what its answer says. The body is [`super::encode::request_body`]'s
//! framed message; the client speaks HTTP/2 alone
//! ([`crate::upstream::build_http2_client`]).
//!
//! A gRPC call is answered HTTP 200 whatever its outcome: the outcome is
//! its `grpc-status`, in the trailers, or in the head when the server sends
//! no message ("Trailers-Only"). The codes the OTLP specification calls
//! retryable are sent again as OTLP/HTTP's 429 and 503 are;
//! `RESOURCE_EXHAUSTED` only when the server says after how long
//! (`RetryInfo` in `grpc-status-details-bin`), as the specification asks.

use std::time::Duration;

use base64::Engine as _;
use http::{HeaderMap, Request, Response, header, request::Builder};
use http_body_util::BodyExt;
use prost::Message;

use super::{Refused, accepted::Accepted};

/// `OK`.
const OK: u32 = 0;
/// `RESOURCE_EXHAUSTED`: retryable only with a `RetryInfo`.
const RESOURCE_EXHAUSTED: u32 = 8;
/// `CANCELLED`, `DEADLINE_EXCEEDED`, `ABORTED`, `OUT_OF_RANGE`,
/// `UNAVAILABLE`, `DATA_LOSS`: retryable (OTLP specification, "Failures").
const RETRYABLE: [u32; 6] = [1, 4, 10, 11, 14, 15];

/// The most of a `grpc-message` quoted in a warning.
const MESSAGE_CHARS: usize = 200;

/// The head of an export call: POST, `application/grpc`, trailers
/// accepted, the deadline the gateway will wait (`grpc-timeout`).
pub(super) fn request(url: &http::Uri, timeout: Duration) -> Builder {
    Request::post(url.clone())
        .header(header::CONTENT_TYPE, "application/grpc")
        .header(header::TE, "trailers")
        // At most eight digits; `m`: milliseconds.
        .header(
            "grpc-timeout",
            format!("{}m", timeout.as_millis().clamp(1, 99_999_999)),
        )
}

/// The call's outcome from its answer, read within `within`: for `OK`,
/// what the response message says was kept; else why, and whether it may
/// be sent again.
pub(super) async fn outcome(
    response: Response<hyper::body::Incoming>,
    within: Duration,
) -> Result<Accepted, Refused> {
    let status = response.status();
    if status != http::StatusCode::OK {
        // Not a gRPC answer (a proxy's, say): read as gRPC reads HTTP
        // statuses, 429 and 502–504 being `UNAVAILABLE`.
        let (status, retry_after) = crate::http_client::answered(response, within).await;
        let retryable = matches!(status.as_u16(), 429 | 502 | 503 | 504);
        return Err(Refused {
            why: format!("status {status}"),
            retry_after: retryable.then_some(retry_after),
        });
    }
    if let Some(code) = code_of(response.headers()) {
        let head = response.headers().clone();
        let body = http_body_util::Limited::new(response.into_body(), 64 * 1024);
        let _ = tokio::time::timeout(within, body.collect()).await;
        return judged(code, &head).map(|()| Accepted::default());
    }
    let gzip = response
        .headers()
        .get("grpc-encoding")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"gzip"));
    let body = http_body_util::Limited::new(response.into_body(), 64 * 1024);
    let (message, trailers) = match tokio::time::timeout(within, body.collect()).await {
        Ok(Ok(collected)) => {
            let trailers = collected.trailers().cloned();
            (collected.to_bytes(), trailers)
        }
        Ok(Err(e)) => {
            return Err(Refused {
                why: format!("the answer broke off: {e}"),
                retry_after: Some(None),
            });
        }
        Err(_) => {
            return Err(Refused {
                why: format!("no status within {within:?}"),
                retry_after: Some(None),
            });
        }
    };
    match trailers.as_ref().and_then(|t| code_of(t).map(|c| (c, t))) {
        Some((code, trailers)) => {
            judged(code, trailers).map(|()| Accepted::from_grpc(&message, gzip))
        }
        None => Err(Refused {
            why: "the answer has no grpc-status".into(),
            retry_after: None,
        }),
    }
}

fn code_of(headers: &HeaderMap) -> Option<u32> {
    headers
        .get("grpc-status")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `code` with the `grpc-message` and `grpc-status-details-bin` beside it.
fn judged(code: u32, fields: &HeaderMap) -> Result<(), Refused> {
    if code == OK {
        return Ok(());
    }
    let message = fields
        .get("grpc-message")
        .and_then(|v| v.to_str().ok())
        .map(|m| {
            percent_encoding::percent_decode_str(m)
                .decode_utf8_lossy()
                .chars()
                .take(MESSAGE_CHARS)
                .collect::<String>()
        })
        .unwrap_or_default();
    let retry_after = if RETRYABLE.contains(&code) {
        Some(retry_delay(fields))
    } else if code == RESOURCE_EXHAUSTED {
        retry_delay(fields).map(Some)
    } else {
        None
    };
    Err(Refused {
        why: format!("grpc-status {code} {message}")
            .trim_end()
            .to_string(),
        retry_after,
    })
}

/// The `RetryInfo` delay in `grpc-status-details-bin` (a base64
/// `google.rpc.Status`), if the server gave one.
fn retry_delay(fields: &HeaderMap) -> Option<Duration> {
    let text = fields.get("grpc-status-details-bin")?.to_str().ok()?;
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(text.trim_end_matches('='))
        .ok()?;
    let status = RpcStatus::decode(&bytes[..]).ok()?;
    let info = status
        .details
        .iter()
        .find(|d| d.type_url.ends_with("/google.rpc.RetryInfo"))?;
    let delay = RetryInfo::decode(&info.value[..]).ok()?.retry_delay?;
    let secs = u64::try_from(delay.seconds).ok()?;
    let nanos = u32::try_from(delay.nanos).ok()?;
    Some(Duration::new(secs, nanos.min(999_999_999)))
}

/// `google.rpc.Status`, as far as it is read here.
#[derive(Clone, PartialEq, Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(message, repeated, tag = "3")]
    details: Vec<Any>,
}

/// `google.protobuf.Any`.
#[derive(Clone, PartialEq, Message)]
struct Any {
    #[prost(string, tag = "1")]
    type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    value: Vec<u8>,
}

/// `google.rpc.RetryInfo`.
#[derive(Clone, PartialEq, Message)]
struct RetryInfo {
    #[prost(message, optional, tag = "1")]
    retry_delay: Option<ProtoDuration>,
}

/// `google.protobuf.Duration`.
#[derive(Clone, PartialEq, Message)]
struct ProtoDuration {
    #[prost(int64, tag = "1")]
    seconds: i64,
    #[prost(int32, tag = "2")]
    nanos: i32,
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn fields(pairs: &[(&'static str, String)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    fn details(delay: Option<(i64, i32)>) -> String {
        let info = RetryInfo {
            retry_delay: delay.map(|(seconds, nanos)| ProtoDuration { seconds, nanos }),
        };
        let status = RpcStatus {
            code: RESOURCE_EXHAUSTED as i32,
            details: vec![Any {
                type_url: "type.googleapis.com/google.rpc.RetryInfo".into(),
                value: info.encode_to_vec(),
            }],
        };
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(status.encode_to_vec())
    }

    /// The specification's table: `OK` passes; `UNAVAILABLE` and the other
    /// transient codes are retried; `RESOURCE_EXHAUSTED` only with a
    /// `RetryInfo`, after its delay; the rest (`INVALID_ARGUMENT`,
    /// `UNAUTHENTICATED`, …) are not.
    #[test]
    fn statuses_are_judged_as_the_otlp_specification_says() {
        assert!(judged(0, &HeaderMap::new()).is_ok());
        for code in RETRYABLE {
            let refused = judged(code, &HeaderMap::new()).unwrap_err();
            assert_eq!(refused.retry_after, Some(None), "code {code}");
        }
        for code in [2, 3, 5, 6, 7, 9, 12, 13, 16] {
            assert_eq!(
                judged(code, &HeaderMap::new()).unwrap_err().retry_after,
                None
            );
        }
        assert_eq!(judged(8, &HeaderMap::new()).unwrap_err().retry_after, None);
        let throttled = fields(&[("grpc-status-details-bin", details(Some((3, 500_000_000))))]);
        assert_eq!(
            judged(8, &throttled).unwrap_err().retry_after,
            Some(Some(Duration::from_millis(3_500)))
        );
        // A padded encoding is read too; a RetryInfo without a delay is none.
        let padded = fields(&[(
            "grpc-status-details-bin",
            base64::engine::general_purpose::STANDARD.encode(
                base64::engine::general_purpose::STANDARD_NO_PAD
                    .decode(details(Some((1, 0))))
                    .unwrap(),
            ),
        )]);
        assert_eq!(retry_delay(&padded), Some(Duration::from_secs(1)));
        let empty = fields(&[("grpc-status-details-bin", details(None))]);
        assert_eq!(judged(8, &empty).unwrap_err().retry_after, None);
        let junk = fields(&[("grpc-status-details-bin", "!!".into())]);
        assert_eq!(judged(14, &junk).unwrap_err().retry_after, Some(None));
    }

    /// The server's message is percent-decoded and cut short in the
    /// warning.
    #[test]
    fn the_message_is_decoded_and_bounded() {
        let long = format!("bad%20batch {}", "x".repeat(500));
        let refused = judged(3, &fields(&[("grpc-message", long)])).unwrap_err();
        assert!(
            refused.why.starts_with("grpc-status 3 bad batch x"),
            "{}",
            refused.why
        );
        assert!(refused.why.len() < 250, "{}", refused.why.len());
    }
}
