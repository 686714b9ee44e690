//! The subject token of a workload on AWS (`credential_source` with
//! `environment_id: "aws1"`), as Google's auth libraries make it: a
//! request to AWS STS's `GetCallerIdentity`, signed (SigV4, service `sts`)
//! with the workload's AWS credentials but not sent. Google's Security
//! Token Service sends it to AWS to learn who signed it. Serialized as
//! URL-encoded JSON, `{"headers":[{"key","value"}…],"method","url"}`, with
//! `x-goog-cloud-target-resource` (the file's `audience`) among the signed
//! headers.
//!
//! - The region: `AWS_REGION`, else `AWS_DEFAULT_REGION` (read at start),
//!   else the instance metadata's availability zone at `region_url`
//!   (`us-east-1b` is `us-east-1`).
//! - The credentials: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (with
//!   `AWS_SESSION_TOKEN`), else the instance metadata's role credentials at
//!   `url` (its role name, then `url/{role}`).
//! - With `imdsv2_session_token_url`, each metadata read carries an IMDSv2
//!   session token (`PUT`, 300 s), fetched when metadata is read.
//!
//! Like Google's libraries, and unlike `aws-config`'s chain, no other AWS
//! source (profiles, containers, web identity) is read here.

use std::time::SystemTime;

use aws_credential_types::Credentials;
use bytes::Bytes;
use http::{HeaderValue, Method};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::{Deserialize, Serialize};

use super::FileError;
use crate::cloud::fetch::CredentialClient;
use crate::cloud::{aws::AwsEnv, fetch};

/// The IMDSv2 session token's lifetime asked for: it is used at once.
const IMDS_TOKEN_TTL_SECONDS: &str = "300";

/// What Python's `urllib.parse.quote` leaves as it is (Google's libraries
/// encode the token with it).
const QUOTED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'_')
    .remove(b'.')
    .remove(b'-')
    .remove(b'~')
    .remove(b'/');

/// An AWS `credential_source`'s fields.
#[derive(Deserialize)]
pub(super) struct AwsSourceFile {
    pub(super) environment_id: Option<String>,
    regional_cred_verification_url: Option<String>,
    region_url: Option<String>,
    url: Option<String>,
    imdsv2_session_token_url: Option<String>,
}

/// A workload on AWS, ready to sign its subject tokens.
pub(super) struct AwsSource {
    /// `https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&…`
    verification_url: String,
    region_url: Option<String>,
    credentials_url: Option<String>,
    imdsv2_url: Option<String>,
    /// `AWS_REGION`, else `AWS_DEFAULT_REGION`.
    region: Option<String>,
    /// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`.
    keys: Option<Credentials>,
}

/// The signed request, as Google's Security Token Service reads it.
#[derive(Serialize)]
struct SignedRequest<'a> {
    headers: Vec<Header<'a>>,
    method: &'a str,
    url: &'a str,
}

#[derive(Serialize)]
struct Header<'a> {
    key: &'a str,
    value: &'a str,
}

/// The instance metadata's role credentials.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct RoleCredentials {
    access_key_id: String,
    secret_access_key: String,
    token: Option<String>,
}

// === impl AwsSource ===

impl AwsSource {
    /// The source of `file` (whose `environment_id` is set), with the AWS
    /// variables of `env`; `shown` names the file in messages.
    pub(super) fn new(
        file: AwsSourceFile,
        env: &AwsEnv,
        shown: &str,
    ) -> Result<AwsSource, FileError> {
        let id = file.environment_id.unwrap_or_default();
        let version = id
            .strip_prefix("aws")
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
        match version {
            Some("1") => {}
            Some(v) => {
                return Err(FileError::Unusable(format!(
                    "{shown}: credential_source.environment_id aws{v}: only aws1 is known"
                )));
            }
            None => {
                return Err(FileError::Unusable(format!(
                    "{shown}: credential_source.environment_id {id:?} is not an AWS environment (aws1)"
                )));
            }
        }
        let verification_url = file
            .regional_cred_verification_url
            .filter(|u| !u.is_empty())
            .ok_or_else(|| {
                FileError::Unusable(format!(
                    "{shown}: an AWS credential_source needs regional_cred_verification_url"
                ))
            })?;
        let var = |name: &str| env.get(name).filter(|v| !v.is_empty()).map(String::from);
        let keys = match (var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY")) {
            (Some(id), Some(secret)) => Some(Credentials::new(
                id,
                secret,
                var("AWS_SESSION_TOKEN"),
                None,
                "environment",
            )),
            _ => None,
        };
        Ok(AwsSource {
            verification_url,
            region_url: file.region_url,
            credentials_url: file.url,
            imdsv2_url: file.imdsv2_session_token_url,
            region: var("AWS_REGION").or_else(|| var("AWS_DEFAULT_REGION")),
            keys,
        })
    }

    /// The metadata URLs it reads, by field: `region_url` when the
    /// environment gives no region, `url` when it gives no keys, and
    /// `imdsv2_session_token_url` before either. Not
    /// `regional_cred_verification_url`, which is only signed: Google's
    /// Security Token Service calls it.
    pub(super) fn endpoints(&self) -> Vec<(&'static str, &str)> {
        let region = self.region.is_none().then_some(self.region_url.as_deref());
        let keys = self
            .keys
            .is_none()
            .then_some(self.credentials_url.as_deref());
        let read = [
            ("credential_source.region_url", region.flatten()),
            ("credential_source.url", keys.flatten()),
        ];
        let session = read
            .iter()
            .any(|(_, url)| url.is_some())
            .then_some(self.imdsv2_url.as_deref());
        read.into_iter()
            .chain([(
                "credential_source.imdsv2_session_token_url",
                session.flatten(),
            )])
            .filter_map(|(field, url)| Some((field, url?)))
            .collect()
    }

    /// A subject token for `audience` (see the module docs).
    pub(super) async fn subject_token(
        &self,
        client: &CredentialClient,
        audience: &str,
    ) -> Result<String, String> {
        let mut metadata = Metadata {
            client,
            session_url: self.imdsv2_url.as_deref(),
            session: None,
        };
        let region = match &self.region {
            Some(region) => region.clone(),
            None => {
                let url = self.region_url.as_deref().ok_or(
                    "no AWS region: neither AWS_REGION nor AWS_DEFAULT_REGION is set and the \
                     credentials file has no region_url",
                )?;
                let zone = metadata.get(url).await?;
                let url = fetch::Shown(url);
                let zone = zone.trim();
                // `us-east-1b`: the zone's letter goes.
                let region = &zone[..zone.len().saturating_sub(1)];
                if region.is_empty() || !crate::cloud::aws::is_region_name(region) {
                    return Err(format!("{url}: {zone:?} is no availability zone"));
                }
                region.to_string()
            }
        };
        let credentials = match &self.keys {
            Some(keys) => keys.clone(),
            None => {
                let url = self.credentials_url.as_deref().ok_or(
                    "no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set \
                     and the credentials file has no url",
                )?;
                let role = metadata.get(url).await?;
                let role = role.trim();
                let answer = metadata
                    .get(&format!("{}/{role}", url.trim_end_matches('/')))
                    .await?;
                let url = fetch::Shown(url);
                let role: RoleCredentials = serde_json::from_str(&answer)
                    .map_err(|e| format!("{url}: not role credentials: {e}"))?;
                Credentials::new(
                    role.access_key_id,
                    role.secret_access_key,
                    role.token,
                    None,
                    "instance metadata",
                )
            }
        };
        signed_caller_identity(
            &self.verification_url.replace("{region}", &region),
            &region,
            audience,
            &credentials,
            SystemTime::now(),
        )
    }
}

/// The instance metadata reads of one token, with one IMDSv2 session.
struct Metadata<'a> {
    client: &'a CredentialClient,
    session_url: Option<&'a str>,
    session: Option<String>,
}

impl Metadata<'_> {
    /// The text at `url`.
    async fn get(&mut self, url: &str) -> Result<String, String> {
        if let (Some(session_url), None) = (self.session_url, &self.session) {
            let ttl = [(
                "x-aws-ec2-metadata-token-ttl-seconds",
                IMDS_TOKEN_TTL_SECONDS,
            )];
            let (status, token) =
                fetch::exchange(self.client, Method::PUT, session_url, &ttl, Bytes::new()).await?;
            let session_url = fetch::Shown(session_url);
            if !status.is_success() {
                return Err(format!("{session_url}: {status}"));
            }
            let token = String::from_utf8(token.to_vec())
                .map_err(|_| format!("{session_url}: the session token is not text"))?;
            self.session = Some(token);
        }
        let session = self
            .session
            .as_deref()
            .map(|t| ("x-aws-ec2-metadata-token", t));
        let headers: Vec<(&str, &str)> = session.into_iter().collect();
        let (status, text) =
            fetch::exchange(self.client, Method::GET, url, &headers, Bytes::new()).await?;
        let url = fetch::Shown(url);
        if !status.is_success() {
            return Err(format!("{url}: {status}"));
        }
        String::from_utf8(text.to_vec()).map_err(|_| format!("{url}: not text"))
    }
}

/// A `POST` to `url` (STS's `GetCallerIdentity` in `region`) signed with
/// `credentials` at `time`, serialized as the subject token.
fn signed_caller_identity(
    url: &str,
    region: &str,
    audience: &str,
    credentials: &Credentials,
    time: SystemTime,
) -> Result<String, String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e| format!("regional_cred_verification_url {url:?}: {e}"))?;
    if uri.scheme_str() != Some("https") || uri.host().is_none() {
        return Err(format!(
            "regional_cred_verification_url {url:?} is no https URL"
        ));
    }
    let target = HeaderValue::from_str(audience)
        .map_err(|_| "the audience is not a header value".to_string())?;
    let mut request = http::Request::post(uri)
        .header("x-goog-cloud-target-resource", target)
        .body(())
        .map_err(|e| e.to_string())?;
    let (mut parts, ()) = std::mem::replace(&mut request, http::Request::new(())).into_parts();
    crate::cloud::aws::sign(&mut parts, b"", credentials, region, "sts", time)?;
    let mut headers = Vec::with_capacity(parts.headers.len());
    for (name, value) in &parts.headers {
        let value = value
            .to_str()
            .map_err(|_| format!("the signed header {name} is not text"))?;
        headers.push(Header {
            key: name.as_str(),
            value,
        });
    }
    let json = serde_json::to_string(&SignedRequest {
        headers,
        method: "POST",
        url,
    })
    .map_err(|e| e.to_string())?;
    Ok(utf8_percent_encode(&json, QUOTED).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(fields: &str, vars: &[(&str, &str)]) -> Result<AwsSource, FileError> {
        let file: AwsSourceFile = serde_json::from_str(fields).unwrap();
        let mut env = AwsEnv::default();
        for (k, v) in vars {
            env.insert(k.to_string(), v.to_string());
        }
        AwsSource::new(file, &env, "f.json")
    }

    const URL: &str =
        "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15";

    #[test]
    fn only_aws1_with_a_verification_url_is_read() {
        let file = |id: &str| {
            format!(r#"{{"environment_id":"{id}","regional_cred_verification_url":"{URL}"}}"#)
        };
        assert!(source(&file("aws1"), &[]).is_ok());
        for (id, says) in [
            ("aws2", "only aws1"),
            ("aws", "not an AWS environment"),
            ("azure1", "not an AWS environment"),
            ("aws1x", "not an AWS environment"),
        ] {
            match source(&file(id), &[]) {
                Err(FileError::Unusable(e)) => assert!(e.contains(says), "{id}: {e}"),
                _ => panic!("{id} accepted"),
            }
        }
        match source(r#"{"environment_id":"aws1"}"#, &[]) {
            Err(FileError::Unusable(e)) => assert!(e.contains("regional_cred_verification_url")),
            _ => panic!("accepted without a verification URL"),
        }
    }

    #[test]
    fn the_environment_gives_the_region_and_keys() {
        let fields =
            format!(r#"{{"environment_id":"aws1","regional_cred_verification_url":"{URL}"}}"#);
        let s = source(
            &fields,
            &[
                ("AWS_DEFAULT_REGION", "eu-west-1"),
                ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
                ("AWS_SECRET_ACCESS_KEY", "secret"),
            ],
        )
        .unwrap();
        assert_eq!(s.region.as_deref(), Some("eu-west-1"));
        assert!(s.keys.is_some());
        let s = source(
            &fields,
            &[
                ("AWS_REGION", "us-east-2"),
                ("AWS_DEFAULT_REGION", "eu-west-1"),
                ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
                ("AWS_SECRET_ACCESS_KEY", ""),
            ],
        )
        .unwrap();
        assert_eq!(s.region.as_deref(), Some("us-east-2"));
        assert!(s.keys.is_none(), "an empty secret is none");
    }

    /// The token decodes to the request Google's STS reads: the URL and
    /// method, the target resource and a SigV4 signature over it for `sts`
    /// in the region, the session token beside it.
    #[test]
    fn the_subject_token_is_a_signed_get_caller_identity() {
        let url = URL.replace("{region}", "us-east-2");
        let credentials = Credentials::new("AKIDEXAMPLE", "secret", Some("tok".into()), None, "t");
        let audience = "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/aws";
        let token = signed_caller_identity(
            &url,
            "us-east-2",
            audience,
            &credentials,
            SystemTime::UNIX_EPOCH,
        )
        .unwrap();
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"%_.-~/".contains(&b)),
            "{token}"
        );
        let json = percent_encoding::percent_decode_str(&token)
            .decode_utf8()
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["url"], url.as_str());
        assert_eq!(v["method"], "POST");
        let header = |name: &str| {
            v["headers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|h| h["key"] == name)
                .and_then(|h| h["value"].as_str())
                .map(String::from)
        };
        assert_eq!(
            header("host").as_deref(),
            Some("sts.us-east-2.amazonaws.com")
        );
        assert_eq!(
            header("x-goog-cloud-target-resource").as_deref(),
            Some(audience)
        );
        assert_eq!(header("x-amz-security-token").as_deref(), Some("tok"));
        assert_eq!(header("x-amz-date").as_deref(), Some("19700101T000000Z"));
        let auth = header("authorization").unwrap();
        assert!(
            auth.starts_with(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/19700101/us-east-2/sts/aws4_request, SignedHeaders="
            ),
            "{auth}"
        );
        assert!(auth.contains("x-goog-cloud-target-resource"), "{auth}");
        // The JSON's keys in order, as Google's libraries sort them.
        assert!(json.starts_with(r#"{"headers":["#), "{json}");
        assert!(json.contains(r#"],"method":"POST","url":""#), "{json}");
        for bad in ["http://sts.x.amazonaws.com/", "not a url"] {
            assert!(
                signed_caller_identity(
                    bad,
                    "us-east-2",
                    audience,
                    &credentials,
                    SystemTime::UNIX_EPOCH
                )
                .is_err(),
                "{bad}"
            );
        }
    }
}
