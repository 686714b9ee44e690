//! [`TraceParent`]: a W3C Trace Context `traceparent` header
//! (<https://www.w3.org/TR/trace-context/#traceparent-header>), the span a
//! client made a request under. The gateway reads it from a request's
//! headers so that the spans it exports for that request join the client's
//! trace; it keeps it with the request's records (the JSONL line writes it
//! back as the header's text).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

/// A parsed `traceparent`: the trace, the client's span, and whether the
/// client sampled it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceParent {
    /// The trace id (never all zeros).
    pub trace_id: [u8; 16],
    /// The client's span (never all zeros): the parent of the spans the
    /// gateway makes for the request.
    pub parent_id: [u8; 8],
    /// The `trace-flags` byte; bit 0 is `sampled`.
    pub flags: u8,
}

/// Why a `traceparent` value was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TraceParentError {
    /// Not `version-traceid-parentid-flags` with the lengths the version asks for.
    #[error("traceparent: expected 00-<32 hex>-<16 hex>-<2 hex>")]
    Shape,
    /// A field holds something other than lower-case hex digits.
    #[error("traceparent: not lower-case hex")]
    NotHex,
    /// Version `ff`, which the spec forbids.
    #[error("traceparent: version ff is invalid")]
    Version,
    /// An all-zero trace or parent id.
    #[error("traceparent: a zero trace or parent id")]
    ZeroId,
}

// === impl TraceParent ===

impl TraceParent {
    /// The length of a version-00 value.
    pub const LEN: usize = 55;

    /// Parses a header value by the spec's rules: version `00` is exactly
    /// 55 characters; a later version may be longer, with `-` after the
    /// flags, and is read as far as version 00 goes. Upper-case hex, the
    /// version `ff` and all-zero ids are refused. Leading and trailing
    /// blanks (a header's optional whitespace) are ignored.
    pub fn parse(value: &[u8]) -> Result<TraceParent, TraceParentError> {
        let value = value.trim_ascii();
        if value.len() < Self::LEN {
            return Err(TraceParentError::Shape);
        }
        let version = hex::<1>(&value[0..2])?[0];
        if version == 0xff {
            return Err(TraceParentError::Version);
        }
        // A later version may carry more after the flags, behind a `-`;
        // exactly 55 characters is as valid for it as for version 00.
        if value.len() > Self::LEN && (version == 0 || value[Self::LEN] != b'-') {
            return Err(TraceParentError::Shape);
        }
        if value[2] != b'-' || value[35] != b'-' || value[52] != b'-' {
            return Err(TraceParentError::Shape);
        }
        let trace_id = hex::<16>(&value[3..35])?;
        let parent_id = hex::<8>(&value[36..52])?;
        let flags = hex::<1>(&value[53..55])?[0];
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return Err(TraceParentError::ZeroId);
        }
        Ok(TraceParent {
            trace_id,
            parent_id,
            flags,
        })
    }

    /// Whether the client sampled its span (`trace-flags` bit 0): a span
    /// under an unsampled parent is not recorded, as OpenTelemetry's
    /// default `parentbased_always_on` sampler decides.
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }
}

/// `N` bytes from `2N` lower-case hex digits.
fn hex<const N: usize>(digits: &[u8]) -> Result<[u8; N], TraceParentError> {
    fn nibble(d: u8) -> Result<u8, TraceParentError> {
        match d {
            b'0'..=b'9' => Ok(d - b'0'),
            b'a'..=b'f' => Ok(d - b'a' + 10),
            _ => Err(TraceParentError::NotHex),
        }
    }
    let mut out = [0u8; N];
    for (i, pair) in digits.chunks_exact(2).enumerate() {
        out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Ok(out)
}

/// The version-00 header value.
impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("00-")?;
        for b in self.trace_id {
            write!(f, "{b:02x}")?;
        }
        f.write_str("-")?;
        for b in self.parent_id {
            write!(f, "{b:02x}")?;
        }
        write!(f, "-{:02x}", self.flags)
    }
}

impl Serialize for TraceParent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TraceParent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TraceParent, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
        TraceParent::parse(text.as_bytes()).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_specs_example_reads_and_writes_back() {
        let t = TraceParent::parse(EXAMPLE.as_bytes()).unwrap();
        assert_eq!(t.trace_id[0], 0x4b);
        assert_eq!(t.parent_id[7], 0xb7);
        assert!(t.sampled());
        assert_eq!(t.to_string(), EXAMPLE);
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, format!("\"{EXAMPLE}\""));
        assert_eq!(serde_json::from_str::<TraceParent>(&json).unwrap(), t);
        let unsampled = TraceParent::parse(
            &EXAMPLE.as_bytes()[..53]
                .iter()
                .chain(b"00")
                .copied()
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(!unsampled.sampled());
    }

    #[test]
    fn what_the_spec_refuses_is_refused() {
        use TraceParentError::*;
        let with = |at: usize, s: &str| {
            let mut v = EXAMPLE.to_string();
            v.replace_range(at..at + s.len(), s);
            v
        };
        for (value, why) in [
            (String::new(), Shape),
            (EXAMPLE[..54].to_string(), Shape),
            (format!("{EXAMPLE}-extra"), Shape), // version 00 is exactly 55
            (format!("{EXAMPLE}0"), Shape),
            (with(0, "ff"), Version),
            (with(3, "4BF9"), NotHex),
            (with(36, "zz"), NotHex),
            (with(53, "0g"), NotHex),
            (with(2, "_"), Shape),
            (with(3, &"0".repeat(32)), ZeroId),
            (with(36, &"0".repeat(16)), ZeroId),
        ] {
            assert_eq!(TraceParent::parse(value.as_bytes()), Err(why), "{value}");
        }
        // A later version may carry more, after a dash.
        let v1 = format!("01{}-more", &EXAMPLE[2..]);
        assert!(TraceParent::parse(v1.as_bytes()).is_ok());
        // A later version of exactly version 00's length, with nothing after
        // the flags (a panic once: the byte after them was read unchecked).
        let v1_exact = format!("01{}", &EXAMPLE[2..]);
        assert_eq!(v1_exact.len(), TraceParent::LEN);
        assert!(TraceParent::parse(v1_exact.as_bytes()).is_ok());
        let v1_bad = format!("01{}more", &EXAMPLE[2..]);
        assert_eq!(TraceParent::parse(v1_bad.as_bytes()), Err(Shape));
        assert!(TraceParent::parse(format!("  {EXAMPLE} ").as_bytes()).is_ok());
    }

    proptest! {
        /// Any bytes: an answer, never a panic; what parses writes back to
        /// the same value (version 00).
        #[test]
        fn any_bytes_parse_or_refuse(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(t) = TraceParent::parse(&bytes) {
                let again = TraceParent::parse(t.to_string().as_bytes()).unwrap();
                prop_assert_eq!(again, t);
            }
        }

        /// Well-formed fields under any version, with or without a tail:
        /// the spec's answer, never a panic (random bytes rarely reach the
        /// checks after the hex fields).
        #[test]
        fn any_version_with_any_tail_gets_the_specs_answer(
            version in any::<u8>(),
            trace in any::<[u8; 16]>(),
            parent in any::<[u8; 8]>(),
            flags in any::<u8>(),
            tail in prop::sample::select(vec!["", "-", "-00", "0", "x-"]),
        ) {
            prop_assume!(trace != [0; 16] && parent != [0; 8]);
            let t = TraceParent { trace_id: trace, parent_id: parent, flags };
            let value = format!("{version:02x}{}{tail}", &t.to_string()[2..]);
            let expected = match (version, tail) {
                (0xff, _) => Err(TraceParentError::Version),
                (0, "") => Ok(t),
                (0, _) => Err(TraceParentError::Shape),
                (_, "") => Ok(t),
                (_, tail) if tail.starts_with('-') => Ok(t),
                _ => Err(TraceParentError::Shape),
            };
            prop_assert_eq!(TraceParent::parse(value.as_bytes()), expected, "{}", value);
        }

        #[test]
        fn every_valid_value_round_trips(
            trace in any::<[u8; 16]>(), parent in any::<[u8; 8]>(), flags in any::<u8>()
        ) {
            prop_assume!(trace != [0; 16] && parent != [0; 8]);
            let t = TraceParent { trace_id: trace, parent_id: parent, flags };
            prop_assert_eq!(TraceParent::parse(t.to_string().as_bytes()), Ok(t));
        }
    }
}
