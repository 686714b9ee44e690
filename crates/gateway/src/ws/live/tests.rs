use proptest::prelude::*;
use toolwarden_wire::{Dialect, StreamParser, request_view, response_view};

use crate::ws::turns::as_sse;

use super::message::{
    Client, LiveUsage, Protocol, Server, ToolCall, ToolResult, generate_content, live_client,
    live_server, realtime_client, realtime_server, results_body, setup_location,
};

/// What a Responses stream parser reads of `events` (type, data), each fed
/// as a turn feeds it.
fn stream(events: &[(&str, &[u8])]) -> toolwarden_wire::ResponseView {
    let mut parser = StreamParser::new(Dialect::OpenAiResponses);
    let mut sse = Vec::new();
    for (kind, data) in events {
        as_sse(Some(kind), data, &mut sse);
        parser.feed(&sse);
    }
    parser.finish()
}

fn result(call_id: &str, name: Option<&str>, output: &str) -> ToolResult {
    ToolResult {
        call_id: call_id.into(),
        name: name.map(Into::into),
        output: output.into(),
    }
}

#[test]
fn a_realtime_function_call_output_is_a_result_and_other_items_are_not() {
    // GA shape, as `conversation.item.create` sends it.
    let create = br#"{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"call_1","output":"{\"temp\":21}"}}"#;
    assert_eq!(
        realtime_client(create),
        Client::Results(vec![result("call_1", None, r#""{\"temp\":21}""#)])
    );
    // `type` last (a serializer that sorts keys), spaces between tokens.
    let sorted = br#"{ "event_id" : "e1", "item" : {"call_id":"c","output":"x","type":"function_call_output"}, "type" : "conversation.item.create" }"#;
    assert_eq!(
        realtime_client(sorted),
        Client::Results(vec![result("c", None, r#""x""#)])
    );
    let message = br#"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[]}}"#;
    assert_eq!(realtime_client(message), Client::Ignored);
    let audio = br#"{"type":"input_audio_buffer.append","audio":"AAAA"}"#;
    assert_eq!(realtime_client(audio), Client::Ignored);
    // Cut short, or not an object with a `type`.
    assert_eq!(realtime_client(&create[..40]), Client::Unreadable);
    assert_eq!(realtime_client(b"[1]"), Client::Unreadable);
    assert_eq!(realtime_client(br#"{"event":"x"}"#), Client::Unreadable);
    // A result without the call it answers cannot be counted.
    let no_id = br#"{"type":"conversation.item.create","item":{"type":"function_call_output","output":"x"}}"#;
    assert_eq!(realtime_client(no_id), Client::Unreadable);
}

#[test]
fn a_realtime_response_done_gives_its_calls_and_its_failure() {
    let done = br#"{"type":"response.done","event_id":"e","response":{"object":"realtime.response","id":"resp_1","status":"completed","output":[{"id":"item_1","type":"function_call","status":"completed","name":"get_weather","call_id":"call_1","arguments":"{\"city\":\"Oslo\"}"},{"type":"message","role":"assistant","content":[]}],"usage":{"input_tokens":10,"output_tokens":5}}}"#;
    let Server::Done {
        id,
        items,
        calls,
        error,
    } = realtime_server(done)
    else {
        panic!("a response.done");
    };
    assert_eq!(id.as_deref(), Some("resp_1"));
    assert_eq!(error, None);
    assert_eq!(
        calls,
        vec![ToolCall {
            call_id: "call_1".into(),
            name: "get_weather".into(),
            arguments: r#""{\"city\":\"Oslo\"}""#.into(),
        }]
    );
    // A Responses stream parser reads the events as a Responses stream's.
    let view = stream(&[
        ("response.output_item.done", &items[0]),
        ("response.completed", done),
    ]);
    assert_eq!(view.id.as_deref(), Some("resp_1"));
    assert_eq!(view.calls.len(), 1);
    assert_eq!(view.calls[0].arguments, r#"{"city":"Oslo"}"#);
    assert_eq!(view.usage.output_tokens, Some(5));
    assert!(!view.ended_early);

    let failed = br#"{"type":"response.done","response":{"id":"r2","status":"failed","status_details":{"type":"failed","error":{"type":"server_error","code":"overloaded","message":"try later"}},"output":[]}}"#;
    let Server::Done { error, calls, .. } = realtime_server(failed) else {
        panic!("a response.done");
    };
    assert_eq!(error.as_deref(), Some("overloaded: try later"));
    assert!(calls.is_empty());

    let error = br#"{"type":"error","event_id":"e","error":{"type":"invalid_request_error","code":"invalid_value","message":"bad call_id","param":null}}"#;
    assert_eq!(
        realtime_server(error),
        Server::Error {
            status: 400,
            text: "invalid_value: bad call_id".into()
        }
    );
    let created = br#"{"type":"response.created","event_id":"e","response":{"id":"resp_1","status":"in_progress","output":[]}}"#;
    assert_eq!(
        realtime_server(created),
        Server::Started(Some("resp_1".into()))
    );
    // Echoes of what the client created, and audio, are not read.
    let echo = br#"{"type":"conversation.item.created","item":{"type":"function_call_output","call_id":"call_1","output":"x"}}"#;
    assert_eq!(realtime_server(echo), Server::Ignored);
    let added = br#"{"type":"conversation.item.added","item":{"type":"function_call_output","call_id":"call_1","output":"x"}}"#;
    assert_eq!(realtime_server(added), Server::Ignored);
    let audio = br#"{"type":"response.output_audio.delta","response_id":"r","delta":"AAAA"}"#;
    assert_eq!(realtime_server(audio), Server::Ignored);
    assert_eq!(realtime_server(b"not json"), Server::Unreadable);
}

#[test]
fn a_realtime_call_is_read_from_its_output_item_done_and_counted_once_with_the_response_done() {
    // The openai SDK's `ResponseOutputItemDoneEvent` and
    // `RealtimeConversationItemFunctionCall`.
    let created = br#"{"type":"response.created","event_id":"e1","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}"#;
    let item = r#"{"id":"item_1","object":"realtime.item","type":"function_call","status":"completed","name":"get_weather","call_id":"call_1","arguments":"{\"city\":\"Oslo\"}"}"#;
    let item_done = format!(
        r#"{{"type":"response.output_item.done","event_id":"e2","response_id":"resp_1","output_index":0,"item":{item}}}"#
    );
    let call = ToolCall {
        call_id: "call_1".into(),
        name: "get_weather".into(),
        arguments: r#""{\"city\":\"Oslo\"}""#.into(),
    };
    assert_eq!(
        realtime_server(item_done.as_bytes()),
        Server::CallDone {
            response_id: Some("resp_1".into()),
            call: call.clone()
        }
    );
    // Cut before its `response.done`: the call, the id, and the stream
    // says it ended early.
    let cut = stream(&[
        ("response.created", created),
        ("response.output_item.done", item_done.as_bytes()),
    ]);
    assert_eq!(cut.id.as_deref(), Some("resp_1"));
    assert_eq!(cut.calls.len(), 1);
    assert_eq!(cut.calls[0].id, "call_1");
    assert!(cut.ended_early);
    // With its `response.done`, which repeats the item: one call.
    let done = format!(
        r#"{{"type":"response.done","event_id":"e3","response":{{"object":"realtime.response","id":"resp_1","status":"completed","output":[{item}],"usage":{{"total_tokens":9,"input_tokens":6,"output_tokens":3,"input_token_details":{{"cached_tokens":0,"text_tokens":6,"audio_tokens":0}},"output_token_details":{{"text_tokens":3,"audio_tokens":0}}}}}}}}"#
    );
    let Server::Done { items, calls, .. } = realtime_server(done.as_bytes()) else {
        panic!("a response.done");
    };
    assert_eq!(calls, vec![call]);
    let whole = stream(&[
        ("response.created", created),
        ("response.output_item.done", item_done.as_bytes()),
        ("response.output_item.done", &items[0]),
        ("response.completed", done.as_bytes()),
    ]);
    assert_eq!(whole.calls.len(), 1, "{:?}", whole.calls);
    assert_eq!(
        (whole.usage.input_tokens, whole.usage.output_tokens),
        (Some(6), Some(3))
    );
    assert!(!whole.ended_early);
    // An item not written whole (a cancelled response's), a message's, or
    // one with no call id: not a call yet.
    for other in [
        item_done.replace(r#""status":"completed""#, r#""status":"incomplete""#),
        item_done.replace(r#""type":"function_call""#, r#""type":"message""#),
        item_done.replace(r#""call_id":"call_1","#, ""),
    ] {
        assert_eq!(
            realtime_server(other.as_bytes()),
            Server::Ignored,
            "{other}"
        );
    }
    let message = br#"{"type":"response.output_item.done","response_id":"r","output_index":0,"item":{"type":"message","content":[{"type":"output_audio","transcript":"hi"}]}}"#;
    assert_eq!(realtime_server(message), Server::Ignored);
    assert_eq!(
        realtime_server(&item_done.as_bytes()[..60]),
        Server::Unreadable
    );
}

#[test]
fn realtime_outputs_in_a_responses_own_context_are_results() {
    // `response.input`: a response with a context of its own.
    let create = br#"{"type":"response.create","response":{"conversation":"none","input":[{"type":"item_reference","id":"item_1"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"Error: no table"}]}}"#;
    assert_eq!(
        realtime_client(create),
        Client::Results(vec![result("c1", None, r#""Error: no table""#)])
    );
    for ignored in [
        &br#"{"type":"response.create"}"#[..],
        br#"{"type":"response.create","response":{"input":[{"type":"message","role":"user","content":[]}]}}"#,
        br#"{"type":"response.create","response":{"instructions":"say function_call_output"}}"#,
    ] {
        assert_eq!(realtime_client(ignored), Client::Ignored);
    }
    let cut = br#"{"type":"response.create","response":{"input":[{"type":"function_call_output","#;
    assert_eq!(realtime_client(cut), Client::Unreadable);
}

#[test]
fn a_voice_message_of_more_results_than_a_body_may_hold_is_not_read() {
    // One more value than `check_items` allows, in each protocol's shape:
    // unreadable (counted unparsed), not turned into records first.
    let many = |head: &str, item: &str, n: usize, tail: &str| {
        let mut out = head.to_string();
        out.push_str(&vec![item; n].join(","));
        out.push_str(tail);
        out.into_bytes()
    };
    let max = toolwarden_wire::MAX_REQUEST_ITEMS;
    // The message, `toolResponse`, its array, then the responses.
    let live = |n| {
        many(
            r#"{"toolResponse":{"functionResponses":["#,
            r#"{"id":"a"}"#,
            n,
            "]}}",
        )
    };
    assert_eq!(live_client(&live(max - 2)), Client::Unreadable);
    assert!(matches!(live_client(&live(max - 3)), Client::Results(r) if r.len() == max - 3));
    let realtime = |n| {
        many(
            r#"{"type":"response.create","response":{"input":["#,
            r#"{"type":"function_call_output","call_id":"a","output":""}"#,
            n,
            "]}}",
        )
    };
    assert_eq!(realtime_client(&realtime(max - 2)), Client::Unreadable);
    assert!(
        matches!(realtime_client(&realtime(max - 3)), Client::Results(r) if r.len() == max - 3)
    );
}

#[test]
fn gemini_live_results_are_read_in_either_case_and_calls_become_a_response() {
    // What the Python SDK sends: the outer key snake_case, the inner camel.
    let sdk = br#"{"tool_response": {"functionResponses": [{"id": "fc_1", "name": "lookup", "response": {"error": "not found"}}]}}"#;
    assert_eq!(
        live_client(sdk),
        Client::Results(vec![result(
            "fc_1",
            Some("lookup"),
            r#"{"error": "not found"}"#
        )])
    );
    let camel = br#"{"toolResponse":{"functionResponses":[{"id":"a","name":"f","response":{"ok":1}},{"id":"b","name":"g","response":{"ok":2}}]}}"#;
    let Client::Results(results) = live_client(camel) else {
        panic!("results");
    };
    assert_eq!(results.len(), 2);
    let snake =
        br#"{"tool_response":{"function_responses":[{"id":"a","name":"f","response":{}}]}}"#;
    assert!(matches!(live_client(snake), Client::Results(r) if r.len() == 1));
    // A generator's responses that more follow are not results; the one
    // that ends it (`willContinue` false or absent) is.
    let generator = br#"{"tool_response":{"function_responses":[{"id":"g","name":"f","response":{"n":1},"will_continue":true},{"id":"h","name":"f","response":{},"willContinue":false}]}}"#;
    assert_eq!(
        live_client(generator),
        Client::Results(vec![result("h", Some("f"), "{}")])
    );
    let more = br#"{"toolResponse":{"functionResponses":[{"id":"g","name":"f","response":{"n":2},"willContinue":true}]}}"#;
    assert_eq!(live_client(more), Client::Results(Vec::new()));
    let setup = br#"{"setup":{"model":"models/gemini-live-2.5-flash","tools":[]}}"#;
    assert_eq!(
        live_client(setup),
        Client::Setup(Some("gemini-live-2.5-flash".into()))
    );
    // Vertex AI's forms name the model the same way; others stay whole.
    for (model, name) in [
        (
            "projects/p1/locations/us-central1/publishers/google/models/gemini-live-2.5-flash",
            "gemini-live-2.5-flash",
        ),
        (
            "publishers/google/models/gemini-live-2.5-flash",
            "gemini-live-2.5-flash",
        ),
        ("gemini-live-2.5-flash", "gemini-live-2.5-flash"),
        ("tunedModels/x", "tunedModels/x"),
        ("models/", "models/"),
    ] {
        let setup = format!(r#"{{"setup":{{"model":"{model}"}}}}"#);
        assert_eq!(
            live_client(setup.as_bytes()),
            Client::Setup(Some(name.into())),
            "{model}"
        );
    }
    let audio = br#"{"realtime_input":{"media_chunks":[{"mime_type":"audio/pcm","data":"AAAA"}]}}"#;
    assert_eq!(live_client(audio), Client::Ignored);
    assert_eq!(live_client(b"\x00\x01"), Client::Unreadable);
    assert_eq!(
        live_client(br#"{"toolResponse":{"functionResponses":7}}"#),
        Client::Unreadable
    );

    let call =
        br#"{"toolCall":{"functionCalls":[{"id":"fc_1","name":"lookup","args":{"q":"x"}}]}}"#;
    let Server::Calls {
        parts,
        calls,
        usage: None,
    } = live_server(call)
    else {
        panic!("calls");
    };
    let body = generate_content(&parts, None);
    assert_eq!(calls[0].call_id, "fc_1");
    assert_eq!(calls[0].arguments.as_ref(), r#"{"q":"x"}"#);
    let view = response_view(Dialect::Gemini, &body).unwrap();
    assert_eq!(view.calls.len(), 1);
    assert_eq!(
        (view.calls[0].id.as_str(), view.calls[0].name.as_str()),
        ("fc_1", "lookup")
    );
    let cancel = br#"{"toolCallCancellation":{"ids":["fc_1"]}}"#;
    assert_eq!(live_server(cancel), Server::Cancelled(vec!["fc_1".into()]));
    let content = br#"{"serverContent":{"modelTurn":{"parts":[{"text":"say \"toolCall\""}]}}}"#;
    assert_eq!(live_server(content), Server::Ignored);
    // The key's bytes in a text value: parsed, and nothing found.
    let mention =
        br#"{"serverContent":{"modelTurn":{"parts":[{"text":"toolCall"}]}}, "x":"toolCall"}"#;
    assert_eq!(live_server(mention), Server::Ignored);
    assert_eq!(live_server(b"{\"toolCall\":"), Server::Unreadable);
}

#[test]
fn gemini_live_usage_is_read_with_its_own_names_as_generate_contents() {
    // Live's names (camelCase, or snake_case), alone or with a turn's end.
    for message in [
        &br#"{"usageMetadata":{"promptTokenCount":20,"responseTokenCount":5,"totalTokenCount":25}}"#[..],
        br#"{"serverContent":{"turnComplete":true},"usageMetadata":{"promptTokenCount":20,"responseTokenCount":5,"responseTokensDetails":[{"modality":"AUDIO","tokenCount":5}]}}"#,
        br#"{"usage_metadata":{"prompt_token_count":20,"response_token_count":5}}"#,
    ] {
        let usage = LiveUsage {
            prompt: Some(20),
            response: Some(5),
        };
        assert_eq!(
            live_server(message),
            Server::Usage(usage),
            "{}",
            String::from_utf8_lossy(message)
        );
        let view = response_view(Dialect::Gemini, &generate_content(&[], Some(usage))).unwrap();
        assert_eq!(
            (view.usage.input_tokens, view.usage.output_tokens),
            (Some(20), Some(5))
        );
    }
    // With a `toolCall`: the calls and the usage.
    let both = br#"{"toolCall":{"functionCalls":[{"id":"a","name":"f","args":{}}]},"usageMetadata":{"promptTokenCount":7}}"#;
    let Server::Calls { parts, usage, .. } = live_server(both) else {
        panic!("calls");
    };
    assert_eq!(
        usage,
        Some(LiveUsage {
            prompt: Some(7),
            response: None
        })
    );
    let view = response_view(Dialect::Gemini, &generate_content(&parts, usage)).unwrap();
    assert_eq!(view.calls.len(), 1);
    assert_eq!(
        (view.usage.input_tokens, view.usage.output_tokens),
        (Some(7), None)
    );
    // The key's bytes in a text value are not usage.
    let mention = br#"{"serverContent":{"modelTurn":{"parts":[{"text":"\"usageMetadata\""}]}}}"#;
    assert_eq!(live_server(mention), Server::Ignored);
    let mention =
        br#"{"serverContent":{"modelTurn":{"parts":[{"text":"x"}]}},"y":"usageMetadata"}"#;
    assert_eq!(live_server(mention), Server::Ignored);
}

#[test]
fn a_results_body_reads_as_new_results_after_their_calls() {
    let call = |id: &str, args: &str| ToolCall {
        call_id: id.into(),
        name: "f".into(),
        arguments: args.into(),
    };
    let results = [
        result("a", None, r#""Error: boom""#),
        result("b", None, r#""ok""#),
    ];
    let body = results_body(Protocol::Realtime, &results, |id| {
        (id == "a").then(|| call("a", r#""{}""#))
    });
    let view = request_view(Dialect::OpenAiResponses, &body).unwrap();
    let read: Vec<_> = (view.results.iter())
        .map(|r| {
            (
                r.call_id.to_string(),
                r.tool.as_deref().map(str::to_string),
                r.new,
            )
        })
        .collect();
    assert_eq!(
        read,
        vec![
            ("a".to_string(), Some("f".to_string()), true),
            ("b".to_string(), None, true)
        ]
    );

    let results = [result("x", Some("f"), r#"{"error":"no"}"#)];
    let body = results_body(Protocol::GeminiLive, &results, |id| {
        Some(call(id, r#"{"q":1}"#))
    });
    let view = request_view(Dialect::Gemini, &body).unwrap();
    assert_eq!(view.results.len(), 1);
    assert_eq!(&*view.results[0].call_id, "x");
    assert!(view.results[0].new);
}

/// Gemini Live calls and results without ids (older models pair them by
/// name): each is `<name>#<n>` by its place among the id-less ones of its
/// name in its message, as the response view names the calls of the
/// turn's `generateContent` body, so that two results of one tool are two
/// results, each of its own call.
#[test]
fn gemini_live_calls_and_results_without_ids_are_named_by_position() {
    let call = br#"{"toolCall":{"functionCalls":[{"name":"lookup","args":{"q":1}},{"id":"fc_9","name":"lookup","args":{}},{"name":"refund","args":{}},{"id":"","name":"lookup","args":{"q":2}}]}}"#;
    let Server::Calls { parts, calls, .. } = live_server(call) else {
        panic!("calls");
    };
    let ids: Vec<&str> = calls.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(ids, ["lookup#0", "fc_9", "refund#0", "lookup#1"]);
    let view = response_view(Dialect::Gemini, &generate_content(&parts, None)).unwrap();
    let recorded: Vec<&str> = view.calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(recorded, ids, "the ids the turn's calls are recorded with");

    let answer = br#"{"toolResponse":{"functionResponses":[{"name":"lookup","response":{"error":"not found"}},{"name":"refund","response":{"ok":true}},{"name":"lookup","response":{"ok":true}}]}}"#;
    let Client::Results(results) = live_client(answer) else {
        panic!("results");
    };
    let ids: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["lookup#0", "refund#0", "lookup#1"]);
    // Read beside their calls: three results, each its own call's.
    let body = results_body(Protocol::GeminiLive, &results, |id| {
        calls.iter().find(|c| c.call_id == id).cloned()
    });
    let view = request_view(Dialect::Gemini, &body).unwrap();
    let read: Vec<(&str, Option<&str>)> = (view.results.iter())
        .map(|r| (&*r.call_id, r.tool.as_deref()))
        .collect();
    assert_eq!(
        read,
        [
            ("lookup#0", Some("lookup")),
            ("refund#0", Some("refund")),
            ("lookup#1", Some("lookup"))
        ]
    );
}

#[test]
fn a_vertex_setup_names_its_location_and_anything_else_none() {
    let setup =
        |model: &str| format!(r#"{{"setup":{{"model":"{model}","generationConfig":{{}}}}}}"#);
    for (model, location) in [
        (
            "projects/p1/locations/us-central1/publishers/google/models/m",
            "us-central1",
        ),
        (
            "projects/p1/locations/global/publishers/google/models/m",
            "global",
        ),
        ("projects/p1/locations/eu/publishers/google/models/m", "eu"),
    ] {
        let read = setup_location(setup(model).as_bytes());
        assert_eq!(read.as_deref(), Some(location), "{model}");
    }
    // JSON's escapes are read as what they stand for.
    let escaped = br#"{"setup":{"model":"projects\/p\/locations\/europe-west4\/publishers\/google\/models\/m"}}"#;
    assert_eq!(setup_location(escaped).as_deref(), Some("europe-west4"));
    for payload in [
        // No project and location (a model alone).
        setup("publishers/google/models/m"),
        setup("models/gemini-live-2.5-flash"),
        // A location that cannot name a host.
        setup("projects/p/locations/evil.com#/publishers/google/models/m"),
        setup("projects/p/locations/US-EAST1/publishers/google/models/m"),
        setup("projects/p/locations//publishers/google/models/m"),
        // Not a setup, not JSON, cut short.
        r#"{"clientContent":{"turns":[]}}"#.to_string(),
        r#"{"setup":{"model":7}}"#.to_string(),
        r#"{"setup":"projects/p/locations/l/x"}"#.to_string(),
        setup("projects/p/locations/l/m")[..30].to_string(),
        "\u{1}\u{2}garbage".to_string(),
    ] {
        assert_eq!(setup_location(payload.as_bytes()), None, "{payload}");
    }
}

/// JSON-ish text: the messages' own keys and values, braces and escapes.
fn jsonish() -> impl Strategy<Value = Vec<u8>> {
    let pieces = prop::sample::select(vec![
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"",
        "\\",
        " ",
        "\"type\"",
        "\"item\"",
        "\"response\"",
        "\"output\"",
        "\"call_id\"",
        "\"function_call_output\"",
        "\"function_call\"",
        "\"conversation.item.create\"",
        "\"response.done\"",
        "\"response.created\"",
        "\"response.output_item.done\"",
        "\"response_id\"",
        "\"output_index\"",
        "\"completed\"",
        "\"error\"",
        "\"toolCall\"",
        "\"tool_response\"",
        "\"toolResponse\"",
        "\"functionCalls\"",
        "\"functionResponses\"",
        "\"setup\"",
        "\"toolCallCancellation\"",
        "\"model\"",
        "\"projects/p/locations/",
        "us-central1",
        "/publishers/google/models/m\"",
        "\"ids\"",
        "\"id\"",
        "\"name\"",
        "\"args\"",
        "\"arguments\"",
        "\"status\"",
        "\"failed\"",
        "\"status_details\"",
        "null",
        "1",
        "\"x\"",
        "\\u0065",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|p| p.concat().into_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any bytes: each reader answers, without a panic; a results body
    /// made from what was read is valid JSON that the dialect's view reads
    /// (the fuzz target's check, `crate::fuzzing::voice_message`).
    #[test]
    fn any_message_is_read_without_a_panic(
        raw in prop::collection::vec(any::<u8>(), 0..200),
        text in jsonish(),
    ) {
        crate::fuzzing::voice_message(&raw);
        crate::fuzzing::voice_message(&text);
    }

    /// A real message with any text in its values reads the same values.
    #[test]
    fn a_result_message_reads_back_its_values(id in "\\PC{1,20}", output in "\\PC{0,40}") {
        let message = serde_json::json!({
            "type": "conversation.item.create",
            "item": {"type": "function_call_output", "call_id": id, "output": output},
        });
        let bytes = serde_json::to_vec(&message).unwrap();
        let Client::Results(results) = realtime_client(&bytes) else {
            return Err(TestCaseError::fail("not read"));
        };
        prop_assert_eq!(&results[0].call_id, &id);
        let read: String = serde_json::from_str(&results[0].output).unwrap();
        prop_assert_eq!(&read, &output);
        // The same output in a response's own context.
        let message = serde_json::json!({
            "type": "response.create",
            "response": {"input": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": output}]},
                {"type": "function_call_output", "call_id": id, "output": output},
            ]},
        });
        let bytes = serde_json::to_vec(&message).unwrap();
        let Client::Results(results) = realtime_client(&bytes) else {
            return Err(TestCaseError::fail("not read in response.input"));
        };
        prop_assert_eq!(results.len(), 1);
        prop_assert_eq!(&results[0].call_id, &id);
        let read: String = serde_json::from_str(&results[0].output).unwrap();
        prop_assert_eq!(read, output);
    }

    /// A `toolCall` of any calls, with ids or without, gives each call the
    /// id the response view of its turn's body records it with; a
    /// `toolResponse` answering them in the same order gives each result
    /// its call's id.
    #[test]
    fn gemini_live_ids_agree_with_the_recorded_calls(
        calls in prop::collection::vec(
            (prop::sample::select(vec!["f", "g", "h#0", ""]), prop::option::of("[a-z0-9_]{0,4}")),
            0..12,
        ),
    ) {
        let function_calls: Vec<serde_json::Value> = (calls.iter())
            .map(|(name, id)| match id {
                Some(id) => serde_json::json!({"id": id, "name": name, "args": {}}),
                None => serde_json::json!({"name": name, "args": {}}),
            })
            .collect();
        let message = serde_json::json!({"toolCall": {"functionCalls": function_calls}});
        let Server::Calls { parts, calls: read, .. } = live_server(message.to_string().as_bytes()) else {
            return Err(TestCaseError::fail("not read"));
        };
        let view = response_view(Dialect::Gemini, &generate_content(&parts, None)).unwrap();
        let recorded: Vec<&str> = view.calls.iter().map(|c| c.id.as_str()).collect();
        let ids: Vec<&str> = read.iter().map(|c| c.call_id.as_str()).collect();
        prop_assert_eq!(&ids, &recorded);
        let responses: Vec<serde_json::Value> = (calls.iter())
            .map(|(name, id)| match id {
                Some(id) => serde_json::json!({"id": id, "name": name, "response": {}}),
                None => serde_json::json!({"name": name, "response": {}}),
            })
            .collect();
        let message = serde_json::json!({"toolResponse": {"functionResponses": responses}});
        let Client::Results(results) = live_client(message.to_string().as_bytes()) else {
            return Err(TestCaseError::fail("not read"));
        };
        let answered: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
        prop_assert_eq!(answered, ids);
    }

    /// Any location (one path segment) written in a real `setup` message
    /// is read back when it is well-formed, and never otherwise, whatever
    /// else the message holds.
    #[test]
    fn a_setup_location_is_read_only_when_well_formed(
        location in prop_oneof!["[a-z0-9-]{1,30}", "[^/:]{0,20}"],
        project in "[a-z0-9-]{1,20}",
        extra in "\\PC{0,40}",
    ) {
        let model = format!("projects/{project}/locations/{location}/publishers/google/models/m");
        let message = serde_json::json!({"setup": {"model": model, "systemInstruction": extra}});
        let read = setup_location(&serde_json::to_vec(&message).unwrap());
        let well_formed = crate::cloud::is_vertex_location(&location);
        prop_assert_eq!(read.is_some(), well_formed, "{:?} read as {:?}", location, read);
        if let Some(read) = read {
            prop_assert_eq!(read, location);
        }
    }
}
