//! The credential services a gateway in front of Vertex AI and Bedrock
//! reads (issue 18), served by the mock so that tests go through them:
//!
//! - Google's OAuth 2 token endpoint (`POST /token`): a service account's
//!   signed JWT (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`,
//!   RS256, verified with the public half of [`GoogleTestKey`]) or an
//!   authorized user's `refresh_token` grant, answered with
//!   [`GoogleTestKey::access_token`]. With a [`GoogleTestKey`] the mock's
//!   Vertex routes accept only that token.
//! - AWS's instance metadata service (IMDSv2: `PUT /latest/api/token`, then
//!   `GET /latest/meta-data/iam/security-credentials/[role]` with the
//!   token, and the instance's availability zone in the key's region at
//!   `GET /latest/meta-data/placement/availability-zone`) and the
//!   container credentials endpoint (`GET /v2/credentials/{id}`, `Authorization` checked when
//!   [`AwsCredentialService::container_token`] is set), both serving the
//!   mock's [`crate::AwsTestKey`] with a session token and an expiry; and
//!   STS `AssumeRoleWithWebIdentity` (`POST /`, form `Action=…`, XML
//!   answer) for a web identity token; STS `AssumeRole` and the SSO
//!   portal in [`crate::aws_federation`], which the server asks first.
//!
//! Every request is counted ([`crate::MockProvider::received`] when recording).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use bytes::Bytes;
use http::{Method, StatusCode, request::Parts};

/// The test service account's private key (PKCS#8 PEM, RSA 2048), made for
/// these tests only: a gateway signs its JWTs with it, the mock checks them
/// with its public half.
pub const GOOGLE_TEST_PRIVATE_KEY_PEM: &str =
    include_str!("../keys/google-test-service-account.pem");

/// The role name the mock's IMDS serves credentials for.
pub const IMDS_ROLE: &str = "toolwarden-mock-role";

/// Google credentials the mock accepts (see the module docs).
#[derive(Clone)]
pub struct GoogleTestKey {
    /// The service account's public key, DER `RSAPublicKey`.
    pub public_key_der: Vec<u8>,
    /// The access token the token endpoint issues and Vertex routes require.
    pub access_token: String,
    /// The lifetime announced (`expires_in`).
    pub expires_in: Duration,
    /// The refresh token an authorized user's grant must carry.
    pub refresh_token: String,
    /// The subject token (an OIDC token of the workload) a token exchange
    /// must carry (`crate::google_federation`).
    pub subject_token: String,
}

impl std::fmt::Debug for GoogleTestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoogleTestKey").finish_non_exhaustive()
    }
}

impl GoogleTestKey {
    /// The key of [`GOOGLE_TEST_PRIVATE_KEY_PEM`], issuing `access_token`.
    pub fn test(access_token: &str) -> GoogleTestKey {
        let der = pem_der(GOOGLE_TEST_PRIVATE_KEY_PEM).expect("the bundled test key is PEM");
        let pair = ring::signature::RsaKeyPair::from_pkcs8(&der).expect("the bundled test key");
        GoogleTestKey {
            public_key_der: ring::signature::KeyPair::public_key(&pair)
                .as_ref()
                .to_vec(),
            access_token: access_token.to_string(),
            expires_in: Duration::from_secs(3599),
            refresh_token: "1//mock-refresh-token".to_string(),
            subject_token: "eyJ.mock-oidc-subject-token".to_string(),
        }
    }
}

/// The AWS credential endpoints' settings (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct AwsCredentialService {
    /// The session token served with the mock's key.
    pub session_token: String,
    /// How long served credentials last.
    pub lifetime: Duration,
    /// The `Authorization` the container endpoint requires (`None`: any).
    pub container_token: Option<String>,
    /// The OIDC token STS `AssumeRoleWithWebIdentity` (`POST /`) requires
    /// (`None`: any non-empty one).
    pub web_identity_token: Option<String>,
    /// The key an STS `AssumeRole` caller must sign with (`None`: not
    /// served; see the `aws_federation` module).
    pub assume_role_caller: Option<crate::AwsTestKey>,
    /// The access token the SSO portal's `GetRoleCredentials` requires
    /// (`None`: not served).
    pub sso_access_token: Option<String>,
    /// The key `AssumeRole` and `GetRoleCredentials` issue (`None`: the
    /// mock's [`crate::MockOptions::aws_key`]).
    pub issued: Option<crate::AwsTestKey>,
}

/// The DER bytes of the first PEM block in `pem`.
pub fn pem_der(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("-----BEGIN"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    base64::engine::general_purpose::STANDARD.decode(body).ok()
}

/// A reply: status, content type, body.
pub(crate) type Reply = (StatusCode, &'static str, String);

/// Serve a credential request, or `None` when `parts` is not one.
pub(crate) fn serve(
    shared: &crate::Shared,
    parts: &Parts,
    path: &str,
    body: &Bytes,
) -> Option<Reply> {
    let opts = &shared.opts;
    if parts.method == Method::POST && path == "/token" {
        let key = opts.google_key.as_ref()?;
        return Some(token(key, body));
    }
    let service = opts.aws_credential_service.as_ref()?;
    let key = opts.aws_key.as_ref()?;
    let imds_token = "mock-imds-token";
    let creds = |code: bool| {
        let expires = SystemTime::now() + service.lifetime;
        let mut obj = crate::json::Obj::new();
        if code {
            obj = obj.str("Code", "Success").str("Type", "AWS-HMAC");
        }
        (
            StatusCode::OK,
            "application/json",
            obj.str("AccessKeyId", &key.access_key_id)
                .str("SecretAccessKey", &key.secret_access_key)
                .str("Token", &service.session_token)
                .str("Expiration", &crate::clock::iso8601(expires))
                .done(),
        )
    };
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let unauthorized = (StatusCode::UNAUTHORIZED, "text/plain", String::new());
    match (&parts.method, path) {
        (&Method::POST, "/") => {
            let form = url_form(body);
            let get = |name: &str| {
                form.iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.as_str())
            };
            if get("Action") != Some("AssumeRoleWithWebIdentity") {
                return None;
            }
            let token_ok = match (get("WebIdentityToken"), &service.web_identity_token) {
                (Some(got), Some(want)) => got == want,
                (Some(got), None) => !got.is_empty(),
                (None, _) => false,
            };
            if !token_ok || get("RoleArn").is_none() {
                return Some((
                    StatusCode::BAD_REQUEST,
                    "text/xml",
                    "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>The web identity token that was passed could not be validated by AWS.</Message></Error></ErrorResponse>".to_string(),
                ));
            }
            let expires = crate::clock::iso8601(SystemTime::now() + service.lifetime);
            Some((
                StatusCode::OK,
                "text/xml",
                format!(
                    "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>{}</AccessKeyId><SecretAccessKey>{}</SecretAccessKey><SessionToken>{}</SessionToken><Expiration>{expires}</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>",
                    key.access_key_id, key.secret_access_key, service.session_token
                ),
            ))
        }
        (&Method::PUT, "/latest/api/token") => {
            Some(match header("x-aws-ec2-metadata-token-ttl-seconds") {
                Some(_) => (StatusCode::OK, "text/plain", imds_token.to_string()),
                None => (StatusCode::BAD_REQUEST, "text/plain", String::new()),
            })
        }
        (&Method::GET, p) if p.starts_with("/latest/meta-data/iam/security-credentials") => {
            if header("x-aws-ec2-metadata-token") != Some(imds_token) {
                return Some(unauthorized);
            }
            // With or without the slash, as IMDS answers.
            let role = &p["/latest/meta-data/iam/security-credentials".len()..];
            let role = role.strip_prefix('/').unwrap_or(role);
            Some(match role {
                "" => (StatusCode::OK, "text/plain", IMDS_ROLE.to_string()),
                IMDS_ROLE => creds(true),
                _ => (StatusCode::NOT_FOUND, "text/plain", String::new()),
            })
        }
        (&Method::GET, "/latest/meta-data/placement/availability-zone") => {
            if header("x-aws-ec2-metadata-token") != Some(imds_token) {
                return Some(unauthorized);
            }
            Some((StatusCode::OK, "text/plain", format!("{}b", key.region)))
        }
        (&Method::GET, p) if p.starts_with("/v2/credentials/") => {
            let ok = match &service.container_token {
                Some(want) => header("authorization") == Some(want.as_str()),
                None => true,
            };
            Some(if ok { creds(false) } else { unauthorized })
        }
        _ => None,
    }
}

/// `POST /token`: a JWT bearer grant (verified) or a refresh-token grant.
fn token(key: &GoogleTestKey, body: &[u8]) -> Reply {
    let form: Vec<(String, String)> = url_form(body);
    let get = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let checked = match get("grant_type") {
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer") => match get("assertion") {
            Some(jwt) => verify_jwt(jwt, &key.public_key_der),
            None => Err("assertion missing".to_string()),
        },
        Some("refresh_token") => match get("refresh_token") {
            Some(t) if t == key.refresh_token && get("client_id").is_some() => Ok(()),
            _ => Err("Bad Request".to_string()),
        },
        other => Err(format!("unsupported grant_type {other:?}")),
    };
    match checked {
        Ok(()) => (
            StatusCode::OK,
            "application/json",
            crate::json::Obj::new()
                .str("access_token", &key.access_token)
                .num("expires_in", key.expires_in.as_secs())
                .str("token_type", "Bearer")
                .done(),
        ),
        Err(description) => (
            StatusCode::BAD_REQUEST,
            "application/json",
            crate::json::Obj::new()
                .str("error", "invalid_grant")
                .str("error_description", &description)
                .done(),
        ),
    }
}

/// The audience Google's token endpoint takes in a service account's
/// assertion.
const GOOGLE_TOKEN_AUDIENCE: &str = "https://oauth2.googleapis.com/token";

/// Check a service account's assertion as Google does: RS256 over
/// `header.claims`, the claims naming a scope, an issuer, Google's token
/// endpoint as the audience and a time window.
fn verify_jwt(jwt: &str, public_key_der: &[u8]) -> Result<(), String> {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut parts = jwt.split('.');
    let (Some(head), Some(claims), Some(sig), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("not a JWT".into());
    };
    let header: serde_json::Value = b64
        .decode(head)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or("bad JWT header")?;
    if header["alg"] != "RS256" {
        return Err(format!("alg {} is not RS256", header["alg"]));
    }
    let signature = b64.decode(sig).map_err(|_| "bad JWT signature encoding")?;
    let signed = &jwt[..head.len() + 1 + claims.len()];
    ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        public_key_der,
    )
    .verify(signed.as_bytes(), &signature)
    .map_err(|_| "Invalid JWT Signature.".to_string())?;
    let claims: serde_json::Value = b64
        .decode(claims)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or("bad JWT claims")?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs() as i64;
    let (iat, exp) = (claims["iat"].as_i64(), claims["exp"].as_i64());
    let fresh = matches!((iat, exp), (Some(iat), Some(exp)) if iat <= now + 300 && exp > now && exp - iat <= 3600);
    if !fresh {
        return Err("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.".into());
    }
    if !claims["iss"].is_string() || !claims["scope"].is_string() || !claims["aud"].is_string() {
        return Err("Invalid JWT: iss, scope and aud are required".into());
    }
    // "When making an access token request this value is always
    // https://oauth2.googleapis.com/token" (Google's "Using OAuth 2.0 for
    // Server to Server Applications", the JWT claim set), whatever URL the
    // request went to: a Private Service Connect endpoint's too
    // (googleapis/java-storage#1156, google-api-dotnet-client#3025). The
    // refusal in Google's words (requests/requests-oauthlib#247).
    if claims["aud"] != GOOGLE_TOKEN_AUDIENCE {
        return Err(format!(
            "Invalid JWT: Failed audience check. The right audience is {GOOGLE_TOKEN_AUDIENCE}"
        ));
    }
    Ok(())
}

/// `application/x-www-form-urlencoded` pairs.
pub(crate) fn url_form(body: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An assertion signed with the test key for `aud`.
    fn assertion(aud: &str) -> String {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let claims = serde_json::json!({
            "iss": "sa@p.iam.gserviceaccount.com", "scope": "s", "aud": aud,
            "iat": now, "exp": now + 3600,
        });
        let signed = format!(
            "{}.{}",
            b64.encode(r#"{"alg":"RS256","typ":"JWT"}"#),
            b64.encode(claims.to_string())
        );
        let der = pem_der(GOOGLE_TEST_PRIVATE_KEY_PEM).unwrap();
        let pair = ring::signature::RsaKeyPair::from_pkcs8(&der).unwrap();
        let mut sig = vec![0; pair.public().modulus_len()];
        pair.sign(
            &ring::signature::RSA_PKCS1_SHA256,
            &ring::rand::SystemRandom::new(),
            signed.as_bytes(),
            &mut sig,
        )
        .unwrap();
        format!("{signed}.{}", b64.encode(sig))
    }

    /// Google's token endpoint is the audience, wherever the assertion was
    /// sent.
    #[test]
    fn an_assertion_for_another_audience_is_refused() {
        let key = GoogleTestKey::test("tok");
        assert_eq!(
            verify_jwt(&assertion(GOOGLE_TOKEN_AUDIENCE), &key.public_key_der),
            Ok(())
        );
        for aud in [
            "http://127.0.0.1:9/token",
            "https://oauth2-psc.p.googleapis.com/token",
        ] {
            assert_eq!(
                verify_jwt(&assertion(aud), &key.public_key_der).unwrap_err(),
                "Invalid JWT: Failed audience check. The right audience is \
                 https://oauth2.googleapis.com/token"
            );
        }
    }

    #[test]
    fn a_forged_jwt_is_refused() {
        let key = GoogleTestKey::test("tok");
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let jwt = format!(
            "{}.{}.{}",
            b64.encode(r#"{"alg":"RS256","typ":"JWT"}"#),
            b64.encode(r#"{"iss":"x","scope":"s","aud":"a","iat":0,"exp":1}"#),
            b64.encode([0u8; 256])
        );
        assert_eq!(
            verify_jwt(&jwt, &key.public_key_der).unwrap_err(),
            "Invalid JWT Signature."
        );
        assert!(verify_jwt("a.b", &key.public_key_der).is_err());
    }
}
