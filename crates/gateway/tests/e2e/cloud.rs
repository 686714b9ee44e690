//! Cloud endpoints (issue 18) through the gateway to the mock provider:
//! Azure OpenAI, Vertex AI and Bedrock routes (with and without their
//! `/azure`, `/vertex`, `/bedrock` prefixes, stripped before forwarding),
//! exact counts per tool labelled with the cloud provider and the model
//! from the path, unconfigured upstreams answered in the client's
//! envelope, Bedrock's SigV4 re-signed by the gateway and verified by the
//! mock as AWS does, and broken event-stream answers relayed and counted.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use serde_json::{Value, json};
use toolwarden_gateway::{Upstream, cloud::aws::AwsCredentials};
use toolwarden_mock_provider::{AwsTestKey, MockOptions, RawResponse, Scripted};

use super::{
    convo::{Convo, Kind},
    support::{Harness, Reply, metric, post},
};

pub(super) const OUTCOMES: [(bool, &str); 2] = [
    (false, "Flight TP123 found: departs 09:05, 189 EUR"),
    (
        true,
        "Error: seat 12A is no longer available for flight TP123",
    ),
];

pub(super) fn two_calls() -> MockOptions {
    MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    }
}

/// Tool calls and failures of `provider` (and `model` when given) per tool,
/// once the recorder has caught up.
pub(super) async fn expect_counts(h: &Harness, provider: &str, model: Option<&str>, rounds: f64) {
    let mut labels = vec![("provider", provider)];
    if let Some(model) = model {
        labels.push(("model", model));
    }
    let ok = |m: &str| {
        let with = |tool| {
            let mut l = labels.clone();
            l.push(("tool", tool));
            l
        };
        metric(m, "toolwarden_tool_calls_total", &with("lookup")) == rounds
            && metric(m, "toolwarden_tool_calls_total", &with("book")) == rounds
            && metric(m, "toolwarden_tool_failures_total", &with("book")) == rounds
            && metric(m, "toolwarden_tool_failures_total", &with("lookup")) == 0.0
    };
    let m = h.metrics_when(ok).await;
    assert!(ok(&m), "{provider} {model:?}: counts\n{m}");
}

/// One tool round of `convo` against `url` with `headers`: the model calls
/// both tools, the results go back, the model answers with text.
pub(super) async fn round(h: &Harness, convo: &mut Convo, url: &str, headers: &[(&str, &str)]) {
    let r = post(&h.client, url.to_string(), headers, &convo.body).await;
    assert_eq!(r.status, 200, "{url}: {}", r.text());
    let calls = convo.calls(&r);
    assert_eq!(calls.len(), 2, "{url}: {}", r.text());
    convo.assistant_calls(&calls);
    convo.results(&calls, &OUTCOMES);
    let r = post(&h.client, url.to_string(), headers, &convo.body).await;
    assert_eq!(r.status, 200, "{url}: {}", r.text());
    assert!(convo.calls(&r).is_empty(), "{}", r.text());
    convo.assistant_text("Done.");
}

pub(super) fn paths(h: &Harness) -> Vec<String> {
    h.mock
        .received()
        .iter()
        .map(|r| match &r.query {
            Some(q) => format!("{}?{q}", r.path),
            None => r.path.clone(),
        })
        .collect()
}

#[tokio::test]
async fn azure_routes_with_and_without_prefix_count_per_tool() {
    let mut h = Harness::with(two_calls(), |c| {
        c.cloud.azure = Some(Upstream::parse(&format!("{}/", c.upstreams.openai)).unwrap());
    })
    .await;
    let gw = h.gw();
    for stream in [false, true] {
        let mut convo = Convo::new(Kind::Chat, stream, None);
        // The deployment names the model when the body has none.
        convo.body.as_object_mut().unwrap().remove("model");
        round(
            &h,
            &mut convo,
            &format!(
                "{gw}/azure/openai/deployments/dep-4o/chat/completions?api-version=2024-10-21"
            ),
            &[("api-key", "azure-key")],
        )
        .await;
    }
    expect_counts(&h, "azure", Some("dep-4o"), 2.0).await;
    // The v1 path, with Bearer; the body's model wins.
    let mut convo = Convo::new(Kind::Chat, false, None);
    round(
        &h,
        &mut convo,
        &format!("{gw}/openai/v1/chat/completions"),
        &[("authorization", "Bearer azure-token")],
    )
    .await;
    expect_counts(&h, "azure", Some("gpt-4o"), 1.0).await;
    let seen = paths(&h);
    assert_eq!(
        seen[0],
        "/openai/deployments/dep-4o/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(seen[4], "/openai/v1/chat/completions");
    let stats = h.finish().await;
    let models: Vec<&str> = stats.models.iter().map(|m| m.model.as_str()).collect();
    assert!(
        models.contains(&"dep-4o") && models.contains(&"gpt-4o"),
        "{models:?}"
    );
}

#[tokio::test]
async fn vertex_gemini_and_anthropic_routes_take_the_model_from_the_path() {
    let h = Harness::with(two_calls(), |c| {
        c.cloud.vertex = Some(c.upstreams.gemini.clone());
    })
    .await;
    let gw = h.gw();
    let bearer = [("authorization", "Bearer ya29.vertex")];
    let mut convo = Convo::new(Kind::Gemini, true, None);
    round(
        &h,
        &mut convo,
        &format!("{gw}/v1beta1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
        &bearer,
    )
    .await;
    expect_counts(&h, "vertex", Some("gemini-2.5-flash"), 1.0).await;
    let mut convo = Convo::new(Kind::Anthropic, false, None);
    let body = convo.body.as_object_mut().unwrap();
    body.remove("model");
    body.insert("anthropic_version".into(), json!("vertex-2023-10-16"));
    round(
        &h,
        &mut convo,
        &format!("{gw}/vertex/v1/projects/p1/locations/global/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict"),
        &bearer,
    )
    .await;
    expect_counts(&h, "vertex", Some("claude-sonnet-4@20250514"), 1.0).await;
    assert!(paths(&h)[2].starts_with("/v1/projects/p1/locations/global/"));
    // Without a token the mock answers as Vertex does, through the gateway.
    let r = post(
        &h.client,
        format!("{gw}/v1/projects/p1/locations/global/publishers/anthropic/models/claude-sonnet-4:rawPredict"),
        &[],
        &convo.body,
    )
    .await;
    assert_eq!(r.status, 401, "{}", r.text());
}

/// Vertex AI express mode (google-genai's `Client(vertexai=True,
/// api_key=…)`): `/{v1|v1beta1}/publishers/…`, no project, an API key. Read
/// as Vertex's Gemini and sent to the Vertex upstream, with or without the
/// `/vertex` prefix; it went to the Gemini API's upstream (`/v1/…`) or
/// through unread (`/vertex/…`, `/v1beta1/…`).
#[tokio::test]
async fn vertex_express_mode_is_read_and_goes_to_vertex() {
    let h = Harness::with(
        MockOptions {
            api_key: Some("vertex-express-key".into()),
            ..two_calls()
        },
        |c| {
            // The Gemini API's upstream is nowhere: a request sent there
            // fails.
            c.cloud.vertex = Some(c.upstreams.gemini.clone());
            c.upstreams.gemini = Upstream::parse("http://127.0.0.1:9").unwrap();
        },
    )
    .await;
    let gw = h.gw();
    let key = [("x-goog-api-key", "vertex-express-key")];
    for (prefix, version, stream) in [("", "v1", false), ("/vertex", "v1beta1", true)] {
        let method = if stream {
            "streamGenerateContent?alt=sse"
        } else {
            "generateContent"
        };
        let mut convo = Convo::new(Kind::Gemini, stream, None);
        round(
            &h,
            &mut convo,
            &format!("{gw}{prefix}/{version}/publishers/google/models/gemini-2.5-flash:{method}"),
            &key,
        )
        .await;
    }
    expect_counts(&h, "vertex", Some("gemini-2.5-flash"), 2.0).await;
    // Each as it came, less the prefix.
    let seen = paths(&h);
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(
        seen[0].starts_with("/v1/publishers/google/models/"),
        "{seen:?}"
    );
    assert!(
        seen[2].starts_with("/v1beta1/publishers/google/models/"),
        "{seen:?}"
    );
    // A wrong key gets Vertex's answer, through the gateway.
    let convo = Convo::new(Kind::Gemini, false, None);
    let r = post(
        &h.client,
        format!("{gw}/v1/publishers/google/models/gemini-2.5-flash:generateContent"),
        &[("x-goog-api-key", "wrong")],
        &convo.body,
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text());
}

/// Vertex AI's Chat Completions endpoint (the OpenAI SDK with
/// `…/endpoints/openapi` as its base URL): read as OpenAI Chat, the model
/// the body's; it went through unread.
#[tokio::test]
async fn vertex_chat_completions_are_read() {
    let h = Harness::with(two_calls(), |c| {
        c.cloud.vertex = Some(c.upstreams.gemini.clone());
    })
    .await;
    let gw = h.gw();
    let bearer = [("authorization", "Bearer ya29.vertex")];
    for stream in [false, true] {
        let mut convo = Convo::new(Kind::Chat, stream, None);
        convo.body["model"] = json!("google/gemini-2.5-flash");
        round(
            &h,
            &mut convo,
            &format!(
                "{gw}/vertex/v1/projects/p1/locations/us-central1/endpoints/openapi/chat/completions"
            ),
            &bearer,
        )
        .await;
    }
    expect_counts(&h, "vertex", Some("google/gemini-2.5-flash"), 2.0).await;
    assert_eq!(
        paths(&h)[0],
        "/v1/projects/p1/locations/us-central1/endpoints/openapi/chat/completions"
    );
}

pub(super) const KEY_ID: &str = "AKIDMOCKTEST";
pub(super) const SECRET: &str = "mock/secret/key";

/// The session token of the gateway's temporary credentials in [`bedrock`].
pub(super) const SESSION_TOKEN: &str = "session-tok";

pub(super) fn aws_mock() -> MockOptions {
    aws_mock_with_token(SESSION_TOKEN)
}

/// A mock that takes [`KEY_ID`] as temporary credentials with `token`, as
/// AWS takes them only with their session token.
pub(super) fn aws_mock_with_token(token: &str) -> MockOptions {
    MockOptions {
        aws_key: Some(AwsTestKey::new(KEY_ID, SECRET).with_session_token(token)),
        ..two_calls()
    }
}

/// A Bedrock harness whose gateway signs with `secret` (none: no credentials).
pub(super) async fn bedrock(secret: Option<&str>) -> Harness {
    let secret = secret.map(String::from);
    Harness::with(aws_mock(), move |c| {
        c.cloud.bedrock = Some(Upstream::parse(&format!("{}/", c.upstreams.anthropic)).unwrap());
        c.cloud.bedrock_region = Some("us-east-1".into());
        c.cloud.aws_credentials =
            secret.map(|s| AwsCredentials::new(KEY_ID, &s, Some(SESSION_TOKEN.into()), "test"));
    })
    .await
}

/// What a client signed for the gateway's own address sends.
pub(super) fn client_signed() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKIDCLIENT/20251125/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=0123",
        ),
        ("x-amz-date", "20251125T170000Z"),
        ("content-type", "application/json"),
        ("accept-encoding", "gzip, deflate"),
        ("x-stainless-lang", "python"),
    ]
}

pub(super) fn invoke_convo() -> Convo {
    let mut convo = Convo::new(Kind::Anthropic, false, None);
    let body = convo.body.as_object_mut().unwrap();
    body.remove("model");
    body.insert("anthropic_version".into(), json!("bedrock-2023-05-31"));
    convo
}

#[tokio::test]
async fn bedrock_invoke_is_resigned_and_the_mock_verifies_it() {
    let h = bedrock(Some(SECRET)).await;
    let gw = h.gw();
    let mut headers = client_signed();
    headers.push(("x-session-id", "bedrock-raw-colon"));
    let mut convo = invoke_convo();
    // The Anthropic SDK's raw `:`, under the prefix.
    round(
        &h,
        &mut convo,
        &format!("{gw}/bedrock/model/anthropic.claude-3-5-sonnet-20241022-v2:0/invoke"),
        &headers,
    )
    .await;
    // boto3's `%3A`, without it.
    headers.pop();
    headers.push(("x-session-id", "bedrock-encoded-colon"));
    let mut convo = invoke_convo();
    round(
        &h,
        &mut convo,
        &format!("{gw}/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke"),
        &headers,
    )
    .await;
    expect_counts(
        &h,
        "bedrock",
        Some("anthropic.claude-3-5-sonnet-20241022-v2:0"),
        2.0,
    )
    .await;
    let received = h.mock.received();
    assert_eq!(
        received[2].path,
        "/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke"
    );
    let auth = received[0].headers["authorization"].to_str().unwrap();
    assert!(auth.contains(&format!("Credential={KEY_ID}/")), "{auth}");
    assert!(
        auth.contains("SignedHeaders=accept-encoding;content-length;content-type;host;x-amz-date;x-amz-security-token;x-session-id;x-stainless-lang,"),
        "{auth}"
    );
    assert_eq!(received[0].headers["x-amz-security-token"], "session-tok");
}

/// A forwarded header whose value holds a tab (`x-client-note: a\tb`):
/// AWS reads the tab as a space before its `Trimall`, so a signature over
/// the tab as it is does not match (the mock checks as AWS does). The
/// gateway forwards such a value with its tabs as spaces, as AWS reads it,
/// and signs that.
#[tokio::test]
async fn a_tab_in_a_signed_header_is_signed_as_aws_reads_it() {
    let h = bedrock(Some(SECRET)).await;
    let mut headers = client_signed();
    headers.push(("x-client-note", "a\tb  c"));
    let url = format!("{}/bedrock/model/anthropic.claude-x-v1:0/invoke", h.gw());
    let r = post(&h.client, url, &headers, &invoke_convo().body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let received = h.mock.received();
    assert_eq!(received[0].header("x-client-note"), Some("a b  c"));
}

#[tokio::test]
async fn an_invoke_named_by_an_inference_profile_arn_is_read_by_its_body() {
    let h = bedrock(Some(SECRET)).await;
    // boto3 escapes the ARN's `:` and `/`; the id names no model.
    let arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6";
    let url = format!(
        "{}/model/{}/invoke",
        h.gw(),
        arn.replace(':', "%3A").replace('/', "%2F")
    );
    let mut headers = client_signed();
    headers.push(("x-session-id", "bedrock-arn"));
    let mut convo = invoke_convo();
    round(&h, &mut convo, &url, &headers).await;
    expect_counts(&h, "bedrock", Some(arn), 1.0).await;
    // Forwarded as sent, signed for the upstream.
    let received = h.mock.received();
    assert_eq!(
        received[0].path,
        url.strip_prefix(&h.gw()).unwrap(),
        "the path goes as it came"
    );
    assert!(
        received[0].headers["authorization"]
            .to_str()
            .unwrap()
            .contains(KEY_ID)
    );
    // A body without `anthropic_version` stays a pass-through: forwarded,
    // counted as a request, none of its calls read.
    let mut other = invoke_convo();
    other
        .body
        .as_object_mut()
        .unwrap()
        .remove("anthropic_version");
    let r = post(&h.client, url.clone(), &client_signed(), &other.body).await;
    assert_eq!(h.mock.received().len(), 3, "{}", r.text());
    let bedrock = [("provider", "bedrock")];
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_upstream_requests_total", &bedrock) >= 3.0)
        .await;
    let lookup = [("provider", "bedrock"), ("tool", "lookup")];
    assert_eq!(
        metric(&m, "toolwarden_tool_calls_total", &lookup),
        1.0,
        "{m}"
    );
}

#[tokio::test]
async fn a_bad_or_missing_signature_gets_aws_403() {
    let url = |h: &Harness| format!("{}/model/anthropic.claude-x-v1:0/invoke", h.gw());
    // A wrong secret: the mock's signature differs.
    let h = bedrock(Some("not-the-secret")).await;
    let r = post(&h.client, url(&h), &client_signed(), &invoke_convo().body).await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(
        r.json()["message"].as_str().unwrap().starts_with(
            "The request signature we calculated does not match the signature you provided"
        ),
        "{}",
        r.text()
    );
    assert!(
        r.header("x-amzn-errortype")
            .unwrap()
            .starts_with("InvalidSignatureException")
    );
    // No credentials: the client's signature goes as it came (another key).
    let h = bedrock(None).await;
    let r = post(&h.client, url(&h), &client_signed(), &invoke_convo().body).await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(
        h.mock.received()[0].headers["authorization"],
        client_signed()[0].1
    );
    let m = h
        .metrics_when(|m| {
            metric(
                m,
                "toolwarden_upstream_requests_total",
                &[("provider", "bedrock"), ("status", "403")],
            ) == 1.0
        })
        .await;
    assert_eq!(
        metric(
            &m,
            "toolwarden_upstream_requests_total",
            &[("provider", "bedrock"), ("status", "403")]
        ),
        1.0,
        "{m}"
    );
}

/// A Bedrock API key (`Authorization: Bearer`, what the AWS SDKs send for
/// `AWS_BEARER_TOKEN_BEDROCK`) is not bound to a host: it goes on as the
/// client sent it, unsigned, whether or not the gateway has credentials of
/// its own, and a wrong one gets AWS's refusal.
#[tokio::test]
async fn a_clients_bedrock_api_key_goes_on_unsigned() {
    const API_KEY: &str = "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl";
    for secret in [Some(SECRET), None] {
        let h = Harness::with(
            MockOptions {
                bedrock_api_key: Some(API_KEY.into()),
                ..aws_mock()
            },
            move |c| {
                c.cloud.bedrock =
                    Some(Upstream::parse(&format!("{}/", c.upstreams.anthropic)).unwrap());
                c.cloud.bedrock_region = Some("us-east-1".into());
                c.cloud.aws_credentials = secret
                    .map(|s| AwsCredentials::new(KEY_ID, s, Some(SESSION_TOKEN.into()), "test"));
            },
        )
        .await;
        let url = format!("{}/model/anthropic.claude-x-v1%3A0/invoke", h.gw());
        let bearer = format!("Bearer {API_KEY}");
        let headers = [
            ("authorization", bearer.as_str()),
            ("content-type", "application/json"),
        ];
        let mut convo = invoke_convo();
        round(&h, &mut convo, &url, &headers).await;
        expect_counts(&h, "bedrock", Some("anthropic.claude-x-v1:0"), 1.0).await;
        for r in h.mock.received() {
            assert_eq!(r.headers["authorization"], bearer.as_str(), "{secret:?}");
            assert!(!r.headers.contains_key("x-amz-date"), "{secret:?}");
        }
        let wrong = [
            ("authorization", "Bearer ABSK-not-the-key"),
            ("content-type", "application/json"),
        ];
        let r = post(&h.client, url.clone(), &wrong, &invoke_convo().body).await;
        assert_eq!(r.status, 403, "{}", r.text());
        assert_eq!(
            r.json()["Message"],
            "Authentication failed: Please make sure your API Key is valid."
        );
    }
}

/// A host whose clock is 15 minutes behind AWS's: the first request the
/// gateway signs is refused for its time ("Signature expired"); the
/// gateway, as the AWS SDKs do, takes AWS's time from the refusal's `Date`,
/// signs the request again with it and sends it once more, so the client
/// never sees the refusal. Later requests are signed with AWS's time at
/// once.
#[tokio::test]
async fn after_a_refusal_for_clock_skew_requests_are_signed_with_awss_time() {
    const AHEAD: i64 = 900;
    let key = AwsTestKey::new(KEY_ID, SECRET)
        .with_session_token(SESSION_TOKEN)
        .with_clock_offset(AHEAD);
    let mock = MockOptions {
        aws_key: Some(key),
        ..two_calls()
    };
    let h = Harness::with(mock, |c| {
        c.cloud.bedrock = Some(Upstream::parse(&format!("{}/", c.upstreams.anthropic)).unwrap());
        c.cloud.bedrock_region = Some("us-east-1".into());
        c.cloud.aws_credentials = Some(AwsCredentials::new(
            KEY_ID,
            SECRET,
            Some(SESSION_TOKEN.into()),
            "test",
        ));
    })
    .await;
    let url = format!("{}/model/anthropic.claude-x-v1:0/invoke", h.gw());
    let mut convo = invoke_convo();
    round(&h, &mut convo, &url, &client_signed()).await;
    // The refused request, the same request signed again, the round's
    // second request: the last two signed with AWS's time (the mock
    // checks it is within 5 minutes).
    let aws_now = SystemTime::now() + Duration::from_secs(AHEAD as u64);
    let received = h.mock.received();
    assert_eq!(received.len(), 3, "{:?}", paths(&h));
    assert_eq!(received[0].body, received[1].body);
    let (earliest, latest) = (
        amz_date_of(aws_now - Duration::from_secs(60)),
        amz_date_of(aws_now),
    );
    for again in &received[1..] {
        let amz_date = again.headers["x-amz-date"].to_str().unwrap();
        assert!(
            (earliest.as_str()..=latest.as_str()).contains(&amz_date),
            "{amz_date} not in {earliest}..={latest}"
        );
    }
    let first = received[0].headers["x-amz-date"].to_str().unwrap();
    assert!(first < earliest.as_str(), "{first} signed with AWS's time");
    // One request as the client and the metrics see it, answered 200.
    let m = h
        .metrics_when(|m| {
            metric(
                m,
                "toolwarden_upstream_requests_total",
                &[("provider", "bedrock"), ("status", "200")],
            ) == 2.0
        })
        .await;
    assert_eq!(
        metric(
            &m,
            "toolwarden_upstream_requests_total",
            &[("provider", "bedrock"), ("status", "403")]
        ),
        0.0,
        "{m}"
    );
}

/// `t` as `x-amz-date` writes it (`20251125T170000Z`; its order is time's).
fn amz_date_of(t: SystemTime) -> String {
    // `Tue, 25 Nov 2025 17:00:00 GMT`.
    let http = httpdate::fmt_http_date(t);
    let f: Vec<&str> = http.split([' ', ':']).collect();
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = months.iter().position(|m| *m == f[2]).unwrap() + 1;
    format!("{}{month:02}{}T{}{}{}Z", f[3], f[1], f[4], f[5], f[6])
}

#[tokio::test]
async fn invoke_with_response_stream_relays_event_stream_frames() {
    let h = bedrock(Some(SECRET)).await;
    let url = format!(
        "{}/model/us.anthropic.claude-x-v1%3A0/invoke-with-response-stream",
        h.gw()
    );
    let r = post(
        &h.client,
        url.clone(),
        &client_signed(),
        &invoke_convo().body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.header("content-type"),
        Some("application/vnd.amazon.eventstream")
    );
    let mut decoder = toolwarden_wire::eventstream::Decoder::new();
    decoder.push(&r.body);
    let mut events = Vec::new();
    while let Some(msg) = decoder.next_message() {
        let msg = msg.expect("a valid frame");
        assert_eq!(msg.event_type(), Some("chunk"));
        let payload: Value = serde_json::from_slice(msg.payload()).unwrap();
        events.push(payload["bytes"].as_str().unwrap().to_string());
    }
    assert!(events.len() >= 4, "{events:?}");
    // The calls inside the frames are read: one per tool.
    let model = "us.anthropic.claude-x-v1:0";
    let m = h
        .metrics_when(|m| {
            metric(
                m,
                "toolwarden_tool_calls_total",
                &[("provider", "bedrock"), ("model", model)],
            ) == 2.0
        })
        .await;
    for tool in ["lookup", "book"] {
        assert_eq!(
            metric(
                &m,
                "toolwarden_tool_calls_total",
                &[("provider", "bedrock"), ("model", model), ("tool", tool)]
            ),
            1.0,
            "{m}"
        );
    }

    // Corrupt frames (a CRC mismatch, a truncated frame, an unknown event
    // type): relayed byte for byte, the request counted, no panic.
    let mut good = toolwarden_wire::eventstream::encode_event("mysteryEvent", b"{}");
    let mut bad_crc =
        toolwarden_wire::eventstream::encode_invoke_chunk(b"{\"type\":\"message_start\"}");
    let n = bad_crc.len();
    bad_crc[n - 1] ^= 0xff;
    let truncated = toolwarden_wire::eventstream::encode_invoke_chunk(b"{\"type\":\"ping\"}");
    good.extend_from_slice(&bad_crc);
    good.extend_from_slice(&truncated[..truncated.len() / 2]);
    let sent = Bytes::from(good);
    h.mock.push_response(Scripted::Raw(RawResponse {
        status: 200,
        headers: vec![(
            "content-type".into(),
            "application/vnd.amazon.eventstream".into(),
        )],
        chunks: vec![sent.slice(..7), sent.slice(7..)],
        delay: std::time::Duration::ZERO,
    }));
    let r: Reply = post(
        &h.client,
        url.clone(),
        &client_signed(),
        &invoke_convo().body,
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, sent, "relayed unchanged");
    let m = h
        .metrics_when(|m| {
            metric(
                m,
                "toolwarden_upstream_requests_total",
                &[("provider", "bedrock")],
            ) == 2.0
        })
        .await;
    assert_eq!(
        metric(
            &m,
            "toolwarden_upstream_requests_total",
            &[("provider", "bedrock")]
        ),
        2.0,
        "{m}"
    );
    h.assert_metric(
        "toolwarden_unparsed_responses_total",
        &[("reason", "malformed_frame")],
        1.0,
    )
    .await;

    // A stream whose only fault is its last frame, cut short: counted too.
    let mut cut = toolwarden_wire::eventstream::encode_event("mysteryEvent", b"{}");
    cut.extend_from_slice(&truncated[..truncated.len() / 2]);
    h.mock.push_response(Scripted::Raw(RawResponse {
        status: 200,
        headers: vec![(
            "content-type".into(),
            "application/vnd.amazon.eventstream".into(),
        )],
        chunks: vec![Bytes::from(cut)],
        delay: std::time::Duration::ZERO,
    }));
    let r: Reply = post(&h.client, url, &client_signed(), &invoke_convo().body).await;
    assert_eq!(r.status, 200);
    h.assert_metric(
        "toolwarden_unparsed_responses_total",
        &[("reason", "malformed_frame")],
        2.0,
    )
    .await;
}

/// A Converse tool round (boto3's shapes): the model calls both tools, the
/// results go back (`book`'s with `status: "error"`), the model answers.
#[tokio::test]
async fn bedrock_converse_streaming_and_not_count_per_tool() {
    let h = bedrock(Some(SECRET)).await;
    let schema = json!({"json": {"type": "object", "properties": {"query": {"type": "string"}}}});
    let tools = json!({"tools": [
        {"toolSpec": {"name": "lookup", "inputSchema": schema}},
        {"toolSpec": {"name": "book", "inputSchema": schema}}]});
    for (op, session) in [
        ("converse", "conv-json"),
        ("converse-stream", "conv-stream"),
    ] {
        let url = format!("{}/bedrock/model/amazon.nova-pro-v1%3A0/{op}", h.gw());
        let mut headers = client_signed();
        headers.push(("x-session-id", session));
        let mut body = json!({
            "messages": [{"role": "user", "content": [{"text": format!("Book a flight ({op})")}]}],
            "toolConfig": tools,
        });
        let r = post(&h.client, url.clone(), &headers, &body).await;
        assert_eq!(r.status, 200, "{op}: {}", r.text());
        let uses: Vec<Value> = if op == "converse" {
            r.json()["output"]["message"]["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|b| b.get("toolUse").cloned())
                .collect()
        } else {
            let mut decoder = toolwarden_wire::eventstream::Decoder::new();
            decoder.push(&r.body);
            let mut uses = Vec::new();
            while let Some(msg) = decoder.next_message() {
                let msg = msg.expect("a valid frame");
                let v: Value = serde_json::from_slice(msg.payload()).unwrap();
                if msg.event_type() == Some("contentBlockStart")
                    && let Some(u) = v["start"].get("toolUse")
                {
                    let mut u = u.clone();
                    u["input"] = json!({});
                    uses.push(u);
                }
            }
            uses
        };
        assert_eq!(uses.len(), 2, "{op}: {}", r.text());
        let results: Vec<Value> = uses
            .iter()
            .map(|u| {
                let fails = u["name"] == "book";
                let text = if fails { OUTCOMES[1].1 } else { OUTCOMES[0].1 };
                let mut result = json!({"toolUseId": u["toolUseId"], "content": [{"text": text}]});
                if fails {
                    result["status"] = json!("error");
                }
                json!({"toolResult": result})
            })
            .collect();
        let calls: Vec<Value> = uses.iter().map(|u| json!({"toolUse": u})).collect();
        let messages = body["messages"].as_array_mut().unwrap();
        messages.push(json!({"role": "assistant", "content": calls}));
        messages.push(json!({"role": "user", "content": results}));
        let r = post(&h.client, url, &headers, &body).await;
        assert_eq!(r.status, 200, "{op}: {}", r.text());
    }
    expect_counts(&h, "bedrock", Some("amazon.nova-pro-v1:0"), 2.0).await;
}

#[tokio::test]
async fn unconfigured_upstreams_are_named_in_the_clients_envelope() {
    let h = Harness::start().await;
    let gw = h.gw();
    let r = post(
        &h.client,
        format!("{gw}/openai/deployments/d/chat/completions?api-version=2024-10-21"),
        &[("api-key", "k")],
        &json!({"messages": []}),
    )
    .await;
    assert_eq!(r.status, 404);
    let v = r.json();
    assert_eq!(v["error"]["code"], "upstream_not_configured");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--azure-upstream")
    );
    let r = post(
        &h.client,
        format!("{gw}/bedrock/model/anthropic.claude-x:0/invoke"),
        &[],
        &json!({"messages": []}),
    )
    .await;
    assert_eq!(r.status, 404);
    let message = r.json()["message"].as_str().unwrap().to_string();
    assert!(message.contains("--bedrock-upstream"), "{message}");
    assert!(h.mock.received().is_empty());
}

/// Bedrock's bidirectional stream (Nova Sonic) cannot be relayed: its
/// events are signed for the gateway's address, one after another. It is
/// answered 501 in AWS's shape, with or without a Bedrock upstream, sent
/// nowhere, and recorded as a failed request.
#[tokio::test]
async fn bedrocks_bidirectional_stream_is_answered_not_relayed() {
    let mut h = Harness::start().await;
    let gw = h.gw();
    for path in [
        "/model/amazon.nova-sonic-v1:0/invoke-with-bidirectional-stream",
        "/bedrock/model/amazon.nova-sonic-v1%3A0/invoke-with-bidirectional-stream",
    ] {
        let r = post(&h.client, format!("{gw}{path}"), &[], &json!({})).await;
        assert_eq!(r.status, 501, "{path}: {}", r.text());
        assert_eq!(
            r.headers["x-amzn-errortype"], "ValidationException",
            "{path}"
        );
        let message = r.json()["message"].as_str().unwrap().to_string();
        assert!(
            message.contains("bidirectional stream") && message.contains("Bedrock directly"),
            "{message}"
        );
    }
    assert!(h.mock.received().is_empty());
    let stats = h.finish().await;
    assert_eq!(stats.requests.total, 2, "{:?}", stats.requests);
    assert_eq!(stats.requests.errors, 2, "{:?}", stats.requests);
}
