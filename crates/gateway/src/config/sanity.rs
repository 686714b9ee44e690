//! Checks across settings, made once the values are read: what would make
//! a valid-looking configuration fail every request, refused, and what is
//! probably a mistake, warned about at start ([`Config::warnings`]).
//!
//! - An upstream that is this gateway itself (a port mixed up, or a
//!   `resolve` entry leading it there): every request would come back to
//!   it until file descriptors ran out.
//! - The gateway's own telemetry (the OTLP export, an alert webhook) sent
//!   to itself the same way: passed on to a provider's API as a client's
//!   request, the collector's headers with it, and delivered nowhere.
//! - A cloud credential source's endpoint (Google's token endpoints, the
//!   AWS chain's) there: its refresh token, client secret or container
//!   token would be passed on to a provider the same way.
//! - An upstream base that ends in an API version (`…/v1`): the gateway
//!   appends the client's whole path, so requests would go to `/v1/v1/…`.
//! - A gateway listening beyond loopback without `admin_token`: the
//!   dashboard and `/api/*` answer 403 to everyone, loopback included.
//! - `allowed_hosts` on a gateway listening beyond loopback: it answers any
//!   host there, and the setting would restrict nothing.
//! - `TOOLWARDEN_` variables that name no setting (a typo is otherwise
//!   silently ignored, where TOML refuses an unknown key).
//!
//! [`Config::warnings`]: super::Config::warnings

use std::net::SocketAddr;

use http::Uri;

use super::{AllowedHosts, Resolve, SETTINGS, Upstream, otlp::OtlpConfig};
use crate::{
    cloud::{CloudConfig, aws::Reach, vertex_default, vertex_location},
    local::own::{Here, here_text, leads_here},
};

/// The `TOOLWARDEN_` variables the project's own scripts, tests and
/// benchmarks read, which are not `serve` settings.
const OTHER_VARIABLES: &[&str] = &[
    "TOOLWARDEN_CORPUS",
    "TOOLWARDEN_LOG_FORMAT",
    "TOOLWARDEN_BIN",
    "TOOLWARDEN_BENCH_WRAP",
    "TOOLWARDEN_E2E_CACHE",
];

/// Prefixes of the same (`TOOLWARDEN_TEST_POSTGRES_URL`, the soak's).
const OTHER_PREFIXES: &[&str] = &["TOOLWARDEN_TEST_", "TOOLWARDEN_PG_", "TOOLWARDEN_SOAK_"];

/// A problem when `upstream` (the setting `name`) is this gateway's own
/// listening socket ([`leads_here`]): every request would come back to it.
pub(super) fn upstream_loops(
    name: &str,
    upstream: &Upstream,
    listen: SocketAddr,
    resolve: &Resolve,
) -> Option<String> {
    let here = leads_here(upstream.host(), upstream.port(), listen, resolve)?;
    let scheme = if upstream.is_https() { "https" } else { "http" };
    let fix = match here {
        Here::Url => format!("set {name} to the provider (or the service the gateway fronts)"),
        Here::Resolve(_) | Here::Lookup(_) => "correct the resolve entry".to_string(),
    };
    Some(format!(
        "{name} ({scheme}://{}) {}: every request would come back to it; {fix}",
        upstream.authority(),
        here_text(&here, listen)
    ))
}

/// What the gateway sends to a URL of its own ([`own_request`]): `what`
/// each request is (`export`), what it carries (`its spans and
/// otlp_headers`), what the URL should name (`collector`), and what to do
/// instead of pointing the setting at it (`advice`).
#[derive(Clone, Copy)]
struct Sent<'a> {
    what: &'a str,
    carried: &'a str,
    fix: &'a str,
    advice: Option<&'a str>,
}

/// A problem when `uri` (named `name`), a URL the gateway itself sends to,
/// leads to its own listening socket ([`leads_here`]), saying what the
/// gateway would do with such a request: take it for a client's and pass
/// it on to a provider (plain HTTP), refuse it for naming another host
/// (the host guard of a loopback-bound gateway, `allowed`), or fail (TLS).
fn own_request(
    uri: &Uri,
    name: &str,
    Sent {
        what,
        carried,
        fix,
        advice,
    }: Sent<'_>,
    listen: SocketAddr,
    resolve: &Resolve,
    allowed: &AllowedHosts,
) -> Option<String> {
    let https = uri.scheme_str() == Some("https");
    let host = uri.host()?;
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let here = leads_here(host, port, listen, resolve)?;
    // The authority as the URL names it (the host guard judges this).
    let named = match uri.port_u16() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    };
    let shown = format!("{}://{named}", uri.scheme_str().unwrap_or("http"));
    // What the gateway's own listener does with the request.
    let guarded =
        crate::local::is_loopback(listen.ip()) && !crate::local::answers_host(allowed, &named);
    let fate = if https {
        format!("it listens without TLS, so every {what} would fail")
    } else if guarded {
        format!("it would refuse each {what} as a request for another host (403)")
    } else {
        format!(
            "it would take each {what} for a client's request and pass it, {carried} \
             included, to a provider's API (the OpenAI upstream, unless its path or \
             headers name another provider or one of the gateway's own routes)"
        )
    };
    let advice = match advice {
        Some(advice) => advice.to_string(),
        None => format!("point {name} at the {fix}"),
    };
    Some(format!(
        "{name} ({shown}) {}, which is no {fix}: {fate}; {advice}",
        here_text(&here, listen)
    ))
}

/// Problems when a credential source's endpoint is this gateway's own
/// address ([`own_request`]): Google's token endpoints (`token_uri`, an
/// `external_account`'s URLs, `GCE_METADATA_HOST`) and the URLs the AWS
/// chain's environment and profile set for it
/// (`AWS_CONTAINER_CREDENTIALS_FULL_URI`, `AWS_ENDPOINT_URL_STS`, a
/// `[services …]` section's, …). The gateway would pass what it sends
/// there — a refresh token and client secret, a signed assertion, the
/// container's authorization token, a web identity token — to a
/// provider's API. Then warnings, the gateway starting all the same, for
/// every AWS service's endpoint (`AWS_ENDPOINT_URL`, a profile's
/// `endpoint_url`) there when the chain's STS, SSO or SSO OIDC client
/// would take it: it may be meant for the clients beside the gateway.
pub(super) fn credential_loops(
    cloud: &CloudConfig,
    listen: SocketAddr,
    resolve: &Resolve,
    allowed: &AllowedHosts,
) -> (Vec<String>, Vec<String>) {
    let sent = Sent {
        what: "credential request",
        carried: "the credentials it sends",
        fix: "credential endpoint",
        advice: None,
    };
    let check = |name: &str, url: &str, sent: Sent<'_>| {
        let uri = url.trim().parse::<Uri>().ok()?;
        own_request(&uri, name, sent, listen, resolve, allowed)
    };
    let (mut problems, mut warnings) = (Vec::new(), Vec::new());
    if let Some(google) = &cloud.google {
        for (field, url) in google.endpoints() {
            let name = format!("{field} of the Google credentials ({})", google.describe());
            problems.extend(check(&name, url, sent));
        }
    }
    if let Some(aws) = &cloud.aws_credentials {
        for endpoint in aws.endpoints() {
            let (setting, url) = (&endpoint.setting, &endpoint.url);
            match &endpoint.reach {
                Reach::Own => problems.extend(check(setting, url, sent)),
                Reach::Default => {
                    let sent = Sent {
                        advice: Some("correct the resolve entry"),
                        ..sent
                    };
                    problems.extend(check(setting, url, sent));
                }
                Reach::Shared(services) => {
                    let services = services.join(", ");
                    let advice = format!(
                        "it is every AWS service's endpoint, which may be meant for the \
                         clients beside the gateway, so the gateway starts, but the {services} \
                         calls of its own AWS credential chain (web identity, role_arn, SSO) \
                         would go there: give the gateway AWS_ENDPOINT_URL_<SERVICE> for them, \
                         or keys"
                    );
                    let sent = Sent {
                        advice: Some(&advice),
                        ..sent
                    };
                    warnings.extend(check(setting, url, sent));
                }
            }
        }
    }
    (problems, warnings)
}

/// Problems when the gateway's own telemetry would be sent to itself
/// ([`leads_here`]): the OTLP export's URL (`otlp_endpoint`) or an alert
/// webhook. Not a loop: the gateway takes such a request for a client's
/// and passes it on to a provider's API (the OpenAI upstream, for most
/// paths), with the collector's `otlp_headers`, the spans, a webhook's
/// path (Slack's secret) and user info; or, under `https://`, fails the
/// TLS handshake, or (a name `resolve` leads to a loopback-bound gateway
/// that does not answer it) refuses it. No telemetry would arrive, and
/// what was meant for the collector could reach the provider. `allowed`
/// is the gateway's `allowed_hosts`.
pub(super) fn telemetry_loops(
    otlp: Option<&OtlpConfig>,
    webhooks: &[Uri],
    listen: SocketAddr,
    resolve: &Resolve,
    allowed: &AllowedHosts,
) -> Vec<String> {
    let check = |uri: &Uri, name: &str, what: &str, carried: &str, fix: &str| {
        let sent = Sent {
            what,
            carried,
            fix,
            advice: None,
        };
        own_request(uri, name, sent, listen, resolve, allowed)
    };
    let mut problems = Vec::new();
    if let Some(otlp) = otlp {
        problems.extend(check(
            &otlp.traces_url,
            "otlp_endpoint",
            "export",
            "its spans and otlp_headers",
            "collector",
        ));
    }
    for (n, webhook) in webhooks.iter().enumerate() {
        problems.extend(check(
            webhook,
            &format!("alert webhook #{}", n + 1),
            "alert",
            "the alert and the webhook's path and user info",
            "alert receiver",
        ));
    }
    problems
}

/// The same problems for the cloud upstreams: `azure_upstream`,
/// `vertex_upstream`, the Bedrock one (`bedrock_upstream` when
/// `bedrock_set`, else the region's endpoint) and, with no
/// `vertex_upstream`, the endpoint of each Vertex AI location that
/// `resolve` names (a request for the location goes there).
pub(super) fn cloud_loops(
    cloud: &CloudConfig,
    bedrock_set: bool,
    listen: SocketAddr,
    resolve: &Resolve,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut check = |name: &str, upstream: &Upstream| {
        problems.extend(upstream_loops(name, upstream, listen, resolve));
    };
    if let Some(azure) = &cloud.azure {
        check("azure_upstream", azure);
    }
    if let Some(bedrock) = &cloud.bedrock {
        let region = cloud.bedrock_region.as_deref().unwrap_or_default();
        let name = if bedrock_set {
            "bedrock_upstream".to_string()
        } else {
            format!("the Bedrock upstream of region {region}")
        };
        check(&name, bedrock);
    }
    match &cloud.vertex {
        Some(vertex) => check("vertex_upstream", vertex),
        None => {
            for (host, port) in resolve.names() {
                let Some(location) = vertex_location(host) else {
                    continue;
                };
                if let Ok(endpoint) = vertex_default(location)
                    && endpoint.port() == port
                {
                    check(
                        &format!("the Vertex AI upstream of location {location}"),
                        &endpoint,
                    );
                }
            }
        }
    }
    problems
}

/// A warning when `upstream`'s base path ends in an API version, which the
/// client's path brings already.
pub(super) fn versioned_base(name: &str, upstream: &Upstream) -> Option<String> {
    let prefix = upstream.prefix();
    let last = prefix.rsplit('/').next().unwrap_or("");
    let versioned = last.len() >= 2
        && last.starts_with('v')
        && last[1..].starts_with(|c: char| c.is_ascii_digit())
        && last[1..]
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .chars()
            .all(|c| c.is_ascii_alphanumeric());
    versioned.then(|| {
        format!(
            "{name} ends in {prefix}: the gateway appends the client's whole path (which starts \
             /{last}/…), so requests would go to {prefix}/{last}/…; give the base without /{last}"
        )
    })
}

/// A warning when the dashboard and `/api/*` can be opened by no one.
pub(super) fn dashboard_closed(listen: SocketAddr, admin_token: bool) -> Option<String> {
    (!crate::local::is_loopback(listen.ip()) && !admin_token).then(|| {
        format!(
            "listening on {listen} without admin_token: the dashboard and /api/* answer 403 to \
             every client (loopback ones included); set TOOLWARDEN_ADMIN_TOKEN to open them"
        )
    })
}

/// A warning when `allowed_hosts` is set (and not `*`) on a gateway
/// listening beyond loopback, which answers any host.
pub(super) fn hosts_unguarded(listen: SocketAddr, allowed: &AllowedHosts) -> Option<String> {
    (!crate::local::is_loopback(listen.ip()) && !allowed.is_empty() && !allowed.allows_any()).then(|| {
        format!(
            "allowed_hosts is set, but the gateway listens on {listen}, not a loopback address: \
             it answers requests naming any host there (the host guard applies to a loopback \
             listen address only)"
        )
    })
}

/// A warning for a `TOOLWARDEN_` variable that names no setting, with the
/// closest setting's variable when one is near.
pub(super) fn unknown_variable(name: &str) -> Option<String> {
    if OTHER_VARIABLES.contains(&name) || OTHER_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return None;
    }
    let key = name.strip_prefix("TOOLWARDEN_")?.to_ascii_lowercase();
    let nearest = SETTINGS
        .iter()
        .map(|s| s.key)
        .chain(super::alerts::ALERT_VARIABLES)
        .map(|k| (distance(&key, k), k))
        .min()
        .filter(|(d, _)| *d <= 2.max(key.len() / 5));
    Some(match nearest {
        Some((_, near)) => format!(
            "{name} is not a setting and is ignored (did you mean TOOLWARDEN_{}?)",
            near.to_ascii_uppercase()
        ),
        // The `--alert-*` flags have no variables.
        None if key.starts_with("alert_") => format!(
            "{name} is not a setting and is ignored (alert settings other than \
             TOOLWARDEN_ALERT_WEBHOOK, _FORMAT and _WINDOW_MS are set in the [alerts] \
             table of toolwarden.toml or by the --alert-* flags)"
        ),
        None => format!("{name} is not a setting and is ignored"),
    })
}

/// Levenshtein distance, by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(url: &str) -> Upstream {
        Upstream::parse(url).unwrap()
    }

    /// By the URL alone.
    fn loops_back(name: &str, upstream: &Upstream, listen: SocketAddr) -> Option<String> {
        upstream_loops(name, upstream, listen, &Resolve::default())
    }

    /// The OTLP export and the alert webhooks are judged as the upstreams
    /// are, by their URL or by `resolve`; the message names the setting
    /// and the origin (never a webhook's path or any user info) and says
    /// what the gateway would do with what they send.
    #[test]
    fn telemetry_sent_to_the_listening_address_is_refused() {
        let listen: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let resolve = Resolve::parse(&[
            "collector.internal.test:4318:127.0.0.1:8080".to_string(),
            "hooks.example.test:443:127.0.0.1:8080".to_string(),
            "gw.internal.test:80:127.0.0.1:8080".to_string(),
            "localhost:9999:10.0.0.9".to_string(),
        ])
        .unwrap();
        let none = AllowedHosts::default();
        let otlp = |url: &str| OtlpConfig::parse(url, Some("authorization=Bearer%20k")).unwrap();
        let hooks =
            |urls: &[&str]| -> Vec<Uri> { urls.iter().map(|u| u.parse().unwrap()).collect() };
        let problems = telemetry_loops(
            Some(&otlp("http://otel:pw@localhost:8080")),
            &hooks(&[
                "https://hooks.slack.com/services/T0SECRET",
                "http://127.0.0.1:8080/services/T0SECRET",
                "https://hooks.example.test/services/T0SECRET",
                "http://gw.internal.test/alerts",
                "http://localhost:9999/alerts",
                "http://127.0.0.1:8081/alerts",
            ]),
            listen,
            &resolve,
            &none,
        );
        let expected = [
            "otlp_endpoint (http://localhost:8080) is this gateway's own address \
             (127.0.0.1:8080), which is no collector: it would take each export for a \
             client's request and pass it, its spans and otlp_headers included, to a provider's",
            "alert webhook #2 (http://127.0.0.1:8080) is this gateway's own address \
             (127.0.0.1:8080), which is no alert receiver: it would take each alert",
            "alert webhook #3 (https://hooks.example.test) is led by resolve to 127.0.0.1:8080, \
             this gateway's own address (127.0.0.1:8080), which is no alert receiver: it \
             listens without TLS, so every alert would fail",
            "alert webhook #4 (http://gw.internal.test) is led by resolve to 127.0.0.1:8080, \
             this gateway's own address (127.0.0.1:8080), which is no alert receiver: it would \
             refuse each alert as a request for another host (403); point alert webhook #4 at",
        ];
        assert_eq!(problems.len(), expected.len(), "{problems:#?}");
        for (problem, expected) in problems.iter().zip(expected) {
            assert!(problem.starts_with(expected), "{problem}");
            assert!(
                !problem.contains("SECRET") && !problem.contains("pw"),
                "{problem}"
            );
        }
        // A name the gateway answers is passed on; so is any on a gateway
        // listening beyond loopback.
        let allowed = AllowedHosts::parse(&["gw.internal.test".to_string()]).unwrap();
        let gw = hooks(&["http://gw.internal.test/alerts"]);
        let problems = telemetry_loops(None, &gw, listen, &resolve, &allowed);
        assert!(problems[0].contains("pass it, the alert"), "{problems:#?}");
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let problems = telemetry_loops(None, &gw, any, &resolve, &none);
        assert!(problems[0].contains("pass it, the alert"), "{problems:#?}");
        // gRPC: the endpoint's origin.
        let grpc = OtlpConfig::parse_with(
            super::super::otlp::OtlpProtocol::Grpc,
            "http://collector.internal.test:4318",
            super::super::otlp::EndpointKind::Base,
            None,
        )
        .unwrap();
        let problems = telemetry_loops(Some(&grpc), &[], any, &resolve, &none);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(
            problems[0].starts_with(
                "otlp_endpoint (http://collector.internal.test:4318) is led by resolve"
            ),
            "{problems:#?}"
        );
        assert!(
            telemetry_loops(
                Some(&otlp("http://localhost:4318")),
                &[],
                listen,
                &resolve,
                &none
            )
            .is_empty()
        );
    }

    /// An upstream whose name `resolve` leads to the listening socket is a
    /// loop, whatever its name; one it leads elsewhere is not, though its
    /// name is `localhost` on the listening port.
    #[test]
    fn an_upstream_resolved_to_the_listening_address_is_a_loop() {
        let listen: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let resolve = Resolve::parse(&[
            "api.openai.com:443:127.0.0.1:8080".to_string(),
            "localhost:8080:10.0.0.9".to_string(),
        ])
        .unwrap();
        let e = upstream_loops(
            "openai_upstream",
            &up("https://api.openai.com"),
            listen,
            &resolve,
        )
        .expect("a loop");
        assert!(e.contains("led by resolve to 127.0.0.1:8080"), "{e}");
        assert_eq!(
            upstream_loops(
                "openai_upstream",
                &up("http://localhost:8080"),
                listen,
                &resolve
            ),
            None
        );
        assert_eq!(
            upstream_loops(
                "openai_upstream",
                &up("https://api.anthropic.com"),
                listen,
                &resolve
            ),
            None
        );
    }

    /// Each cloud upstream loops as the named ones do, by its URL or by
    /// `resolve`; with no `vertex_upstream`, so does the endpoint of a
    /// Vertex AI location `resolve` leads to the gateway.
    #[test]
    fn a_cloud_upstream_at_the_listening_address_is_a_loop() {
        let listen: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let resolve = Resolve::parse(&[
            "r.openai.azure.com:443:127.0.0.1:8080".to_string(),
            "bedrock-runtime.us-east-1.amazonaws.com:443:127.0.0.1:8080".to_string(),
            "us-central1-aiplatform.googleapis.com:443:127.0.0.1:8080".to_string(),
            "europe-west4-aiplatform.googleapis.com:8443:127.0.0.1:8080".to_string(),
            "aiplatform.googleapis.com:443:10.0.0.9:8080".to_string(),
        ])
        .unwrap();
        let cloud = CloudConfig {
            azure: Some(up("https://r.openai.azure.com")),
            bedrock: Some(up("https://bedrock-runtime.us-east-1.amazonaws.com")),
            bedrock_region: Some("us-east-1".into()),
            ..CloudConfig::default()
        };
        let problems = cloud_loops(&cloud, false, listen, &resolve);
        let led = |name: &str, url: &str| {
            format!("{name} ({url}) is led by resolve to 127.0.0.1:8080, this gateway's own")
        };
        let expected = [
            led("azure_upstream", "https://r.openai.azure.com"),
            led(
                "the Bedrock upstream of region us-east-1",
                "https://bedrock-runtime.us-east-1.amazonaws.com",
            ),
            led(
                "the Vertex AI upstream of location us-central1",
                "https://us-central1-aiplatform.googleapis.com",
            ),
        ];
        assert_eq!(problems.len(), expected.len(), "{problems:#?}");
        for (problem, expected) in problems.iter().zip(&expected) {
            assert!(problem.starts_with(expected), "{problem}");
        }
        // A vertex_upstream is the one Vertex AI upstream; by its URL.
        let cloud = CloudConfig {
            vertex: Some(up("http://localhost:8080")),
            bedrock: Some(up("https://bedrock-runtime.us-east-1.amazonaws.com")),
            ..CloudConfig::default()
        };
        let problems = cloud_loops(&cloud, true, listen, &Resolve::default());
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(
            problems[0].starts_with("vertex_upstream (http://localhost:8080) is this gateway's"),
            "{problems:#?}"
        );
        let problems = cloud_loops(&cloud, true, listen, &resolve);
        // With the entries: the region's endpoint, set by bedrock_upstream;
        // the location's entry is not used beside a vertex_upstream.
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(
            problems[0].starts_with("bedrock_upstream ("),
            "{problems:#?}"
        );
        assert!(
            problems[1].starts_with("vertex_upstream ("),
            "{problems:#?}"
        );
    }

    #[test]
    fn an_upstream_at_the_listening_address_is_a_loop() {
        let listen: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        // 0.0.0.0: Linux connects to the loopback address.
        for url in [
            "http://127.0.0.1:8080",
            "http://localhost:8080/",
            "http://LOCALHOST:8080",
            "http://0.0.0.0:8080",
        ] {
            let e = loops_back("openai_upstream", &up(url), listen).expect(url);
            assert!(e.contains("own address"), "{e}");
        }
        // Another loopback address, or the other family, is another socket.
        for url in [
            "http://127.0.0.1:8081",
            "https://api.openai.com",
            "http://10.0.0.5:8080",
            "http://127.0.0.2:8080",
            "http://[::1]:8080",
        ] {
            assert_eq!(
                loops_back("openai_upstream", &up(url), listen),
                None,
                "{url}"
            );
        }
        // Any address: loopback, 0.0.0.0 and localhost loop; others may not.
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        for url in [
            "http://localhost:8080",
            "http://127.0.0.2:8080",
            "http://0.0.0.0:8080",
        ] {
            assert!(loops_back("x", &up(url), any).is_some(), "{url}");
        }
        assert!(loops_back("x", &up("http://[::1]:8080"), any).is_none());
        assert!(loops_back("x", &up("http://192.168.1.9:8080"), any).is_none());
        let any6: SocketAddr = "[::]:8080".parse().unwrap();
        assert!(loops_back("x", &up("http://127.0.0.1:8080"), any6).is_some());
        assert!(loops_back("x", &up("http://[::1]:8080"), any6).is_some());
        let exact: SocketAddr = "192.168.1.9:8080".parse().unwrap();
        assert!(loops_back("x", &up("http://192.168.1.9:8080"), exact).is_some());
        let ephemeral: SocketAddr = "127.0.0.1:0".parse().unwrap();
        assert!(loops_back("x", &up("http://127.0.0.1:80"), ephemeral).is_none());
    }

    #[test]
    fn a_base_ending_in_a_version_is_warned_about() {
        for (url, tail) in [
            ("https://api.openai.com/v1", "/v1"),
            ("https://api.groq.com/openai/v1/", "/openai/v1"),
            (
                "https://generativelanguage.googleapis.com/v1beta",
                "/v1beta",
            ),
        ] {
            let w = versioned_base("openai_upstream", &up(url)).expect(url);
            assert!(w.contains(&format!("ends in {tail}")), "{w}");
        }
        for url in [
            "https://api.openai.com",
            "https://api.groq.com/openai",
            "https://gw.example/vendor",
            "https://gw.example/v",
        ] {
            assert_eq!(versioned_base("openai_upstream", &up(url)), None, "{url}");
        }
    }

    #[test]
    fn a_closed_dashboard_is_warned_about() {
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert!(
            dashboard_closed(any, false)
                .unwrap()
                .contains("TOOLWARDEN_ADMIN_TOKEN")
        );
        assert_eq!(dashboard_closed(any, true), None);
        assert_eq!(
            dashboard_closed("127.0.0.1:8080".parse().unwrap(), false),
            None
        );
    }

    #[test]
    fn allowed_hosts_beyond_loopback_are_warned_about() {
        let some = AllowedHosts::parse(&["gw.example".to_string()]).unwrap();
        let any = AllowedHosts::parse(&["*".to_string()]).unwrap();
        let open: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert!(
            hosts_unguarded(open, &some)
                .unwrap()
                .contains("0.0.0.0:8080")
        );
        assert_eq!(hosts_unguarded(open, &any), None);
        assert_eq!(hosts_unguarded(open, &AllowedHosts::default()), None);
        assert_eq!(hosts_unguarded(local, &some), None);
    }

    #[test]
    fn an_unknown_variable_is_named_with_its_nearest_setting() {
        let w = unknown_variable("TOOLWARDEN_LISTN").unwrap();
        assert!(w.contains("did you mean TOOLWARDEN_LISTEN?"), "{w}");
        let w = unknown_variable("TOOLWARDEN_RECORD_QUEUE_CAPACTY").unwrap();
        assert!(w.contains("TOOLWARDEN_RECORD_QUEUE_CAPACITY"), "{w}");
        let w = unknown_variable("TOOLWARDEN_SOMETHING_ELSE").unwrap();
        assert!(!w.contains("did you mean"), "{w}");
        for ours in [
            "TOOLWARDEN_CORPUS",
            "TOOLWARDEN_TEST_POSTGRES_URL",
            "TOOLWARDEN_LOG_FORMAT",
        ] {
            assert_eq!(unknown_variable(ours), None, "{ours}");
        }
    }
}
