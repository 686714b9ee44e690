//! The wire layer reads the mock's replies as it reads the real APIs': the
//! tool calls the mock makes come out of `response_view` (JSON) and the
//! `StreamParser` (streams split into small pieces) in every dialect.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::{client::legacy::Client, rt::TokioExecutor};
use serde_json::{Value, json};
use toolwarden_mock_provider::{MockOptions, MockProvider};
use toolwarden_wire::{Dialect, StreamParser};

async fn fetch(url: String, headers: &[(&str, &str)], body: &Value) -> Bytes {
    let c = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut req = http::Request::post(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
    let resp = c.request(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    resp.into_body().collect().await.unwrap().to_bytes()
}

/// Dialect, URL, headers, body.
type Case = (Dialect, String, Vec<(&'static str, &'static str)>, Value);

#[tokio::test]
async fn wire_reads_the_mocks_tool_calls() {
    reads_tool_calls(MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    })
    .await;
}

/// Arguments in many fragments (cut inside escapes and characters' JSON
/// escapes) and bodies cut at byte offsets, not event bounds.
#[tokio::test]
async fn wire_reads_calls_from_fragmented_arguments_and_bodies() {
    reads_tool_calls(MockOptions {
        calls_per_reply: 2,
        arg_pieces: 13,
        split_chunks: Some(5),
        ..MockOptions::default()
    })
    .await;
}

async fn reads_tool_calls(opts: MockOptions) {
    let mock = MockProvider::start(opts).await;
    let base = mock.base_url();
    let cases: Vec<Case> = vec![
        (
            Dialect::Anthropic,
            format!("{base}/v1/messages"),
            vec![("x-api-key", "k"), ("anthropic-version", "2023-06-01")],
            json!({"model":"claude","max_tokens":100,"messages":[{"role":"user","content":"go"}],
                "tools":[{"name":"a","input_schema":{"type":"object"}},{"name":"b","input_schema":{"type":"object"}}]}),
        ),
        (
            Dialect::OpenAiChat,
            format!("{base}/v1/chat/completions"),
            vec![("authorization", "Bearer k")],
            json!({"model":"gpt-4o","messages":[{"role":"user","content":"go"}],
                "tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}}]}),
        ),
        (
            Dialect::OpenAiResponses,
            format!("{base}/v1/responses"),
            vec![("authorization", "Bearer k")],
            json!({"model":"gpt-4.1","input":[{"role":"user","content":"go"}],
                "tools":[{"type":"function","name":"a"},{"type":"function","name":"b"}]}),
        ),
        (
            Dialect::OpenAiResponses,
            format!("{base}/v1/responses"),
            vec![("authorization", "Bearer k")],
            json!({"model":"gpt-5","input":[{"role":"user","content":"go"}],
                "include":["reasoning.encrypted_content"],
                "tools":[{"type":"function","name":"a"},{"type":"function","name":"b"}]}),
        ),
        (
            Dialect::Gemini,
            format!("{base}/v1beta/models/gemini-2.0-flash:generateContent"),
            vec![("x-goog-api-key", "k")],
            json!({"contents":[{"role":"user","parts":[{"text":"go"}]}],
                "tools":[{"functionDeclarations":[{"name":"a"},{"name":"b"}]}]}),
        ),
    ];
    for (dialect, url, headers, mut body) in cases {
        let whole = fetch(url.clone(), &headers, &body).await;
        let view = toolwarden_wire::response_view(dialect, &whole).unwrap();
        let names: Vec<&str> = view.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"], "{dialect} JSON");
        assert!(view.usage.input_tokens.is_some(), "{dialect}");

        let stream_url = if dialect == Dialect::Gemini {
            url.replace(":generateContent", ":streamGenerateContent?alt=sse")
        } else {
            body["stream"] = json!(true);
            if dialect == Dialect::OpenAiChat {
                // Chat streams usage only when asked.
                body["stream_options"] = json!({"include_usage": true});
            }
            url
        };
        let streamed = fetch(stream_url, &headers, &body).await;
        for piece in [1usize, 7, 4096] {
            let mut p = StreamParser::new(dialect);
            for chunk in streamed.chunks(piece) {
                p.feed(chunk);
            }
            let sv = p.finish();
            // The streaming request differs (`stream: true`), so its ids and
            // arguments do too; names, order and shape must agree.
            let what = format!("{dialect} stream in {piece}-byte pieces");
            let snames: Vec<&str> = sv.calls.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(snames, names, "{what}");
            for c in &sv.calls {
                let args: Value = serde_json::from_str(&c.arguments).expect("complete arguments");
                assert!(args["query"].is_string(), "{what}: {c:?}");
                assert_eq!(args["filter"]["tags"][0], "a\"b", "{what}: {c:?}");
                let note = args["filter"]["note"].as_str().unwrap();
                assert!(
                    note.contains("café 🌍") && note.contains('\n'),
                    "{what}: {c:?}"
                );
            }
            if dialect != Dialect::Gemini {
                assert!(sv.calls.iter().all(|c| !c.id.is_empty()), "{what}");
                assert_ne!(sv.calls[0].id, sv.calls[1].id, "{what}");
            }
            assert_eq!(sv.model, view.model, "{dialect}");
            assert!(sv.usage.output_tokens.is_some(), "{what}: usage");
        }
    }
}
