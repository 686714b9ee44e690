//! Classify foreign errors into an [`ErrorKind`]: by type first, by message
//! only as a fallback.

use std::{error::Error as StdError, io, time::Duration};

use crate::{ErrorKind, ToolError};

/// Classify an error and its source chain.
///
/// The first link that is a [`ToolError`] or a [`std::io::Error`] decides;
/// when no link has a known type, the messages of the chain are matched
/// (see [`message`]).
pub fn error(err: &(dyn StdError + 'static)) -> ErrorKind {
    let mut link: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = link {
        if let Some(t) = e.downcast_ref::<ToolError>() {
            return t.kind().clone();
        }
        if let Some(io) = e.downcast_ref::<io::Error>() {
            let kind = io_error(io);
            if kind != ErrorKind::Internal {
                return kind;
            }
        }
        link = e.source();
    }
    let mut link: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = link {
        let kind = message(&e.to_string());
        if kind != ErrorKind::Internal {
            return kind;
        }
        link = e.source();
    }
    ErrorKind::Internal
}

/// Classify a [`std::io::Error`] by its kind. A `NotFound` keeps the
/// message's path when it names one.
pub fn io_error(err: &io::Error) -> ErrorKind {
    use io::ErrorKind as K;
    match err.kind() {
        K::NotFound => ErrorKind::ResourceNotFound {
            resource: extract_resource(&err.to_string()),
        },
        K::PermissionDenied => ErrorKind::Permission,
        K::TimedOut | K::WouldBlock => ErrorKind::Timeout,
        K::ConnectionRefused
        | K::ConnectionReset
        | K::ConnectionAborted
        | K::NotConnected
        | K::AddrNotAvailable
        | K::BrokenPipe
        | K::UnexpectedEof
        | K::HostUnreachable
        | K::NetworkUnreachable
        | K::NetworkDown => ErrorKind::Network,
        K::InvalidInput => ErrorKind::InvalidArguments,
        K::Interrupted => ErrorKind::Cancelled,
        _ => message(&err.to_string()),
    }
}

/// Classify an HTTP status returned by a tool's backend. `retry_after` is
/// the parsed `Retry-After` header, if any.
pub fn http_status(status: u16, retry_after: Option<Duration>) -> ErrorKind {
    match status {
        400 | 422 => ErrorKind::InvalidArguments,
        401 => ErrorKind::Authentication,
        403 => ErrorKind::Permission,
        404 | 410 => ErrorKind::ResourceNotFound { resource: None },
        408 | 504 => ErrorKind::Timeout,
        429 => ErrorKind::RateLimited { retry_after },
        502 | 503 => ErrorKind::Network,
        _ => ErrorKind::Internal,
    }
}

/// Parse a `Retry-After` header value given in seconds. A wait longer
/// than a [`Duration`] holds (`1e300`) is [`Duration::MAX`]: as long as
/// can be said. Not a number of seconds (an HTTP date, a negative or
/// non-finite number): `None`.
pub fn retry_after_secs(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0)
        .then(|| Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
}

/// Classify a message alone: the fallback for errors of unknown type. Its
/// words decide (`not found`, `timed out`, `too many requests`,
/// `unauthorized`, `forbidden`, `connection refused`, …), and a status
/// code (`404`, `429`, `401`, `403`) only where it stands alone in a
/// message that speaks of HTTP (`HTTP 401`, `status code 403`): `failed
/// at row 14012` or `snapshot_20240401.tar` names no status.
pub fn message(msg: &str) -> ErrorKind {
    let lower = msg.to_ascii_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|n| lower.contains(n));
    let status = |code: &str| has_status(&lower, code);
    if has(&["not found", "no such file", "does not exist"]) || status("404") {
        ErrorKind::ResourceNotFound {
            resource: extract_resource(msg),
        }
    } else if has(&["timed out", "timeout", "deadline exceeded"]) {
        ErrorKind::Timeout
    } else if has(&["rate limit", "too many requests"]) || status("429") {
        ErrorKind::RateLimited { retry_after: None }
    } else if has(&[
        "unauthorized",
        "unauthenticated",
        "invalid api key",
        "authentication",
    ]) || status("401")
    {
        ErrorKind::Authentication
    } else if has(&["permission denied", "forbidden", "access denied"]) || status("403") {
        ErrorKind::Permission
    } else if has(&[
        "connection refused",
        "connection reset",
        "broken pipe",
        "network is unreachable",
        "dns error",
    ]) {
        ErrorKind::Network
    } else {
        ErrorKind::Internal
    }
}

/// Words that make a number in a message an HTTP status: `HTTP 401`,
/// `status code 403`, `response 429`, `404 for https://…`: a number
/// alone is as often a row, a port or a count.
const STATUS_CONTEXT: [&str; 3] = ["http", "status", "respon"];

/// Whether `lower` (a message, lower-cased) gives the HTTP status `code`:
/// the number standing alone — no letter or digit touching it, nor a
/// decimal point or thousands separator between it and a digit (`14012`,
/// `20240401`, `v401`, `1,401`, `4.01` hold no status) — in a message
/// that speaks of HTTP ([`STATUS_CONTEXT`]). A number alone is a row, a
/// port, a build or a date as often as a status, and a status read into it
/// wrongly can stop an agent's run (`401` and `403` are fatal).
fn has_status(lower: &str, code: &str) -> bool {
    if !STATUS_CONTEXT.iter().any(|w| lower.contains(w)) {
        return false;
    }
    let bytes = lower.as_bytes();
    let digit_at = |i: Option<usize>| i.and_then(|i| bytes.get(i)).is_some_and(u8::is_ascii_digit);
    lower.match_indices(code).any(|(at, _)| {
        let end = at + code.len();
        let before = lower[..at].chars().next_back();
        let after = lower[end..].chars().next();
        let touches = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        let separated = |c: Option<char>, beyond: Option<usize>| {
            matches!(c, Some('.' | ',')) && digit_at(beyond)
        };
        !touches(before)
            && !touches(after)
            && !separated(before, at.checked_sub(2))
            && !separated(after, Some(end + 1))
    })
}

/// The path or URL a message names, if it holds one: a URL, a quoted
/// string, or a token that looks like a path.
pub fn extract_resource(msg: &str) -> Option<String> {
    if let Some(start) = msg.find("://") {
        // The scheme's characters before `://` (a char boundary, whatever
        // precedes them).
        let begin = msg[..start]
            .trim_end_matches(|c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .len();
        let end = msg[start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ')' | '>'))
            .map_or(msg.len(), |i| start + i);
        return Some(
            msg[begin..end]
                .trim_end_matches([',', '.', ';'])
                .to_string(),
        );
    }
    for quote in ['\'', '"', '`'] {
        if let Some(open) = msg.find(quote)
            && let Some(len) = msg[open + 1..].find(quote)
            && len > 0
        {
            return Some(msg[open + 1..open + 1 + len].to_string());
        }
    }
    msg.split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .map(|t| t.trim_end_matches([':', '.', ')']).trim_start_matches('('))
        .find(|t| {
            t.len() > 1
                && (t.starts_with('/')
                    || t.starts_with("./")
                    || t.starts_with("~/")
                    || t.contains('/') && t.contains('.'))
        })
        .map(str::to_string)
}

/// Argument names that hold the resource a tool works on.
const RESOURCE_KEYS: &[&str] = &[
    "path",
    "file",
    "filename",
    "filepath",
    "file_path",
    "url",
    "uri",
    "href",
    "dir",
    "directory",
    "folder",
    "location",
    "resource",
    "target",
    "source",
    "destination",
];

/// Longest resource name repeated to the model.
const RESOURCE_MAX: usize = 300;

/// The resource a tool call works on, from its arguments, for a not-found
/// or permission error whose own message does not say which (a
/// `std::io::Error` carries no path): the string value of an argument
/// named like one (`path`, `file_path`, `url`, `filePath`, `source_url`,
/// … see `RESOURCE_KEYS`), else the first string argument that looks like a
/// path or URL. Top-level arguments first, then one level of nested objects.
///
/// ```
/// use serde_json::json;
/// use toolwarden_core::classify::argument_resource;
///
/// let args = json!({"file_path": "/srv/app/config.toml", "limit": 10});
/// assert_eq!(argument_resource(&args).as_deref(), Some("/srv/app/config.toml"));
/// let args = json!({"query": "weather", "endpoint": "https://api.example.com/v1/w"});
/// assert_eq!(argument_resource(&args).as_deref(), Some("https://api.example.com/v1/w"));
/// assert_eq!(argument_resource(&json!({"query": "weather"})), None);
/// ```
pub fn argument_resource(args: &serde_json::Value) -> Option<String> {
    let obj = args.as_object()?;
    let nested = || obj.values().filter_map(serde_json::Value::as_object);
    let named = |o: &serde_json::Map<String, serde_json::Value>| {
        o.iter().find_map(|(k, v)| {
            let v = v.as_str().filter(|v| !v.trim().is_empty())?;
            names_a_resource(k).then(|| clip_resource(v))
        })
    };
    let looks = |o: &serde_json::Map<String, serde_json::Value>| {
        o.values()
            .filter_map(serde_json::Value::as_str)
            .find(|v| looks_like_resource(v))
            .map(clip_resource)
    };
    named(obj)
        .or_else(|| nested().find_map(named))
        .or_else(|| looks(obj))
        .or_else(|| nested().find_map(looks))
}

/// `path`, `file_path`, `filePath`, `source_url`, `targetDir`, …
fn names_a_resource(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    RESOURCE_KEYS.iter().any(|k| {
        lower == *k
            || lower.ends_with(&format!("_{k}"))
            || (key.len() > k.len()
                && lower.ends_with(k)
                && key[key.len() - k.len()..].starts_with(|c: char| c.is_ascii_uppercase()))
    })
}

/// A URL, or a single token that looks like a path.
fn looks_like_resource(v: &str) -> bool {
    let v = v.trim();
    !v.is_empty()
        && !v.contains(char::is_whitespace)
        && (v.contains("://")
            || v.starts_with(['/', '~'])
            || v.starts_with("./")
            || v.starts_with("../")
            || v.contains('/') && v.contains('.')
            || v.contains('\\'))
}

fn clip_resource(v: &str) -> String {
    let v = v.trim();
    if v.len() <= RESOURCE_MAX {
        return v.to_string();
    }
    let mut end = RESOURCE_MAX;
    while !v.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &v[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resource_argument_is_found_by_name_then_by_shape() {
        use serde_json::json;
        let cases = [
            (json!({"path": "notes.md"}), Some("notes.md")),
            (json!({"filePath": "a.txt", "x": "/b"}), Some("a.txt")),
            (
                json!({"source_url": "https://x.test/a"}),
                Some("https://x.test/a"),
            ),
            (json!({"n": 3, "q": "./rel/file"}), Some("./rel/file")),
            (
                json!({"opts": {"target_dir": "/tmp/out"}}),
                Some("/tmp/out"),
            ),
            (json!({"q": "two words/with.dot"}), None),
            (json!({"path": "  "}), None),
            (json!({"profile": "x"}), None),
            (json!(["/a"]), None),
        ];
        for (args, want) in cases {
            assert_eq!(argument_resource(&args).as_deref(), want, "{args}");
        }
        let long = "/".repeat(1000);
        assert!(
            argument_resource(&json!({ "path": long }))
                .unwrap()
                .chars()
                .count()
                <= RESOURCE_MAX + 1
        );
    }

    /// A URL written right after a letter outside ASCII (Chinese and
    /// Japanese put no space there) is found whole; before, its start was
    /// taken one byte after that letter's first byte, inside it: a panic.
    #[test]
    fn a_url_after_a_letter_outside_ascii_is_found() {
        assert_eq!(
            extract_resource("404：请访问https://api.example.com/x 失败").as_deref(),
            Some("https://api.example.com/x")
        );
        assert_eq!(
            message("not found: éhttps://h/a"),
            ErrorKind::ResourceNotFound {
                resource: Some("https://h/a".into())
            }
        );
    }

    proptest::proptest! {
        /// Any message is classified, and its resource read, without a
        /// panic; a resource is a piece of the message.
        #[test]
        fn any_message_is_classified(
            before in "\\PC{0,8}",
            scheme in "[a-z+.-]{0,4}",
            after in "\\PC{0,12}",
        ) {
            let msg = format!("not found {before}{scheme}://{after}");
            let _ = message(&msg);
            if let Some(r) = extract_resource(&msg) {
                proptest::prop_assert!(msg.contains(&r));
            }
        }
    }

    #[test]
    fn io_not_found_keeps_the_path() {
        let e = io::Error::new(
            io::ErrorKind::NotFound,
            "open /etc/app/config.toml: no such file",
        );
        assert_eq!(
            io_error(&e),
            ErrorKind::ResourceNotFound {
                resource: Some("/etc/app/config.toml".into())
            }
        );
    }

    #[test]
    fn type_beats_message() {
        // The message says "not found" but the type says permission.
        let e = io::Error::new(io::ErrorKind::PermissionDenied, "user not found in sudoers");
        assert_eq!(error(&e), ErrorKind::Permission);
    }

    #[test]
    fn chain_is_walked_to_a_tool_error() {
        #[derive(Debug)]
        struct Wrapper(ToolError);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("wrapped")
            }
        }
        impl StdError for Wrapper {
            fn source(&self) -> Option<&(dyn StdError + 'static)> {
                Some(&self.0)
            }
        }
        let w = Wrapper(ToolError::rate_limited(
            Some(Duration::from_secs(3)),
            "slow down",
        ));
        assert_eq!(
            error(&w),
            ErrorKind::RateLimited {
                retry_after: Some(Duration::from_secs(3))
            }
        );
    }

    #[test]
    fn messages_as_fallback() {
        assert!(matches!(
            message("HTTP 404 for https://api.example.com/v1/items/7"),
            ErrorKind::ResourceNotFound { resource: Some(r) } if r == "https://api.example.com/v1/items/7"
        ));
        assert!(matches!(
            message("No such file or directory: 'data.csv'"),
            ErrorKind::ResourceNotFound { resource: Some(r) } if r == "data.csv"
        ));
        assert_eq!(message("operation timed out"), ErrorKind::Timeout);
        assert_eq!(message("something odd"), ErrorKind::Internal);
    }

    /// Regression: a status code was matched anywhere in a message, so a
    /// row number, a port, a build or a date holding its digits made the
    /// failure fatal (`failed at row 14012: disk full` was an
    /// authentication failure, `build 1403 failed` a permission one),
    /// retried as rate limited (`:4290`) or a missing resource
    /// (`20240401`).
    #[test]
    fn a_status_code_is_a_number_of_its_own_in_an_http_message() {
        for msg in [
            "failed at row 14012: disk full",
            "build 1403 failed",
            "listening on :4290 failed",
            "snapshot_20240401.tar: checksum mismatch",
            "request 4011 failed",
            "status: v401 is deprecated",
            "HTTP client: 1,401 items left over",
            "HTTP client: 4.01 s, then 401.5 units",
            "failed at row 401: disk full",
        ] {
            assert_eq!(message(msg), ErrorKind::Internal, "{msg}");
        }
        assert_eq!(
            message("https://x/y: status code 401"),
            ErrorKind::Authentication
        );
        assert_eq!(message("response: 403."), ErrorKind::Permission);
        // A number alone, without HTTP's words, is not taken for a status
        // (`401` and `403` would stop the run).
        assert_eq!(
            message("request 401 of 900 failed: code E42"),
            ErrorKind::Internal
        );
        assert_eq!(
            message("HTTP 429 (retry later)"),
            ErrorKind::RateLimited { retry_after: None }
        );
        assert!(matches!(
            message("404 for url (https://api.x/items/7)"),
            ErrorKind::ResourceNotFound { resource: Some(r) } if r == "https://api.x/items/7"
        ));
    }

    proptest::proptest! {
        /// A number in a message is no status unless it is one, standing
        /// alone: any number (a status code among its digits or not)
        /// beside an HTTP message's words, and any status code touching a
        /// letter or a digit.
        #[test]
        fn numbers_are_statuses_only_standing_alone(
            n in 0u64..100_000_000,
            before in "[0-9a-z]",
            after in "[0-9a-z]",
            code in proptest::sample::select(vec!["401", "403", "404", "429"]),
        ) {
            let kind = message(&format!("HTTP request failed at row {n}: disk full"));
            let is_code = ["401", "403", "404", "429"].contains(&n.to_string().as_str());
            proptest::prop_assert_eq!(kind == ErrorKind::Internal, !is_code);
            for glued in [format!("{before}{code}"), format!("{code}{after}")] {
                let msg = format!("HTTP status {glued} returned");
                proptest::prop_assert_eq!(message(&msg), ErrorKind::Internal, "{}", msg);
            }
        }
    }

    /// Regression: a `Retry-After` too long for a `Duration` (`1e300`, a
    /// backend's bad header) panicked in `Duration::from_secs_f64`, in the
    /// tool that read it (its call an unexpected error).
    #[test]
    fn a_retry_after_too_long_for_a_duration_is_the_longest() {
        assert_eq!(retry_after_secs("1e300"), Some(Duration::MAX));
        assert_eq!(
            retry_after_secs("18446744073709551616"),
            Some(Duration::MAX)
        );
        assert_eq!(retry_after_secs(" 1.5 "), Some(Duration::from_millis(1500)));
        for bad in ["-1", "NaN", "inf", "Wed, 21 Oct 2015 07:28:00 GMT", ""] {
            assert_eq!(retry_after_secs(bad), None, "{bad}");
        }
    }

    proptest::proptest! {
        /// Any header value parses or is refused, without a panic; a
        /// number of seconds is read as that many (or the longest wait).
        #[test]
        fn any_retry_after_is_read_without_a_panic(
            text in "\\PC{0,24}",
            secs in 0f64..1e40,
        ) {
            let _ = retry_after_secs(&text);
            let read = retry_after_secs(&secs.to_string()).expect("a number of seconds");
            let want = Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX);
            proptest::prop_assert_eq!(read, want);
        }
    }

    #[test]
    fn http_statuses() {
        assert_eq!(http_status(401, None), ErrorKind::Authentication);
        assert_eq!(http_status(403, None), ErrorKind::Permission);
        assert_eq!(
            http_status(429, retry_after_secs("2")),
            ErrorKind::RateLimited {
                retry_after: Some(Duration::from_secs(2))
            }
        );
        assert_eq!(http_status(500, None), ErrorKind::Internal);
    }

    #[test]
    fn dispositions() {
        assert!(ErrorKind::Timeout.disposition().retryable);
        assert!(ErrorKind::Authentication.disposition().fatal);
        assert!(ErrorKind::Permission.disposition().fatal);
        assert!(!ErrorKind::Internal.disposition().show_details);
        assert!(!ErrorKind::InvalidArguments.disposition().retryable);
    }
}
