use std::time::{Duration, UNIX_EPOCH};

use super::*;

fn parts(uri: &str, headers: &[(&str, &str)]) -> http::request::Parts {
    let mut req = http::Request::post(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.body(()).unwrap().into_parts().0
}

fn creds() -> AwsCredentials {
    AwsCredentials::new(
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        None,
        "test",
    )
}

/// `p` re-signed now for us-east-1 with [`creds`], its body `{}`.
fn resign_now(p: &mut http::request::Parts) {
    resign(
        p,
        b"{}",
        creds().fixed().unwrap(),
        "us-east-1",
        SystemTime::now(),
    )
    .unwrap();
}

fn signed_headers(parts: &http::request::Parts) -> String {
    let auth = parts.headers["authorization"].to_str().unwrap();
    auth.split("SignedHeaders=")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn the_clients_signature_is_replaced_and_every_forwarded_header_signed() {
    let mut p = parts(
        "http://127.0.0.1:9100/model/anthropic.claude-x:0/invoke",
        &[
            (
                "authorization",
                "AWS4-HMAC-SHA256 Credential=AKIDCLIENT/20250101/eu-west-1/bedrock/aws4_request, SignedHeaders=host, Signature=00",
            ),
            ("x-amz-date", "20250101T000000Z"),
            ("x-amz-security-token", "client-token"),
            ("accept-encoding", "gzip"),
            ("x-stainless-lang", "python"),
            ("content-type", "application/json"),
            ("user-agent", "Anthropic/Python"),
        ],
    );
    assert_eq!(client_region(&p.headers).as_deref(), Some("eu-west-1"));
    let time = UNIX_EPOCH + Duration::from_secs(1_764_000_000);
    resign(&mut p, b"{}", creds().fixed().unwrap(), "us-west-2", time).unwrap();
    let auth = p.headers["authorization"].to_str().unwrap();
    assert!(
        auth.starts_with(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20251124/us-west-2/bedrock/aws4_request"
        ),
        "{auth}"
    );
    assert_eq!(
        signed_headers(&p),
        "accept-encoding;content-type;host;x-amz-date;x-stainless-lang"
    );
    assert!(!p.headers.contains_key("x-amz-security-token"));
    assert_eq!(p.headers["host"], "127.0.0.1:9100");
    assert_eq!(p.headers["x-amz-date"], "20251124T160000Z");
    // The same request signed twice gives the same signature; a different
    // body does not.
    let again = {
        let mut q = parts(
            "http://127.0.0.1:9100/model/anthropic.claude-x:0/invoke",
            &[],
        );
        q.headers = p.headers.clone();
        resign(&mut q, b"{}", creds().fixed().unwrap(), "us-west-2", time).unwrap();
        q.headers["authorization"].clone()
    };
    assert_eq!(again, p.headers["authorization"]);
    let mut q = parts(
        "http://127.0.0.1:9100/model/anthropic.claude-x:0/invoke",
        &[],
    );
    q.headers = p.headers.clone();
    resign(&mut q, b"{ }", creds().fixed().unwrap(), "us-west-2", time).unwrap();
    assert_ne!(q.headers["authorization"], p.headers["authorization"]);
}

#[test]
fn expect_is_forwarded_but_not_signed() {
    // curl sends `expect: 100-continue` with a large body;
    // botocore leaves it out of the signature, as a proxy may drop it.
    let mut p = parts(
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke",
        &[
            ("expect", "100-continue"),
            ("content-type", "application/json"),
            ("x-amzn-trace-id", "Root=1-abc"),
        ],
    );
    resign_now(&mut p);
    assert_eq!(signed_headers(&p), "content-type;host;x-amz-date");
    assert_eq!(p.headers["expect"], "100-continue");
}

/// A signed header's tabs go as spaces, as AWS reads them; a header left
/// out of the signature goes as it came.
#[test]
fn a_signed_headers_tabs_go_as_spaces() {
    let mut p = parts(
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke",
        &[
            ("x-client-note", "a\tb \t c"),
            ("x-plain", "a b"),
            ("x-amzn-trace-id", "Root=1-abc;\tSampled=1"),
        ],
    );
    resign_now(&mut p);
    assert_eq!(p.headers["x-client-note"], "a b   c");
    assert_eq!(p.headers["x-plain"], "a b");
    assert_eq!(p.headers["x-amzn-trace-id"], "Root=1-abc;\tSampled=1");
    assert_eq!(signed_headers(&p), "host;x-amz-date;x-client-note;x-plain");
}

#[test]
fn the_region_of_a_bedrock_runtime_host() {
    for (host, region) in [
        ("bedrock-runtime.eu-west-3.amazonaws.com", Some("eu-west-3")),
        (
            "bedrock-runtime-fips.us-gov-west-1.amazonaws.com",
            Some("us-gov-west-1"),
        ),
        (
            "bedrock-runtime.cn-north-1.amazonaws.com.cn",
            Some("cn-north-1"),
        ),
        ("bedrock-runtime.eu-west-3.example.com", None),
        ("bedrock.eu-west-3.amazonaws.com", None),
        ("127.0.0.1", None),
    ] {
        assert_eq!(host_region(host), region, "{host}");
    }
}

#[test]
fn a_session_token_is_sent_and_signed() {
    let mut p = parts(
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse",
        &[],
    );
    let creds = AwsCredentials::new("AKID", "secret", Some("tok".into()), "test");
    resign(
        &mut p,
        b"",
        creds.fixed().unwrap(),
        "us-east-1",
        SystemTime::now(),
    )
    .unwrap();
    assert_eq!(p.headers["x-amz-security-token"], "tok");
    assert_eq!(signed_headers(&p), "host;x-amz-date;x-amz-security-token");
}

#[tokio::test]
async fn credentials_come_from_the_environment_then_the_profile_files() {
    let dir = tempfile::tempdir().unwrap();
    let creds_file = dir.path().join("credentials");
    std::fs::write(
        &creds_file,
        "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s1\n\n[work]\naws_access_key_id=AKIDWORK\naws_secret_access_key=s2\naws_session_token = t\n",
    )
    .unwrap();
    let home = dir.path().to_str().unwrap();
    let env = |pairs: &[(&str, &str)]| {
        let mut env = AwsEnv::default();
        // Deterministic on an EC2 machine too.
        env.insert("AWS_EC2_METADATA_DISABLED".into(), "true".into());
        env.insert("HOME".into(), home.into());
        for (k, v) in pairs {
            env.insert(k.to_string(), v.to_string());
        }
        env
    };
    let current = |e: AwsEnv| async move {
        e.credentials(None)
            .unwrap()
            .current(&Default::default(), crate::local::own::UNBOUND)
            .await
    };
    let file = creds_file.to_str().unwrap();
    let c = current(env(&[("AWS_SHARED_CREDENTIALS_FILE", file)]))
        .await
        .unwrap();
    assert_eq!(c.access_key_id(), "AKIDDEFAULT");
    let c = current(env(&[
        ("AWS_SHARED_CREDENTIALS_FILE", file),
        ("AWS_PROFILE", "work"),
    ]))
    .await
    .unwrap();
    assert_eq!(
        (c.access_key_id(), c.session_token()),
        ("AKIDWORK", Some("t"))
    );
    let chain = env(&[
        ("AWS_SHARED_CREDENTIALS_FILE", file),
        ("AWS_ACCESS_KEY_ID", "AKIDENV"),
        ("AWS_SECRET_ACCESS_KEY", "s3"),
    ])
    .credentials(Some("eu-west-1"))
    .unwrap();
    assert_eq!(
        chain
            .current(&Default::default(), crate::local::own::UNBOUND)
            .await
            .unwrap()
            .access_key_id(),
        "AKIDENV"
    );
    // Never the keys in Debug output.
    assert!(!format!("{chain:?}").contains("AKIDENV") && !format!("{chain:?}").contains("s3"));
    assert!(
        env(&[("AWS_ACCESS_KEY_ID", "x")])
            .credentials(None)
            .is_err()
    );
    // No source at all: "not found" (the request then goes as it came),
    // and asked again only after a pause.
    let none = env(&[]).credentials(None).unwrap();
    assert!(
        matches!(
            none.current(&Default::default(), crate::local::own::UNBOUND)
                .await,
            Err(chain::Unavailable::NotFound(_))
        ),
        "{:?}",
        none.current(&Default::default(), crate::local::own::UNBOUND)
            .await
    );
    assert!(matches!(
        none.current(&Default::default(), crate::local::own::UNBOUND)
            .await,
        Err(chain::Unavailable::Backoff)
    ));
    let e = env(&[("AWS_SECRET_ACCESS_KEY", "secret-value")]);
    assert!(!format!("{e:?}").contains("secret-value"));
}
