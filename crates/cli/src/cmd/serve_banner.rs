//! What `serve` prints once it listens: where to look next (the dashboard,
//! the database `stats` reads, the upstreams, what is on). No secret: a
//! database or collector password is hidden, webhooks are counted, not
//! shown, and the admin token is never named.

use std::{fmt::Write, net::SocketAddr, path::Path};

use toolwarden_gateway::{Config, OtlpProtocol};
use toolwarden_store::redact_url;

/// The lines after `toolwarden: listening on …`.
pub fn banner(config: &Config, addr: SocketAddr, cwd: Option<&Path>) -> String {
    let mut out = String::new();
    let dashboard = if config.is_loopback() || config.admin_token.is_some() {
        format!(
            "{}/",
            toolwarden_gateway::base_url(addr, config.tls.is_some())
        )
    } else {
        "closed: set admin_token (TOOLWARDEN_ADMIN_TOKEN) to open it".to_string()
    };
    let _ = writeln!(out, "  dashboard  {dashboard}");
    let recording = match &config.database {
        Some(url) => absolute_sqlite(&redact_url(url), cwd),
        None => "none (--database none): metrics only".to_string(),
    };
    let _ = writeln!(out, "  recording  {recording}");
    if let Some(jsonl) = &config.jsonl {
        let _ = writeln!(out, "  jsonl      {}", jsonl.path.display());
    }
    let u = &config.upstreams;
    let _ = writeln!(
        out,
        "  upstreams  openai {} · anthropic {} · gemini {}",
        u.openai, u.anthropic, u.gemini
    );
    // Alerts are evaluated on the database: without one they are off.
    let alerts = if !config.alerts.enabled {
        "off".to_string()
    } else if config.database.is_none() {
        "off (no database)".to_string()
    } else {
        match config.alerts.webhooks.len() {
            0 => "on, no webhook (see /api/alerts)".to_string(),
            1 => "on, 1 webhook".to_string(),
            n => format!("on, {n} webhooks"),
        }
    };
    let otlp = match &config.otlp {
        Some(otlp) => {
            let url = &otlp.traces_url;
            match (otlp.protocol, url.scheme_str(), url.authority()) {
                // gRPC's URL is the collector's origin and the method.
                (OtlpProtocol::Grpc, Some(scheme), Some(authority)) => {
                    redact_url(&format!("{scheme}://{authority} (grpc)"))
                }
                _ => redact_url(&format!("{url} (http/protobuf)")),
            }
        }
        None => "off".to_string(),
    };
    let _ = writeln!(
        out,
        "  repair     {} · alerts {alerts} · otlp {otlp}",
        config.repair
    );
    out
}

/// A SQLite URL or plain path with a relative path, made absolute against
/// `cwd` (`stats` run from another folder would not find it by the
/// relative one), as `sqlite://ABSOLUTE`. A file a config file names is a
/// relative path too when the config file was named by one
/// (`--config ../dir/toolwarden.toml`: `../dir/toolwarden.db`).
fn absolute_sqlite(url: &str, cwd: Option<&Path>) -> String {
    let path = if let Some(path) = url.strip_prefix("sqlite://") {
        path
    } else if let Some(path) = url.strip_prefix("sqlite:") {
        path
    } else if url.contains("://") {
        return url.to_string();
    } else {
        url
    };
    let (file, query) = match path.split_once('?') {
        Some((file, query)) => (file, Some(query)),
        None => (path, None),
    };
    if file.starts_with('/') || file.starts_with(':') || file.is_empty() {
        return url.to_string();
    }
    let Some(cwd) = cwd else {
        return url.to_string();
    };
    let absolute = cwd.join(file);
    match query {
        Some(query) => format!("sqlite://{}?{query}", absolute.display()),
        None => format!("sqlite://{}", absolute.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_sqlite_path_is_shown_absolute() {
        let cwd = Path::new("/srv/tw");
        assert_eq!(
            absolute_sqlite("sqlite://toolwarden.db", Some(cwd)),
            "sqlite:///srv/tw/toolwarden.db"
        );
        assert_eq!(
            absolute_sqlite("sqlite://data/t.db?mode=rwc", Some(cwd)),
            "sqlite:///srv/tw/data/t.db?mode=rwc"
        );
        assert_eq!(
            absolute_sqlite("sqlite:///var/t.db", Some(cwd)),
            "sqlite:///var/t.db"
        );
        assert_eq!(
            absolute_sqlite("postgres://u:***@h/db", Some(cwd)),
            "postgres://u:***@h/db"
        );
        // A plain path (`--database t.db`, or a config file's `database`
        // anchored to its folder) and `sqlite:PATH` too.
        assert_eq!(
            absolute_sqlite("../cfg/t.db", Some(cwd)),
            "sqlite:///srv/tw/../cfg/t.db"
        );
        assert_eq!(
            absolute_sqlite("sqlite:t.db", Some(cwd)),
            "sqlite:///srv/tw/t.db"
        );
        assert_eq!(absolute_sqlite("/var/t.db", Some(cwd)), "/var/t.db");
    }
}
