use std::collections::HashMap;
use std::path::Path;

use super::validate::default_workers;
use super::*;

fn env(pairs: &[(&str, &str)]) -> RawConfig {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RawConfig::from_env(map.into_iter())
}

#[test]
fn defaults_need_no_configuration() {
    let config = RawConfig::default().validate().unwrap();
    assert_eq!(config.listen, "127.0.0.1:8080".parse().unwrap());
    assert_eq!(
        config.upstreams.openai.to_string(),
        "https://api.openai.com"
    );
    assert_eq!(
        config.upstreams.anthropic.to_string(),
        "https://api.anthropic.com"
    );
    assert_eq!(
        config.upstreams.gemini.to_string(),
        "https://generativelanguage.googleapis.com"
    );
    assert_eq!(config.repair, RepairMode::Fix);
    assert_eq!(config.database, None);
    assert!(config.first_byte_timeout.is_some());
    assert!(config.is_loopback());
}

#[test]
fn flags_beat_env_beat_file() {
    let file = RawConfig::from_toml_str(
        "listen = \"127.0.0.1:1000\"\nrepair = \"off\"\ndatabase = \"file.db\"\n",
    )
    .unwrap();
    let from_env = env(&[
        ("TOOLWARDEN_REPAIR", "report"),
        ("TOOLWARDEN_DATABASE", "env.db"),
        ("PATH", "/usr/bin"),
    ]);
    let flags = RawConfig {
        database: Some("flag.db".into()),
        ..RawConfig::default()
    };
    let config = file.merge(from_env).merge(flags).validate().unwrap();
    assert_eq!(config.listen.port(), 1000);
    assert_eq!(config.repair, RepairMode::Report);
    assert_eq!(config.database.as_deref(), Some("flag.db"));
}

#[test]
fn env_reads_every_setting() {
    let raw = env(&[
        ("TOOLWARDEN_LISTEN", "9999"),
        ("TOOLWARDEN_JSONL", "/tmp/x.jsonl"),
        ("TOOLWARDEN_OPENAI_UPSTREAM", "http://127.0.0.1:1/prefix/"),
        ("TOOLWARDEN_CONNECT_TIMEOUT_MS", "250"),
        ("TOOLWARDEN_FIRST_BYTE_TIMEOUT_MS", "0"),
        ("TOOLWARDEN_ADMIN_TOKEN", "s3cret"),
        ("TOOLWARDEN_DETECTOR_EXTRA_PATTERNS", "[\"a,b\", \"c\"]"),
        ("TOOLWARDEN_DETECTOR_DISABLE", ""),
    ]);
    let config = raw.validate().unwrap();
    assert_eq!(config.listen, "127.0.0.1:9999".parse().unwrap());
    let jsonl = config.jsonl.as_ref().map(|log| log.path.as_path());
    assert_eq!(jsonl, Some(Path::new("/tmp/x.jsonl")));
    assert_eq!(
        config.upstreams.openai.to_string(),
        "http://127.0.0.1:1/prefix"
    );
    assert_eq!(config.connect_timeout, Duration::from_millis(250));
    assert_eq!(config.first_byte_timeout, None);
    assert_eq!(config.admin_token.as_deref(), Some("s3cret"));
    assert_eq!(config.detector_extra_patterns, vec!["a,b", "c"]);
    assert!(config.detector_disable.is_empty());
    assert!(config.detector().is_ok());
}

/// An empty variable is unset, as shells and docker-compose write it
/// (`TOOLWARDEN_JSONL=`, `${TOOLWARDEN_JSONL:-}`): every setting's, and
/// the alert ones. `TOOLWARDEN_JSONL=` opened the path "",
/// `TOOLWARDEN_WORKERS=` stopped the start, `TOOLWARDEN_ALERT_WEBHOOK=`
/// hid the file's webhooks.
#[test]
fn an_empty_variable_is_unset() {
    let alert_variables = super::alerts::ALERT_VARIABLES
        .iter()
        .map(|key| format!("TOOLWARDEN_{}", key.to_ascii_uppercase()));
    let every: Vec<String> = SETTINGS
        .iter()
        .map(Setting::env_var)
        .chain(alert_variables)
        .collect();
    for name in &every {
        for empty in ["", " ", "\t"] {
            let raw = env(&[(name, empty)]);
            assert_eq!(raw, RawConfig::default(), "{name}={empty:?}");
        }
    }
    // All at once, over a file: the file's values stay.
    let file = RawConfig::from_toml_str(
        "jsonl = \"/var/log/tw.jsonl\"\nupstream_ca = \"/etc/ca.pem\"\nworkers = 3\n\
         [alerts]\nwebhooks = [\"https://hooks.example/x\"]\n",
    )
    .unwrap();
    let all: Vec<(&str, &str)> = every.iter().map(|n| (n.as_str(), "")).collect();
    let merged = file.clone().merge(env(&all));
    assert_eq!(merged, file);
    let config = env(&all).validate().unwrap();
    assert!(config.jsonl.is_none());
    assert!(config.upstream_roots.is_empty());
    assert!(config.alerts.webhooks.is_empty());
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
}

/// `lend_token` comes from the environment or the file, never a flag, and
/// a short one is refused at start.
#[test]
fn a_lend_token_is_read_and_checked_once() {
    let config = env(&[("TOOLWARDEN_LEND_TOKEN", "lend-0123456789abcdef")])
        .validate()
        .unwrap();
    assert!(config.cloud.lend_token.is_some());
    assert!(!format!("{config:?}").contains("0123456789"));
    let config = env(&[]).validate().unwrap();
    assert!(config.cloud.lend_token.is_none());
    let text = env(&[("TOOLWARDEN_LEND_TOKEN", "short")])
        .validate()
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("lend_token: at least 16 characters"),
        "{text}"
    );
    let lend = SETTINGS.iter().find(|s| s.key == "lend_token").unwrap();
    assert!(!lend.has_flag());
}

/// A comma that would have separated a list (warned about), not one
/// inside a regex's braces, brackets or groups.
#[test]
fn a_list_comma_is_told_from_a_regex_comma() {
    use super::settings::has_list_comma;
    assert!(has_list_comma("timeout,quota exceeded"));
    assert!(has_list_comma("[Ee]rror, again"));
    for regex in [r"^quota: \d{1,3} left", "[,;]", "(a|b,c)", r"a\,b", ""] {
        assert!(!has_list_comma(regex), "{regex}");
    }
}

/// A pattern's commas are its own; a JSON array gives several.
#[test]
fn extra_patterns_keep_their_commas() {
    for (text, want) in [
        (r"^quota: \d{1,3} left", vec![r"^quota: \d{1,3} left"]),
        ("[Ee]rror, again", vec!["[Ee]rror, again"]),
        (r#"["a,b", "c"]"#, vec!["a,b", "c"]),
        ("", vec![]),
    ] {
        let config = env(&[("TOOLWARDEN_DETECTOR_EXTRA_PATTERNS", text)])
            .validate()
            .unwrap();
        assert_eq!(config.detector_extra_patterns, want, "{text}");
        let flag = RawConfig::from_flags([("detector_extra_patterns", text)].into_iter());
        assert_eq!(flag.validate().unwrap().detector_extra_patterns, want);
    }
}

#[test]
fn bad_values_are_all_reported_by_name() {
    let raw = env(&[
        ("TOOLWARDEN_CONNECT_TIMEOUT_MS", "soon"),
        ("TOOLWARDEN_REPAIR", "maybe"),
        ("TOOLWARDEN_LISTEN", "nowhere"),
        ("TOOLWARDEN_GEMINI_UPSTREAM", "ftp://x"),
        ("TOOLWARDEN_DETECTOR_DISABLE", "no_such_rule"),
    ]);
    let err = raw.validate().unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    let text = err.to_string();
    for needle in [
        "TOOLWARDEN_CONNECT_TIMEOUT_MS",
        "repair",
        "listen",
        "gemini_upstream",
        "no_such_rule",
    ] {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
}

#[test]
fn a_refused_upstream_url_is_named_without_its_credentials() {
    let raw = env(&[
        (
            "TOOLWARDEN_OPENAI_UPSTREAM",
            "https://user:hunter2@api.example",
        ),
        (
            "TOOLWARDEN_AZURE_UPSTREAM",
            "https://res.openai.azure.com/?api-key=AIzaSECRET",
        ),
        ("TOOLWARDEN_VERTEX_UPSTREAM", "vertex?key=AIzaSECRET"),
    ]);
    let text = raw.validate().unwrap_err().to_string();
    for needle in [
        "openai_upstream (https://api.example)",
        "azure_upstream (https://res.openai.azure.com)",
        "vertex_upstream",
    ] {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
    for secret in ["hunter2", "AIzaSECRET"] {
        assert!(!text.contains(secret), "{secret} shown in {text}");
    }
}

#[test]
fn unknown_toml_keys_are_rejected() {
    let err = RawConfig::from_toml_str("lisen = \"x\"").unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::Toml);
    assert!(err.to_string().contains("lisen"), "{err}");
}

#[test]
fn missing_file_names_the_path() {
    let err = RawConfig::from_toml_file("/nonexistent/toolwarden.toml").unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::Io);
    assert!(err.to_string().contains("/nonexistent/toolwarden.toml"));
}

#[test]
fn database_none_disables_recording() {
    let raw = RawConfig {
        database: Some("none".into()),
        ..RawConfig::default()
    };
    assert_eq!(raw.validate().unwrap().database, None);
}

/// An empty `database` in the file (a template's empty variable) is
/// refused, naming the way to turn recording off; it used to turn
/// recording off without a word.
#[test]
fn an_empty_database_in_the_file_is_refused() {
    for text in ["database = \"\"", "database = \"  \""] {
        let raw = RawConfig::from_toml_str(text).unwrap();
        let err = raw.validate().unwrap_err().to_string();
        assert!(
            err.contains("database is empty") && err.contains("\"none\""),
            "{err}"
        );
    }
    let raw = RawConfig::from_toml_str("database = \"none\"").unwrap();
    assert_eq!(raw.validate().unwrap().database, None);
}

#[test]
fn for_tests_points_everything_at_one_upstream() {
    let config = Config::for_tests("http://127.0.0.1:4567");
    assert_eq!(config.listen.port(), 0);
    for u in [
        &config.upstreams.openai,
        &config.upstreams.anthropic,
        &config.upstreams.gemini,
    ] {
        assert_eq!(u.to_string(), "http://127.0.0.1:4567");
    }
    assert_eq!(config.repair, RepairMode::Fix);
}

#[test]
fn workers_default_to_the_cpus_and_are_bounded() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // No database: every CPU proxies.
    assert_eq!(RawConfig::default().validate().unwrap().workers, cpus);
    assert_eq!(
        env(&[("TOOLWARDEN_WORKERS", "0")])
            .validate()
            .unwrap()
            .workers,
        cpus
    );
    // Recording to a database: one CPU is left to the recorder.
    let recording = env(&[("TOOLWARDEN_DATABASE", "sqlite://t.db")]);
    assert_eq!(
        recording.validate().unwrap().workers,
        cpus.saturating_sub(1).max(1)
    );
    let none = env(&[("TOOLWARDEN_DATABASE", "none")]);
    assert_eq!(none.validate().unwrap().workers, cpus);
    for (cpus, recording, workers) in [
        (1, true, 1),
        (2, true, 1),
        (8, true, 7),
        (1, false, 1),
        (2, false, 2),
        (8, false, 8),
    ] {
        assert_eq!(
            default_workers(cpus, recording),
            workers,
            "{cpus} {recording}"
        );
    }
    let explicit = env(&[
        ("TOOLWARDEN_DATABASE", "sqlite://t.db"),
        ("TOOLWARDEN_WORKERS", "2"),
    ]);
    assert_eq!(explicit.validate().unwrap().workers, 2);
    assert_eq!(
        env(&[("TOOLWARDEN_WORKERS", "3")])
            .validate()
            .unwrap()
            .workers,
        3
    );
    let toml = RawConfig::from_toml_str("workers = 2\n").unwrap();
    assert_eq!(toml.validate().unwrap().workers, 2);
    let err = env(&[("TOOLWARDEN_WORKERS", "100000")])
        .validate()
        .unwrap_err();
    assert!(err.to_string().contains("workers 100000"), "{err}");
    let err = env(&[("TOOLWARDEN_WORKERS", "many")])
        .validate()
        .unwrap_err();
    assert!(err.to_string().contains("TOOLWARDEN_WORKERS"), "{err}");
}

#[test]
fn upstream_ca_is_read_once_and_must_hold_certificates() {
    let ca = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tls/ca.pem");
    let config = env(&[("TOOLWARDEN_UPSTREAM_CA", ca)]).validate().unwrap();
    assert_eq!(config.upstream_roots.len(), 1);
    assert!(
        RawConfig::default()
            .validate()
            .unwrap()
            .upstream_roots
            .is_empty()
    );
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    for path in [empty, dir.path().join("missing.pem")] {
        let err = env(&[("TOOLWARDEN_UPSTREAM_CA", path.to_str().unwrap())])
            .validate()
            .unwrap_err();
        assert!(err.to_string().contains("upstream_ca"), "{err}");
    }
}

/// HTTPS needs both files: one alone stops the start naming what is
/// missing; both are read once, into the listener's TLS config; a config
/// file's relative paths are read from its folder.
#[test]
fn tls_needs_its_certificate_and_key_together() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tls");
    let (cert, key) = (format!("{dir}/server.pem"), format!("{dir}/server.key"));
    let config = env(&[("TOOLWARDEN_TLS_CERT", &cert), ("TOOLWARDEN_TLS_KEY", &key)])
        .validate()
        .unwrap();
    let tls = config.tls.expect("HTTPS");
    assert_eq!(tls.cert(), std::path::Path::new(&cert));
    assert!(RawConfig::default().validate().unwrap().tls.is_none());
    for (vars, says) in [
        (
            [("TOOLWARDEN_TLS_CERT", cert.as_str())],
            "tls_cert is set without tls_key",
        ),
        (
            [("TOOLWARDEN_TLS_KEY", key.as_str())],
            "tls_key is set without tls_cert",
        ),
    ] {
        let err = env(&vars).validate().unwrap_err();
        assert!(err.to_string().contains(says), "{err}");
    }
    let err = env(&[
        ("TOOLWARDEN_TLS_CERT", &cert),
        ("TOOLWARDEN_TLS_KEY", &format!("{dir}/missing.key")),
    ])
    .validate()
    .unwrap_err();
    assert!(err.to_string().contains("missing.key"), "{err}");
    let file = tempfile::tempdir().unwrap();
    for name in ["server.pem", "server.key"] {
        std::fs::copy(format!("{dir}/{name}"), file.path().join(name)).unwrap();
    }
    let toml = file.path().join("toolwarden.toml");
    std::fs::write(
        &toml,
        "tls_cert = \"server.pem\"\ntls_key = \"server.key\"\n",
    )
    .unwrap();
    let raw = RawConfig::from_toml_file(&toml).unwrap();
    assert!(raw.validate().unwrap().tls.is_some());
}

// --- the settings' one definition ---

#[test]
fn every_setting_reads_from_its_variable_and_its_flag() {
    for setting in SETTINGS {
        let value = match setting.kind {
            SettingKind::Number => "7",
            SettingKind::List => "a,b",
            SettingKind::Patterns => "[\"a\", \"b\"]",
            _ => "x",
        };
        let from_env = RawConfig::from_env([(setting.env_var(), value.to_string())].into_iter());
        let from_flag = RawConfig::from_flags([(setting.key, value)].into_iter());
        assert_ne!(from_env, RawConfig::default(), "{}", setting.env_var());
        assert_eq!(from_env, from_flag, "{}", setting.key);
        // The same key in TOML sets the same field.
        let toml = match setting.kind {
            SettingKind::Number => format!("{} = 7", setting.key),
            SettingKind::List | SettingKind::Patterns => {
                format!("{} = [\"a\", \"b\"]", setting.key)
            }
            _ => format!("{} = \"x\"", setting.key),
        };
        assert_eq!(RawConfig::from_toml_str(&toml).unwrap(), from_env, "{toml}");
    }
}

#[test]
fn a_bad_number_names_its_flag() {
    let err = RawConfig::from_flags([("workers", "many")].into_iter())
        .validate()
        .unwrap_err();
    assert!(err.to_string().contains("--workers=\"many\""), "{err}");
}

/// A bad value in a lower layer does not stop the gateway when a higher
/// one sets the same key; a bad value in the higher layer is reported,
/// never replaced by the lower layer's good one.
#[test]
fn a_bad_value_a_higher_layer_overrides_is_not_an_error() {
    let bad_env = || env(&[("TOOLWARDEN_WORKERS", "many"), ("TOOLWARDEN_REPAIR", "off")]);
    let flags = RawConfig::from_flags([("workers", "2")].into_iter());
    let config = bad_env().merge(flags).validate().unwrap();
    assert_eq!(config.workers, 2);
    assert_eq!(config.repair, RepairMode::Off);

    let err = bad_env().validate().unwrap_err();
    assert!(
        err.to_string().contains("TOOLWARDEN_WORKERS=\"many\""),
        "{err}"
    );

    let good_env = env(&[("TOOLWARDEN_WORKERS", "3")]);
    let bad_flag = RawConfig::from_flags([("workers", "lots")].into_iter());
    let err = good_env.merge(bad_flag).validate().unwrap_err();
    let err = err.to_string();
    assert!(err.contains("--workers=\"lots\""), "{err}");
    // The alert window's variable, overridden by its flag.
    let bad_window = || env(&[("TOOLWARDEN_ALERT_WINDOW_MS", "soon")]);
    assert!(bad_window().validate().is_err());
    let flag = RawConfig {
        alerts: Some(crate::config::alerts::RawAlerts {
            window_ms: Some(60_000),
            ..Default::default()
        }),
        ..RawConfig::default()
    };
    assert!(bad_window().merge(flag).validate().is_ok());
    // Bad in both: the flag's is the one reported.
    let both = bad_env().merge(RawConfig::from_flags([("workers", "lots")].into_iter()));
    let err = both.validate().unwrap_err().to_string();
    assert!(
        err.contains("--workers") && !err.contains("TOOLWARDEN_WORKERS"),
        "{err}"
    );
}

#[test]
fn documented_defaults_are_the_applied_ones() {
    for (key, value) in super::validate::NUMBER_DEFAULTS {
        let setting = SETTINGS.iter().find(|s| s.key == *key).unwrap();
        assert_eq!(setting.default, value.to_string(), "{key}");
    }
    let text = |key: &str| SETTINGS.iter().find(|s| s.key == key).unwrap().default;
    assert_eq!(text("listen"), DEFAULT_LISTEN);
    assert_eq!(text("openai_upstream"), DEFAULT_OPENAI_UPSTREAM);
    assert_eq!(text("anthropic_upstream"), DEFAULT_ANTHROPIC_UPSTREAM);
    assert_eq!(text("gemini_upstream"), DEFAULT_GEMINI_UPSTREAM);
    assert_eq!(text("chatgpt_upstream"), DEFAULT_CHATGPT_UPSTREAM);
    assert_eq!(text("repair"), RepairMode::default().as_str());
}

/// The README's settings table is [`Setting::markdown_table`]; on a
/// change, paste the printed table between the markers.
#[test]
fn readme_table_is_generated_from_the_settings() {
    let readme = include_str!("../../../../README.md");
    let begin = "<!-- settings: generated from crates/gateway/src/config/settings.rs -->\n";
    let end = "<!-- settings: end -->";
    let start = readme.find(begin).expect("README has the settings markers") + begin.len();
    let stop = readme[start..].find(end).expect("end marker") + start;
    let table = Setting::markdown_table();
    assert!(
        readme[start..stop] == table,
        "README.md's settings table is stale; replace it with:\n{table}"
    );
}

/// OpenTelemetry's standard variables set the collector when the
/// `TOOLWARDEN_` ones do not, and lose to them in either order of the
/// environment.
#[test]
fn toolwarden_otlp_variables_win_over_otel_ones() {
    let otel = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel:4318"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "a=otel"),
    ];
    let ours = [
        ("TOOLWARDEN_OTLP_ENDPOINT", "http://ours:4318"),
        ("TOOLWARDEN_OTLP_HEADERS", "a=ours"),
    ];
    let alone = env(&otel);
    assert_eq!(alone.otlp_endpoint.as_deref(), Some("http://otel:4318"));
    assert_eq!(alone.otlp_headers.as_deref(), Some("a=otel"));
    for order in [[otel, ours].concat(), [ours, otel].concat()] {
        let vars = order.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        let raw = RawConfig::from_env(vars);
        assert_eq!(raw.otlp_endpoint.as_deref(), Some("http://ours:4318"));
        assert_eq!(raw.otlp_headers.as_deref(), Some("a=ours"));
    }
}

/// `OTEL_TRACES_SAMPLER` and its argument reach the exporter's config; a
/// bad one stops the start naming the variable.
#[test]
fn otel_sampler_variables_choose_the_sampler() {
    use crate::{RootSampler, Sampler};
    let config = env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
        ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
        ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
    ])
    .validate()
    .unwrap();
    assert_eq!(
        config.otlp.unwrap().sampler,
        Sampler {
            parent_based: true,
            root: RootSampler::TraceIdRatio(0.25)
        }
    );
    let e = env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
        ("OTEL_TRACES_SAMPLER", "xray"),
    ])
    .validate()
    .unwrap_err();
    assert!(
        e.to_string().contains("OTEL_TRACES_SAMPLER \"xray\""),
        "{e}"
    );
}

/// Relative paths in a config file are read from the file's folder;
/// absolute ones, `none` and PostgreSQL URLs are left as they are.
#[test]
fn a_config_files_relative_paths_are_read_from_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("toolwarden.toml");
    std::fs::write(
        &file,
        "database = \"sqlite://data/tw.db?mode=rwc\"\njsonl = \"events.jsonl\"\nupstream_ca = \"/etc/ca.pem\"\n",
    )
    .unwrap();
    let raw = RawConfig::from_toml_file(&file).unwrap();
    let want = format!("sqlite://{}/data/tw.db?mode=rwc", dir.path().display());
    assert_eq!(raw.database.as_deref(), Some(want.as_str()));
    assert_eq!(raw.jsonl, Some(dir.path().join("events.jsonl")));
    assert_eq!(raw.upstream_ca, Some("/etc/ca.pem".into()));
    for kept in ["none", "postgres://u@h/db", "sqlite:///abs/tw.db"] {
        std::fs::write(&file, format!("database = \"{kept}\"\n")).unwrap();
        let raw = RawConfig::from_toml_file(&file).unwrap();
        assert_eq!(raw.database.as_deref(), Some(kept));
    }
    std::fs::write(&file, "database = \"plain.db\"\n").unwrap();
    let raw = RawConfig::from_toml_file(&file).unwrap();
    let want = dir.path().join("plain.db").display().to_string();
    assert_eq!(raw.database.as_deref(), Some(want.as_str()));
}

/// The signal's own variables win over the general ones, as the
/// specification says; the traces endpoint is the URL itself (no
/// `/v1/traces` appended); a `TOOLWARDEN_` or flag endpoint is a base again.
#[test]
fn otel_traces_variables_win_and_name_the_url_itself() {
    use crate::{EndpointKind, OtlpConfig, OtlpProtocol};
    let config = env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://general:4318"),
        (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://traces:4318/custom",
        ),
        ("OTEL_EXPORTER_OTLP_HEADERS", "a=general"),
        ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "a=traces"),
    ])
    .validate()
    .unwrap();
    let otlp = config.otlp.expect("otlp");
    assert_eq!(otlp.traces_url, "http://traces:4318/custom");
    assert_eq!(otlp.headers[0].1, "traces");
    assert_eq!(otlp.protocol, OtlpProtocol::HttpProtobuf);
    let flags = RawConfig::from_flags([("otlp_endpoint", "http://flag:4318")].into_iter());
    let merged = env(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:4318/x")])
        .merge(flags)
        .validate()
        .unwrap();
    assert_eq!(
        merged.otlp.unwrap().traces_url,
        "http://flag:4318/v1/traces"
    );

    // Empty is unset (a `${VAR:-}` template): the general ones apply.
    let templated = env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://general:4318"),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", ""),
        ("OTEL_EXPORTER_OTLP_HEADERS", "a=general"),
        ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", " "),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", ""),
    ])
    .validate()
    .unwrap()
    .otlp
    .unwrap();
    assert_eq!(templated.traces_url, "http://general:4318/v1/traces");
    assert_eq!(templated.headers[0].1, "general");
    assert_eq!(templated.protocol, OtlpProtocol::HttpProtobuf);

    let grpc = env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"),
    ])
    .validate()
    .unwrap()
    .otlp
    .unwrap();
    assert_eq!(grpc.protocol, OtlpProtocol::Grpc);
    assert_eq!(
        grpc.traces_url,
        "http://collector:4317/opentelemetry.proto.collector.trace.v1.TraceService/Export"
    );
    let e = OtlpConfig::parse_with(
        OtlpProtocol::Grpc,
        "http://c:4317/v1/traces",
        EndpointKind::Base,
        None,
    )
    .unwrap_err();
    assert!(e.contains("without a path"), "{e}");
    for bad in ["http/json", "grpcs"] {
        let e = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", bad),
        ])
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("otlp protocol"), "{bad}: {e}");
    }
}

/// `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` name the exported
/// resource; a malformed list stops the start with the variable named.
#[test]
fn otel_resource_variables_name_the_exported_resource() {
    let config = env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel:4318"),
        ("OTEL_SERVICE_NAME", "gateway-eu"),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "deployment.environment.name=prod,service.name=ignored",
        ),
    ])
    .validate()
    .unwrap();
    let resource = config.otlp.expect("otlp").resource;
    assert_eq!(
        resource,
        [
            ("service.name".to_string(), "gateway-eu".to_string()),
            ("deployment.environment.name".into(), "prod".into()),
        ]
    );
    let e = env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel:4318"),
        ("OTEL_RESOURCE_ATTRIBUTES", "prod"),
    ])
    .validate()
    .unwrap_err();
    assert!(e.to_string().contains("OTEL_RESOURCE_ATTRIBUTES"), "{e}");
}

/// The dashboard's tool list: 200 unless set, from 1 to 10000; it was a
/// constant of the store's.
#[test]
fn dashboard_tool_rows_is_a_setting_validated_once() {
    let default = RawConfig::default().validate().unwrap();
    assert_eq!(default.dashboard_tool_rows, 200);
    let set = env(&[("TOOLWARDEN_DASHBOARD_TOOL_ROWS", "1000")])
        .validate()
        .unwrap();
    assert_eq!(set.dashboard_tool_rows, 1000);
    for (value, says) in [
        ("0", "dashboard_tool_rows must be greater than 0"),
        ("10001", "dashboard_tool_rows 10001: at most 10000"),
    ] {
        let err = env(&[("TOOLWARDEN_DASHBOARD_TOOL_ROWS", value)])
            .validate()
            .unwrap_err();
        assert!(err.to_string().contains(says), "{value}: {err}");
    }
}

/// A bad OTLP endpoint is named in the error (its password hidden), with
/// the scheme to add when it has none; a bad webhook is named by its
/// place, not its value (Slack's URL is a secret).
#[test]
fn bad_endpoints_are_named_where_that_is_safe() {
    let text = env(&[("TOOLWARDEN_OTLP_ENDPOINT", "localhost:4318")])
        .validate()
        .unwrap_err()
        .to_string();
    assert!(
        text.contains(
            "otlp endpoint \"localhost:4318\": missing scheme; expected http://localhost:4318"
        ),
        "{text}"
    );
    let text = env(&[("TOOLWARDEN_OTLP_ENDPOINT", "ftp://u:secret@h:4318")])
        .validate()
        .unwrap_err()
        .to_string();
    assert!(text.contains("ftp://u:***@h:4318"), "{text}");
    assert!(!text.contains("secret"), "{text}");

    let text = env(&[(
        "TOOLWARDEN_ALERT_WEBHOOK",
        "http://ok:9/hook,hooks.slack.com/services/T0/B0/SECRET",
    )])
    .validate()
    .unwrap_err()
    .to_string();
    assert!(text.contains("alert webhook #2 ("), "{text}");
    assert!(text.contains("expected http://… or https://…"), "{text}");
    assert!(!text.contains("SECRET"), "{text}");
}

/// `listen` in a config file takes a bare port as a number, as the flag
/// and the variable take it as text; other mistakes keep their line.
#[test]
fn a_config_file_listen_may_be_a_bare_port_number() {
    let config = RawConfig::from_toml_str("listen = 18105\n")
        .unwrap()
        .validate()
        .unwrap();
    assert_eq!(config.listen, "127.0.0.1:18105".parse().unwrap());
    let err = RawConfig::from_toml_str("listen = 18105\nworkers = \"two\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("workers"), "{err}");
    let err = RawConfig::from_toml_str("workers = \"two\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 1"), "{err}");
}

/// `resolve` from the environment (a comma list), a flag, or the file
/// (an array); a malformed entry is an error naming it, and so is a
/// `HOST:PORT` given twice. None given: every name is looked up.
#[test]
fn resolve_is_read_and_checked_once() {
    let at = |s: &str| s.parse::<SocketAddr>().unwrap();
    let config = env(&[(
        "TOOLWARDEN_RESOLVE",
        "us-central1-aiplatform.googleapis.com:443:127.0.0.1:8443, vpce.test:443:[fd00::1]",
    )])
    .validate()
    .unwrap();
    assert_eq!(
        config
            .resolve
            .get("us-central1-aiplatform.googleapis.com", 443),
        Some(at("127.0.0.1:8443"))
    );
    assert_eq!(
        config.resolve.get("vpce.test", 443),
        Some(at("[fd00::1]:443"))
    );
    let flags = RawConfig::from_flags([("resolve", "a.test:80:10.0.0.2")].into_iter());
    assert_eq!(
        flags.validate().unwrap().resolve.get("a.test", 80),
        Some(at("10.0.0.2:80"))
    );
    let file = RawConfig::from_toml_str("resolve = [\"b.test:443:10.0.0.3:9443\"]").unwrap();
    assert_eq!(
        file.validate().unwrap().resolve.get("b.test", 443),
        Some(at("10.0.0.3:9443"))
    );
    assert!(RawConfig::default().validate().unwrap().resolve.is_empty());
    for bad in [
        "a.test:443",
        "a.test:443:a.test",
        "a.test:x:10.0.0.1",
        "a.test:443:10.0.0.1,A.test:443:10.0.0.2",
    ] {
        let err = env(&[("TOOLWARDEN_RESOLVE", bad)])
            .validate()
            .expect_err(bad)
            .to_string();
        assert!(
            err.contains("resolve \"") && err.contains(bad.split(',').next_back().unwrap()),
            "{err}"
        );
    }
}

/// `allowed_hosts` from the environment (a comma list), a flag, or the
/// file (an array); a malformed entry is an error naming it; the guard
/// applies to a loopback listen address only.
#[test]
fn allowed_hosts_are_read_and_checked_once() {
    let config = env(&[("TOOLWARDEN_ALLOWED_HOSTS", "gw.example, .corp.example")])
        .validate()
        .unwrap();
    let guard = config.host_guard().expect("loopback listen: guarded");
    assert!(guard.admits("gw.example") && guard.admits("a.corp.example"));
    assert!(!guard.admits("attacker.example") && !guard.allows_any());
    let flags = RawConfig::from_flags([("allowed_hosts", "*")].into_iter());
    assert!(flags.validate().unwrap().allowed_hosts.allows_any());
    let file = RawConfig::from_toml_str("allowed_hosts = [\"[::2]\", \"10.0.0.7\"]").unwrap();
    assert!(file.validate().unwrap().allowed_hosts.admits("10.0.0.7"));
    // None given: loopback names only.
    assert!(
        RawConfig::default()
            .validate()
            .unwrap()
            .allowed_hosts
            .is_empty()
    );
    for bad in ["https://gw.example", "gw.example:8443", "*.example.com"] {
        let err = env(&[("TOOLWARDEN_ALLOWED_HOSTS", bad)])
            .validate()
            .expect_err(bad)
            .to_string();
        assert!(err.contains("allowed_hosts") && err.contains(bad), "{err}");
    }
    // Bound beyond loopback: no guard, whatever is allowed.
    // (and a warning that the setting restricts nothing there).
    let open = env(&[
        ("TOOLWARDEN_LISTEN", "0.0.0.0:8080"),
        ("TOOLWARDEN_ALLOWED_HOSTS", "gw.example"),
    ])
    .validate()
    .unwrap();
    assert!(open.host_guard().is_none());
    // An IPv4-mapped loopback address is loopback: guarded, no warning.
    let mapped = env(&[
        ("TOOLWARDEN_LISTEN", "[::ffff:127.0.0.1]:8080"),
        ("TOOLWARDEN_ALLOWED_HOSTS", "gw.example"),
    ])
    .validate()
    .unwrap();
    assert!(mapped.is_loopback() && mapped.host_guard().is_some());
    assert!(mapped.warnings.is_empty(), "{:?}", mapped.warnings);
    assert!(
        open.warnings
            .iter()
            .any(|w| w.contains("allowed_hosts is set") && !w.contains("  ")),
        "{:?}",
        open.warnings
    );
}

/// `OTEL_EXPORTER_OTLP_*` variables are set for every program of an
/// environment (an `http/json` Node exporter's, a `zstd` one's): a gateway
/// that exports nothing starts all the same, and one that exports refuses
/// them. The gateway's own settings are checked whether it exports or not.
#[test]
fn otel_transport_variables_matter_only_to_a_gateway_that_exports() {
    for (name, value) in [
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"),
        ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "zstd"),
    ] {
        let config = env(&[(name, value)]).validate();
        assert!(config.is_ok(), "{name}={value}: {config:?}");
        assert!(config.unwrap().otlp.is_none());
        let exporting = env(&[
            (name, value),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
        ]);
        assert!(
            exporting.validate().is_err(),
            "{name}={value} with an endpoint"
        );
        // The endpoint from a flag, the transport from the environment.
        let flag = RawConfig::from_flags([("otlp_endpoint", "http://c:4318")].into_iter());
        assert!(
            env(&[(name, value)]).merge(flag).validate().is_err(),
            "{name}"
        );
    }
    for (key, value) in [("otlp_protocol", "http/json"), ("otlp_compression", "zstd")] {
        let flag = RawConfig::from_flags([(key, value)].into_iter());
        let e = flag.validate().unwrap_err().to_string();
        assert!(e.contains(value), "--{key} {value}: {e}");
        let var = format!("TOOLWARDEN_{}", key.to_ascii_uppercase());
        assert!(env(&[(var.as_str(), value)]).validate().is_err(), "{var}");
        // A gateway's own setting over the standard variable, and under it.
        let standard = if key == "otlp_protocol" {
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        } else {
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd")
        };
        let good = if key == "otlp_protocol" {
            "grpc"
        } else {
            "gzip"
        };
        let own = RawConfig::from_flags([(key, good)].into_iter());
        assert!(env(&[standard]).merge(own).validate().is_ok(), "{key}");
        // The standard variable over the file, as before.
        let file = RawConfig::from_toml_str(&format!("{key} = {value:?}")).unwrap();
        let fixed = env(&[(standard.0, good)]);
        assert!(
            file.merge(fixed).validate().is_ok(),
            "{key}: the variable wins"
        );
    }
}

/// A `TOOLWARDEN_ALERT_` variable the gateway does not read (the flags'
/// `--alert-failure-rate` as a variable, a misspelt webhook) was ignored
/// without a word: it is warned about as any other unknown variable, with
/// the alert variable it is nearest to.
#[test]
fn unknown_alert_variables_are_warned_about() {
    let config = env(&[
        ("TOOLWARDEN_ALERT_FAILURE_RATE", "0.2"),
        ("TOOLWARDEN_ALERT_WEBHOK", "http://hook:9/x"),
        ("TOOLWARDEN_ALERT_WINDOW_MS", "60000"),
        ("TOOLWARDEN_ALERT_FORMAT", "slack"),
    ])
    .validate()
    .unwrap();
    let warned = |name: &str| config.warnings.iter().find(|w| w.starts_with(name));
    let rate = warned("TOOLWARDEN_ALERT_FAILURE_RATE ").expect("failure rate warned");
    assert!(rate.contains("is not a setting and is ignored"), "{rate}");
    assert!(rate.contains("[alerts]"), "{rate}");
    let hook = warned("TOOLWARDEN_ALERT_WEBHOK ").expect("typo warned");
    assert!(
        hook.contains("did you mean TOOLWARDEN_ALERT_WEBHOOK?"),
        "{hook}"
    );
    assert!(
        warned("TOOLWARDEN_ALERT_WINDOW_MS").is_none(),
        "{:?}",
        config.warnings
    );
    assert!(
        warned("TOOLWARDEN_ALERT_FORMAT").is_none(),
        "{:?}",
        config.warnings
    );
    assert_eq!(config.alerts.window.as_millis(), 60_000);
}

/// `GOOGLE_CLOUD_QUOTA_PROJECT` is read through the environment seam and
/// wins over the credentials file's `quota_project_id`.
#[test]
fn the_google_quota_project_comes_from_the_environment_then_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("adc.json");
    std::fs::write(
        &file,
        r#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r","quota_project_id":"file-project"}"#,
    )
    .unwrap();
    let path = file.to_string_lossy().into_owned();
    let project = |vars: &[(&str, &str)]| {
        let config = env(vars).validate().unwrap();
        let google = config.cloud.google.expect("Google credentials");
        google
            .quota_project()
            .map(|v| v.to_str().unwrap().to_string())
    };
    let adc = ("GOOGLE_APPLICATION_CREDENTIALS", path.as_str());
    assert_eq!(project(&[adc]).as_deref(), Some("file-project"));
    assert_eq!(
        project(&[adc, ("GOOGLE_CLOUD_QUOTA_PROJECT", "env-project")]).as_deref(),
        Some("env-project")
    );
}

/// On Cloud Run (and Google's other serverless platforms) there is no DMI
/// to say so: the platform's variables name the metadata server.
#[test]
fn on_cloud_run_google_credentials_come_from_the_metadata_server() {
    let home = std::env::temp_dir().join(format!("tw-no-gcloud-{}", std::process::id()));
    let home = home.to_string_lossy().into_owned();
    for var in [
        "K_SERVICE",
        "CLOUD_RUN_JOB",
        "FUNCTION_TARGET",
        "GAE_SERVICE",
    ] {
        let config = env(&[(var, "gateway"), ("HOME", &home)])
            .validate()
            .unwrap();
        let google = config.cloud.google.as_ref().expect(var);
        assert_eq!(
            google.describe(),
            "the metadata server metadata.google.internal",
            "{var}"
        );
    }
}

/// `GOOGLE_APPLICATION_CREDENTIALS` naming a file the gateway does not
/// use (an `external_account` whose token an executable makes, executables
/// not allowed) does not stop the gateway: it starts without Google
/// credentials and says so. An `external_account` file of a file, URL or
/// AWS source, or of an executable once allowed, gives credentials. A file
/// that cannot be read is still refused.
#[test]
fn an_unsupported_google_credentials_file_is_a_warning() {
    let dir = std::env::temp_dir().join(format!("tw-gac-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let external = |source: &str| {
        format!(
            r#"{{"type":"external_account","audience":"//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/gh","subject_token_type":"urn:ietf:params:oauth:token-type:jwt","token_url":"https://sts.googleapis.com/v1/token","credential_source":{source}}}"#
        )
    };
    let file = dir.join("external.json");
    std::fs::write(
        &file,
        external(r#"{"executable":{"command":"/usr/bin/oidc-token"}}"#),
    )
    .unwrap();
    let path = file.to_string_lossy().into_owned();
    let config = env(&[("GOOGLE_APPLICATION_CREDENTIALS", &path)])
        .validate()
        .unwrap();
    assert!(config.cloud.google.is_none());
    assert!(
        config.warnings.iter().any(|w| w.contains("executable")
            && w.contains("GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1")
            && w.contains("Vertex AI requests go with the client's own")),
        "{:?}",
        config.warnings
    );
    for (source, allow) in [
        (r#"{"file":"/tmp/token"}"#, ""),
        (
            r#"{"url":"http://127.0.0.1:9/token","headers":{"Authorization":"Bearer x"},"format":{"type":"json","subject_token_field_name":"value"}}"#,
            "",
        ),
        (
            r#"{"environment_id":"aws1","regional_cred_verification_url":"https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15"}"#,
            "",
        ),
        (r#"{"executable":{"command":"/usr/bin/oidc-token"}}"#, "1"),
    ] {
        std::fs::write(&file, external(source)).unwrap();
        let config = env(&[
            ("GOOGLE_APPLICATION_CREDENTIALS", &path),
            ("GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES", allow),
        ])
        .validate()
        .unwrap();
        let google = config.cloud.google.as_ref().expect("credentials");
        assert!(
            google.describe().starts_with("external_account in "),
            "{source}"
        );
        assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    }
    let missing = dir.join("missing.json").to_string_lossy().into_owned();
    let refused = env(&[("GOOGLE_APPLICATION_CREDENTIALS", &missing)])
        .validate()
        .unwrap_err();
    assert!(
        refused.to_string().contains("Google credentials"),
        "{refused}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `Debug` of the settings, as read and validated, never prints a
/// credential: the admin and lend tokens, a database URL's password, an
/// alert webhook's path and query (Slack's is the secret), the OTLP
/// endpoint's password and its headers' values. A `debug!("{config:?}")`
/// would otherwise log them.
#[test]
fn debug_of_the_settings_hides_every_credential() {
    let toml = r#"
database = "postgres://app:dbPa55word@db.internal:5432/tw?sslmode=require&password=qpWord"
admin_token = "adminTok3n-0123456789"
lend_token = "lendTok3n-0123456789abcdef"
otlp_endpoint = "https://otlpuser:otlpPa55@collector.example:4318"
otlp_headers = "Authorization=Basic%20b3RscEhlYWRlcg==,x-api-key=hdrK3y"
[alerts]
webhooks = ["https://hooks.slack.com/services/T000/B000/slackS3cret?token=qT0ken"]
"#;
    let secrets = [
        "dbPa55word",
        "qpWord",
        "adminTok3n",
        "lendTok3n",
        "otlpPa55",
        "b3RscEhlYWRlcg",
        "hdrK3y",
        "slackS3cret",
        "T000",
        "qT0ken",
    ];
    let raw = RawConfig::from_toml_str(toml).unwrap();
    let config = raw.clone().validate().unwrap();
    let shown = [
        format!("{raw:?}"),
        format!("{config:?}"),
        format!("{config:#?}"),
    ];
    for text in &shown {
        for secret in secrets {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }
    // What is not a secret still shows, and a secret that is set says so.
    for needle in [
        "db.internal",
        "hooks.slack.com",
        "collector.example",
        "<redacted>",
    ] {
        assert!(
            shown.iter().all(|t| t.contains(needle)),
            "{needle} missing: {shown:?}"
        );
    }
    assert!(shown[1].contains("x-api-key"), "{}", shown[1]);
}
