//! Recorded traffic through the gateway: real conversations (accepted or
//! repaired, never altered otherwise) and real SSE recordings (forwarded
//! byte-exact in awkward chunks, their tool calls recorded). The recordings
//! and three conversations are fixtures in the repository; the long Claude
//! Code conversation comes from the corpus and is skipped without it.

use std::{collections::BTreeMap, time::Duration};

use bytes::Bytes;
use toolwarden_mock_provider::{Scripted, json_lines_to_sse};

use super::{
    convo::{Convo, Kind},
    support::{Harness, corpus_conversation},
};

const CONVERSATIONS: &[(&str, Kind)] = &[
    (
        "conv_anthropic_messages_claudecode_spotter_258c7280.json",
        Kind::Anthropic,
    ),
    (
        "conv_anthropic_messages_claudecode_spotter_short.json",
        Kind::Anthropic,
    ),
    (
        "conv_openai_chat_taubench_airline_task13_trial0.json",
        Kind::Chat,
    ),
    (
        "conv_openai_chat_taubench_airline_task9_trial2.json",
        Kind::Chat,
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_conversations_are_proxied() {
    let mut h = Harness::start().await;
    let mut sent = 0u64;
    for (name, kind) in CONVERSATIONS {
        let Some(body) = corpus_conversation(name) else {
            continue;
        };
        sent += 1;
        let convo = Convo {
            kind: *kind,
            stream: false,
            body: body.clone(),
            session: Some(name.to_string()),
            exec_time: std::time::Duration::ZERO,
            extra_headers: Vec::new(),
        };
        h.mock.take_received();
        let direct = convo.send(&h.client, &h.direct()).await;
        let proxied = convo.send(&h.client, &h.gw()).await;
        assert_eq!(proxied.status, 200, "{name}: {}", proxied.text());
        let got = h.mock.take_received();
        assert_eq!(got.len(), 2, "{name}");
        match direct.status.as_u16() {
            200 => {
                assert_eq!(proxied.body, direct.body, "{name}: response unchanged");
                assert_eq!(got[1].body, got[0].body, "{name}: request unchanged");
                assert!(proxied.header("x-toolwarden-repaired").is_none(), "{name}");
            }
            400 => {
                // The provider rejects it as it stands; the gateway mends it.
                let n = proxied.header("x-toolwarden-repaired");
                assert!(
                    n.is_some_and(|n| n != "0"),
                    "{name}: rejected directly but not repaired"
                );
            }
            other => panic!("{name}: direct status {other}: {}", direct.text()),
        }
    }
    let stats = h.finish().await;
    assert_eq!(stats.requests.total, sent);
    let events = h.events();
    let results: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert!(!results.is_empty(), "tool results recorded from the corpus");
    // The short Claude Code conversation: two parallel calls, both answered
    // with `is_error` results (the user rejected them).
    let short: Vec<_> = results
        .iter()
        .filter(|e| e["session_id"] == "conv_anthropic_messages_claudecode_spotter_short.json")
        .collect();
    assert_eq!(short.len(), 2, "{short:?}");
    assert!(
        short
            .iter()
            .all(|e| e["failed"] == true && e["basis"] == "explicit"),
        "{short:?}"
    );
}

/// A recording, the request that gets it, and the tool calls in it.
struct Recording {
    file: &'static str,
    kind: Kind,
    stream: bool,
    /// `.chunks.txt` files: one JSON event per line, with `event:` lines.
    json_lines: Option<bool>,
    calls: &'static [&'static str],
}

const RECORDINGS: &[Recording] = &[
    Recording {
        file: "openai-python__chat_parallel_tool_calls_f82268f2.sse",
        kind: Kind::Chat,
        stream: true,
        json_lines: None,
        calls: &["GetWeatherArgs", "get_stock_price"],
    },
    Recording {
        file: "anthropic-sdk-python__tool_use_response.sse",
        kind: Kind::Anthropic,
        stream: true,
        json_lines: None,
        calls: &["get_weather"],
    },
    Recording {
        file: "vercel-ai__azure-tool-call.1.chunks.txt",
        kind: Kind::Responses,
        stream: true,
        json_lines: Some(true),
        calls: &["weather"],
    },
    Recording {
        file: "vercel-ai__openai-custom-tool.1.chunks.txt",
        kind: Kind::Responses,
        stream: true,
        json_lines: Some(true),
        calls: &["write_sql"],
    },
    Recording {
        file: "vercel-ai__google-stream-tool-call-arguments.chunks.txt",
        kind: Kind::Gemini,
        stream: true,
        json_lines: Some(false),
        // Two calls, each streamed as partialArgs with willContinue.
        calls: &["getWeather", "getWeather"],
    },
    Recording {
        file: "vercel-ai__anthropic-web-search-tool.1.chunks.txt",
        kind: Kind::Anthropic,
        stream: true,
        json_lines: Some(true),
        calls: &[],
    },
    Recording {
        file: "vercel-ai__anthropic-web-fetch-tool.error.json",
        kind: Kind::Anthropic,
        stream: false,
        json_lines: None,
        calls: &[],
    },
];

fn recording_bytes(r: &Recording) -> Vec<u8> {
    let raw = toolwarden_testkit::fixture(&format!("sse/{}", r.file));
    match r.json_lines {
        None => raw,
        Some(event_lines) => {
            json_lines_to_sse(&String::from_utf8_lossy(&raw), event_lines).concat()
        }
    }
}

fn scripted(r: &Recording, bytes: &[u8]) -> Scripted {
    if r.stream {
        // Odd chunk sizes split events and UTF-8 sequences.
        Scripted::sse_split(bytes, 37, Duration::ZERO)
    } else {
        Scripted::Json(Bytes::copy_from_slice(bytes))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_recordings_are_forwarded_byte_exact_and_recorded() {
    let mut h = Harness::start().await;
    let mut expected: BTreeMap<&str, usize> = BTreeMap::new();
    for r in RECORDINGS {
        let bytes = recording_bytes(r);
        let convo = Convo::new(r.kind, r.stream, Some(r.file));
        h.mock.push_response(scripted(r, &bytes));
        let direct = convo.send(&h.client, &h.direct()).await;
        h.mock.push_response(scripted(r, &bytes));
        let proxied = convo.send(&h.client, &h.gw()).await;
        assert_eq!(
            direct.body, bytes,
            "{}: the mock replays byte-exact",
            r.file
        );
        assert_eq!(proxied.status, 200, "{}", r.file);
        assert!(proxied.body == bytes, "{}: forwarded byte-exact", r.file);
        assert_eq!(
            proxied.header("content-type"),
            direct.header("content-type")
        );
        for c in r.calls {
            *expected.entry(c).or_default() += 1;
        }
    }
    h.finish().await;
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for e in h.events().iter().filter(|e| e["type"] == "tool_call") {
        *seen
            .entry(e["tool"].as_str().unwrap_or_default().to_string())
            .or_default() += 1;
    }
    for (name, n) in &expected {
        assert_eq!(
            seen.get(*name),
            Some(n),
            "calls to {name} recorded from the streams: {seen:?}"
        );
    }
    // Each tool-calling recording's calls carry their arguments' size.
    let calls: Vec<_> = h
        .events()
        .into_iter()
        .filter(|e| e["type"] == "tool_call")
        .collect();
    assert!(
        calls
            .iter()
            .all(|c| c["arguments_bytes"].as_u64().is_some()),
        "{calls:?}"
    );
}
