//! The endurance settings (issue 14): defaults, environment, validation.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use super::*;

fn env(pairs: &[(&str, &str)]) -> RawConfig {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RawConfig::from_env(map.into_iter())
}

#[test]
fn endurance_defaults() {
    let config = RawConfig::default().validate().unwrap();
    assert_eq!(config.record_drain, Duration::from_secs(5));
    assert_eq!(config.client_head_timeout, Duration::from_secs(30));
    assert_eq!(config.client_body_timeout, Duration::from_secs(60));
    assert_eq!(config.max_client_connections, 10_000);
    assert_eq!(config.max_buffered_request_bytes, 1 << 30);
    assert_eq!(config.max_buffered_response_bytes, 1 << 30);
    assert_eq!(config.retention, Some(Duration::from_secs(30 * 86_400)));
    assert_eq!(config.ws_close_wait, Duration::from_secs(2));
    assert_eq!(config.ws_forced_close_wait, Duration::from_millis(500));
}

#[test]
fn a_websockets_forced_close_wait_is_set_and_bounded() {
    let wait = |v: &str| env(&[("TOOLWARDEN_WS_FORCED_CLOSE_WAIT_MS", v)]).validate();
    assert_eq!(
        wait("1").unwrap().ws_forced_close_wait,
        Duration::from_millis(1)
    );
    assert_eq!(
        wait("4000").unwrap().ws_forced_close_wait,
        Duration::from_secs(4)
    );
    let err = wait("4001").unwrap_err().to_string();
    assert!(
        err.contains("ws_forced_close_wait_ms 4001: at most 4000"),
        "{err}"
    );
}

#[test]
fn a_websockets_close_wait_is_set_and_bounded() {
    let wait = |v: &str| env(&[("TOOLWARDEN_WS_CLOSE_WAIT_MS", v)]).validate();
    assert_eq!(
        wait("150").unwrap().ws_close_wait,
        Duration::from_millis(150)
    );
    assert_eq!(
        wait("60000").unwrap().ws_close_wait,
        Duration::from_secs(60)
    );
    let err = wait("60001").unwrap_err().to_string();
    assert!(
        err.contains("ws_close_wait_ms 60001: at most 60000"),
        "{err}"
    );
}

#[test]
fn retention_is_days_zero_keeps_everything_and_a_century_is_the_most() {
    let days = |v: &str| env(&[("TOOLWARDEN_RETENTION_DAYS", v)]).validate();
    assert_eq!(
        days("7").unwrap().retention,
        Some(Duration::from_secs(7 * 86_400))
    );
    assert_eq!(days("0").unwrap().retention, None);
    let text = days("36501").unwrap_err().to_string();
    assert!(
        text.contains("retention_days 36501: at most 36500"),
        "{text}"
    );
    let file = RawConfig::from_toml_str("retention_days = 90").unwrap();
    assert_eq!(
        file.validate().unwrap().retention,
        Some(Duration::from_secs(90 * 86_400))
    );
}

#[test]
fn the_jsonl_log_is_rotated_at_256_mib_with_nine_kept_by_default() {
    assert_eq!(RawConfig::default().validate().unwrap().jsonl, None);
    let log = |pairs: &[(&str, &str)]| {
        let mut all = vec![("TOOLWARDEN_JSONL", "/var/log/tw/events.jsonl")];
        all.extend_from_slice(pairs);
        env(&all).validate()
    };
    let default = log(&[]).unwrap().jsonl.unwrap();
    assert_eq!(default.path, PathBuf::from("/var/log/tw/events.jsonl"));
    assert_eq!((default.rotate_bytes, default.keep), (256 << 20, 9));
    let set = log(&[
        ("TOOLWARDEN_JSONL_ROTATE_MIB", "1"),
        ("TOOLWARDEN_JSONL_KEEP", "0"),
    ])
    .unwrap()
    .jsonl
    .unwrap();
    assert_eq!((set.rotate_bytes, set.keep), (1 << 20, 0));
    let never = log(&[("TOOLWARDEN_JSONL_ROTATE_MIB", "0")]).unwrap();
    assert_eq!(never.jsonl.unwrap().rotate_bytes, 0);
    let text = log(&[
        ("TOOLWARDEN_JSONL_ROTATE_MIB", "1048577"),
        ("TOOLWARDEN_JSONL_KEEP", "1001"),
    ])
    .unwrap_err()
    .to_string();
    assert!(
        text.contains("jsonl_rotate_mib 1048577: at most 1048576"),
        "{text}"
    );
    assert!(text.contains("jsonl_keep 1001: at most 1000"), "{text}");
    let file = RawConfig::from_toml_str("jsonl = \"e.jsonl\"\njsonl_keep = 2").unwrap();
    assert_eq!(file.validate().unwrap().jsonl.unwrap().keep, 2);
}

#[test]
fn endurance_settings_come_from_the_environment() {
    let config = env(&[
        ("TOOLWARDEN_RECORD_DRAIN_MS", "250"),
        ("TOOLWARDEN_CLIENT_HEAD_TIMEOUT_MS", "1500"),
        ("TOOLWARDEN_CLIENT_BODY_TIMEOUT_MS", "2500"),
        ("TOOLWARDEN_MAX_CLIENT_CONNECTIONS", "64"),
    ])
    .validate()
    .unwrap();
    assert_eq!(config.record_drain, Duration::from_millis(250));
    assert_eq!(config.client_head_timeout, Duration::from_millis(1500));
    assert_eq!(config.client_body_timeout, Duration::from_millis(2500));
    assert_eq!(config.max_client_connections, 64);
}

/// The bodies held at once come from the environment; a bound below
/// `max_request_bytes` would refuse every body of that size: refused.
#[test]
fn the_buffered_bounds_are_set_and_not_below_the_largest_body_message_or_copy() {
    let config = env(&[
        ("TOOLWARDEN_MAX_REQUEST_BYTES", "2048"),
        ("TOOLWARDEN_WS_MAX_MESSAGE_BYTES", "2048"),
        ("TOOLWARDEN_MAX_BUFFERED_REQUEST_BYTES", "2048"),
    ])
    .validate()
    .unwrap();
    assert_eq!(config.max_buffered_request_bytes, 2048);
    let err = env(&[
        ("TOOLWARDEN_MAX_REQUEST_BYTES", "2048"),
        ("TOOLWARDEN_MAX_BUFFERED_REQUEST_BYTES", "1024"),
    ])
    .validate()
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("max_buffered_request_bytes 1024: at least max_request_bytes (2048)"),
        "{err}"
    );
    let err = env(&[
        ("TOOLWARDEN_MAX_REQUEST_BYTES", "2048"),
        ("TOOLWARDEN_WS_MAX_MESSAGE_BYTES", "4096"),
        ("TOOLWARDEN_MAX_BUFFERED_REQUEST_BYTES", "3072"),
    ])
    .validate()
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("max_buffered_request_bytes 3072: at least ws_max_message_bytes (4096)"),
        "{err}"
    );
    let err = env(&[
        ("TOOLWARDEN_RESPONSE_PARSE_LIMIT", "4096"),
        ("TOOLWARDEN_WS_MAX_MESSAGE_BYTES", "2048"),
        ("TOOLWARDEN_MAX_BUFFERED_RESPONSE_BYTES", "2048"),
    ])
    .validate()
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("max_buffered_response_bytes 2048: at least response_parse_limit (4096)"),
        "{err}"
    );
    let err = env(&[
        ("TOOLWARDEN_RESPONSE_PARSE_LIMIT", "2048"),
        ("TOOLWARDEN_WS_MAX_MESSAGE_BYTES", "4096"),
        ("TOOLWARDEN_MAX_BUFFERED_REQUEST_BYTES", "4096"),
        ("TOOLWARDEN_MAX_BUFFERED_RESPONSE_BYTES", "3072"),
    ])
    .validate()
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("max_buffered_response_bytes 3072: at least ws_max_message_bytes (4096)"),
        "{err}"
    );
    let config = env(&[
        ("TOOLWARDEN_RESPONSE_PARSE_LIMIT", "4096"),
        ("TOOLWARDEN_WS_MAX_MESSAGE_BYTES", "4096"),
        ("TOOLWARDEN_MAX_BUFFERED_RESPONSE_BYTES", "4096"),
    ])
    .validate()
    .unwrap();
    assert_eq!(config.max_buffered_response_bytes, 4096);
}

#[test]
fn zero_timeouts_and_caps_are_refused_by_name() {
    let err = env(&[
        ("TOOLWARDEN_CLIENT_HEAD_TIMEOUT_MS", "0"),
        ("TOOLWARDEN_CLIENT_BODY_TIMEOUT_MS", "0"),
        ("TOOLWARDEN_MAX_CLIENT_CONNECTIONS", "0"),
        ("TOOLWARDEN_MAX_REQUEST_BYTES", "0"),
        ("TOOLWARDEN_RESPONSE_PARSE_LIMIT", "0"),
        ("TOOLWARDEN_WS_CLOSE_WAIT_MS", "0"),
        ("TOOLWARDEN_WS_FORCED_CLOSE_WAIT_MS", "0"),
    ])
    .validate()
    .unwrap_err();
    let text = err.to_string();
    // A body limit of 0 answered every request 413, a parse limit of 0
    // counted every response `too_large`: both were accepted.
    for key in [
        "client_head_timeout_ms",
        "client_body_timeout_ms",
        "max_client_connections",
        "max_request_bytes",
        "response_parse_limit",
        "ws_close_wait_ms",
        "ws_forced_close_wait_ms",
    ] {
        assert!(
            text.contains(&format!("{key} must be greater than 0")),
            "{text}"
        );
    }
}

#[test]
fn memory_bounds_have_defaults_and_come_from_the_environment() {
    let defaults = RawConfig::default().validate().unwrap().memory;
    assert_eq!(defaults, MemoryBounds::default());
    assert_eq!(defaults.database_cache_kib, 2048);
    assert_eq!(defaults.record_flush, Duration::from_millis(200));
    assert_eq!(defaults.record_batch_max, 4096);
    assert_eq!(defaults.database_writer_idle, Duration::from_secs(5));
    assert_eq!(defaults.database_write_timeout, Duration::from_secs(15));
    let config = env(&[
        ("TOOLWARDEN_DATABASE_CACHE_KIB", "512"),
        ("TOOLWARDEN_DATABASE_MAX_CONNECTIONS", "2"),
        ("TOOLWARDEN_RECORD_QUEUE_CAPACITY", "4096"),
        ("TOOLWARDEN_RECORD_BATCH_MAX", "128"),
        ("TOOLWARDEN_RECORD_FLUSH_MS", "20"),
        ("TOOLWARDEN_RECENT_CALLS_CAPACITY", "1000"),
        ("TOOLWARDEN_RECENT_RESULTS_CAPACITY", "2000"),
        ("TOOLWARDEN_DATABASE_WRITER_IDLE_MS", "750"),
        ("TOOLWARDEN_DATABASE_WRITE_TIMEOUT_MS", "2500"),
        ("TOOLWARDEN_UPSTREAM_MAX_IDLE", "16"),
    ])
    .validate()
    .unwrap();
    let m = config.memory;
    assert_eq!(m.upstream_max_idle, 16);
    assert_eq!(m.database_writer_idle, Duration::from_millis(750));
    assert_eq!(m.database_write_timeout, Duration::from_millis(2500));
    assert_eq!((m.database_cache_kib, m.database_max_connections), (512, 2));
    assert_eq!((m.record_queue_capacity, m.record_batch_max), (4096, 128));
    assert_eq!(m.record_flush, Duration::from_millis(20));
    assert_eq!((m.recent_calls, m.recent_results), (1000, 2000));
    // The environment wins over the file, as for any key.
    let file = RawConfig::from_toml_str("record_queue_capacity = 100").unwrap();
    let merged = file.merge(env(&[("TOOLWARDEN_RECORD_QUEUE_CAPACITY", "200")]));
    assert_eq!(merged.validate().unwrap().memory.record_queue_capacity, 200);
}

#[test]
fn zero_or_huge_memory_bounds_are_refused_by_name() {
    let err = env(&[
        ("TOOLWARDEN_RECORD_QUEUE_CAPACITY", "0"),
        ("TOOLWARDEN_RECENT_CALLS_CAPACITY", "0"),
        ("TOOLWARDEN_UPSTREAM_MAX_IDLE", "0"),
        ("TOOLWARDEN_DATABASE_CACHE_KIB", "99999999999"),
    ])
    .validate()
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("record_queue_capacity must be greater than 0"),
        "{err}"
    );
    assert!(
        err.contains("recent_calls_capacity must be greater than 0"),
        "{err}"
    );
    assert!(
        err.contains("upstream_max_idle must be greater than 0"),
        "{err}"
    );
    assert!(
        err.contains("database_cache_kib 99999999999: at most"),
        "{err}"
    );
}
