//! Workload identity federation: `external_account` credentials, as
//! Google's auth libraries read them (AIP-4117). A CI runner's Google auth
//! step (GitHub Actions' `google-github-actions/auth`), a Kubernetes
//! cluster outside Google Cloud or another cloud's workload writes such a
//! file and points `GOOGLE_APPLICATION_CREDENTIALS` at it. Each token is
//! had in up to three steps:
//!
//! 1. the workload's own token (the *subject token*), from its
//!    `credential_source`: a `file` (read again each time: a projected
//!    token is rotated) or a `url` (GET, with the file's `headers`), as
//!    text or as a field of a JSON object (`format`);
//! 2. the Security Token Service's token exchange at `token_url` (form
//!    `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, with the
//!    file's `audience` and `subject_token_type`): a federated access token;
//! 3. with `service_account_impersonation_url`, that token buys a service
//!    account's (IAM Credentials' `generateAccessToken`, asked for one hour,
//!    the lifetime then taken).
//!
//! A workload on AWS (`environment_id: "aws1"`) signs its subject token
//! (`aws_source`); an `executable` prints it (`executable`), when
//! executables are allowed (else the file gives no credentials, with a
//! warning: `FileError::Unsupported`).

use std::{collections::BTreeMap, path::PathBuf, time::Duration};

use bytes::Bytes;
use http::Method;
use serde::Deserialize;

use super::aws_source::{AwsSource, AwsSourceFile};
use super::executable::{Executable, ExecutableFile};
use super::{FileError, SCOPE, fetch, form_body, token_answer};
use crate::cloud::aws::AwsEnv;
use crate::cloud::fetch::CredentialClient;

/// The token exchange's grant type.
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type asked of the exchange.
const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";
/// The lifetime asked of `generateAccessToken` (its default and most).
const IMPERSONATED_LIFETIME: Duration = Duration::from_secs(3600);
/// Most bytes of a subject token read (a file or an answer): OIDC tokens
/// are a few KB.
const MAX_SUBJECT_TOKEN: usize = 64 * 1024;

/// An `external_account` credentials file's fields.
#[derive(Deserialize)]
pub(super) struct ExternalFile {
    audience: Option<String>,
    subject_token_type: Option<String>,
    token_url: Option<String>,
    service_account_impersonation_url: Option<String>,
    workforce_pool_user_project: Option<String>,
    credential_source: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct SourceFile {
    file: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    format: Option<FormatFile>,
    executable: Option<ExecutableFile>,
}

#[derive(Deserialize)]
struct FormatFile {
    #[serde(rename = "type")]
    kind: Option<String>,
    subject_token_field_name: Option<String>,
}

/// Federated credentials, ready to fetch tokens with.
pub(super) struct External {
    audience: String,
    subject_token_type: String,
    token_url: String,
    subject: Subject,
    /// `None`: the subject token is the whole text.
    json_field: Option<String>,
    impersonation_url: Option<String>,
    /// A workforce pool's project (STS `options.userProject`), when no
    /// service account is impersonated.
    user_project: Option<String>,
}

enum Subject {
    File(PathBuf),
    Url {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// A workload on AWS: a signed `GetCallerIdentity`.
    Aws(Box<AwsSource>),
    /// A program that prints it.
    Executable(Box<Executable>),
}

// === impl External ===

impl External {
    /// The URLs it fetches from, by field: the STS exchange's, the
    /// impersonation's, a URL-sourced subject token's and the instance
    /// metadata an AWS-sourced one reads ([`AwsSource::endpoints`]).
    pub(super) fn endpoints(&self) -> Vec<(&'static str, &str)> {
        let mut urls = vec![("token_url", self.token_url.as_str())];
        if let Some(url) = &self.impersonation_url {
            urls.push(("service_account_impersonation_url", url));
        }
        match &self.subject {
            Subject::Url { url, .. } => urls.push(("credential_source.url", url)),
            Subject::Aws(aws) => urls.extend(aws.endpoints()),
            Subject::File(_) | Subject::Executable(_) => {}
        }
        urls
    }

    /// The credentials of an `external_account` file (`shown`: its path,
    /// for messages; `env`: the AWS variables an AWS source reads).
    pub(super) fn from_file(text: &[u8], shown: &str, env: &AwsEnv) -> Result<External, FileError> {
        let file: ExternalFile = serde_json::from_slice(text).map_err(|e| {
            FileError::Unusable(format!("{shown}: not an external_account file: {e}"))
        })?;
        let required = |field: Option<String>, name: &str| {
            field.filter(|v| !v.is_empty()).ok_or_else(|| {
                FileError::Unusable(format!("{shown}: external_account needs {name}"))
            })
        };
        let audience = required(file.audience, "audience")?;
        let subject_token_type = required(file.subject_token_type, "subject_token_type")?;
        let token_url = required(file.token_url, "token_url")?;
        let source = file.credential_source.ok_or_else(|| {
            FileError::Unusable(format!("{shown}: external_account needs credential_source"))
        })?;
        let unreadable =
            |e: serde_json::Error| FileError::Unusable(format!("{shown}: credential_source: {e}"));
        let (subject, json_field) = if source.get("environment_id").is_some() {
            let aws: AwsSourceFile = serde_json::from_value(source).map_err(unreadable)?;
            (
                Subject::Aws(Box::new(AwsSource::new(aws, env, shown)?)),
                None,
            )
        } else {
            let source: SourceFile = serde_json::from_value(source).map_err(unreadable)?;
            match source.executable {
                Some(program) => {
                    let impersonated = file
                        .service_account_impersonation_url
                        .as_deref()
                        .and_then(impersonated_email);
                    let account = (audience.as_str(), subject_token_type.as_str(), impersonated);
                    let program = Executable::new(program, env, shown, account)?;
                    (Subject::Executable(Box::new(program)), None)
                }
                None => Self::file_or_url(source, shown)?,
            }
        };
        Ok(External {
            audience,
            subject_token_type,
            token_url,
            subject,
            json_field,
            impersonation_url: file.service_account_impersonation_url,
            user_project: file.workforce_pool_user_project,
        })
    }

    /// A `file` or `url` source, and the JSON field of its token.
    fn file_or_url(
        source: SourceFile,
        shown: &str,
    ) -> Result<(Subject, Option<String>), FileError> {
        let subject = match (source.file, source.url) {
            (Some(path), None) => Subject::File(PathBuf::from(path)),
            (None, Some(url)) => Subject::Url {
                url,
                headers: source.headers.into_iter().collect(),
            },
            _ => {
                return Err(FileError::Unusable(format!(
                    "{shown}: credential_source needs one of file and url"
                )));
            }
        };
        let json_field = match source.format {
            None => None,
            Some(format) => match format.kind.as_deref() {
                None | Some("text") => None,
                Some("json") => Some(
                    format
                        .subject_token_field_name
                        .filter(|v| !v.is_empty())
                        .ok_or_else(|| {
                            FileError::Unusable(format!(
                                "{shown}: external_account needs format.subject_token_field_name"
                            ))
                        })?,
                ),
                Some(other) => {
                    return Err(FileError::Unusable(format!(
                        "{shown}: credential_source.format.type {other:?} is neither text nor json"
                    )));
                }
            },
        };
        Ok((subject, json_field))
    }

    /// A new access token and its lifetime (see the module docs).
    pub(super) async fn fetch(
        &self,
        client: &CredentialClient,
    ) -> Result<(String, Duration), String> {
        let subject = self.subject_token(client).await?;
        let options = match (&self.user_project, &self.impersonation_url) {
            (Some(project), None) => {
                Some(serde_json::json!({ "userProject": project }).to_string())
            }
            _ => None,
        };
        let mut pairs = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("audience", self.audience.as_str()),
            ("scope", SCOPE),
            ("requested_token_type", ACCESS_TOKEN_TYPE),
            ("subject_token", subject.as_str()),
            ("subject_token_type", self.subject_token_type.as_str()),
        ];
        if let Some(options) = &options {
            pairs.push(("options", options));
        }
        let form_type = [("content-type", "application/x-www-form-urlencoded")];
        let answer = fetch::exchange(
            client,
            Method::POST,
            &self.token_url,
            &form_type,
            form_body(&pairs),
        )
        .await?;
        let (federated, lifetime) = token_answer(&self.token_url, answer)?;
        let Some(url) = &self.impersonation_url else {
            return Ok((federated, lifetime));
        };
        let bearer = format!("Bearer {federated}");
        let headers = [
            ("content-type", "application/json"),
            ("authorization", bearer.as_str()),
        ];
        let body = serde_json::json!({
            "scope": [SCOPE],
            "lifetime": format!("{}s", IMPERSONATED_LIFETIME.as_secs()),
        });
        let (status, answer) = fetch::exchange(
            client,
            Method::POST,
            url,
            &headers,
            Bytes::from(body.to_string()),
        )
        .await?;
        let url = fetch::Shown(url);
        if !status.is_success() {
            let v: serde_json::Value = serde_json::from_slice(&answer).unwrap_or_default();
            return Err(format!(
                "{url}: {status} {}",
                v["error"]["message"].as_str().unwrap_or("")
            ));
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Impersonated {
            access_token: String,
        }
        let token: Impersonated = serde_json::from_slice(&answer)
            .map_err(|e| format!("{url}: not a generateAccessToken answer: {e}"))?;
        Ok((token.access_token, IMPERSONATED_LIFETIME))
    }

    /// The workload's own token, from its source.
    async fn subject_token(&self, client: &CredentialClient) -> Result<String, String> {
        let (text, from) = match &self.subject {
            Subject::File(path) => {
                let shown = path.display().to_string();
                let bytes = tokio::fs::read(path)
                    .await
                    .map_err(|e| format!("the subject token file {shown}: {e}"))?;
                (bytes, shown)
            }
            Subject::Url { url, headers } => {
                let headers: Vec<(&str, &str)> = headers
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                let (status, body) =
                    fetch::exchange(client, Method::GET, url, &headers, Bytes::new()).await?;
                if !status.is_success() {
                    // The URL may carry a token of its own: named by host only.
                    let host = url.parse::<http::Uri>().ok();
                    let host = host.as_ref().and_then(|u| u.host()).unwrap_or("?");
                    return Err(format!("the subject token URL on {host}: {status}"));
                }
                (body.to_vec(), "the subject token URL".to_string())
            }
            Subject::Aws(aws) => return aws.subject_token(client, &self.audience).await,
            Subject::Executable(program) => return program.subject_token().await,
        };
        if text.len() > MAX_SUBJECT_TOKEN {
            return Err(format!("{from}: more than {MAX_SUBJECT_TOKEN} bytes"));
        }
        let token = match &self.json_field {
            None => String::from_utf8(text)
                .map_err(|_| format!("{from}: not UTF-8"))?
                .trim()
                .to_string(),
            Some(field) => {
                let v: serde_json::Value =
                    serde_json::from_slice(&text).map_err(|e| format!("{from}: not JSON: {e}"))?;
                v[field.as_str()]
                    .as_str()
                    .ok_or_else(|| format!("{from}: no text field {field:?}"))?
                    .to_string()
            }
        };
        if token.is_empty() {
            return Err(format!("{from}: empty"));
        }
        Ok(token)
    }
}

/// The service account's email in an impersonation URL
/// (`…/serviceAccounts/{email}:generateAccessToken`).
fn impersonated_email(url: &str) -> Option<&str> {
    let (_, rest) = url.rsplit_once("/serviceAccounts/")?;
    rest.strip_suffix(":generateAccessToken")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(source: &str, extra: &str) -> String {
        format!(
            r#"{{"type":"external_account","audience":"//iam.googleapis.com/x","subject_token_type":"urn:ietf:params:oauth:token-type:jwt","token_url":"https://sts.googleapis.com/v1/token"{extra},"credential_source":{source}}}"#
        )
    }

    fn read(text: &str) -> Result<External, FileError> {
        External::from_file(text.as_bytes(), "f.json", &AwsEnv::default())
    }

    #[test]
    fn a_file_or_url_source_is_read_and_anything_else_is_named() {
        let e = read(&file(r#"{"file":"/t"}"#, "")).unwrap();
        assert!(matches!(e.subject, Subject::File(_)) && e.json_field.is_none());
        let e = read(&file(
            r#"{"url":"http://x/t","headers":{"a":"b"},"format":{"type":"json","subject_token_field_name":"value"}}"#,
            r#","service_account_impersonation_url":"https://i/x:generateAccessToken""#,
        ))
        .unwrap();
        assert_eq!(e.json_field.as_deref(), Some("value"));
        assert!(e.impersonation_url.is_some());
        assert!(matches!(&e.subject, Subject::Url { headers, .. } if headers.len() == 1));

        let unusable = |text: &str, says: &str| match read(text) {
            Err(FileError::Unusable(e)) => assert!(e.contains(says), "{e}"),
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("accepted {text}"),
        };
        unusable(
            &file(r#"{"file":"/t","url":"http://x"}"#, ""),
            "one of file and url",
        );
        unusable(&file(r#"{}"#, ""), "one of file and url");
        unusable(
            &file(r#"{"file":"/t","format":{"type":"json"}}"#, ""),
            "subject_token_field_name",
        );
        unusable(
            &file(r#"{"file":"/t","format":{"type":"xml"}}"#, ""),
            "neither text nor json",
        );
        unusable(r#"{"type":"external_account"}"#, "audience");
        unusable("[1]", "not an external_account file");
        // Without GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1: a warning.
        let source = r#"{"executable":{"command":"/bin/token"}}"#;
        assert!(matches!(
            read(&file(source, "")),
            Err(FileError::Unsupported(_))
        ));
        assert_eq!(
            impersonated_email(
                "https://iam/v1/projects/-/serviceAccounts/a@b.c:generateAccessToken"
            ),
            Some("a@b.c")
        );
        // An AWS source needs its verification URL.
        unusable(
            &file(
                r#"{"environment_id":"aws1","region_url":"http://169.254.169.254"}"#,
                "",
            ),
            "regional_cred_verification_url",
        );
        let e = read(&file(
            r#"{"environment_id":"aws1","regional_cred_verification_url":"https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15"}"#,
            "",
        ))
        .unwrap();
        assert!(matches!(e.subject, Subject::Aws(_)));
    }

    #[tokio::test]
    async fn the_subject_token_is_the_trimmed_text_or_the_named_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        let config = crate::Config::for_tests("http://127.0.0.1:9");
        let client = crate::upstream::build_client(&config).unwrap();
        let client = CredentialClient::new(
            client,
            crate::local::own::UNBOUND,
            crate::resolve::Resolve::default(),
        );
        let source = format!(r#"{{"file":{:?}}}"#, path.display().to_string());
        let text = read(&file(&source, "")).unwrap();
        std::fs::write(&path, "eyJ.token\n").unwrap();
        assert_eq!(text.subject_token(&client).await.unwrap(), "eyJ.token");
        std::fs::write(&path, "  \n").unwrap();
        assert!(
            text.subject_token(&client)
                .await
                .unwrap_err()
                .ends_with("empty")
        );

        let source = format!(
            r#"{{"file":{:?},"format":{{"type":"json","subject_token_field_name":"value"}}}}"#,
            path.display().to_string()
        );
        let json = read(&file(&source, "")).unwrap();
        std::fs::write(&path, r#"{"count":1,"value":"eyJ.json"}"#).unwrap();
        assert_eq!(json.subject_token(&client).await.unwrap(), "eyJ.json");
        std::fs::write(&path, r#"{"value":7}"#).unwrap();
        assert!(
            json.subject_token(&client)
                .await
                .unwrap_err()
                .contains("no text field")
        );
        std::fs::write(&path, vec![b'a'; MAX_SUBJECT_TOKEN + 1]).unwrap();
        assert!(
            text.subject_token(&client)
                .await
                .unwrap_err()
                .contains("more than")
        );
        std::fs::remove_file(&path).unwrap();
        assert!(text.subject_token(&client).await.is_err());
    }
}
