//! The AWS services a credential chain calls to turn one credential into
//! another (issue 18), served by the mock so that a gateway's
//! `aws-config` chain can be pointed at it (`AWS_ENDPOINT_URL_STS`,
//! `AWS_ENDPOINT_URL_SSO`):
//!
//! - STS `AssumeRole` (`POST /`, AWS query protocol: form
//!   `Action=AssumeRole&Version=2011-06-15&RoleArn=…&RoleSessionName=…`),
//!   whose SigV4 signature (service `sts`) is verified with
//!   [`AwsCredentialService::assume_role_caller`] as AWS does (a mismatch
//!   gets STS's 403 `SignatureDoesNotMatch` in its XML error envelope); the
//!   answer is STS's `AssumeRoleResponse` XML;
//! - the SSO portal's `GetRoleCredentials`
//!   (`GET /federation/credentials?role_name=…&account_id=…`, the access
//!   token in `x-amz-sso_bearer_token`), checked against
//!   [`AwsCredentialService::sso_access_token`]; the answer is its JSON
//!   (`roleCredentials`, `expiration` in epoch milliseconds).
//!
//! Both issue [`AwsCredentialService::issued`], else the mock's
//! [`crate::MockOptions::aws_key`], with the service's session token.

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{Method, StatusCode, request::Parts};

use crate::{
    AwsTestKey,
    clock::iso8601,
    cloud_auth::{AwsCredentialService, Reply, url_form},
};

/// STS's XML namespace.
const STS_XMLNS: &str = "https://sts.amazonaws.com/doc/2011-06-15/";

/// Serve `AssumeRole` or `GetRoleCredentials`, or `None` when `parts` is
/// neither.
pub(crate) fn serve(
    service: &AwsCredentialService,
    key: &AwsTestKey,
    parts: &Parts,
    path: &str,
    body: &Bytes,
) -> Option<Reply> {
    let issued = service.issued.as_ref().unwrap_or(key);
    match (&parts.method, path) {
        (&Method::POST, "/") => {
            let form = url_form(body);
            if field(&form, "Action") != Some("AssumeRole") {
                return None;
            }
            let caller = service.assume_role_caller.as_ref()?;
            Some(assume_role(service, caller, issued, parts, body, &form))
        }
        (&Method::GET, "/federation/credentials") => {
            let want = service.sso_access_token.as_deref()?;
            Some(role_credentials(service, issued, parts, want))
        }
        _ => None,
    }
}

fn assume_role(
    service: &AwsCredentialService,
    caller: &AwsTestKey,
    issued: &AwsTestKey,
    parts: &Parts,
    body: &[u8],
    form: &[(String, String)],
) -> Reply {
    let get = |name: &str| field(form, name);
    if let Err((code, message)) =
        crate::cloud::verify_sigv4(parts, body, caller, "sts", SystemTime::now())
    {
        let code = match code {
            "InvalidSignatureException" => "SignatureDoesNotMatch",
            "UnrecognizedClientException" => "InvalidClientTokenId",
            "MissingAuthenticationTokenException" => "MissingAuthenticationToken",
            _ => "IncompleteSignature",
        };
        return sts_error(StatusCode::FORBIDDEN, code, &message);
    }
    let (Some(role_arn), Some(session)) = (get("RoleArn"), get("RoleSessionName")) else {
        return sts_error(
            StatusCode::BAD_REQUEST,
            "ValidationError",
            "RoleArn and RoleSessionName are required",
        );
    };
    let Some(role) = role_arn
        .strip_prefix("arn:aws:iam::")
        .and_then(|r| r.split_once(":role/"))
    else {
        return sts_error(
            StatusCode::BAD_REQUEST,
            "ValidationError",
            &format!("{role_arn} is invalid"),
        );
    };
    let (account, role_name) = role;
    let expires = iso8601(SystemTime::now() + service.lifetime);
    (
        StatusCode::OK,
        "text/xml",
        format!(
            "<AssumeRoleResponse xmlns=\"{STS_XMLNS}\">\n  <AssumeRoleResult>\n    <SourceIdentity/>\n    <AssumedRoleUser>\n      <AssumedRoleId>AROAMOCKROLEID:{session}</AssumedRoleId>\n      <Arn>arn:aws:sts::{account}:assumed-role/{role_name}/{session}</Arn>\n    </AssumedRoleUser>\n    <Credentials>\n      <AccessKeyId>{}</AccessKeyId>\n      <SecretAccessKey>{}</SecretAccessKey>\n      <SessionToken>{}</SessionToken>\n      <Expiration>{expires}</Expiration>\n    </Credentials>\n    <PackedPolicySize>6</PackedPolicySize>\n  </AssumeRoleResult>\n  <ResponseMetadata>\n    <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>\n  </ResponseMetadata>\n</AssumeRoleResponse>\n",
            issued.access_key_id, issued.secret_access_key, service.session_token
        ),
    )
}

/// A form field's value.
fn field<'f>(form: &'f [(String, String)], name: &str) -> Option<&'f str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// STS's XML error envelope.
fn sts_error(status: StatusCode, code: &str, message: &str) -> Reply {
    (
        status,
        "text/xml",
        format!(
            "<ErrorResponse xmlns=\"{STS_XMLNS}\">\n  <Error>\n    <Type>Sender</Type>\n    <Code>{code}</Code>\n    <Message>{message}</Message>\n  </Error>\n  <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>\n</ErrorResponse>\n"
        ),
    )
}

fn role_credentials(
    service: &AwsCredentialService,
    issued: &AwsTestKey,
    parts: &Parts,
    want: &str,
) -> Reply {
    let token = parts
        .headers
        .get("x-amz-sso_bearer_token")
        .and_then(|v| v.to_str().ok());
    let query = url_form(parts.uri.query().unwrap_or("").as_bytes());
    let has = |name: &str| query.iter().any(|(k, v)| k == name && !v.is_empty());
    if token != Some(want) {
        return (
            StatusCode::UNAUTHORIZED,
            "application/json",
            crate::json::Obj::new()
                .str("message", "Session token not found or invalid")
                .done(),
        );
    }
    if !has("role_name") || !has("account_id") {
        return (
            StatusCode::BAD_REQUEST,
            "application/json",
            crate::json::Obj::new()
                .str("message", "role_name and account_id are required")
                .done(),
        );
    }
    let expires = SystemTime::now() + service.lifetime;
    let millis = expires
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64;
    let creds = crate::json::Obj::new()
        .str("accessKeyId", &issued.access_key_id)
        .str("secretAccessKey", &issued.secret_access_key)
        .str("sessionToken", &service.session_token)
        .num("expiration", millis)
        .done();
    (
        StatusCode::OK,
        "application/json",
        crate::json::Obj::new()
            .raw("roleCredentials", &creds)
            .done(),
    )
}
