//! `--since` values: `30s`, `30m`, `24h`, `7d`, `2w`, or `all`.

use std::time::Duration;

/// A `--since` value (the dashboard API's `since`) that could not be read.
/// Its text names no flag: the CLI's `--since` and the API's `?since=`
/// both show it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid since value {input:?}: {why}")]
pub struct SinceError {
    input: String,
    why: &'static str,
}

const EXPECTED: &str = "expected a number with s, m, h, d or w (e.g. 24h, 7d), or `all`";

/// Parses a `--since` window: `Ok(None)` for `all`, else the duration.
///
/// ```
/// use std::time::Duration;
/// use toolwarden_store::parse_since;
/// assert_eq!(parse_since("24h").unwrap(), Some(Duration::from_secs(86_400)));
/// assert_eq!(parse_since("all").unwrap(), None);
/// assert!(parse_since("yesterday").is_err());
/// ```
pub fn parse_since(input: &str) -> Result<Option<Duration>, SinceError> {
    let fail = |why| SinceError {
        input: input.to_owned(),
        why,
    };
    let err = || fail(EXPECTED);
    let s = input.trim();
    if s.eq_ignore_ascii_case("all") {
        return Ok(None);
    }
    let split = s.find(|c: char| !c.is_ascii_digit()).ok_or_else(err)?;
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits.parse().map_err(|_| err())?;
    let secs_per = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 604_800,
        _ => return Err(err()),
    };
    let secs = (n.checked_mul(secs_per))
        .ok_or_else(|| fail("too long a window (for everything, `all`)"))?;
    if secs == 0 {
        return Err(fail("a window of 0 holds nothing (e.g. 24h, 7d, or `all`)"));
    }
    Ok(Some(Duration::from_secs(secs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_all() {
        assert_eq!(parse_since("30m").unwrap(), Some(Duration::from_secs(1800)));
        assert_eq!(
            parse_since("7d").unwrap(),
            Some(Duration::from_secs(604_800))
        );
        assert_eq!(parse_since(" 45s ").unwrap(), Some(Duration::from_secs(45)));
        assert_eq!(parse_since("ALL").unwrap(), None);
    }

    #[test]
    fn rejects_bad_input_with_a_clear_message() {
        for bad in [
            "",
            "h",
            "24",
            "24x",
            "-1h",
            "0h",
            "1.5h",
            "99999999999999999999d",
        ] {
            let e = parse_since(bad).unwrap_err();
            assert!(
                e.to_string().starts_with("invalid since value"),
                "{bad}: {e}"
            );
        }
        let zero = parse_since("0h").unwrap_err().to_string();
        assert!(zero.contains("a window of 0"), "{zero}");
        let long = parse_since("99999999999999999999d")
            .unwrap_err()
            .to_string();
        assert!(long.contains("expected a number"), "{long}");
        let long = parse_since("999999999999999w").unwrap_err().to_string();
        assert!(long.contains("too long"), "{long}");
    }
}
