//! What `toolwarden serve` says as it starts, through the real binary: a
//! configuration that would loop is refused; likely mistakes are warned
//! about (an unknown `TOOLWARDEN_` variable with its nearest setting, an
//! upstream base ending in `/v1`, a dashboard no one can open); log lines
//! to a pipe carry no colour codes, and `--log-format json` writes JSON;
//! `--resolve` reaches a name at its address, and refuses a malformed entry.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolwarden"));
    // A clean slate: no setting from the environment of the test run.
    for (name, _) in std::env::vars() {
        if name.starts_with("TOOLWARDEN_")
            || name.starts_with("AWS_")
            || name == "NO_COLOR"
            || name == "RUST_LOG"
        {
            c.env_remove(name);
        }
    }
    c
}

/// What `child` printed, once it exited or, after 20 s, was killed (a
/// `serve` that should have refused to start runs until then).
fn ended(mut child: std::process::Child) -> std::process::Output {
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait_with_output().unwrap()
}

/// A `serve` case: its arguments, its environment, and what its refusal
/// must say.
type Refusal = (Vec<String>, Vec<(&'static str, String)>, String);

/// Runs every case at once (a `serve` that takes its case runs until
/// `ended` kills it) and checks each exits 2 with its message on stderr;
/// what comes out is returned for further checks.
fn each_is_refused(cases: &[Refusal]) -> Vec<String> {
    let children: Vec<_> = cases
        .iter()
        .map(|(args, env, _)| {
            bin()
                .args(args)
                .envs(env.iter().map(|(k, v)| (k, v)))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .zip(cases)
        .map(|(child, (args, env, expected))| {
            let out = ended(child);
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}: {stderr}");
            assert!(
                stderr.contains(expected.as_str()),
                "{args:?} {env:?}: {stderr}"
            );
            stderr
        })
        .collect()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running `serve`: its process, its stderr's lines as they come, the
/// lines until it said it listens, and its address.
struct Served {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
    started: Vec<String>,
    addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `serve` with `args` and `env`, reads its stderr until it says it
/// listens (at most 30 s), stops it, and returns the lines.
fn start_lines(args: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    std::mem::take(&mut start(args, env).started)
}

/// Starts `serve` (no database) with `args` and `env`, and reads its
/// stderr until it says it listens (at most 30 s).
fn start(args: &[&str], env: &[(&str, &str)]) -> Served {
    let args: Vec<&str> = ["--database", "none"].iter().chain(args).copied().collect();
    start_recording(&args, env)
}

/// Starts `serve` with `args` (its database among them, or the
/// configured one) and `env`, as [`start`] does.
fn start_recording(args: &[&str], env: &[(&str, &str)]) -> Served {
    let mut child = bin()
        .arg("serve")
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn toolwarden serve");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut lines = Vec::new();
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let done = line.starts_with("toolwarden: listening on");
        lines.push(line);
        if done {
            break;
        }
    }
    let addr = lines
        .iter()
        .find_map(|l| {
            l.strip_prefix("toolwarden: listening on http://")
                .or_else(|| l.strip_prefix("toolwarden: listening on https://"))
        })
        .map(str::to_string);
    let Some(addr) = addr else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("serve did not start: {lines:#?}");
    };
    Served {
        child,
        lines: rx,
        started: lines,
        addr,
    }
}

#[test]
fn an_upstream_at_its_own_address_is_refused() {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let out = bin()
        .args(["serve", "--database", "none", "--listen", &listen])
        .args(["--openai-upstream", &format!("http://localhost:{port}")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("openai_upstream (http://localhost:") && stderr.contains("own address"),
        "{stderr}"
    );
    // The same loop through a `resolve` entry leading a provider's name
    // to the gateway itself (a `serve` that takes it runs until killed).
    let child = bin()
        .args(["serve", "--database", "none", "--listen", &listen])
        .args(["--openai-upstream", "https://api.openai.com"])
        .args(["--resolve", &format!("api.openai.com:443:127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = ended(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "openai_upstream (https://api.openai.com) is led by resolve to 127.0.0.1:{port}"
        )),
        "{stderr}"
    );
}

/// The cloud upstreams loop as the named ones do: Azure's, Vertex AI's
/// (set, or a location's endpoint a `resolve` entry names), Bedrock's (set,
/// or the region's endpoint), led to the gateway's own address by
/// `resolve` or by their URL, stop `serve` before it listens.
#[test]
fn a_cloud_upstream_at_its_own_address_is_refused() {
    let cases: Vec<Refusal> =
        (0..6)
            .map(|case| {
                let port = free_port();
                let to_self = |name: &str| format!("{name}:443:127.0.0.1:{port}");
                let (args, expected) = match case {
                0 => (
                    vec![
                        "--azure-upstream".into(),
                        "https://r.openai.azure.com".into(),
                        "--resolve".into(),
                        to_self("r.openai.azure.com"),
                    ],
                    "azure_upstream (https://r.openai.azure.com) is led by resolve".to_string(),
                ),
                1 => (
                    vec!["--azure-upstream".into(), format!("http://localhost:{port}")],
                    format!("azure_upstream (http://localhost:{port}) is this gateway's own"),
                ),
                2 => (
                    vec![
                        "--vertex-upstream".into(),
                        "https://vertex.internal.test".into(),
                        "--resolve".into(),
                        to_self("vertex.internal.test"),
                    ],
                    "vertex_upstream (https://vertex.internal.test) is led by resolve".into(),
                ),
                3 => (
                    vec!["--resolve".into(), to_self("us-central1-aiplatform.googleapis.com")],
                    "the Vertex AI upstream of location us-central1 \
                     (https://us-central1-aiplatform.googleapis.com) is led by resolve"
                        .into(),
                ),
                4 => (
                    vec![
                        "--bedrock-upstream".into(),
                        "https://bedrock-runtime.eu-west-3.amazonaws.com".into(),
                        "--resolve".into(),
                        to_self("bedrock-runtime.eu-west-3.amazonaws.com"),
                    ],
                    "bedrock_upstream (https://bedrock-runtime.eu-west-3.amazonaws.com) is led \
                     by resolve"
                        .into(),
                ),
                _ => (
                    vec![
                        "--bedrock-region".into(),
                        "us-east-1".into(),
                        "--resolve".into(),
                        to_self("bedrock-runtime.us-east-1.amazonaws.com"),
                    ],
                    "the Bedrock upstream of region us-east-1 \
                     (https://bedrock-runtime.us-east-1.amazonaws.com) is led by resolve"
                        .into(),
                ),
            };
                let listen = format!("127.0.0.1:{port}");
                let base = ["serve", "--database", "none", "--listen", &listen].map(String::from);
                (base.into_iter().chain(args).collect(), vec![], expected)
            })
            .collect();
    each_is_refused(&cases);
}

/// The gateway's own telemetry sent to its own address — the OTLP export
/// (`--otlp-endpoint`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, over HTTP or
/// gRPC) or an alert webhook, by its URL or a `resolve` entry — stops
/// `serve` before it listens: the gateway would pass the exports, with the
/// collector's headers, to a provider's API. A webhook's path is not shown.
#[test]
fn telemetry_sent_to_its_own_address_is_refused() {
    let cases: Vec<Refusal> = (0..5)
        .map(|case| {
            let port = free_port();
            let to_self = |name: &str, at: u16| format!("{name}:{at}:127.0.0.1:{port}");
            let (args, env, expected): (Vec<String>, _, _) = match case {
                0 => (
                    vec!["--otlp-endpoint".into(), format!("http://127.0.0.1:{port}")],
                    vec![("TOOLWARDEN_OTLP_HEADERS", "x-honeycomb-team=k".to_string())],
                    format!(
                        "otlp_endpoint (http://127.0.0.1:{port}) is this gateway's own address \
                         (127.0.0.1:{port}), which is no collector: it would take each export \
                         for a client's request and pass it, its spans and otlp_headers included"
                    ),
                ),
                1 => (
                    vec![],
                    vec![(
                        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                        format!("http://localhost:{port}/v1/traces"),
                    )],
                    format!("otlp_endpoint (http://localhost:{port}) is this gateway's own"),
                ),
                2 => (
                    vec![
                        "--otlp-protocol".into(),
                        "grpc".into(),
                        "--otlp-endpoint".into(),
                        "http://collector.internal.test:4317".into(),
                        "--resolve".into(),
                        to_self("collector.internal.test", 4317),
                    ],
                    vec![],
                    "otlp_endpoint (http://collector.internal.test:4317) is led by resolve".into(),
                ),
                3 => (
                    vec![],
                    vec![(
                        "TOOLWARDEN_ALERT_WEBHOOK",
                        format!(
                            "https://hooks.slack.com/services/T0SECRET,\
                             http://localhost:{port}/services/T0SECRET"
                        ),
                    )],
                    format!(
                        "alert webhook #2 (http://localhost:{port}) is this gateway's own \
                         address (127.0.0.1:{port}), which is no alert receiver"
                    ),
                ),
                _ => (
                    vec![
                        "--alert-webhook".into(),
                        "https://hooks.example.test/services/T0SECRET".into(),
                        "--resolve".into(),
                        to_self("hooks.example.test", 443),
                    ],
                    vec![],
                    "alert webhook #1 (https://hooks.example.test) is led by resolve".into(),
                ),
            };
            let listen = format!("127.0.0.1:{port}");
            let base = ["serve", "--database", "none", "--listen", &listen].map(String::from);
            (base.into_iter().chain(args).collect(), env, expected)
        })
        .collect();
    for stderr in each_is_refused(&cases) {
        assert!(!stderr.contains("SECRET"), "{stderr}");
    }
}

/// A credential source's endpoint at the gateway's own address — a Google
/// credentials file's `token_uri` or `token_url`, the AWS chain's
/// `AWS_CONTAINER_CREDENTIALS_FULL_URI` or `AWS_ENDPOINT_URL_STS`, by URL
/// or `resolve` — stops `serve` before it listens: the gateway would pass
/// the refresh token, the container's token or the web identity token it
/// sends there to a provider's API. Not when the environment's AWS keys
/// come first in the chain, which then calls nothing.
#[test]
fn credential_endpoints_at_its_own_address_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().display().to_string();
    let cases: Vec<Refusal> = (0..4)
        .map(|case| {
            let port = free_port();
            let file = dir.path().join(format!("adc-{case}.json"));
            let (args, env, expected): (Vec<String>, Vec<(&'static str, String)>, String) =
                match case {
                    0 => {
                        std::fs::write(
                            &file,
                            format!(
                                r#"{{"type":"authorized_user","client_id":"id","client_secret":"cs","refresh_token":"rt","token_uri":"http://127.0.0.1:{port}/token"}}"#
                            ),
                        )
                        .unwrap();
                        (
                            vec![],
                            vec![("GOOGLE_APPLICATION_CREDENTIALS", file.display().to_string())],
                            format!(
                                "token_uri of the Google credentials (authorized_user in {}) \
                                 (http://127.0.0.1:{port}) is this gateway's own address \
                                 (127.0.0.1:{port}), which is no credential endpoint: it would \
                                 take each credential request for a client's request and pass \
                                 it, the credentials it sends included",
                                file.display()
                            ),
                        )
                    }
                    1 => {
                        std::fs::write(
                            &file,
                            format!(
                                r#"{{"type":"external_account","audience":"//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/gh","subject_token_type":"urn:ietf:params:oauth:token-type:jwt","token_url":"http://localhost:{port}/v1/token","credential_source":{{"file":"{home}/token"}}}}"#
                            ),
                        )
                        .unwrap();
                        (
                            vec![],
                            vec![("GOOGLE_APPLICATION_CREDENTIALS", file.display().to_string())],
                            format!(
                                "token_url of the Google credentials (external_account in {}) \
                                 (http://localhost:{port}) is this gateway's own",
                                file.display()
                            ),
                        )
                    }
                    2 => (
                        vec!["--bedrock-region".into(), "us-east-1".into()],
                        vec![(
                            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                            format!("http://localhost:{port}/v2/credentials/t"),
                        )],
                        format!(
                            "AWS_CONTAINER_CREDENTIALS_FULL_URI (http://localhost:{port}) is this \
                             gateway's own"
                        ),
                    ),
                    _ => (
                        vec![
                            "--bedrock-region".into(),
                            "us-east-1".into(),
                            "--resolve".into(),
                            format!("sts.vpce.test:443:127.0.0.1:{port}"),
                        ],
                        vec![("AWS_ENDPOINT_URL_STS", "https://sts.vpce.test".into())],
                        format!(
                            "AWS_ENDPOINT_URL_STS (https://sts.vpce.test) is led by resolve to \
                             127.0.0.1:{port}, this gateway's own address (127.0.0.1:{port}), \
                             which is no credential endpoint: it listens without TLS"
                        ),
                    ),
                };
            let listen = format!("127.0.0.1:{port}");
            let base = ["serve", "--database", "none", "--listen", &listen].map(String::from);
            let env = env.into_iter().chain([("HOME", home.clone())]).collect();
            (base.into_iter().chain(args).collect(), env, expected)
        })
        .collect();
    each_is_refused(&cases);
    // The environment's keys: the container endpoint is never asked.
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let uri = format!("http://localhost:{port}/v2/credentials/t");
    start(
        &["--listen", &listen, "--bedrock-region", "us-east-1"],
        &[
            ("HOME", home.as_str()),
            ("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri.as_str()),
            ("AWS_ACCESS_KEY_ID", "AKIDENV"),
            ("AWS_SECRET_ACCESS_KEY", "env-secret"),
        ],
    );
}

/// A `resolve` entry leading a default host the AWS chain calls (no
/// setting naming its endpoint) to the gateway's own address is refused
/// at start: STS's regional host for web identity, the SSO portal's and
/// OIDC's for an SSO session, at the session's region. One for a host the
/// chain does not call with that configuration (STS beside the
/// environment's keys, SSO without an SSO profile) starts.
#[test]
fn default_credential_hosts_led_here_by_resolve_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().display().to_string();
    let token = dir.path().join("token");
    std::fs::write(&token, "eyJ.oidc.token").unwrap();
    let token = token.display().to_string();
    let sso = dir.path().join("sso-config");
    std::fs::write(
        &sso,
        "[default]\nsso_session = s\nsso_account_id = 1\nsso_role_name = r\n\
         [sso-session s]\nsso_region = eu-central-1\n\
         sso_start_url = https://d.awsapps.com/start\n",
    )
    .unwrap();
    let sso = sso.display().to_string();
    let refusal = |host: &str, port: u16, name: &str| {
        format!(
            "{name} (https://{host}) is led by resolve to 127.0.0.1:{port}, this gateway's own \
             address (127.0.0.1:{port}), which is no credential endpoint: it listens without \
             TLS, so every credential request would fail; correct the resolve entry"
        )
    };
    let cases: Vec<Refusal> = (0..3)
        .map(|case| {
            let port = free_port();
            let (host, env, expected): (&str, Vec<(&'static str, String)>, String) = match case {
                0 => (
                    "sts.us-east-1.amazonaws.com",
                    vec![
                        ("AWS_WEB_IDENTITY_TOKEN_FILE", token.clone()),
                        ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/gw".into()),
                    ],
                    refusal(
                        "sts.us-east-1.amazonaws.com",
                        port,
                        "the default STS endpoint for us-east-1",
                    ),
                ),
                1 => (
                    "portal.sso.eu-central-1.amazonaws.com",
                    vec![("AWS_CONFIG_FILE", sso.clone())],
                    refusal(
                        "portal.sso.eu-central-1.amazonaws.com",
                        port,
                        "the default SSO endpoint for eu-central-1",
                    ),
                ),
                _ => (
                    "oidc.eu-central-1.amazonaws.com",
                    vec![("AWS_CONFIG_FILE", sso.clone())],
                    refusal(
                        "oidc.eu-central-1.amazonaws.com",
                        port,
                        "the default SSO OIDC endpoint for eu-central-1",
                    ),
                ),
            };
            let listen = format!("127.0.0.1:{port}");
            let entry = format!("{host}:443:{listen}");
            let args = [
                "serve",
                "--database",
                "none",
                "--listen",
                &listen,
                "--bedrock-region",
                "us-east-1",
                "--resolve",
                &entry,
            ]
            .map(String::from)
            .to_vec();
            let env = env
                .into_iter()
                .chain([
                    ("HOME", home.clone()),
                    ("AWS_EC2_METADATA_DISABLED", "true".into()),
                ])
                .collect();
            (args, env, expected)
        })
        .collect();
    each_is_refused(&cases);
    // Hosts the chain does not call: STS beside the environment's keys,
    // the SSO portal without an SSO profile.
    for (host, keys) in [
        ("sts.us-east-1.amazonaws.com", true),
        ("portal.sso.eu-central-1.amazonaws.com", false),
    ] {
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let entry = format!("{host}:443:{listen}");
        let mut env = vec![
            ("HOME", home.as_str()),
            ("AWS_WEB_IDENTITY_TOKEN_FILE", token.as_str()),
            ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/gw"),
            ("AWS_EC2_METADATA_DISABLED", "true"),
        ];
        if keys {
            env.extend([
                ("AWS_ACCESS_KEY_ID", "AKIDENV"),
                ("AWS_SECRET_ACCESS_KEY", "env-secret"),
            ]);
        }
        let args = [
            "--listen",
            &listen,
            "--bedrock-region",
            "us-east-1",
            "--resolve",
            &entry,
        ];
        drop(start(&args, &env));
    }
}

/// A key pair the AWS chain would not take whole is refused at start: an
/// environment key with a blank secret (or the reverse), which aws-config
/// takes for no keys and goes on to the next source without a word; a
/// profile's key with an empty secret, which it would sign every request
/// with, or without one, which fails every load. Both blank, or the
/// environment's keys before a broken profile, start.
#[test]
fn a_key_pair_the_chain_would_not_take_whole_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().display().to_string();
    let credentials = |case: usize, text: &str| {
        let file = dir.path().join(format!("credentials-{case}"));
        std::fs::write(&file, text).unwrap();
        file.display().to_string()
    };
    let together = "AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be \
                    given together:";
    let cases: Vec<Refusal> = (0..4)
        .map(|case| {
            let (env, expected): (Vec<(&'static str, String)>, String) = match case {
                0 => (
                    vec![
                        ("AWS_ACCESS_KEY_ID", "AKIDENV".into()),
                        ("AWS_SECRET_ACCESS_KEY", "  ".into()),
                    ],
                    format!(
                        "{together} AWS_ACCESS_KEY_ID is set and AWS_SECRET_ACCESS_KEY is empty \
                         or blank, which the AWS credential chain takes for no keys"
                    ),
                ),
                1 => (
                    vec![
                        ("AWS_ACCESS_KEY_ID", "\t".into()),
                        ("AWS_SECRET_ACCESS_KEY", "env-secret".into()),
                    ],
                    format!(
                        "{together} AWS_SECRET_ACCESS_KEY is set and AWS_ACCESS_KEY_ID is empty \
                         or blank"
                    ),
                ),
                2 => (
                    vec![(
                        "AWS_SHARED_CREDENTIALS_FILE",
                        credentials(
                            case,
                            "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key =\n",
                        ),
                    )],
                    "AWS credentials: aws_secret_access_key of AWS profile default is empty: \
                     the AWS credential chain would take it as it is"
                        .into(),
                ),
                _ => (
                    vec![(
                        "AWS_SHARED_CREDENTIALS_FILE",
                        credentials(case, "[default]\naws_access_key_id = AKIDFILE\n"),
                    )],
                    "AWS credentials: AWS profile default gives aws_access_key_id without \
                     aws_secret_access_key"
                        .into(),
                ),
            };
            let mut args = ["serve", "--database", "none", "--listen", "127.0.0.1:0"]
                .map(String::from)
                .to_vec();
            // The profile's keys stop the gateway when it is told to serve
            // Bedrock (below: only a warning otherwise).
            if case >= 2 {
                args.extend(["--bedrock-region", "us-east-1"].map(String::from));
            }
            let env = env.into_iter().chain([("HOME", home.clone())]).collect();
            (args, env, expected)
        })
        .collect();
    let refusals = each_is_refused(&cases);
    for refusal in refusals {
        assert!(
            !refusal.contains("AKIDENV") && !refusal.contains("env-secret"),
            "{refusal}"
        );
    }
    let broken = credentials(9, "[default]\naws_access_key_id = AKIDFILE\n");
    for env in [
        [
            ("AWS_ACCESS_KEY_ID", " "),
            ("AWS_SECRET_ACCESS_KEY", ""),
            ("HOME", home.as_str()),
        ],
        [
            ("AWS_ACCESS_KEY_ID", "AKIDENV"),
            ("AWS_SECRET_ACCESS_KEY", "env-secret"),
            ("AWS_SHARED_CREDENTIALS_FILE", broken.as_str()),
        ],
    ] {
        drop(start(&["--listen", "127.0.0.1:0"], &env));
    }
    // A broken profile on a machine where only the region sets Bedrock's
    // default up (the gateway was not told to serve Bedrock): a warning.
    let lines = start_lines(
        &["--listen", "127.0.0.1:0"],
        &[
            ("AWS_SHARED_CREDENTIALS_FILE", broken.as_str()),
            ("AWS_REGION", "us-east-1"),
            ("HOME", home.as_str()),
        ],
    );
    assert!(
        lines.iter().any(|l| l.contains("WARN")
            && l.contains(
                "AWS credentials: AWS profile default gives aws_access_key_id without \
                 aws_secret_access_key"
            )
            && l.contains("Bedrock requests the gateway signs would fail")),
        "{lines:?}"
    );
}

/// An AWS-sourced Google `external_account` file, with `fields` in its
/// `credential_source` beside `aws1` and the verification URL.
fn aws_sourced_google_file(fields: &str) -> String {
    format!(
        r#"{{"type":"external_account","audience":"//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/aws","subject_token_type":"urn:ietf:params:aws:token-type:aws4_request","token_url":"https://sts.googleapis.com/v1/token","credential_source":{{"environment_id":"aws1","regional_cred_verification_url":"https://sts.{{region}}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15"{fields}}}}}"#
    )
}

/// The credential endpoints the last check left out, at the gateway's own
/// address, stop `serve` before it listens: a profile's `[services …]`
/// section's STS endpoint (a web identity token or a signed `AssumeRole`
/// would go there), `AWS_ENDPOINT_URL_SSO_OIDC` (an SSO session's refresh
/// token), a profile's `ec2_metadata_service_endpoint` when the instance
/// metadata is asked (by `resolve`), and the instance metadata URLs an
/// AWS-sourced Google `external_account` reads (`region_url`, `url`,
/// `imdsv2_session_token_url`); and any of the chain's endpoints when the
/// environment's keys are empty or blank, which the chain passes over.
/// The message names the setting and the origin, never the URL's path.
#[test]
fn profile_and_metadata_credential_endpoints_at_its_own_address_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().display().to_string();
    let cases: Vec<Refusal> = (0..4)
        .map(|case| {
            let port = free_port();
            let file = dir.path().join(format!("credentials-{case}"));
            let shown = file.display().to_string();
            let aws = |config: String| {
                std::fs::write(&file, config).unwrap();
                ("AWS_CONFIG_FILE", shown.clone())
            };
            let (args, env, expected): (Vec<String>, Vec<(&'static str, String)>, String) =
                match case {
                    0 => (
                        vec![],
                        vec![
                            aws(format!(
                                "[default]\nservices = gw\nweb_identity_token_file = {home}/t\n\
                                 role_arn = arn:aws:iam::123456789012:role/gw\n\n\
                                 [services gw]\nsts =\n  endpoint_url = \
                                 http://localhost:{port}/sts-SECRET\n"
                            )),
                            ("AWS_EC2_METADATA_DISABLED", "true".into()),
                        ],
                        format!(
                            "endpoint_url of sts in [services gw] (AWS profile default) \
                             (http://localhost:{port}) is this gateway's own address \
                             (127.0.0.1:{port}), which is no credential endpoint: it would take \
                             each credential request for a client's request and pass it"
                        ),
                    ),
                    1 => (
                        vec![],
                        vec![
                            (
                                "AWS_ENDPOINT_URL_SSO_OIDC",
                                format!("http://127.0.0.1:{port}/SECRET"),
                            ),
                            ("AWS_EC2_METADATA_DISABLED", "true".into()),
                        ],
                        format!(
                            "AWS_ENDPOINT_URL_SSO_OIDC (http://127.0.0.1:{port}) is this \
                             gateway's own address"
                        ),
                    ),
                    2 => (
                        vec![
                            "--resolve".into(),
                            format!("imds.internal.test:8099:127.0.0.1:{port}"),
                        ],
                        vec![
                            aws(
                                "[profile work]\n\
                                 ec2_metadata_service_endpoint = http://imds.internal.test:8099/SECRET\n"
                                    .into(),
                            ),
                            ("AWS_PROFILE", "work".into()),
                            ("AWS_EC2_METADATA_DISABLED", "false".into()),
                        ],
                        format!(
                            "ec2_metadata_service_endpoint of AWS profile work \
                             (http://imds.internal.test:8099) is led by resolve to \
                             127.0.0.1:{port}, this gateway's own address (127.0.0.1:{port}), \
                             which is no credential endpoint: it would refuse each credential \
                             request as a request for another host (403)"
                        ),
                    ),
                    _ => {
                        let meta = format!("http://localhost:{port}/latest/meta-data");
                        std::fs::write(
                            &file,
                            aws_sourced_google_file(&format!(
                                r#","region_url":"{meta}/placement/availability-zone","url":"{meta}/iam/security-credentials","imdsv2_session_token_url":"http://localhost:{port}/latest/api/token""#
                            )),
                        )
                        .unwrap();
                        (
                            vec![],
                            vec![("GOOGLE_APPLICATION_CREDENTIALS", shown.clone())],
                            format!(
                                "credential_source.region_url of the Google credentials \
                                 (external_account in {shown}) (http://localhost:{port}) is this \
                                 gateway's own address"
                            ),
                        )
                    }
                };
            let listen = format!("127.0.0.1:{port}");
            let base = ["serve", "--database", "none", "--listen", &listen].map(String::from);
            let aws = ["--bedrock-region", "us-east-1"].map(String::from);
            let env = env.into_iter().chain([("HOME", home.clone())]).collect();
            let args = base.into_iter().chain(aws).chain(args).collect();
            (args, env, expected)
        })
        .collect();
    let mut cases = cases;
    // Empty keys are none to the chain, which goes on to the container.
    let port = free_port();
    cases.push((
        ["serve", "--database", "none", "--listen"]
            .map(String::from)
            .into_iter()
            .chain([format!("127.0.0.1:{port}")])
            .chain(["--bedrock-region", "us-east-1"].map(String::from))
            .collect(),
        vec![
            ("HOME", home.clone()),
            ("AWS_ACCESS_KEY_ID", String::new()),
            ("AWS_SECRET_ACCESS_KEY", String::new()),
            (
                "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                format!("http://localhost:{port}/v2/credentials/t"),
            ),
        ],
        format!(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI (http://localhost:{port}) is this gateway's own"
        ),
    ));
    let refusals = each_is_refused(&cases);
    for stderr in &refusals {
        assert!(!stderr.contains("SECRET"), "{stderr}");
    }
    // Every metadata URL the Google file's AWS source reads is named.
    for field in ["url", "imdsv2_session_token_url"] {
        let named = format!("credential_source.{field} of the Google credentials");
        assert!(refusals[3].contains(&named), "{}", refusals[3]);
    }
    assert!(!refusals[3].contains("meta-data"), "{}", refusals[3]);
}

/// What the refusal above leaves to start: a `[services …]` section that
/// `AWS_ENDPOINT_URL` comes before; `AWS_ENDPOINT_URL` and a profile's own
/// `endpoint_url` (every service's, which may be meant for the clients
/// beside the gateway) at its address, warned about, naming the chain's
/// calls that would go there; the IMDS endpoints with the instance
/// metadata disabled; a full container URI beside a relative one, which
/// comes first; an AWS-sourced Google file whose region and keys
/// come from the
/// environment. And the section is where the chain's STS call goes: with
/// its STS endpoint at the mock, web identity credentials are fetched
/// there and a Bedrock request is signed with them, though
/// `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is set (which the chain's own
/// clients do not read).
#[test]
fn credential_endpoints_the_gateway_does_not_call_here_start() {
    use toolwarden_mock_provider::AwsCredentialService;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().display().to_string();
    let config = dir.path().join("config");
    let config = config.display().to_string();
    let token = dir.path().join("token");
    std::fs::write(&token, "eyJ.oidc.token").unwrap();
    let token = token.display().to_string();
    let profile = |sts: &str, shared: &str, more: &str| {
        std::fs::write(
            &config,
            format!(
                "[default]\nservices = gw\nendpoint_url = {shared}\n\
                 ec2_metadata_service_endpoint = {shared}\n{more}\n\
                 [services gw]\nsts =\n  endpoint_url = {sts}\n"
            ),
        )
        .unwrap();
    };
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let here = format!("http://localhost:{port}");
    profile(&here, &here, "");
    let web_identity = [
        ("HOME", home.as_str()),
        ("AWS_CONFIG_FILE", config.as_str()),
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token.as_str()),
        ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/gw"),
        ("AWS_EC2_METADATA_DISABLED", "true"),
    ];
    let aws_args = ["--listen", listen.as_str(), "--bedrock-region", "us-east-1"];
    let with = |name: &'static str| -> Vec<(&str, &str)> {
        web_identity
            .iter()
            .copied()
            .chain([(name, here.as_str())])
            .collect()
    };
    let text = start_lines(&aws_args, &with("AWS_ENDPOINT_URL")).join("\n");
    let warned = format!(
        "AWS_ENDPOINT_URL ({here}) is this gateway's own address ({listen}), which is no \
         credential endpoint: it would take each credential request for a client's request"
    );
    assert!(text.contains(&warned), "{text}");
    let calls = "so the gateway starts, but the STS calls of its own AWS credential chain \
                 (web identity, role_arn, SSO) would go there";
    assert!(text.contains(calls), "{text}");
    // The profile's own endpoint_url, for an SSO session's calls (STS
    // goes to the section); one for services the chain does not call
    // (SSO without one) is not named.
    profile("http://127.0.0.1:9", &here, "sso_session = gw");
    let text = start_lines(&aws_args, &with("AWS_EC2_METADATA_SERVICE_ENDPOINT")).join("\n");
    let warned = format!("endpoint_url of AWS profile default ({here}) is this gateway's own");
    assert!(text.contains(&warned), "{text}");
    assert!(text.contains("but the SSO, SSO OIDC calls"), "{text}");
    assert!(
        !text.contains("AWS_EC2_METADATA_SERVICE_ENDPOINT ("),
        "{text}"
    );
    profile("http://127.0.0.1:9", &here, "");
    let text = start_lines(&aws_args, &with("AWS_EC2_METADATA_SERVICE_ENDPOINT")).join("\n");
    assert!(!text.contains("endpoint_url of AWS profile"), "{text}");

    // A relative container URI comes before the full one, which the
    // chain then never asks.
    let full = format!("{here}/v2/credentials/t");
    drop(start(
        &aws_args,
        &[
            ("HOME", home.as_str()),
            (
                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                "/v2/credentials/t",
            ),
            ("AWS_CONTAINER_CREDENTIALS_FULL_URI", full.as_str()),
            ("AWS_EC2_METADATA_DISABLED", "true"),
        ],
    ));

    let google = dir.path().join("adc.json");
    let meta = format!("{here}/latest/meta-data");
    std::fs::write(
        &google,
        aws_sourced_google_file(&format!(
            r#","region_url":"{meta}/placement/availability-zone","url":"{meta}/iam/security-credentials","imdsv2_session_token_url":"{here}/latest/api/token""#
        )),
    )
    .unwrap();
    let google = google.display().to_string();
    drop(start(
        &["--listen", &listen],
        &[
            ("HOME", home.as_str()),
            ("GOOGLE_APPLICATION_CREDENTIALS", google.as_str()),
            ("AWS_REGION", "us-east-1"),
            ("AWS_ACCESS_KEY_ID", "AKIDENV"),
            ("AWS_SECRET_ACCESS_KEY", "env-secret"),
        ],
    ));

    let (_rt, mock) = aws_credential_mock(AwsCredentialService {
        web_identity_token: Some("eyJ.oidc.token".into()),
        ..AwsCredentialService::default()
    });
    let mock_url = format!("http://127.0.0.1:{}", mock.addr().port());
    profile(&mock_url, "http://127.0.0.1:9", "");
    // Not read for the chain's own clients (ProviderConfig::client_config).
    let ignored = [("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")];
    let env: Vec<(&str, &str)> = web_identity.iter().chain(&ignored).copied().collect();
    let served = start(
        &[
            "--listen",
            "127.0.0.1:0",
            "--bedrock-upstream",
            &mock_url,
            "--bedrock-region",
            "us-east-1",
        ],
        &env,
    );
    let head = "POST /model/anthropic.claude-x-v1:0/invoke HTTP/1.1\r\n\
                content-type: application/json\r\n\
                x-amz-date: 20251125T170000Z\r\n\
                authorization: AWS4-HMAC-SHA256 \
                Credential=AKIDCLIENT/20251125/us-east-1/bedrock/aws4_request, \
                SignedHeaders=host;x-amz-date, Signature=0123";
    let body = r#"{"anthropic_version":"bedrock-2023-05-31","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}"#;
    let (status, answer) = exchange(&served.addr, head, body);
    assert!(status.contains(" 200 "), "{status} {answer}");
    let received = mock.received();
    assert_eq!(
        received.iter().filter(|r| r.path == "/").count(),
        1,
        "{received:?}"
    );
    let signed = received.last().unwrap();
    assert_eq!(signed.header("x-amz-security-token"), Some(SERVED));
}

#[test]
fn likely_mistakes_are_warned_about_in_plain_text() {
    let lines = start_lines(
        &[
            "--listen",
            "127.0.0.1:0",
            "--openai-upstream",
            "https://api.openai.com/v1",
        ],
        &[("TOOLWARDEN_LISTN", "127.0.0.1:9999")],
    );
    let text = lines.join("\n");
    assert!(
        text.contains(
            "TOOLWARDEN_LISTN is not a setting and is ignored (did you mean TOOLWARDEN_LISTEN?)"
        ),
        "{text}"
    );
    assert!(text.contains("openai_upstream ends in /v1"), "{text}");
    assert!(!text.contains('\u{1b}'), "colour codes in a pipe: {text:?}");
}

#[test]
fn a_closed_dashboard_is_warned_about_and_json_logs_are_json() {
    let lines = start_lines(&["--listen", "0.0.0.0:0", "--log-format", "json"], &[]);
    let logged: Vec<serde_json::Value> = lines
        .iter()
        .filter(|l| !l.starts_with("toolwarden: listening on"))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let warning = logged
        .iter()
        .find(|v| v["level"] == "WARN")
        .unwrap_or_else(|| panic!("no warning: {logged:#?}"));
    let message = warning["fields"]["message"].as_str().unwrap();
    assert!(message.contains("without admin_token"), "{message}");
    assert!(logged.iter().any(|v| v["level"] == "INFO"), "{logged:#?}");

    let out = bin()
        .args(["stats", "--database", "none"])
        .env("TOOLWARDEN_LOG_FORMAT", "yaml")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("TOOLWARDEN_LOG_FORMAT"), "{stderr}");
}

/// `RUST_LOG=toolwarden::access=debug` logs one line per request, naming
/// its path, status and provider, and neither the key in the query nor
/// any header.
#[test]
fn the_access_log_has_a_line_per_request_without_credentials() {
    use std::io::{Read, Write};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mock = rt.block_on(toolwarden_mock_provider::MockProvider::start(
        toolwarden_mock_provider::MockOptions::default(),
    ));
    let served = start(
        &[
            "--listen",
            "127.0.0.1:0",
            "--anthropic-upstream",
            &mock.base_url(),
        ],
        &[("RUST_LOG", "warn,toolwarden::access=debug")],
    );
    let body =
        r#"{"model":"claude-test","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}"#;
    let mut s = std::net::TcpStream::connect(&served.addr).unwrap();
    write!(
        s,
        "POST /v1/messages?key=sk-query-secret HTTP/1.1\r\nhost: localhost\r\n\
         content-type: application/json\r\nx-api-key: sk-header-secret\r\n\
         anthropic-version: 2023-06-01\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let line = loop {
        let line = served
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("an access log line within 10 s");
        if line.contains("toolwarden::access") {
            break line;
        }
    };
    for part in ["path=/v1/messages", "status=200", "provider=\"anthropic\""] {
        assert!(line.contains(part), "{part} not in {line}");
    }
    assert!(!line.contains("secret"), "{line}");
}

/// A negative number is refused in the setting's own words (not as an
/// unknown flag), and `--help` lists the flags under their sections.
#[test]
fn a_negative_number_is_a_bad_value_and_help_has_sections() {
    let out = bin()
        .args(["serve", "--connect-timeout-ms", "-5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("'-5' for '--connect-timeout-ms") && stderr.contains("non-negative"),
        "{stderr}"
    );
    let help = bin().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for section in [
        "Listening:",
        "Upstreams:",
        "Recording:",
        "OpenTelemetry:",
        "Alerts:",
    ] {
        assert!(
            help.lines().any(|l| l == section),
            "{section} missing:\n{help}"
        );
    }
}

/// An empty flag value (`--database=$DB` with `DB` unset) is refused,
/// naming the flag: `serve --database=` ran without recording, and
/// `--otlp-endpoint=` or `--bedrock-region=` were silently unset.
#[test]
fn an_empty_flag_value_is_refused_naming_the_flag() {
    for args in [
        &["serve", "--database="][..],
        &["serve", "--otlp-endpoint="],
        &["serve", "--bedrock-region="],
        &["serve", "--allowed-hosts="],
        &["serve", "--jsonl", ""],
        &["serve", "--alert-format="],
        &["serve", "--alert-webhook="],
        &["stats", "--database="],
        &["alerts", "--database="],
    ] {
        let flag = args[1].trim_end_matches('=');
        // A `serve` that takes the value runs until killed.
        let child = bin()
            .args(args)
            .args(
                ["--listen", "127.0.0.1:0"]
                    .iter()
                    .filter(|_| args[0] == "serve"),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = ended(child);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            (stderr.contains(&format!("'' for '{flag}")) && stderr.contains("empty"))
                || stderr.contains(&format!("a value is required for '{flag} ")),
            "{args:?}: {stderr}"
        );
    }
}

/// Once it listens, `serve` says where to look next: the dashboard at its
/// address, what it records to, the upstreams, what is on — and a
/// collector's password is hidden. With JSON logs it does not (stderr
/// stays JSON, but for the line naming the address).
#[test]
fn serve_says_where_to_look_next_and_hides_passwords() {
    let served = start(
        &[
            "--listen",
            "127.0.0.1:0",
            "--otlp-endpoint",
            "http://user:pw-secret@collector:4318",
        ],
        &[],
    );
    let mut banner = Vec::new();
    while let Ok(line) = served.lines.recv_timeout(Duration::from_secs(5)) {
        banner.push(line);
        if banner.len() == 4 {
            break;
        }
    }
    let text = banner.join("\n");
    assert!(
        text.contains(&format!("  dashboard  http://{}/", served.addr)),
        "{text}"
    );
    assert!(
        text.contains("  recording  none (--database none)"),
        "{text}"
    );
    assert!(
        text.contains("  upstreams  openai https://api.openai.com · anthropic"),
        "{text}"
    );
    assert!(text.contains("alerts off (no database)"), "{text}");
    assert!(
        text.contains("otlp http://user:***@collector:4318/v1/traces (http/protobuf)"),
        "{text}"
    );
    assert!(!text.contains("pw-secret"), "{text}");
    drop(served);

    let served = start(&["--listen", "127.0.0.1:0", "--log-format", "json"], &[]);
    if let Ok(line) = served.lines.recv_timeout(Duration::from_millis(500)) {
        assert!(line.starts_with('{'), "not JSON after the address: {line}");
    }
}

/// Standard error a pipe whose reader went away (`serve 2>&1 | head -1`,
/// a log collector that stopped): `serve` starts, answers every request
/// though each writes a log line, and stops cleanly. The log lines are
/// lost; before, the first one panicked the thread that wrote it: the
/// start (exit 101), then each proxy worker mid-request (the connection
/// closed without an answer).
#[cfg(unix)]
#[test]
fn a_closed_stderr_does_not_stop_the_gateway() {
    use std::io::{Read, Write};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mock = rt.block_on(toolwarden_mock_provider::MockProvider::start(
        toolwarden_mock_provider::MockOptions::default(),
    ));
    let addr = format!("127.0.0.1:{}", free_port());
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = bin()
        .args(["serve", "--database", "none", "--workers", "1"])
        .args(["--listen", &addr, "--anthropic-upstream", &mock.base_url()])
        .env("RUST_LOG", "info,toolwarden::access=debug")
        .stdout(Stdio::null())
        .stderr(writer)
        .spawn()
        .expect("spawn toolwarden serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    let body =
        r#"{"model":"claude-test","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}"#;
    let mut answered = 0;
    while answered < 3 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "serve ended: {:?}",
            child.try_wait()
        );
        assert!(Instant::now() < deadline, "serve did not answer in 30 s");
        let Ok(mut s) = std::net::TcpStream::connect(&addr) else {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        write!(
            s,
            "POST /v1/messages HTTP/1.1\r\nhost: localhost\r\n\
             content-type: application/json\r\nx-api-key: sk-test\r\n\
             anthropic-version: 2023-06-01\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
        answered += 1;
    }
    let stopped = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// A setting that holds a credential has no flag: every local user sees
/// a flag's value in `ps`. `--admin-token` had one; it and the others
/// given as flags are refused, saying where the value goes, without
/// repeating it (and not with clap's tip to try `--admin-token` for
/// `--lend-token`).
#[test]
fn a_credential_is_not_taken_as_a_flag() {
    for (flag, variable) in [
        ("--admin-token", "TOOLWARDEN_ADMIN_TOKEN"),
        ("--lend-token", "TOOLWARDEN_LEND_TOKEN"),
        ("--otlp-headers", "TOOLWARDEN_OTLP_HEADERS"),
    ] {
        let out = bin()
            // A listen address refused at start: a flag taken as a setting
            // ends the command too, instead of serving.
            .args(["serve", "--listen", "no-such-address", "--database", "none"])
            .args([flag, "tok-sekret-123456789"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
        assert!(
            stderr.contains(&format!("{flag} is not a flag")) && stderr.contains(variable),
            "{flag}: {stderr}"
        );
        assert!(!stderr.contains("sekret"), "{flag}: {stderr}");
        assert!(!stderr.contains("similar argument"), "{flag}: {stderr}");
    }
    let help = bin().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(!help.contains("--admin-token"), "{help}");
}

/// `--alert-webhook` takes a URL that is often a secret (Slack's): kept
/// for compatibility, its help says a flag shows in `ps` and names the
/// variable and the file instead; the URL is never printed (the banner
/// counts webhooks, a bad one is named by its number, the logs name a
/// webhook's host at most), at debug too.
#[test]
fn a_webhook_url_is_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("t.db").display());
    let hook = "https://hooks.slack.com/services/T0SECRET/B0SECRET/xoxSECRET";
    let served = start_recording(
        &["--database", &db, "--listen", "127.0.0.1:0"],
        &[("RUST_LOG", "debug"), ("TOOLWARDEN_ALERT_WEBHOOK", hook)],
    );
    let mut lines = served.started.clone();
    while let Ok(line) = served.lines.recv_timeout(Duration::from_millis(500)) {
        lines.push(line);
    }
    drop(served);
    let text = lines.join("\n");
    assert!(text.contains("alerts on, 1 webhook"), "{text}");
    assert!(!text.contains("SECRET"), "{text}");
    let served = start_recording(
        &[
            "--database",
            &db,
            "--listen",
            "127.0.0.1:0",
            "--alert-webhook",
            hook,
        ],
        &[("RUST_LOG", "debug")],
    );
    let text = served.started.join("\n");
    assert!(!text.contains("SECRET"), "{text}");
    drop(served);
    for bad in [
        "ftp://hooks.slack.com/services/T0SECRET",
        "https://user:pwSECRET@/services/T0SECRET",
        "hooks.slack.com/services/T0SECRET",
        "https://hooks.slack.com/services/T0 SECRET",
    ] {
        let out = bin()
            .args(["serve", "--database", "none", "--alert-webhook", bad])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("alert webhook #1"), "{bad}: {stderr}");
        assert!(!stderr.contains("SECRET"), "{bad}: {stderr}");
    }
    let help = bin().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let flag = help
        .split("--alert-webhook")
        .nth(1)
        .and_then(|after| after.split("\n      --").next())
        .unwrap_or_default();
    assert!(
        flag.contains("`ps`") && flag.contains("TOOLWARDEN_ALERT_WEBHOOK"),
        "{help}"
    );
}

/// A `RUST_LOG` that is not a filter was ignored without a word (the
/// gateway logging at its default while the operator waited for debug
/// lines): it is now named in a warning. An empty one is unset (it hid
/// every line but errors).
#[test]
fn an_unreadable_rust_log_is_warned_about() {
    let lines = start_lines(&["--listen", "127.0.0.1:0"], &[("RUST_LOG", " ")]);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("INFO") && l.contains("toolwarden gateway listening")),
        "{lines:#?}"
    );
    let lines = start_lines(
        &["--listen", "127.0.0.1:0"],
        &[("RUST_LOG", "toolwarden=verbose")],
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("WARN") && l.contains("RUST_LOG is not a filter")),
        "{lines:#?}"
    );
}

/// One HTTP/1.1 exchange with `addr`: the status line and the body.
fn exchange(addr: &str, head: &str, body: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{head}\r\nhost: localhost\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.lines().next().unwrap_or_default().to_string();
    (status, body.to_string())
}

/// `stats --json` is `/api/stats`'s document for the same database and
/// settings (its help says so): it listed the store's 200 tools where
/// the gateway lists `dashboard_tool_rows` of them.
#[test]
fn stats_json_is_the_gateways_api_stats() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mock = rt.block_on(toolwarden_mock_provider::MockProvider::start(
        toolwarden_mock_provider::MockOptions::default(),
    ));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolwarden.toml");
    std::fs::write(&config, "database = \"t.db\"\ndashboard_tool_rows = 1\n").unwrap();
    let config = config.display().to_string();
    let upstream = mock.base_url();
    let served = start_recording(
        &[
            "--config",
            &config,
            "--listen",
            "127.0.0.1:0",
            "--openai-upstream",
            &upstream,
        ],
        &[],
    );
    for tool in ["read_file", "Bash", "grep"] {
        let body = format!(
            r#"{{"model":"gpt-test","messages":[{{"role":"user","content":"hi"}}],"tools":[{{"type":"function","function":{{"name":"{tool}","parameters":{{"type":"object"}}}}}}]}}"#
        );
        let (status, answer) = exchange(
            &served.addr,
            "POST /v1/chat/completions HTTP/1.1\r\ncontent-type: application/json\r\n\
             authorization: Bearer sk-test",
            &body,
        );
        assert!(status.contains(" 200 "), "{status} {answer}");
    }
    // The gateway's document once the three tools are recorded.
    let deadline = Instant::now() + Duration::from_secs(20);
    let api = loop {
        let (status, body) = exchange(&served.addr, "GET /api/stats?since=all HTTP/1.1", "");
        assert!(status.contains(" 200 "), "{status} {body}");
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        if doc["totals"]["tools"] == 3 {
            break doc;
        }
        assert!(Instant::now() < deadline, "not recorded: {doc}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(api["tools"].as_array().map(Vec::len), Some(1), "{api}");
    let out = bin()
        .args(["stats", "--json", "--since", "all", "--config", &config])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let cli: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cli, api);
}

/// A malformed `resolve` entry, as a flag or a variable, stops `serve`
/// before it listens, naming the entry and the form it should have.
#[test]
fn a_malformed_resolve_entry_is_refused() {
    for (args, env) in [
        (&["--resolve", "llm.internal.test:443"][..], None),
        (&[][..], Some("llm.internal.test:443:llm.internal.test")),
    ] {
        let mut c = bin();
        c.args(["serve", "--database", "none", "--listen", "127.0.0.1:0"])
            .args(args);
        if let Some(value) = env {
            c.env("TOOLWARDEN_RESOLVE", value);
        }
        let out = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}: {stderr}");
        let entry = args.get(1).copied().or(env).unwrap();
        assert!(
            stderr.contains(&format!("resolve {entry:?}: expected HOST:PORT:ADDR")),
            "{args:?} {env:?}: {stderr}"
        );
    }
}

/// An upstream whose name no resolver knows (`llm.internal.test`, as a
/// private endpoint's) is reached at the address `--resolve` gives it,
/// over TLS checked for the name (a certificate for that name alone,
/// from a CA given by `--upstream-ca`), with the name as `Host`: on the
/// fast path (a `content-length` body) and on hyper's (a chunked one).
/// Without the entry the name does not resolve and the gateway answers
/// 502.
#[test]
fn a_resolved_name_is_reached_at_its_address_with_its_name_kept() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let tls = toolwarden_mock_provider::MockTls::generate_for(&["llm.internal.test"]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, tls.ca_pem()).unwrap();
    let ca = ca.display().to_string();
    let mock = rt.block_on(toolwarden_mock_provider::MockProvider::start(
        toolwarden_mock_provider::MockOptions {
            tls: Some(tls),
            ..Default::default()
        },
    ));
    let port = mock.addr().port();
    let upstream = "https://llm.internal.test:8443";
    let entry = format!("llm.internal.test:8443:127.0.0.1:{port}");
    let body = r#"{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}"#;
    let head = "POST /v1/chat/completions HTTP/1.1\r\ncontent-type: application/json\r\n\
                authorization: Bearer sk-test";
    let unresolved = start(
        &[
            "--listen",
            "127.0.0.1:0",
            "--openai-upstream",
            upstream,
            "--upstream-ca",
            &ca,
        ],
        &[],
    );
    let (status, answer) = exchange(&unresolved.addr, head, body);
    assert!(status.contains(" 502 "), "{status} {answer}");
    drop(unresolved);
    assert_eq!(mock.request_count(), 0);
    let served = start(
        &[
            "--listen",
            "127.0.0.1:0",
            "--openai-upstream",
            upstream,
            "--upstream-ca",
            &ca,
            "--resolve",
            &entry,
        ],
        &[],
    );
    let (status, answer) = exchange(&served.addr, head, body);
    assert!(status.contains(" 200 "), "fast path: {status} {answer}");
    let (status, answer) = exchange_chunked(&served.addr, head, body);
    assert!(status.contains(" 200 "), "hyper's path: {status} {answer}");
    let received = mock.received();
    assert_eq!(received.len(), 2);
    for r in &received {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.header("host"), Some("llm.internal.test:8443"), "{r:?}");
    }
}

/// The session token the mock's AWS credential service hands out, and the
/// only one its Bedrock accepts beside its key.
const SERVED: &str = "served-session-token";

/// A mock whose AWS credential service (`service`, its session token
/// [`SERVED`], an hour's lifetime) hands out the credentials its Bedrock
/// accepts, on a runtime of its own (kept alive by the caller).
fn aws_credential_mock(
    service: toolwarden_mock_provider::AwsCredentialService,
) -> (
    tokio::runtime::Runtime,
    toolwarden_mock_provider::MockProvider,
) {
    use toolwarden_mock_provider::{AwsCredentialService, AwsTestKey, MockOptions, MockProvider};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mock = rt.block_on(MockProvider::start(MockOptions {
        aws_key: Some(AwsTestKey::new("AKIDMOCK", "mock-secret").with_session_token(SERVED)),
        aws_credential_service: Some(AwsCredentialService {
            session_token: SERVED.into(),
            lifetime: Duration::from_secs(3600),
            ..service
        }),
        ..Default::default()
    }));
    (rt, mock)
}

/// The AWS credential chain's STS reached under a name only `--resolve`
/// leads anywhere (`sts.vpce.test`, as a VPC endpoint's private name,
/// through `AWS_ENDPOINT_URL_STS`; plain HTTP, which the SDK takes for an
/// endpoint, on the mock's port, since an entry keeps the URL's port):
/// web identity credentials are fetched from the mock's STS, with the name
/// as `Host`, and a Bedrock request is signed with them. Without the entry
/// the name resolves nowhere, the request goes with the client's own
/// signature, and the mock refuses it.
#[test]
fn the_aws_credential_chain_reaches_sts_at_its_resolved_address() {
    use toolwarden_mock_provider::AwsCredentialService;
    let (_rt, mock) = aws_credential_mock(AwsCredentialService {
        web_identity_token: Some("eyJ.oidc.token".into()),
        ..AwsCredentialService::default()
    });
    let port = mock.addr().port();
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "eyJ.oidc.token").unwrap();
    let home = dir.path().display().to_string();
    let token = token.display().to_string();
    let sts = format!("http://sts.vpce.test:{port}");
    let env = [
        ("HOME", home.as_str()),
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token.as_str()),
        ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/gw"),
        ("AWS_ENDPOINT_URL_STS", sts.as_str()),
        ("AWS_EC2_METADATA_DISABLED", "true"),
    ];
    let bedrock = format!("http://127.0.0.1:{port}");
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--bedrock-upstream",
        &bedrock,
        "--bedrock-region",
        "us-east-1",
    ];
    let head = "POST /model/anthropic.claude-x-v1:0/invoke HTTP/1.1\r\n\
                content-type: application/json\r\n\
                x-amz-date: 20251125T170000Z\r\n\
                authorization: AWS4-HMAC-SHA256 \
                Credential=AKIDCLIENT/20251125/us-east-1/bedrock/aws4_request, \
                SignedHeaders=host;x-amz-date, Signature=0123";
    let body = r#"{"anthropic_version":"bedrock-2023-05-31","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}"#;

    let unresolved = start(&args, &env);
    let (status, answer) = exchange(&unresolved.addr, head, body);
    assert!(status.contains(" 403 "), "{status} {answer}");
    drop(unresolved);
    let received = mock.received();
    assert!(received.iter().all(|r| r.path != "/"), "{received:?}");

    let entry = format!("sts.vpce.test:{port}:127.0.0.1");
    let args: Vec<&str> = args.iter().copied().chain(["--resolve", &entry]).collect();
    let served = start(&args, &env);
    let (status, answer) = exchange(&served.addr, head, body);
    assert!(status.contains(" 200 "), "{status} {answer}");
    let received = mock.received();
    let sts: Vec<_> = received.iter().filter(|r| r.path == "/").collect();
    assert_eq!(sts.len(), 1, "{received:?}");
    let host = format!("sts.vpce.test:{port}");
    assert_eq!(sts[0].header("host"), Some(host.as_str()));
    let signed = received.last().unwrap();
    assert_eq!(signed.path, "/model/anthropic.claude-x-v1:0/invoke");
    assert_eq!(signed.header("x-amz-security-token"), Some(SERVED));
}
/// A plain-HTTP `AWS_CONTAINER_CREDENTIALS_FULL_URI` whose name and port
/// `resolve` fixes is judged by AWS's rule (loopback or a container
/// address) at the entry's address, where the request goes: a name only
/// the entry knows is served (aws-config looked it up itself and failed),
/// and `localhost` led to `0.0.0.0` is refused with aws-config's own error
/// (it judged `localhost`'s DNS answer and sent the container's token to
/// the entry's address).
#[test]
fn the_container_endpoint_is_judged_at_its_resolved_address() {
    use toolwarden_mock_provider::{AwsCredentialService, MockProvider};
    let (_rt, mock) = aws_credential_mock(AwsCredentialService {
        container_token: Some("Bearer container-auth".into()),
        ..AwsCredentialService::default()
    });
    let port = mock.addr().port();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().display().to_string();
    let bedrock = format!("http://127.0.0.1:{port}");
    let head = "POST /model/anthropic.claude-x-v1:0/invoke HTTP/1.1\r\n\
                content-type: application/json\r\n\
                x-amz-date: 20251125T170000Z\r\n\
                authorization: AWS4-HMAC-SHA256 \
                Credential=AKIDCLIENT/20251125/us-east-1/bedrock/aws4_request, \
                SignedHeaders=host;x-amz-date, Signature=0123";
    let body = r#"{"anthropic_version":"bedrock-2023-05-31","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}"#;
    let serve = |uri: &str, entry: &str| {
        let env = [
            ("HOME", home.as_str()),
            ("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri),
            ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer container-auth"),
            ("AWS_EC2_METADATA_DISABLED", "true"),
        ];
        let args = [
            "--listen",
            "127.0.0.1:0",
            "--bedrock-upstream",
            &bedrock,
            "--bedrock-region",
            "us-east-1",
            "--resolve",
            entry,
        ];
        let served = start(&args, &env);
        let answer = exchange(&served.addr, head, body);
        (served, answer)
    };
    let fetched = |mock: &MockProvider| {
        mock.received()
            .iter()
            .filter(|r| r.path == "/v2/credentials/task-1")
            .count()
    };

    // A name DNS does not know (RFC 6761), which the entry leads to the mock.
    let (served, (status, answer)) = serve(
        &format!("http://creds.internal.test:{port}/v2/credentials/task-1"),
        &format!("creds.internal.test:{port}:127.0.0.1"),
    );
    assert!(status.contains(" 200 "), "{status} {answer}");
    drop(served);
    assert_eq!(fetched(&mock), 1);
    let received = mock.received();
    let signed = received.last().unwrap();
    assert_eq!(signed.path, "/model/anthropic.claude-x-v1:0/invoke");
    assert_eq!(signed.header("x-amz-security-token"), Some(SERVED));

    // `localhost`, which DNS answers with a loopback address, led by the
    // entry to 0.0.0.0: not an address AWS allows plain HTTP to (on Linux
    // a connection to it reaches the mock all the same).
    let (served, (status, answer)) = serve(
        &format!("http://localhost:{port}/v2/credentials/task-1"),
        &format!("localhost:{port}:0.0.0.0"),
    );
    assert!(status.contains(" 403 "), "{status} {answer}");
    assert_eq!(fetched(&mock), 1, "the token went to 0.0.0.0");
    let mut lines = served.started.clone();
    while let Ok(line) = served.lines.recv_timeout(Duration::from_millis(500)) {
        lines.push(line);
    }
    let log = lines.join("\n");
    assert!(
        log.contains("URI did not refer to an allowed IP address"),
        "{log}"
    );
}

/// `AWS_ENDPOINT_URL` (every service's, only warned about at start) at
/// the gateway's own address, with web identity credentials whose STS
/// call it takes: the chain's own client refuses to connect there, so the
/// web identity token reaches neither the gateway nor, through it, the
/// provider (the OpenAI upstream here, the mock, where it arrived at `/`
/// before); the Bedrock request goes with the client's signature, the
/// mock refuses it, and the log says why. With the setting at the mock's
/// STS the same gateway fetches credentials there and signs the request.
#[test]
fn the_credential_chain_does_not_call_its_own_address() {
    use toolwarden_mock_provider::AwsCredentialService;
    let (_rt, mock) = aws_credential_mock(AwsCredentialService {
        web_identity_token: Some("eyJ.oidc.token".into()),
        ..AwsCredentialService::default()
    });
    let mock_url = format!("http://127.0.0.1:{}", mock.addr().port());
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "eyJ.oidc.token").unwrap();
    let home = dir.path().display().to_string();
    let token = token.display().to_string();
    let head = "POST /model/anthropic.claude-x-v1:0/invoke HTTP/1.1\r\n\
                content-type: application/json\r\n\
                x-amz-date: 20251125T170000Z\r\n\
                authorization: AWS4-HMAC-SHA256 \
                Credential=AKIDCLIENT/20251125/us-east-1/bedrock/aws4_request, \
                SignedHeaders=host;x-amz-date, Signature=0123";
    let body = r#"{"anthropic_version":"bedrock-2023-05-31","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}"#;
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let serve = |endpoint: &str| {
        let env = [
            ("HOME", home.as_str()),
            ("AWS_WEB_IDENTITY_TOKEN_FILE", token.as_str()),
            ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/gw"),
            ("AWS_ENDPOINT_URL", endpoint),
            ("AWS_EC2_METADATA_DISABLED", "true"),
        ];
        let args = [
            "--listen",
            listen.as_str(),
            "--openai-upstream",
            &mock_url,
            "--bedrock-upstream",
            &mock_url,
            "--bedrock-region",
            "us-east-1",
        ];
        let served = start(&args, &env);
        let answer = exchange(&served.addr, head, body);
        (served, answer)
    };
    let here = format!("http://127.0.0.1:{port}");
    let (served, (status, answer)) = serve(&here);
    let received = mock.received();
    let passed_on: Vec<_> = received
        .iter()
        .filter(|r| String::from_utf8_lossy(&r.body).contains("eyJ.oidc.token"))
        .map(|r| &r.path)
        .collect();
    assert!(
        passed_on.is_empty(),
        "the web identity token reached the provider through the gateway at {passed_on:?}"
    );
    assert!(status.contains(" 403 "), "{status} {answer}");
    let signed = received.last().expect("the Bedrock request");
    assert_eq!(signed.path, "/model/anthropic.claude-x-v1:0/invoke");
    assert_eq!(signed.header("x-amz-security-token"), None);
    let mut lines = served.started.clone();
    while let Ok(line) = served.lines.recv_timeout(Duration::from_millis(500)) {
        lines.push(line);
    }
    drop(served);
    let log = lines.join("\n");
    let refused = format!(
        "not sent: the AWS credential chain's request to {here} is this gateway's own address \
         ({listen}), which would take it for a client's request and pass it, with the \
         credentials it carries, to a provider"
    );
    assert!(log.contains(&refused), "{log}");
    assert!(!log.contains("eyJ.oidc.token"), "{log}");

    let before = mock.received().len();
    let (_served, (status, answer)) = serve(&mock_url);
    assert!(status.contains(" 200 "), "{status} {answer}");
    let received = mock.received();
    let sts: Vec<_> = received[before..]
        .iter()
        .filter(|r| r.path == "/")
        .collect();
    assert_eq!(sts.len(), 1, "{received:?}");
    let signed = received.last().unwrap();
    assert_eq!(signed.path, "/model/anthropic.claude-x-v1:0/invoke");
    assert_eq!(signed.header("x-amz-security-token"), Some(SERVED));
}

/// As [`exchange`], the body sent in one chunk (which hyper's path serves).
fn exchange_chunked(addr: &str, head: &str, body: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{head}\r\nhost: localhost\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n\
         {:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.lines().next().unwrap_or_default().to_string();
    (status, body.to_string())
}

/// With `--tls-cert` and `--tls-key` `serve` says it listens on
/// `https://` (its dashboard too), and `env`, reading the same settings,
/// prints `https://` base URLs; one file alone stops the start.
#[test]
fn a_gateway_serving_https_says_so() {
    let tls = concat!(env!("CARGO_MANIFEST_DIR"), "/../gateway/tests/tls");
    let (cert, key) = (format!("{tls}/server.pem"), format!("{tls}/server.key"));
    let served = start(
        &[
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
        ],
        &[],
    );
    let text = served.started.join("\n");
    assert!(text.contains("listening on https://127.0.0.1:"), "{text}");
    let dashboard = served.lines.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(
        dashboard.contains(&format!("dashboard  https://{}/", served.addr)),
        "{dashboard}"
    );
    drop(served);

    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .current_dir(dir.path())
        .arg("env")
        .envs([
            ("TOOLWARDEN_LISTEN", "8443"),
            ("TOOLWARDEN_TLS_CERT", cert.as_str()),
            ("TOOLWARDEN_TLS_KEY", key.as_str()),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("export ANTHROPIC_BASE_URL='https://127.0.0.1:8443'\n"),
        "{stdout}"
    );

    let out = bin()
        .args([
            "serve",
            "--database",
            "none",
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            &cert,
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr.contains("tls_cert is set without tls_key"),
        "{stderr}"
    );
}
