//! The endurance settings (issue 14): defaults, environment, validation.

use std::collections::HashMap;
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

#[test]
fn zero_timeouts_and_caps_are_refused_by_name() {
    let err = env(&[
        ("TOOLWARDEN_CLIENT_HEAD_TIMEOUT_MS", "0"),
        ("TOOLWARDEN_CLIENT_BODY_TIMEOUT_MS", "0"),
        ("TOOLWARDEN_MAX_CLIENT_CONNECTIONS", "0"),
    ])
    .validate()
    .unwrap_err();
    let text = err.to_string();
    for key in [
        "client_head_timeout_ms",
        "client_body_timeout_ms",
        "max_client_connections",
    ] {
        assert!(
            text.contains(&format!("{key} must be greater than 0")),
            "{text}"
        );
    }
}
