//! The gateway's own cloud credentials (issue 18), through the mock:
//! - Vertex AI: a request without a credential gets the gateway's token,
//!   obtained at the mock's token endpoint with a service account's signed
//!   JWT (verified with the key's public half), an authorized user's
//!   refresh token or workload identity federation (the mock's STS and
//!   `generateAccessToken`), and cached; a client's own Bearer passes unchanged; a
//!   refused grant leaves the request as it came.
//! - Bedrock: credentials from a profile's `credential_process`, the
//!   container credentials endpoint, IMDSv2 and STS web identity (served
//!   by the mock), resolved by `aws-config`'s default chain over the
//!   environment the gateway read, sign requests the mock verifies (STS
//!   `AssumeRole` and SSO: `cloud_federation`).

use std::{path::Path, sync::Arc};

use serde_json::json;
use toolwarden_gateway::{
    LEND_TOKEN_HEADER, LendToken, Upstream,
    cloud::{aws::AwsEnv, google::GoogleAuth},
};
use toolwarden_mock_provider::{
    ACTIONS_REQUEST_TOKEN, AwsCredentialService, GOOGLE_TEST_PRIVATE_KEY_PEM, GoogleTestKey,
    MockOptions,
};

use super::{
    cloud::{
        KEY_ID, SECRET, aws_mock_with_token, client_signed, expect_counts, invoke_convo, round,
        two_calls,
    },
    convo::{Convo, Kind},
    support::{self, Harness, post},
};

const GATEWAY_TOKEN: &str = "ya29.gateway-own-token";

fn google_mock() -> MockOptions {
    MockOptions {
        google_key: Some(GoogleTestKey::test(GATEWAY_TOKEN)),
        ..two_calls()
    }
}

/// A credentials file in `dir` whose `token_uri` is the mock's. For
/// `external_account`s (`external_file`, `external_url`), `refresh_token`
/// is the subject token the file source holds.
fn credentials_file(dir: &Path, mock: &str, kind: &str, refresh_token: &str) -> std::path::PathBuf {
    let mock = mock.trim_end_matches('/');
    let token_uri = format!("{mock}/token");
    let external = |source: serde_json::Value, impersonate: bool| {
        let mut file = json!({
            "type": "external_account",
            "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/ci/providers/gh",
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": format!("{mock}/v1/token"),
            "credential_source": source,
        });
        if impersonate {
            file["service_account_impersonation_url"] = json!(format!(
                "{mock}/v1/projects/-/serviceAccounts/gateway@p1.iam.gserviceaccount.com:generateAccessToken"
            ));
        }
        file
    };
    let file = match kind {
        "external_file" => {
            let token = dir.join("oidc-token");
            std::fs::write(&token, format!("{refresh_token}\n")).unwrap();
            external(json!({ "file": token.display().to_string() }), false)
        }
        // A program printing an OIDC token (a response of version 1).
        "external_executable" => {
            let script = dir.join("token.sh");
            let response = json!({
                "version": 1,
                "success": true,
                "token_type": "urn:ietf:params:oauth:token-type:jwt",
                "id_token": refresh_token,
                "expiration_time": 4_000_000_000u64,
            });
            std::fs::write(&script, format!("echo '{response}'\n")).unwrap();
            let command = format!("sh {}", script.display());
            external(json!({ "executable": { "command": command } }), false)
        }
        // As GitHub Actions' Google auth step writes it.
        "external_url" => external(
            json!({
                "url": format!("{mock}/oidc/token?audience=google"),
                "headers": { "Authorization": format!("Bearer {ACTIONS_REQUEST_TOKEN}") },
                "format": { "type": "json", "subject_token_field_name": "value" },
            }),
            true,
        ),
        "service_account" => json!({
            "type": "service_account",
            "project_id": "p1",
            "private_key_id": "test-key-1",
            "private_key": GOOGLE_TEST_PRIVATE_KEY_PEM,
            "client_email": "gateway@p1.iam.gserviceaccount.com",
            "token_uri": token_uri,
        }),
        _ => json!({
            "type": "authorized_user",
            "client_id": "123.apps.googleusercontent.com",
            "client_secret": "mock-client-secret",
            "refresh_token": refresh_token,
            "token_uri": token_uri,
        }),
    };
    let path = dir.join(format!("{kind}.json"));
    std::fs::write(&path, file.to_string()).unwrap();
    path
}

async fn vertex(kind: &str, refresh_token: &str) -> (Harness, tempfile::TempDir) {
    vertex_with(kind, refresh_token, |_| {}).await
}

async fn vertex_with(
    kind: &str,
    refresh_token: &str,
    tweak: impl FnOnce(&mut toolwarden_gateway::Config) + Send + 'static,
) -> (Harness, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let dir_path = dir.path().to_path_buf();
    let kind = kind.to_string();
    let refresh_token = refresh_token.to_string();
    let h = Harness::with(google_mock(), move |c| {
        let mock = c.upstreams.gemini.to_string();
        c.cloud.vertex = Some(c.upstreams.gemini.clone());
        // Through the environment seam, as the gateway reads it.
        let mut env = AwsEnv::default();
        let path = credentials_file(&dir_path, &mock, &kind, &refresh_token);
        env.insert(
            "GOOGLE_APPLICATION_CREDENTIALS".into(),
            path.display().to_string(),
        );
        env.insert(
            "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES".into(),
            "1".into(),
        );
        let auth = GoogleAuth::from_env(&env, &mut Vec::new())
            .unwrap()
            .expect("credentials");
        c.cloud.google = Some(Arc::new(auth));
        tweak(c);
    })
    .await;
    (h, dir)
}

fn anthropic_vertex_convo() -> Convo {
    let mut convo = Convo::new(Kind::Anthropic, false, None);
    let body = convo.body.as_object_mut().unwrap();
    body.remove("model");
    body.insert("anthropic_version".into(), json!("vertex-2023-10-16"));
    convo
}

fn authorizations(h: &Harness) -> Vec<(String, Option<String>)> {
    h.mock
        .received()
        .iter()
        .map(|r| {
            let auth = r
                .headers
                .get("authorization")
                .map(|v| v.to_str().unwrap().to_string());
            (r.path.clone(), auth)
        })
        .collect()
}

#[tokio::test]
async fn vertex_without_a_token_gets_the_gateways_service_account_token() {
    let (h, _dir) = vertex("service_account", "").await;
    let gw = h.gw();
    let url = format!(
        "{gw}/vertex/v1/projects/p1/locations/global/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict"
    );
    let mut convo = anthropic_vertex_convo();
    round(&h, &mut convo, &url, &[]).await;
    let mut gemini = Convo::new(Kind::Gemini, true, None);
    round(
        &h,
        &mut gemini,
        &format!("{gw}/v1beta1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
        &[],
    )
    .await;
    expect_counts(&h, "vertex", Some("claude-sonnet-4@20250514"), 1.0).await;
    expect_counts(&h, "vertex", Some("gemini-2.5-flash"), 1.0).await;
    let seen = authorizations(&h);
    // One token fetch, cached for the four model requests.
    let fetches = seen.iter().filter(|(p, _)| p == "/token").count();
    assert_eq!(fetches, 1, "{seen:?}");
    assert_eq!(seen[0], ("/token".to_string(), None));
    let model: Vec<_> = seen.iter().filter(|(p, _)| p != "/token").collect();
    assert_eq!(model.len(), 4, "{seen:?}");
    for (_, auth) in &model {
        assert_eq!(auth.as_deref(), Some(&*format!("Bearer {GATEWAY_TOKEN}")));
    }

    // A client's own token passes unchanged (the mock, wanting the
    // gateway's, refuses it as Vertex refuses a bad token).
    let r = post(
        &h.client,
        url.clone(),
        &[("authorization", "Bearer ya29.the-clients")],
        &anthropic_vertex_convo().body,
    )
    .await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert!(
        r.text().contains("invalid authentication credentials"),
        "{}",
        r.text()
    );
    let last = authorizations(&h).pop().unwrap();
    assert_eq!(last.1.as_deref(), Some("Bearer ya29.the-clients"));
    // An API key of the client's: no token added either.
    let r = post(
        &h.client,
        url,
        &[("x-goog-api-key", "client-key")],
        &anthropic_vertex_convo().body,
    )
    .await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(authorizations(&h).pop().unwrap().1, None);
}

#[tokio::test]
async fn vertex_authorized_user_refresh_token_and_a_refused_grant() {
    let url = |h: &Harness| {
        format!(
            "{}/v1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-x:rawPredict",
            h.gw()
        )
    };
    let (h, _dir) = vertex("authorized_user", "1//mock-refresh-token").await;
    let mut convo = anthropic_vertex_convo();
    round(&h, &mut convo, &url(&h), &[]).await;
    expect_counts(&h, "vertex", Some("claude-x"), 1.0).await;
    assert_eq!(
        authorizations(&h).last().unwrap().1.as_deref(),
        Some(&*format!("Bearer {GATEWAY_TOKEN}"))
    );

    // The token endpoint refuses the grant: the request goes as it came,
    // and the upstream's own 401 reaches the client.
    let (h, _dir) = vertex("authorized_user", "1//revoked").await;
    let r = post(&h.client, url(&h), &[], &anthropic_vertex_convo().body).await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert!(
        r.text().contains("missing required authentication"),
        "{}",
        r.text()
    );
    let seen = authorizations(&h);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[1].1, None);
}

/// Workload identity federation (`external_account`): the workload's
/// token from a file or a program's output, exchanged at STS for a
/// federated token; or from a CI
/// runner's OIDC endpoint (GitHub Actions' shape), exchanged, then traded
/// for a service account's token. The mock checks each step. A subject
/// token STS refuses leaves the request as it came.
#[tokio::test]
async fn vertex_with_workload_identity_federation() {
    let url = |h: &Harness| {
        format!(
            "{}/v1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-x:rawPredict",
            h.gw()
        )
    };
    let subject = GoogleTestKey::test(GATEWAY_TOKEN).subject_token;
    for (kind, steps) in [
        ("external_file", vec!["/v1/token"]),
        ("external_executable", vec!["/v1/token"]),
        (
            "external_url",
            vec![
                "/oidc/token",
                "/v1/token",
                "/v1/projects/-/serviceAccounts/gateway@p1.iam.gserviceaccount.com:generateAccessToken",
            ],
        ),
    ] {
        let (h, _dir) = vertex(kind, &subject).await;
        let mut convo = anthropic_vertex_convo();
        round(&h, &mut convo, &url(&h), &[]).await;
        expect_counts(&h, "vertex", Some("claude-x"), 1.0).await;
        let seen = authorizations(&h);
        let paths: Vec<&str> = seen.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths[..steps.len()], steps[..], "{kind}: once, then cached");
        assert_eq!(paths.len(), steps.len() + 2, "{kind}: {paths:?}");
        for (_, auth) in &seen[steps.len()..] {
            assert_eq!(
                auth.as_deref(),
                Some(&*format!("Bearer {GATEWAY_TOKEN}")),
                "{kind}"
            );
        }
    }

    let (h, _dir) = vertex("external_file", "eyJ.another-workloads-token").await;
    let r = post(&h.client, url(&h), &[], &anthropic_vertex_convo().body).await;
    assert_eq!(r.status, 401, "{}", r.text());
    let seen = authorizations(&h);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[1].1, None);
}

/// Workload identity federation from AWS (`environment_id: "aws1"`): the
/// subject token is an STS `GetCallerIdentity` the gateway signs, which the
/// mock's STS verifies as Google's has AWS do. Its credentials and region
/// from the instance metadata (IMDSv2, as on EC2), or from the
/// environment; a signature AWS refuses leaves the request as it came.
#[tokio::test]
async fn vertex_with_workload_identity_federation_from_aws() {
    let url = |h: &Harness| {
        format!(
            "{}/v1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-x:rawPredict",
            h.gw()
        )
    };
    let steps = |h: &Harness| -> Vec<String> {
        h.mock
            .received()
            .iter()
            .filter(|r| !r.path.contains(":rawPredict"))
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    };
    let keys = [
        ("AWS_ACCESS_KEY_ID", KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", SECRET),
        ("AWS_SESSION_TOKEN", "session-tok"),
        ("AWS_REGION", "us-east-1"),
    ];
    for (env, expected) in [
        (
            &[][..],
            &[
                "PUT /latest/api/token",
                "GET /latest/meta-data/placement/availability-zone",
                "GET /latest/meta-data/iam/security-credentials",
                "GET /latest/meta-data/iam/security-credentials/toolwarden-mock-role",
                "POST /v1/token",
            ][..],
        ),
        (&keys[..], &["POST /v1/token"][..]),
    ] {
        let (h, _dir) = vertex_on_aws(env).await;
        let mut convo = anthropic_vertex_convo();
        round(&h, &mut convo, &url(&h), &[]).await;
        expect_counts(&h, "vertex", Some("claude-x"), 1.0).await;
        assert_eq!(steps(&h), expected, "once, then cached");
        let seen = authorizations(&h);
        let predicts: Vec<_> = seen
            .iter()
            .filter(|(p, _)| p.contains(":rawPredict"))
            .collect();
        assert_eq!(predicts.len(), 2, "{seen:?}");
        for (_, auth) in predicts {
            assert_eq!(auth.as_deref(), Some(&*format!("Bearer {GATEWAY_TOKEN}")));
        }
    }

    let mut wrong = keys;
    wrong[1].1 = "another/secret";
    let (h, _dir) = vertex_on_aws(&wrong).await;
    let r = post(&h.client, url(&h), &[], &anthropic_vertex_convo().body).await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(steps(&h), ["POST /v1/token"]);
}

/// A Vertex harness whose gateway federates from AWS: the mock serves
/// Google's STS, instance metadata and verifies AWS signatures; `env` the
/// AWS variables the gateway reads.
async fn vertex_on_aws(env: &[(&str, &str)]) -> (Harness, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let file_path = dir.path().join("aws.json");
    let vars: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mock = MockOptions {
        google_key: Some(GoogleTestKey::test(GATEWAY_TOKEN)),
        aws_credential_service: Some(AwsCredentialService {
            session_token: "imds-session".into(),
            lifetime: std::time::Duration::from_secs(3600),
            ..AwsCredentialService::default()
        }),
        ..aws_mock_with_token("session-tok")
    };
    let h = Harness::with(mock, move |c| {
        let mock = c.upstreams.gemini.to_string();
        let mock = mock.trim_end_matches('/');
        c.cloud.vertex = Some(c.upstreams.gemini.clone());
        let file = json!({
            "type": "external_account",
            "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/aws/providers/aws",
            "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request",
            "token_url": format!("{mock}/v1/token"),
            "credential_source": {
                "environment_id": "aws1",
                "region_url": format!("{mock}/latest/meta-data/placement/availability-zone"),
                "url": format!("{mock}/latest/meta-data/iam/security-credentials"),
                "regional_cred_verification_url": "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
                "imdsv2_session_token_url": format!("{mock}/latest/api/token"),
            },
        });
        std::fs::write(&file_path, file.to_string()).unwrap();
        let mut env = AwsEnv::default();
        for (k, v) in vars {
            env.insert(k, v);
        }
        env.insert(
            "GOOGLE_APPLICATION_CREDENTIALS".into(),
            file_path.display().to_string(),
        );
        let mut warnings = Vec::new();
        let auth = GoogleAuth::from_env(&env, &mut warnings)
            .unwrap()
            .unwrap_or_else(|| panic!("no credentials: {warnings:?}"));
        c.cloud.google = Some(Arc::new(auth));
    })
    .await;
    (h, dir)
}

/// The quota project as Google's auth libraries send it: the credentials
/// file's `quota_project_id` (gcloud writes one into an `authorized_user`
/// file), else `GOOGLE_CLOUD_QUOTA_PROJECT`'s over it, as
/// `x-goog-user-project` with the gateway's token only, and never over the
/// client's own.
#[tokio::test]
async fn the_gateways_token_goes_with_its_quota_project() {
    let harness = |env_project: Option<&'static str>| async move {
        let dir = tempfile::tempdir().unwrap();
        let dir_path = dir.path().to_path_buf();
        let h = Harness::with(google_mock(), move |c| {
            let mock = c.upstreams.gemini.to_string();
            c.cloud.vertex = Some(c.upstreams.gemini.clone());
            let path =
                credentials_file(&dir_path, &mock, "authorized_user", "1//mock-refresh-token");
            let mut file: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            file["quota_project_id"] = json!("file-project");
            std::fs::write(&path, file.to_string()).unwrap();
            let mut env = AwsEnv::default();
            env.insert(
                "GOOGLE_APPLICATION_CREDENTIALS".into(),
                path.display().to_string(),
            );
            if let Some(project) = env_project {
                env.insert("GOOGLE_CLOUD_QUOTA_PROJECT".into(), project.into());
            }
            let auth = GoogleAuth::from_env(&env, &mut Vec::new())
                .unwrap()
                .expect("credentials");
            c.cloud.google = Some(Arc::new(auth));
        })
        .await;
        (h, dir)
    };
    let last_user_project = |h: &Harness| {
        let received = h.mock.received();
        let last = received.last().unwrap();
        assert_ne!(last.path, "/token");
        last.headers
            .get("x-goog-user-project")
            .map(|v| v.to_str().unwrap().to_string())
    };
    let (h, _dir) = harness(None).await;
    let url = format!(
        "{}/v1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-x:rawPredict",
        h.gw()
    );
    let body = anthropic_vertex_convo().body;
    let r = post(&h.client, url.clone(), &[], &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(last_user_project(&h).as_deref(), Some("file-project"));
    // The client's own quota project is kept.
    let own = [("x-goog-user-project", "client-project")];
    let r = post(&h.client, url.clone(), &own, &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(last_user_project(&h).as_deref(), Some("client-project"));
    // A client with its own token gets no quota project of the gateway's.
    let r = post(&h.client, url, &[("authorization", "Bearer ya29.c")], &body).await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(last_user_project(&h), None);

    let (h, _dir) = harness(Some("env-project")).await;
    let url = format!(
        "{}/v1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-x:rawPredict",
        h.gw()
    );
    let r = post(&h.client, url, &[], &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(last_user_project(&h).as_deref(), Some("env-project"));
}

/// A Bedrock harness whose AWS credentials come from the chain over `env`.
pub(super) async fn bedrock_from_env(mock: MockOptions, env: Vec<(String, String)>) -> Harness {
    Harness::with(mock, move |c| {
        let base = c.upstreams.anthropic.to_string();
        c.cloud.bedrock = Some(Upstream::parse(&base).unwrap());
        c.cloud.bedrock_region = Some("us-east-1".into());
        let mut aws = AwsEnv::default();
        for (k, v) in env {
            aws.insert(k, v.replace("{mock}", base.trim_end_matches('/')));
        }
        c.cloud.aws_credentials = Some(aws.credentials(Some("us-east-1")).unwrap());
    })
    .await
}

pub(super) async fn two_invoke_rounds(h: &Harness) {
    let url = format!("{}/bedrock/model/anthropic.claude-x-v1:0/invoke", h.gw());
    for session in ["aws-1", "aws-2"] {
        let mut headers = client_signed();
        headers.push(("x-session-id", session));
        let mut convo = invoke_convo();
        round(h, &mut convo, &url, &headers).await;
    }
    expect_counts(h, "bedrock", Some("anthropic.claude-x-v1:0"), 2.0).await;
}

/// The session token the mock's credential endpoints serve.
pub(super) const SERVED_TOKEN: &str = "served-session-token";

pub(super) fn served() -> AwsCredentialService {
    AwsCredentialService {
        session_token: SERVED_TOKEN.into(),
        lifetime: std::time::Duration::from_secs(3600),
        container_token: Some("Bearer container-auth".into()),
        web_identity_token: Some("eyJ.oidc.token".into()),
        ..AwsCredentialService::default()
    }
}

pub(super) fn model_requests(h: &Harness) -> Vec<toolwarden_mock_provider::ReceivedRequest> {
    h.mock
        .received()
        .into_iter()
        .filter(|r| r.path.starts_with("/model/"))
        .collect()
}

#[tokio::test]
async fn bedrock_signs_with_a_profiles_credential_process() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("runs");
    let script = dir.path().join("creds.sh");
    std::fs::write(
        &script,
        format!(
            "echo run >> '{}'\necho '{{\"Version\": 1, \"AccessKeyId\": \"{KEY_ID}\", \"SecretAccessKey\": \"{SECRET}\", \"SessionToken\": \"process-token\", \"Expiration\": \"2999-01-01T00:00:00Z\"}}'\n",
            count.display()
        ),
    )
    .unwrap();
    let config = dir.path().join("config");
    std::fs::write(
        &config,
        format!(
            "[profile gw]\nregion = us-east-1\ncredential_process = sh {}\n",
            script.display()
        ),
    )
    .unwrap();
    let env = vec![
        ("HOME".to_string(), dir.path().display().to_string()),
        ("AWS_CONFIG_FILE".to_string(), config.display().to_string()),
        ("AWS_PROFILE".to_string(), "gw".to_string()),
    ];
    let h = bedrock_from_env(aws_mock_with_token("process-token"), env).await;
    two_invoke_rounds(&h).await;
    // Run once, cached for the four requests.
    assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 1);
    for r in model_requests(&h) {
        assert_eq!(r.headers["x-amz-security-token"], "process-token");
    }
}

#[tokio::test]
async fn bedrock_signs_with_container_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let env = vec![
        ("HOME".to_string(), dir.path().display().to_string()),
        (
            "AWS_CONTAINER_CREDENTIALS_FULL_URI".to_string(),
            "{mock}/v2/credentials/task-1".to_string(),
        ),
        (
            "AWS_CONTAINER_AUTHORIZATION_TOKEN".to_string(),
            "Bearer container-auth".to_string(),
        ),
    ];
    let mock = MockOptions {
        aws_credential_service: Some(served()),
        ..aws_mock_with_token(SERVED_TOKEN)
    };
    let h = bedrock_from_env(mock, env).await;
    two_invoke_rounds(&h).await;
    let fetches = h
        .mock
        .received()
        .iter()
        .filter(|r| r.path == "/v2/credentials/task-1")
        .count();
    assert_eq!(fetches, 1);
    for r in model_requests(&h) {
        assert_eq!(r.headers["x-amz-security-token"], "served-session-token");
    }
}

#[tokio::test]
async fn bedrock_signs_with_instance_metadata_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let env = vec![
        ("HOME".to_string(), dir.path().display().to_string()),
        (
            "AWS_EC2_METADATA_SERVICE_ENDPOINT".to_string(),
            "{mock}".to_string(),
        ),
    ];
    let mock = MockOptions {
        aws_credential_service: Some(served()),
        ..aws_mock_with_token(SERVED_TOKEN)
    };
    let h = bedrock_from_env(mock, env).await;
    two_invoke_rounds(&h).await;
    let imds: Vec<String> = h
        .mock
        .received()
        .iter()
        .filter(|r| r.path.starts_with("/latest/"))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        imds,
        [
            "PUT /latest/api/token",
            "GET /latest/meta-data/iam/security-credentials/",
            "GET /latest/meta-data/iam/security-credentials/toolwarden-mock-role",
        ]
    );
    for r in model_requests(&h) {
        assert_eq!(r.headers["x-amz-security-token"], "served-session-token");
    }
}

#[tokio::test]
async fn bedrock_signs_with_web_identity_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    // As Kubernetes writes it: aws-config sends the file's bytes as they
    // are (a trailing newline would be part of the token).
    std::fs::write(&token, "eyJ.oidc.token").unwrap();
    let env = vec![
        ("HOME".to_string(), dir.path().display().to_string()),
        (
            "AWS_WEB_IDENTITY_TOKEN_FILE".to_string(),
            token.display().to_string(),
        ),
        (
            "AWS_ROLE_ARN".to_string(),
            "arn:aws:iam::123456789012:role/gw".to_string(),
        ),
        ("AWS_ENDPOINT_URL_STS".to_string(), "{mock}".to_string()),
    ];
    let mock = MockOptions {
        aws_credential_service: Some(served()),
        ..aws_mock_with_token(SERVED_TOKEN)
    };
    let h = bedrock_from_env(mock, env).await;
    two_invoke_rounds(&h).await;
    let sts = h.mock.received().iter().filter(|r| r.path == "/").count();
    assert_eq!(sts, 1);
    for r in model_requests(&h) {
        assert_eq!(r.headers["x-amz-security-token"], "served-session-token");
    }
}

/// The gateway's own credentials are for the agent programs on this
/// machine, not for a web page its browser opened: a request naming a
/// host that is not this machine's (a page of `attacker.example` whose
/// name now resolves to 127.0.0.1: DNS rebinding, which makes its answers
/// readable to the page) or sent with another site's `Origin` (a page's
/// cross-origin POST) goes as it came, without the gateway's token.
#[tokio::test]
async fn a_web_page_elsewhere_gets_no_gateway_token() {
    let (h, _dir) = vertex("service_account", "").await;
    let gw = h.gw();
    let url = format!(
        "{gw}/vertex/v1/projects/p1/locations/global/publishers/anthropic/models/claude-x:rawPredict"
    );
    let lent = format!("Bearer {GATEWAY_TOKEN}");
    // A page's JSON (a form or text POST is refused outright: cross_site.rs).
    let json = ("content-type", "application/json");
    // A page that rebound its own name to 127.0.0.1 is refused before
    // anything goes upstream (rebinding.rs).
    let before = authorizations(&h).len();
    let r = post(
        &h.client,
        url.clone(),
        &[("host", "attacker.example:8080"), json],
        &anthropic_vertex_convo().body,
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(authorizations(&h).len(), before, "not forwarded");
    for headers in [
        &[("origin", "https://attacker.example"), json][..],
        &[("origin", "null"), json],
        &[
            ("host", "localhost"),
            ("origin", "http://attacker.example:8080"),
            json,
        ],
    ] {
        let r = post(
            &h.client,
            url.clone(),
            headers,
            &anthropic_vertex_convo().body,
        )
        .await;
        assert_eq!(r.status, 401, "{headers:?}: {}", r.text());
        assert_eq!(authorizations(&h).pop().unwrap().1, None, "{headers:?}");
    }
    // This machine's names and origins: the token is lent.
    for headers in [
        &[][..],
        &[("host", "localhost:8080")],
        &[("host", "[::1]:8080"), ("origin", "http://127.0.0.1:3000")],
        &[
            ("origin", "http://localhost:3000"),
            ("content-type", "text/plain"),
        ],
    ] {
        post(
            &h.client,
            url.clone(),
            headers,
            &anthropic_vertex_convo().body,
        )
        .await;
        let last = authorizations(&h).pop().unwrap().1;
        assert_eq!(last.as_deref(), Some(&*lent), "{headers:?}");
    }
}

/// With `lend_token` set (a gateway others on the network can reach), the
/// gateway's token goes only to a request presenting it in
/// `x-toolwarden-lend-token`; others go as they came. The header is the
/// gateway's: no upstream sees it, on a cloud route or a provider's.
#[tokio::test]
async fn with_a_lend_token_only_a_client_presenting_it_is_lent() {
    const LEND: &str = "lend-0123456789abcdef";
    let (h, _dir) = vertex_with("service_account", "", |c| {
        c.cloud.lend_token = LendToken::parse(LEND).unwrap();
    })
    .await;
    let gw = h.gw();
    let url = format!(
        "{gw}/vertex/v1/projects/p1/locations/global/publishers/anthropic/models/claude-x:rawPredict"
    );
    let lent = format!("Bearer {GATEWAY_TOKEN}");
    let send = |headers: Vec<(&'static str, &'static str)>| {
        let (client, url) = (h.client.clone(), url.clone());
        async move { post(&client, url, &headers, &anthropic_vertex_convo().body).await }
    };
    for headers in [
        vec![],
        vec![(LEND_TOKEN_HEADER, "lend-0123456789abcdeX")],
        vec![(LEND_TOKEN_HEADER, "lend")],
        vec![("authorization-lend", LEND)],
    ] {
        let r = send(headers.clone()).await;
        assert_eq!(r.status, 401, "{headers:?}: {}", r.text());
        assert_eq!(authorizations(&h).pop().unwrap().1, None, "{headers:?}");
    }
    let r = send(vec![(LEND_TOKEN_HEADER, LEND)]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(authorizations(&h).pop().unwrap().1.as_deref(), Some(&*lent));
    // Not even the token lends to a web page elsewhere.
    let r = send(vec![
        (LEND_TOKEN_HEADER, LEND),
        ("origin", "https://attacker.example"),
        ("content-type", "application/json"),
    ])
    .await;
    assert_eq!(r.status, 401, "{}", r.text());
    // The client's own credential passes as it came, token or not.
    send(vec![
        (LEND_TOKEN_HEADER, LEND),
        ("authorization", "Bearer ya29.own"),
    ])
    .await;
    assert_eq!(
        authorizations(&h).pop().unwrap().1.as_deref(),
        Some("Bearer ya29.own")
    );
    // A provider's route drops the header too: on the fast path (a new
    // connection: one that fell back to hyper stays there).
    let convo = Convo::new(Kind::Chat, false, None);
    let r = post(
        &support::client(),
        format!("{gw}{}", Kind::Chat.path(false)),
        &[
            (LEND_TOKEN_HEADER, LEND),
            ("authorization", "Bearer sk-test"),
        ],
        &convo.body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let received = h.mock.received();
    assert_eq!(received.len(), 9);
    for r in &received {
        assert!(
            !r.headers.contains_key(LEND_TOKEN_HEADER),
            "{} carried the lend token upstream",
            r.path
        );
    }
}
