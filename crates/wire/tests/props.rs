//! Property tests over the public API (kept small enough for CI):
//! - random splits of each recorded SSE stream give the same response view;
//! - repair output validates clean, for random conversations with dropped,
//!   moved and duplicated results, duplicate ids, orphans and misplaced text;
//! - repair of a clean body is the identity, without a copy;
//! - an Anthropic message thread's `continue` keeps the results that open
//!   it (they answer the held reply's calls), whatever else repair does;
//! - no input panics a parser: random bytes and random mutations of recorded
//!   bodies and streams (fixtures copied from the corpus).
//!
//! The dialects covered are listed in [`DIALECTS`].

use std::borrow::Cow;

use proptest::prelude::*;
use serde_json::{Value, json};
use toolwarden_wire::{
    Detector, Dialect, StreamParser, repair, request_view, response_view, validate,
};

/// The dialects the conversation generator renders (the no-panic
/// properties cover all four).
const DIALECTS: [Dialect; 2] = [Dialect::Anthropic, Dialect::OpenAiChat];

/// Recorded bodies and streams copied from the corpus into the repository.
use toolwarden_testkit::fixture as corpus;

fn wrap_chunks(chunks: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in chunks.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_slice(line).unwrap();
        if let Some(t) = v["type"].as_str() {
            out.extend_from_slice(format!("event: {t}\n").as_bytes());
        }
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.extend_from_slice(b"\n\n");
    }
    out
}

fn streams() -> Vec<(Dialect, Vec<u8>)> {
    vec![
        (
            Dialect::OpenAiChat,
            corpus("sse/openai-python__chat_parallel_tool_calls_f82268f2.sse"),
        ),
        (
            Dialect::Anthropic,
            corpus("sse/anthropic-sdk-python__tool_use_response.sse"),
        ),
        (
            Dialect::Anthropic,
            wrap_chunks(&corpus(
                "sse/vercel-ai__anthropic-web-search-tool.1.chunks.txt",
            )),
        ),
    ]
}

fn bodies() -> Vec<(Dialect, Vec<u8>)> {
    vec![
        (
            Dialect::Anthropic,
            corpus("conversations/conv_anthropic_messages_claudecode_spotter_short.json"),
        ),
        (
            Dialect::OpenAiChat,
            corpus("conversations/conv_openai_chat_taubench_airline_task13_trial0.json"),
        ),
    ]
}

fn parse_split(dialect: Dialect, bytes: &[u8], cuts: &[usize]) -> toolwarden_wire::ResponseView {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut p = StreamParser::new(dialect);
    let mut at = 0;
    for c in cuts {
        p.feed(&bytes[at..c]);
        at = c;
    }
    p.feed(&bytes[at..]);
    p.finish()
}

// === conversations ===

/// A dialect-neutral conversation item.
#[derive(Debug, Clone)]
enum Item {
    Text(String),
    Calls(Vec<String>),
    Result(String),
    /// A result flagged as an error with nothing in it (Anthropic refuses
    /// it), its content `""`, `[]`, `null` or absent by the number.
    EmptyError(String, usize),
    /// An assistant message ending in whitespace (Anthropic refuses it as
    /// the last message, a prefill), by the number: a string, a text block
    /// after another, a text block of only whitespace after another, a
    /// string of only whitespace.
    Prefill(usize),
}

/// A clean conversation: `turns[k]` calls in turn `k`, each answered, some
/// turns followed by a user text.
fn clean(turns: &[(usize, bool)]) -> Vec<Item> {
    let mut items = vec![Item::Text("start".into())];
    for (k, &(calls, text_after)) in turns.iter().enumerate() {
        let ids: Vec<String> = (0..calls).map(|c| format!("call_{k}_{c}")).collect();
        items.push(Item::Calls(ids.clone()));
        items.extend(ids.into_iter().map(Item::Result));
        if text_after {
            items.push(Item::Text(format!("more {k}")));
        }
    }
    items
}

/// Break a conversation in one of several ways.
fn mutate(items: &mut Vec<Item>, kind: u8, a: usize, b: usize) {
    let results: Vec<usize> = (0..items.len())
        .filter(|&i| matches!(items[i], Item::Result(_) | Item::EmptyError(..)))
        .collect();
    let calls: Vec<usize> = (0..items.len())
        .filter(|&i| matches!(items[i], Item::Calls(_)))
        .collect();
    let len = items.len();
    match kind % 9 {
        0 if !results.is_empty() => {
            items.remove(results[a % results.len()]);
        }
        1 if !results.is_empty() => {
            let r = items.remove(results[a % results.len()]);
            items.insert(1 + b % len.max(1).min(items.len()), r);
        }
        2 if !results.is_empty() => {
            let r = items[results[a % results.len()]].clone();
            items.insert(1 + b % items.len(), r);
        }
        3 if calls.len() >= 2 => {
            // Reuse an id of another turn (or of the same one).
            let from = calls[a % calls.len()];
            let to = calls[b % calls.len()];
            let id = match &items[from] {
                Item::Calls(ids) => ids.first().cloned(),
                _ => None,
            };
            if let (Some(id), Item::Calls(ids)) = (id, &mut items[to]) {
                ids.push(id);
            }
        }
        4 => items.insert(1 + b % items.len(), Item::Result(format!("orphan_{a}"))),
        5 if !results.is_empty() => {
            let r = results[a % results.len()];
            items.insert(r, Item::Text("interjection".into()));
        }
        6 if !calls.is_empty() => {
            let c = calls[a % calls.len()];
            if let Item::Calls(ids) = &mut items[c] {
                ids.push(format!("late_{b}"));
            }
        }
        7 if !results.is_empty() => {
            let r = results[a % results.len()];
            if let Item::Result(id) = &items[r] {
                items[r] = Item::EmptyError(id.clone(), b);
            }
        }
        8 => items.push(Item::Prefill(b)),
        _ => {}
    }
}

fn render(dialect: Dialect, items: &[Item]) -> Vec<u8> {
    let mut msgs: Vec<Value> = Vec::new();
    match dialect {
        Dialect::Anthropic => {
            let mut user: Vec<Value> = Vec::new();
            for it in items {
                match it {
                    Item::Text(t) => user.push(json!({"type": "text", "text": t})),
                    Item::Result(id) => user
                        .push(json!({"type": "tool_result", "tool_use_id": id, "content": "out"})),
                    Item::EmptyError(id, form) => {
                        let mut r =
                            json!({"type": "tool_result", "tool_use_id": id, "is_error": true});
                        if let Some(c) = [json!(""), json!([]), Value::Null].get(form % 4) {
                            r["content"] = c.clone();
                        }
                        user.push(r);
                    }
                    Item::Prefill(form) => {
                        if !user.is_empty() {
                            msgs.push(
                                json!({"role": "user", "content": std::mem::take(&mut user)}),
                            );
                        }
                        let content = match form % 4 {
                            0 => json!("The answer is "),
                            1 => {
                                json!([{"type": "text", "text": "so"}, {"type": "text", "text": "{\n"}])
                            }
                            2 => {
                                json!([{"type": "text", "text": "so"}, {"type": "text", "text": "\u{3000}\n"}])
                            }
                            _ => json!(" \t"),
                        };
                        msgs.push(json!({"role": "assistant", "content": content}));
                    }
                    Item::Calls(ids) => {
                        if !user.is_empty() {
                            msgs.push(
                                json!({"role": "user", "content": std::mem::take(&mut user)}),
                            );
                        }
                        let mut blocks = vec![json!({"type": "text", "text": "thinking aloud"})];
                        blocks.extend(ids.iter().map(|id| json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"c": 1}})));
                        msgs.push(json!({"role": "assistant", "content": blocks}));
                    }
                }
            }
            if !user.is_empty() {
                msgs.push(json!({"role": "user", "content": user}));
            }
            serde_json::to_vec_pretty(
                &json!({"model": "m", "max_tokens": 5, "messages": msgs, "x_unknown": [1, 2]}),
            )
            .unwrap()
        }
        _ => {
            for it in items {
                msgs.push(match it {
                    Item::Text(t) => json!({"role": "user", "content": t}),
                    Item::Result(id) | Item::EmptyError(id, _) => json!({"role": "tool", "tool_call_id": id, "content": "out"}),
                    Item::Calls(ids) if ids.is_empty() => json!({"role": "assistant", "content": "hm"}),
                    Item::Prefill(_) => json!({"role": "assistant", "content": "so "}),
                    Item::Calls(ids) => json!({"role": "assistant", "content": null, "tool_calls": ids.iter().map(|id| json!({
                        "id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}
                    })).collect::<Vec<_>>()}),
                });
            }
            serde_json::to_vec(&json!({"model": "m", "messages": msgs, "temperature": 0})).unwrap()
        }
    }
}

fn turns() -> impl Strategy<Value = Vec<(usize, bool)>> {
    prop::collection::vec((0usize..4, any::<bool>()), 1..6)
}

fn mutations() -> impl Strategy<Value = Vec<(u8, usize, usize)>> {
    prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 1..4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Fed in pieces split anywhere, a stream's view so far, read as soon
    /// as its final event has passed (the gateway records the calls then),
    /// holds the calls its finished view holds.
    #[test]
    fn the_view_at_the_final_event_holds_the_finished_calls(cuts in prop::collection::vec(any::<usize>(), 0..12)) {
        let mut seen_early = 0;
        for (dialect, bytes) in streams() {
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
            cuts.sort_unstable();
            cuts.push(bytes.len());
            let mut p = StreamParser::new(dialect);
            let (mut at, mut early) = (0, None);
            for c in cuts {
                p.feed(&bytes[at..c]);
                at = c;
                if early.is_none() && p.is_complete() {
                    early = Some(p.view_so_far().calls);
                }
            }
            let whole = p.finish();
            prop_assert!(!whole.calls.is_empty());
            // A recording whose last event has no blank line after it ends
            // only with its transport: its calls are read at the end.
            if let Some(early) = early {
                prop_assert_eq!(early, whole.calls);
                seen_early += 1;
            }
        }
        prop_assert!(seen_early > 0);
    }

    #[test]
    fn random_splits_give_the_same_view(cuts in prop::collection::vec(any::<usize>(), 0..12)) {
        for (dialect, bytes) in streams() {
            let whole = parse_split(dialect, &bytes, &[]);
            prop_assert!(!whole.calls.is_empty());
            prop_assert_eq!(parse_split(dialect, &bytes, &cuts), whole);
        }
    }

    #[test]
    fn repair_output_validates_clean(turns in turns(), muts in mutations()) {
        for dialect in DIALECTS {
            let mut items = clean(&turns);
            for &(k, a, b) in &muts {
                mutate(&mut items, k, a, b);
            }
            let body = render(dialect, &items);
            let r = repair(dialect, &body).expect("generated bodies parse");
            prop_assert_eq!(r.is_changed(), !validate(dialect, &body).unwrap().is_empty());
            let defects = validate(dialect, &r.body).unwrap();
            prop_assert!(defects.is_empty(), "{:?}\n{:?}\n{}", dialect, defects, String::from_utf8_lossy(&r.body));
            // Repair is idempotent and keeps the rest of the body.
            let again = repair(dialect, &r.body).unwrap();
            prop_assert!(matches!(again.body, Cow::Borrowed(_)));
            let out: Value = serde_json::from_slice(&r.body).unwrap();
            let inp: Value = serde_json::from_slice(&body).unwrap();
            prop_assert_eq!(&out["model"], &inp["model"]);
            prop_assert_eq!(out.as_object().unwrap().len(), inp.as_object().unwrap().len());
        }
    }

    #[test]
    fn repair_of_a_clean_body_is_the_identity(turns in turns()) {
        for dialect in DIALECTS {
            let body = render(dialect, &clean(&turns));
            prop_assert_eq!(validate(dialect, &body).unwrap(), vec![]);
            let r = repair(dialect, &body).unwrap();
            prop_assert!(matches!(r.body, Cow::Borrowed(b) if std::ptr::eq(b, body.as_slice())));
            prop_assert!(r.changes.is_empty());
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        exercise(&bytes);
    }

    /// A random Anthropic conversation as a thread's `continue`: its first
    /// message opens with results for calls the body does not hold (the
    /// held reply's; an id at times twice). Repair leaves those results
    /// where they are, each id's first, and what it gives validates clean;
    /// without the `continue` they are orphans.
    #[test]
    fn a_thread_continue_keeps_the_results_that_open_it(
        turns in turns(),
        muts in mutations(),
        held in prop::collection::vec(0u8..4, 1..4),
    ) {
        let mut items = clean(&turns);
        for &(k, a, b) in &muts {
            mutate(&mut items, k, a, b);
        }
        let mut body: Value = serde_json::from_slice(&render(Dialect::Anthropic, &items)).unwrap();
        let answers: Vec<Value> = held
            .iter()
            .map(|k| json!({"type": "tool_result", "tool_use_id": format!("toolu_held_{k}"), "content": "held"}))
            .collect();
        let msgs = body["messages"].as_array_mut().unwrap();
        match msgs.first_mut() {
            Some(first) if first["role"] == "user" && first["content"].is_array() => {
                let own = first["content"].as_array().unwrap().clone();
                first["content"] = Value::Array(answers.iter().cloned().chain(own).collect());
            }
            _ => msgs.insert(0, json!({"role": "user", "content": answers})),
        }
        let plain = serde_json::to_vec(&body).unwrap();
        body["thread"] = json!({"type": "continue", "previous_message_id": "msg_held"});
        let cont = serde_json::to_vec(&body).unwrap();

        let r = repair(Dialect::Anthropic, &cont).expect("generated bodies parse");
        prop_assert_eq!(r.is_changed(), !validate(Dialect::Anthropic, &cont).unwrap().is_empty());
        let defects = validate(Dialect::Anthropic, &r.body).unwrap();
        prop_assert!(defects.is_empty(), "{:?}\n{}", defects, String::from_utf8_lossy(&r.body));
        let out: Value = serde_json::from_slice(&r.body).unwrap();
        let mut firsts: Vec<Value> = Vec::new();
        for a in &answers {
            if !firsts.contains(a) {
                firsts.push(a.clone());
            }
        }
        let opening: Vec<Value> = out["messages"][0]["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["tool_use_id"].as_str().is_some_and(|id| id.starts_with("toolu_held_")))
            .cloned()
            .collect();
        prop_assert_eq!(opening, firsts);
        prop_assert_eq!(&out["thread"], &body["thread"]);
        let view = request_view(Dialect::Anthropic, &cont).unwrap();
        prop_assert_eq!(view.previous_response_id.as_deref(), Some("msg_held"));
        let orphans = validate(Dialect::Anthropic, &plain)
            .unwrap()
            .iter()
            .filter(|d| d.message_index == 0 && d.kind == toolwarden_wire::DefectKind::OrphanResult)
            .count();
        prop_assert!(orphans >= 1);
    }
}

proptest! {
    // Every parser of every dialect on whole corpus bodies: fewer cases.
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn mutated_corpus_never_panics(edits in prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..8), truncate in any::<usize>()) {
        for (_, body) in bodies().into_iter().chain(streams()) {
            let mut b = body.clone();
            for &(at, byte, op) in &edits {
                let at = at % (b.len() + 1);
                match op {
                    0 if at < b.len() => b[at] = byte,
                    1 => b.insert(at, byte),
                    _ if at < b.len() => { b.remove(at); }
                    _ => {}
                }
            }
            exercise(&b);
            exercise(&b[..truncate % (b.len() + 1)]);
        }
    }
}

/// Every parser on `bytes`, in every dialect: errors are fine, panics are
/// not.
fn exercise(bytes: &[u8]) {
    let detector = Detector::default();
    for dialect in Dialect::ALL {
        if let Ok(view) = request_view(dialect, bytes) {
            for r in &view.results {
                let _ = r.read(&detector);
            }
        }
        let _ = response_view(dialect, bytes);
        if validate(dialect, bytes).is_ok() {
            let r = repair(dialect, bytes).expect("what validates also repairs");
            assert!(
                validate(dialect, &r.body)
                    .expect("repaired output parses")
                    .is_empty()
            );
        }
        let mut p = StreamParser::new(dialect);
        for chunk in bytes.chunks(7) {
            p.feed(chunk);
        }
        let _ = p.finish();
    }
}

/// The generator does break conversations: each mutation kind yields a
/// defect on a fixed conversation, and repair mends it.
#[test]
fn every_mutation_kind_breaks_pairing() {
    let base = clean(&[(2, true), (1, false), (3, true)]);
    for dialect in DIALECTS {
        for kind in 0..7u8 {
            let mut items = base.clone();
            mutate(&mut items, kind, 1, 0);
            let body = render(dialect, &items);
            let defects = validate(dialect, &body).unwrap();
            assert!(
                !defects.is_empty(),
                "{dialect}: kind {kind} left {items:?} clean"
            );
            let r = repair(dialect, &body).unwrap();
            assert!(
                validate(dialect, &r.body).unwrap().is_empty(),
                "{dialect}: kind {kind}"
            );
        }
    }
    // A prefill ending in whitespace, in each of its forms, likewise.
    for form in 0..4 {
        let mut items = base.clone();
        mutate(&mut items, 8, 1, form);
        let body = render(Dialect::Anthropic, &items);
        let defects = validate(Dialect::Anthropic, &body).unwrap();
        assert!(!defects.is_empty(), "prefill {form} left {items:?} clean");
        let r = repair(Dialect::Anthropic, &body).unwrap();
        assert!(validate(Dialect::Anthropic, &r.body).unwrap().is_empty());
    }
    // An empty error result, in each of its forms, is Anthropic's alone.
    for form in 0..4 {
        let mut items = base.clone();
        mutate(&mut items, 7, 1, form);
        let body = render(Dialect::Anthropic, &items);
        let defects = validate(Dialect::Anthropic, &body).unwrap();
        assert!(!defects.is_empty(), "form {form} left {items:?} clean");
        let r = repair(Dialect::Anthropic, &body).unwrap();
        assert!(validate(Dialect::Anthropic, &r.body).unwrap().is_empty());
    }
}
