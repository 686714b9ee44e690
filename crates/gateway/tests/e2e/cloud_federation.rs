//! Bedrock credentials that `aws-config`'s chain gets from another
//! credential (issue 18), through the mock's STS and SSO portal
//! (`AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL_SSO`):
//! - a profile with `role_arn` + `source_profile`: STS `AssumeRole`, signed
//!   with the source profile's keys (the mock verifies that signature);
//! - an SSO profile (`sso_session`) with its cached token under a scratch
//!   `HOME` (`~/.aws/sso/cache/<sha1 of the session name>.json`): the
//!   portal's `GetRoleCredentials`.
//!
//! The issued credentials sign the Bedrock requests, which the mock
//! verifies; wrong ones get Bedrock's 403.

use std::path::Path;

use sha1::{Digest, Sha1};
use toolwarden_mock_provider::{AwsCredentialService, AwsTestKey, MockOptions};

use super::{
    cloud::{aws_mock_with_token, client_signed, invoke_convo},
    cloud_auth::{SERVED_TOKEN, bedrock_from_env, model_requests, served, two_invoke_rounds},
    support::{Harness, post},
};

const SOURCE_KEY_ID: &str = "AKIDSOURCEPROFILE";
const SOURCE_SECRET: &str = "source-profile-secret";
const SSO_TOKEN: &str = "aoaAAAA-mock-sso-access-token";

fn source_key(secret: &str) -> AwsTestKey {
    AwsTestKey::new(SOURCE_KEY_ID, secret)
}

/// `HOME`, `AWS_CONFIG_FILE` (written with `config`), `AWS_PROFILE=gw`.
fn profile_env(dir: &Path, config: &str) -> Vec<(String, String)> {
    let file = dir.join("config");
    std::fs::write(&file, config).unwrap();
    vec![
        ("HOME".into(), dir.display().to_string()),
        ("AWS_CONFIG_FILE".into(), file.display().to_string()),
        ("AWS_PROFILE".into(), "gw".into()),
        ("AWS_ENDPOINT_URL_STS".into(), "{mock}".into()),
        ("AWS_ENDPOINT_URL_SSO".into(), "{mock}".into()),
    ]
}

fn federation_mock(service: AwsCredentialService) -> MockOptions {
    MockOptions {
        aws_credential_service: Some(service),
        ..aws_mock_with_token(SERVED_TOKEN)
    }
}

fn count(h: &Harness, method: &str, path: &str) -> usize {
    h.mock
        .received()
        .iter()
        .filter(|r| r.method == method && r.path == path)
        .count()
}

/// One invoke request, as a client signed it for the gateway.
async fn invoke_status(h: &Harness) -> (u16, String) {
    let url = format!("{}/bedrock/model/anthropic.claude-x-v1:0/invoke", h.gw());
    let r = post(&h.client, url, &client_signed(), &invoke_convo().body).await;
    (r.status.as_u16(), r.text())
}

fn assume_role_config(source_secret: &str) -> String {
    format!(
        "[profile source]\naws_access_key_id = {SOURCE_KEY_ID}\naws_secret_access_key = {source_secret}\n\n\
         [profile gw]\nrole_arn = arn:aws:iam::123456789012:role/bedrock-gw\nsource_profile = source\nrole_session_name = toolwarden-test\n"
    )
}

#[tokio::test]
async fn bedrock_signs_with_credentials_of_an_assumed_role() {
    let dir = tempfile::tempdir().unwrap();
    let service = AwsCredentialService {
        assume_role_caller: Some(source_key(SOURCE_SECRET)),
        ..served()
    };
    let env = profile_env(dir.path(), &assume_role_config(SOURCE_SECRET));
    let h = bedrock_from_env(federation_mock(service), env).await;
    two_invoke_rounds(&h).await;
    // One AssumeRole (signed with the source profile's key, verified by
    // the mock), cached for the four requests.
    assert_eq!(count(&h, "POST", "/"), 1);
    let sts = h
        .mock
        .received()
        .into_iter()
        .find(|r| r.path == "/")
        .unwrap();
    let auth = sts.headers["authorization"].to_str().unwrap();
    assert!(
        auth.contains(&format!("Credential={SOURCE_KEY_ID}/"))
            && auth.contains("/sts/aws4_request"),
        "{auth}"
    );
    let form = String::from_utf8_lossy(&sts.body);
    assert!(form.contains("Action=AssumeRole"), "{form}");
    assert!(form.contains("RoleSessionName=toolwarden-test"), "{form}");
    let models = model_requests(&h);
    assert_eq!(models.len(), 4);
    for r in models {
        assert_eq!(r.headers["x-amz-security-token"], "served-session-token");
    }
}

#[tokio::test]
async fn a_wrong_sts_answer_or_a_refused_assume_role_gets_bedrocks_403() {
    // STS issues a key whose secret is not the one Bedrock (the mock)
    // knows: the gateway's signature is refused.
    let dir = tempfile::tempdir().unwrap();
    let service = AwsCredentialService {
        assume_role_caller: Some(source_key(SOURCE_SECRET)),
        issued: Some(AwsTestKey::new(super::cloud::KEY_ID, "not-the-secret")),
        ..served()
    };
    let env = profile_env(dir.path(), &assume_role_config(SOURCE_SECRET));
    let h = bedrock_from_env(federation_mock(service), env).await;
    let (status, text) = invoke_status(&h).await;
    assert_eq!(status, 403, "{text}");
    assert!(
        text.contains("signature we calculated does not match"),
        "{text}"
    );
    assert_eq!(count(&h, "POST", "/"), 1);

    // The source profile's secret is wrong: STS refuses AssumeRole (403
    // SignatureDoesNotMatch), the gateway has no credentials and forwards
    // the client's own signature, which Bedrock does not recognise.
    let dir = tempfile::tempdir().unwrap();
    let service = AwsCredentialService {
        assume_role_caller: Some(source_key(SOURCE_SECRET)),
        ..served()
    };
    let env = profile_env(dir.path(), &assume_role_config("a-wrong-source-secret"));
    let h = bedrock_from_env(federation_mock(service), env).await;
    let (status, text) = invoke_status(&h).await;
    assert_eq!(status, 403, "{text}");
    assert!(
        text.contains("security token included in the request is invalid"),
        "{text}"
    );
    let model = model_requests(&h);
    assert!(
        model[0].headers["authorization"]
            .to_str()
            .unwrap()
            .contains("AKIDCLIENT"),
        "forwarded as it came"
    );
    assert!(count(&h, "POST", "/") >= 1);
}

/// An SSO profile (`sso_session`) and its cached token under `dir`.
fn sso_env(dir: &Path, access_token: &str) -> Vec<(String, String)> {
    let session = "corp";
    let cache = dir.join(".aws/sso/cache");
    std::fs::create_dir_all(&cache).unwrap();
    let name: String = Sha1::digest(session.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::write(
        cache.join(format!("{name}.json")),
        format!(
            r#"{{"accessToken": "{access_token}", "expiresAt": "2999-01-01T00:00:00Z", "region": "us-east-1", "startUrl": "https://corp.awsapps.com/start"}}"#
        ),
    )
    .unwrap();
    profile_env(
        dir,
        &format!(
            "[profile gw]\nsso_session = {session}\nsso_account_id = 123456789012\nsso_role_name = BedrockUser\nregion = us-east-1\n\n\
             [sso-session {session}]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\nsso_registration_scopes = sso:account:access\n"
        ),
    )
}

#[tokio::test]
async fn bedrock_signs_with_sso_credentials_from_a_cached_token() {
    let dir = tempfile::tempdir().unwrap();
    let service = AwsCredentialService {
        sso_access_token: Some(SSO_TOKEN.into()),
        ..served()
    };
    let env = sso_env(dir.path(), SSO_TOKEN);
    let h = bedrock_from_env(federation_mock(service), env).await;
    two_invoke_rounds(&h).await;
    let portal: Vec<_> = h
        .mock
        .received()
        .into_iter()
        .filter(|r| r.path == "/federation/credentials")
        .collect();
    assert_eq!(portal.len(), 1);
    assert_eq!(portal[0].headers["x-amz-sso_bearer_token"], SSO_TOKEN);
    let query = portal[0].query.clone().unwrap_or_default();
    assert!(
        query.contains("role_name=BedrockUser") && query.contains("account_id=123456789012"),
        "{query}"
    );
    for r in model_requests(&h) {
        assert_eq!(r.headers["x-amz-security-token"], "served-session-token");
    }

    // A cached token the portal does not accept: no credentials, the
    // request goes as it came and Bedrock refuses the client's key.
    let dir = tempfile::tempdir().unwrap();
    let service = AwsCredentialService {
        sso_access_token: Some(SSO_TOKEN.into()),
        ..served()
    };
    let env = sso_env(dir.path(), "an-expired-session");
    let h = bedrock_from_env(federation_mock(service), env).await;
    let (status, text) = invoke_status(&h).await;
    assert_eq!(status, 403, "{text}");
    assert_eq!(count(&h, "GET", "/federation/credentials"), 1);
}
