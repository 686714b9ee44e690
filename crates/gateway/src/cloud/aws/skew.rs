//! The SigV4 signing clock, corrected for clock skew as the AWS SDKs do.
//!
//! AWS refuses a signature whose time is more than 5 minutes from its own
//! clock. A host whose clock drifted (WSL2 after a sleep, a VM restored
//! from a snapshot) would have every request the gateway signs refused.
//! So, as the AWS SDKs' clock skew adjusters do, after a refusal whose
//! error type is a clock skew error (`x-amzn-errortype`, see
//! [`SKEW_ERRORS`]) and whose `Date` is more than [`CORRECT_FROM`] away
//! from the time the gateway signs with, the gateway keeps the difference
//! and signs later requests with its clock plus that offset. The refused
//! request itself is signed again and sent once more (the proxy's
//! `SignedHead`). An offset beyond [`MAX_OFFSET`] is
//! not taken (a `Date` that far off is not a clock to follow). The first
//! correction, and the first offset refused, are logged.

use std::{
    sync::atomic::{AtomicBool, AtomicI64, Ordering},
    time::{Duration, SystemTime},
};

use http::{HeaderMap, StatusCode, header};

/// The error types the AWS SDKs take for clock skew (AWS SDK for Java's
/// list; Bedrock answers `InvalidSignatureException` "Signature expired").
pub const SKEW_ERRORS: [&str; 6] = [
    "RequestTimeTooSkewed",
    "RequestExpired",
    "RequestInTheFuture",
    "InvalidSignatureException",
    "SignatureDoesNotMatch",
    "AuthFailure",
];
/// A `Date` closer than this to the signing time corrects nothing (the
/// SDKs' threshold; AWS's window is 5 minutes).
pub const CORRECT_FROM: Duration = Duration::from_secs(4 * 60);
/// The largest offset taken.
pub const MAX_OFFSET: Duration = Duration::from_secs(24 * 3600);

/// The offset between AWS's clock and this host's, shared by every
/// request the gateway signs.
#[derive(Debug, Default)]
pub struct ClockSkew {
    /// AWS's clock minus this host's, milliseconds.
    offset_ms: AtomicI64,
    /// Whether a correction was logged.
    corrected: AtomicBool,
    /// Whether an offset beyond the bound was logged.
    refused: AtomicBool,
}

/// What a response did to the offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Correction {
    /// Not a clock skew refusal, no usable `Date`, or one close enough.
    None,
    /// The offset is now this many milliseconds.
    Corrected(i64),
    /// A skew refusal whose `Date` is further off than [`MAX_OFFSET`].
    TooFar,
}

// === impl ClockSkew ===

impl ClockSkew {
    /// The time to sign with now: this host's clock plus the offset.
    pub fn now(&self) -> SystemTime {
        self.at(SystemTime::now())
    }

    /// The offset, milliseconds (AWS's clock minus this host's).
    pub fn offset_ms(&self) -> i64 {
        self.offset_ms.load(Ordering::Relaxed)
    }

    /// `local` (this host's clock) on AWS's clock.
    fn at(&self, local: SystemTime) -> SystemTime {
        shift(local, self.offset_ms())
    }

    /// Read a response to a request the gateway signed, `local` being this
    /// host's clock when it came (see the module docs).
    pub fn observe(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
        local: SystemTime,
    ) -> Correction {
        if !status.is_client_error() || !is_skew_error(headers) {
            return Correction::None;
        }
        let Some(server) = headers
            .get(header::DATE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| httpdate::parse_http_date(v.trim()).ok())
        else {
            return Correction::None;
        };
        let signing = self.at(local);
        if millis_between(signing, server).unsigned_abs() <= CORRECT_FROM.as_millis() as u64 {
            return Correction::None;
        }
        let offset = millis_between(local, server);
        if offset.unsigned_abs() > MAX_OFFSET.as_millis() as u64 {
            if !self.refused.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    offset_s = offset / 1000,
                    "AWS refused a signature for its time, but its Date is more than 24 h from this \
                     host's clock: not followed; correct the host's clock"
                );
            }
            return Correction::TooFar;
        }
        self.offset_ms.store(offset, Ordering::Relaxed);
        if !self.corrected.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                offset_s = offset / 1000,
                "AWS refused a signature for its time: this host's clock is off by the offset \
                 (AWS's minus this host's); Bedrock requests are now signed with AWS's time"
            );
        }
        Correction::Corrected(offset)
    }
}

/// Whether `x-amzn-errortype` (`Type:namespace`) names a clock skew error.
fn is_skew_error(headers: &HeaderMap) -> bool {
    headers
        .get("x-amzn-errortype")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(':').next())
        .is_some_and(|kind| SKEW_ERRORS.contains(&kind.trim()))
}

/// `to - from`, milliseconds (saturating).
fn millis_between(from: SystemTime, to: SystemTime) -> i64 {
    let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    match to.duration_since(from) {
        Ok(ahead) => ms(ahead),
        Err(behind) => -ms(behind.duration()),
    }
}

/// `t` moved by `offset_ms`.
fn shift(t: SystemTime, offset_ms: i64) -> SystemTime {
    let by = Duration::from_millis(offset_ms.unsigned_abs());
    let moved = if offset_ms < 0 {
        t.checked_sub(by)
    } else {
        t.checked_add(by)
    };
    moved.unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;

    fn refusal(kind: &str, date: SystemTime) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let kind = format!("{kind}:http://internal.amazon.com/coral/com.amazon.coral.service/");
        headers.insert("x-amzn-errortype", kind.parse().unwrap());
        headers.insert(header::DATE, httpdate::fmt_http_date(date).parse().unwrap());
        headers
    }

    const FORBIDDEN: StatusCode = StatusCode::FORBIDDEN;

    #[test]
    fn a_skew_refusal_sets_the_offset_to_awss_date() {
        let local = UNIX_EPOCH + Duration::from_secs(1_764_000_000);
        let skew = ClockSkew::default();
        let ahead = local + Duration::from_secs(600);
        let seen = skew.observe(
            FORBIDDEN,
            &refusal("InvalidSignatureException", ahead),
            local,
        );
        assert_eq!(seen, Correction::Corrected(600_000));
        assert_eq!(skew.at(local), ahead);
        // Within the threshold of the corrected time: kept as it is.
        let near = ahead + Duration::from_secs(200);
        let seen = skew.observe(
            FORBIDDEN,
            &refusal("InvalidSignatureException", near),
            local,
        );
        assert_eq!(seen, Correction::None);
        assert_eq!(skew.offset_ms(), 600_000);
        // AWS behind this host: a negative offset.
        let behind = local - Duration::from_secs(3600);
        let seen = skew.observe(FORBIDDEN, &refusal("RequestTimeTooSkewed", behind), local);
        assert_eq!(seen, Correction::Corrected(-3_600_000));
        assert_eq!(skew.at(local), behind);
    }

    #[test]
    fn only_a_skew_error_with_a_date_far_enough_corrects() {
        let local = UNIX_EPOCH + Duration::from_secs(1_764_000_000);
        let far = local + Duration::from_secs(900);
        let skew = ClockSkew::default();
        for (status, headers) in [
            // Another error type.
            (FORBIDDEN, refusal("AccessDeniedException", far)),
            (FORBIDDEN, refusal("ValidationException", far)),
            // Not a refusal.
            (StatusCode::OK, refusal("InvalidSignatureException", far)),
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                refusal("InvalidSignatureException", far),
            ),
            // Close enough.
            (
                FORBIDDEN,
                refusal("InvalidSignatureException", local + CORRECT_FROM),
            ),
        ] {
            assert_eq!(skew.observe(status, &headers, local), Correction::None);
        }
        // No Date, or one that is not an HTTP date.
        let mut headers = refusal("InvalidSignatureException", far);
        headers.insert(header::DATE, "20251125T170000Z".parse().unwrap());
        assert_eq!(skew.observe(FORBIDDEN, &headers, local), Correction::None);
        headers.remove(header::DATE);
        assert_eq!(skew.observe(FORBIDDEN, &headers, local), Correction::None);
        // Beyond the bound: not followed.
        let wild = local + MAX_OFFSET + Duration::from_secs(1);
        let headers = refusal("InvalidSignatureException", wild);
        assert_eq!(skew.observe(FORBIDDEN, &headers, local), Correction::TooFar);
        assert_eq!(skew.offset_ms(), 0);
    }

    proptest::proptest! {
        /// Any `x-amzn-errortype` and `Date` values: no panic, and an offset
        /// taken is within the bound.
        #[test]
        fn any_refusal_leaves_a_bounded_offset(
            kind in "\\PC{0,40}",
            date in "\\PC{0,40}",
            secs in 0u64..4_000_000_000,
        ) {
            let mut headers = HeaderMap::new();
            if let Ok(v) = kind.parse() {
                headers.insert("x-amzn-errortype", v);
            }
            if let Ok(v) = date.parse() {
                headers.insert(header::DATE, v);
            }
            let skew = ClockSkew::default();
            let local = UNIX_EPOCH + Duration::from_secs(secs);
            skew.observe(FORBIDDEN, &headers, local);
            let offset = skew.offset_ms().unsigned_abs();
            proptest::prop_assert!(offset <= MAX_OFFSET.as_millis() as u64);
        }
    }
}
