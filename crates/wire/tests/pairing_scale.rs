//! Regressions for super-linear pairing checks and repairs (robustness
//! review, findings 2 and 3): a client controls how many calls and results
//! a request holds, and `inspect` (every request) and `repair` (`fix` mode,
//! the default) run on the gateway's worker threads.
//!
//! Each test builds a body of thousands of calls and times the operation
//! against a baseline in the same run: a plain `serde_json::Value` parse of
//! the same body, which is linear in it. The linear code takes at most 7
//! times the parse (debug build); the quadratic code took 37–480 times it
//! at these sizes, and the cubic repair would take hours, so the bound,
//! [`MAX_TIMES_PARSE`], holds on a slow or busy machine and still catches a
//! search per call coming back. Both are timed in the thread's CPU time
//! (`common::timed`): by the wall clock, a loaded machine (CI's two cores)
//! made a linear repair read 23 times the parse.

mod common;
use std::time::Duration;

use common::{timed, timed_per_run};

use toolwarden_wire::{Dialect, inspect, repair, turn::replayed_turn};

/// Calls per body for the checks (the quadratic code's cost grows with it,
/// relative to the parse: 80,000 keeps it far above the bound).
const N: usize = 80_000;

/// Calls per body for the repairs (cubic before: any size shows it).
const N_REPAIR: usize = 20_000;

/// How many times the baseline parse an operation may take.
const MAX_TIMES_PARSE: u32 = 20;

/// Run `f` on `body` (of `n` calls); fail when it takes longer than
/// [`MAX_TIMES_PARSE`] times a `serde_json::Value` parse of `body` (the
/// faster of two means over at least 50 ms each: one slow parse cannot make
/// the bound lax, nor the CPU clock's 4 ms ticks on a parse of 12).
fn linear<T>(what: &str, n: usize, body: &str, f: impl FnOnce() -> T) -> T {
    let parse = (0..2)
        .map(|_| {
            timed_per_run(Duration::from_millis(50), || {
                serde_json::from_str::<serde_json::Value>(body).unwrap();
            })
        })
        .min()
        .unwrap_or_default();
    let (out, took) = timed(f);
    let ratio = took.as_secs_f64() / parse.as_secs_f64().max(1e-6);
    eprintln!(
        "{what} of {n} calls: {took:?}, {ratio:.1} times the parse ({parse:?}; {})",
        common::clock()
    );
    assert!(
        took < parse * MAX_TIMES_PARSE,
        "{what} of {n} calls took {took:?}, {ratio:.0} times a plain parse of the body \
         ({parse:?}; limit {MAX_TIMES_PARSE}): a search per call is back"
    );
    out
}

/// `n` JSON values made by `f`, comma-separated.
fn joined(n: usize, f: impl Fn(usize) -> String) -> String {
    (0..n).map(f).collect::<Vec<_>>().join(",")
}

/// One assistant message of `n` `tool_use` blocks (ids from `id`), then one
/// user message answering each.
fn anthropic(n: usize, id: impl Fn(usize) -> String) -> String {
    let calls = joined(n, |i| {
        format!(
            r#"{{"type":"tool_use","id":"{}","name":"f","input":{{}}}}"#,
            id(i)
        )
    });
    let results = joined(n, |i| {
        format!(
            r#"{{"type":"tool_result","tool_use_id":"{}","content":"ok"}}"#,
            id(i)
        )
    });
    format!(
        r#"{{"model":"m","messages":[{{"role":"user","content":"hi"}},{{"role":"assistant","content":[{calls}]}},{{"role":"user","content":[{results}]}}]}}"#
    )
}

/// One assistant message of `n` `tool_calls`, then a tool message for each.
fn chat(n: usize, id: impl Fn(usize) -> String) -> String {
    let calls = joined(n, |i| {
        format!(
            r#"{{"id":"{}","type":"function","function":{{"name":"f","arguments":"{{}}"}}}}"#,
            id(i)
        )
    });
    let tools: String = (0..n)
        .map(|i| {
            format!(
                r#",{{"role":"tool","tool_call_id":"{}","content":"ok"}}"#,
                id(i)
            )
        })
        .collect();
    format!(
        r#"{{"model":"m","messages":[{{"role":"user","content":"hi"}},{{"role":"assistant","tool_calls":[{calls}]}}{tools}]}}"#
    )
}

fn distinct(i: usize) -> String {
    format!("call_{i:08}")
}

fn repeated(_: usize) -> String {
    "a".to_string()
}

#[test]
fn anthropic_repair_of_repeated_ids_is_not_cubic() {
    let body = anthropic(N_REPAIR, repeated);
    let repaired = linear("Anthropic repair", N_REPAIR, &body, || {
        repair(Dialect::Anthropic, body.as_bytes())
    })
    .unwrap();
    // Every repeat renamed, its result with it, to the first free name.
    assert_eq!(repaired.changes.len(), N_REPAIR - 1);
    let text = String::from_utf8_lossy(&repaired.body);
    let last = format!("\"a_dup{}\"", N_REPAIR - 1);
    assert_eq!(text.matches(&last).count(), 2);
}

/// Bedrock renames a `toolUse` id repeated in one message with its
/// result: each repeat's name and result found without a search.
#[test]
fn bedrock_repair_of_repeated_ids_is_linear() {
    let calls = joined(N_REPAIR, |_| {
        r#"{"toolUse":{"toolUseId":"a","name":"f","input":{}}}"#.to_string()
    });
    let results = joined(N_REPAIR, |_| {
        r#"{"toolResult":{"toolUseId":"a","content":[{"text":"ok"}]}}"#.to_string()
    });
    let body = format!(
        r#"{{"messages":[{{"role":"user","content":[{{"text":"hi"}}]}},{{"role":"assistant","content":[{calls}]}},{{"role":"user","content":[{results}]}}]}}"#
    );
    let repaired = linear("Bedrock repair", N_REPAIR, &body, || {
        repair(Dialect::BedrockConverse, body.as_bytes())
    })
    .unwrap();
    assert_eq!(repaired.changes.len(), N_REPAIR - 1);
    let text = String::from_utf8_lossy(&repaired.body);
    let last = format!("\"a_dup{}\"", N_REPAIR - 1);
    assert_eq!(text.matches(&last).count(), 2);
}

#[test]
fn chat_repair_of_repeated_ids_is_not_cubic() {
    let body = chat(N_REPAIR, repeated);
    let repaired = linear("Chat repair", N_REPAIR, &body, || {
        repair(Dialect::OpenAiChat, body.as_bytes())
    })
    .unwrap();
    assert_eq!(repaired.changes.len(), N_REPAIR - 1);
    let text = String::from_utf8_lossy(&repaired.body);
    let last = format!("\"a_dup{}\"", N_REPAIR - 1);
    assert_eq!(text.matches(&last).count(), 2);
}

#[test]
fn anthropic_inspect_of_many_calls_is_not_quadratic() {
    let body = anthropic(N, distinct);
    let defects = linear("Anthropic inspect", N, &body, || {
        inspect(Dialect::Anthropic, body.as_bytes()).defects
    });
    assert_eq!(defects.unwrap(), []);
}

#[test]
fn chat_inspect_of_many_calls_is_not_quadratic() {
    let body = chat(N, distinct);
    let defects = linear("Chat inspect", N, &body, || {
        inspect(Dialect::OpenAiChat, body.as_bytes()).defects
    });
    assert_eq!(defects.unwrap(), []);
}

#[test]
fn bedrock_inspect_of_many_calls_is_not_quadratic() {
    let calls = joined(N, |i| {
        format!(
            r#"{{"toolUse":{{"toolUseId":"{}","name":"f","input":{{}}}}}}"#,
            distinct(i)
        )
    });
    // One result too many: the count check lists the orphan.
    let results = joined(N + 1, |i| {
        format!(
            r#"{{"toolResult":{{"toolUseId":"{}","content":[{{"text":"ok"}}]}}}}"#,
            distinct(i)
        )
    });
    let body = format!(
        r#"{{"messages":[{{"role":"user","content":[{{"text":"hi"}}]}},{{"role":"assistant","content":[{calls}]}},{{"role":"user","content":[{results}]}}]}}"#
    );
    let defects = linear("Bedrock inspect", N, &body, || {
        inspect(Dialect::BedrockConverse, body.as_bytes()).defects
    })
    .unwrap();
    assert_eq!(defects.len(), 1);
    assert_eq!(defects[0].call_ids, [distinct(N)]);
}

/// Bedrock repair looked each result up among the previous turn's calls,
/// and each call among the results, by search: 20,000 calls with one
/// unanswered took 11 s of a worker (debug build).
#[test]
fn bedrock_repair_of_many_calls_is_not_quadratic() {
    let calls = joined(N_REPAIR, |i| {
        format!(
            r#"{{"toolUse":{{"toolUseId":"{}","name":"f","input":{{}}}}}}"#,
            distinct(i)
        )
    });
    // The last call unanswered.
    let results = joined(N_REPAIR - 1, |i| {
        format!(
            r#"{{"toolResult":{{"toolUseId":"{}","content":[{{"text":"ok"}}]}}}}"#,
            distinct(i)
        )
    });
    let body = format!(
        r#"{{"messages":[{{"role":"user","content":[{{"text":"hi"}}]}},{{"role":"assistant","content":[{calls}]}},{{"role":"user","content":[{results}]}}]}}"#
    );
    let repaired = linear("Bedrock repair", N_REPAIR, &body, || {
        repair(Dialect::BedrockConverse, body.as_bytes())
    })
    .unwrap();
    assert_eq!(repaired.changes.len(), 1);
    assert_eq!(
        repaired.changes[0].call_id.as_deref(),
        Some(distinct(N_REPAIR - 1).as_str())
    );
}

#[test]
fn gemini_inspect_of_many_idless_calls_of_one_name_is_not_quadratic() {
    let calls = joined(N, |_| r#"{"functionCall":{"name":"f","args":{}}}"#.into());
    let responses = joined(N, |_| {
        r#"{"functionResponse":{"name":"f","response":{}}}"#.into()
    });
    let body = format!(
        r#"{{"contents":[{{"role":"user","parts":[{{"text":"hi"}}]}},{{"role":"model","parts":[{calls}]}},{{"role":"user","parts":[{responses}]}}]}}"#
    );
    let inspection = linear("Gemini inspect", N, &body, || {
        inspect(Dialect::Gemini, body.as_bytes())
    });
    assert_eq!(inspection.defects.unwrap(), []);
    let view = inspection.view.unwrap();
    // Each response answers the call of its ordinal, by name order.
    let last = format!("f#{}", N - 1);
    assert_eq!(view.calls[N - 1].id, last);
    assert_eq!(view.results[N - 1].call_id, last);
}

#[test]
fn gemini_inspect_of_responses_in_reverse_order_is_not_quadratic() {
    let calls = joined(N, |i| {
        format!(r#"{{"functionCall":{{"name":"f","id":"c{i}","args":{{}}}}}}"#)
    });
    let responses = joined(N, |i| {
        let j = N - 1 - i;
        format!(r#"{{"functionResponse":{{"name":"f","id":"c{j}","response":{{}}}}}}"#)
    });
    let body = format!(
        r#"{{"contents":[{{"role":"user","parts":[{{"text":"hi"}}]}},{{"role":"model","parts":[{calls}]}},{{"role":"user","parts":[{responses}]}}]}}"#
    );
    let defects = linear("Gemini inspect", N, &body, || {
        inspect(Dialect::Gemini, body.as_bytes()).defects
    });
    assert_eq!(defects.unwrap(), []);
}

#[test]
fn responses_inspect_of_many_early_outputs_is_not_quadratic() {
    let outputs = joined(N, |i| {
        format!(r#"{{"type":"function_call_output","call_id":"c{i}","output":"ok"}}"#)
    });
    let calls = joined(N, |i| {
        format!(r#"{{"type":"function_call","call_id":"c{i}","name":"f{i}","arguments":"{{}}"}}"#)
    });
    let body =
        format!(r#"{{"model":"m","input":[{{"role":"user","content":"hi"}},{outputs},{calls}]}}"#);
    let inspection = linear("Responses inspect", N, &body, || {
        inspect(Dialect::OpenAiResponses, body.as_bytes())
    });
    assert_eq!(inspection.defects.unwrap().len(), N);
    // Each early output still names its call's tool.
    let view = inspection.view.unwrap();
    let last = format!("f{}", N - 1);
    assert_eq!(view.results[N - 1].tool.as_deref(), Some(last.as_str()));
}

#[test]
fn replayed_turn_positions_are_not_searched() {
    // Gemini calls without ids, answered by responses with ids the client
    // invented: found by name order.
    let calls = joined(N, |i| {
        format!(r#"{{"functionCall":{{"name":"f{}","args":{{}}}}}}"#, i % 2)
    });
    let body = format!(
        r#"{{"contents":[{{"role":"user","parts":[{{"text":"hi"}}]}},{{"role":"model","parts":[{calls}]}},{{"role":"user","parts":[{{"functionResponse":{{"name":"f0","id":"x","response":{{}}}}}}]}}]}}"#
    );
    let view = inspect(Dialect::Gemini, body.as_bytes()).view.unwrap();
    let turn = replayed_turn(&view).unwrap();
    assert_eq!(turn.len(), N);
    let found = linear("replayed turn lookups", N, &body, || {
        (0..N)
            .filter(|&i| {
                let by_id = turn.position_of_id(&format!("f{}#{}", i % 2, i / 2));
                let by_name = turn.position_of_name(&format!("f{}", i % 2), i / 2);
                by_id == Some(i as u32) && by_name == Some(i as u32)
            })
            .count()
    });
    assert_eq!(found, N);
}

/// `n` Chat turns that each call `f` with the same id `a` and answer it
/// (Chat renames a repeat within a message only: some clients number
/// their calls per turn), then a tool message for no call: the one defect
/// that makes the repair plan the whole body. (Anthropic renames every
/// repeat, so its plan never sees one id twice.)
fn chat_turns_reusing_one_id(n: usize) -> String {
    let turns = concat!(
        r#",{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]}"#,
        r#",{"role":"tool","tool_call_id":"a","content":"ok"}"#
    )
    .repeat(n);
    let orphan = r#",{"role":"tool","tool_call_id":"gone","content":"ok"}"#;
    format!(r#"{{"model":"m","messages":[{{"role":"user","content":"hi"}}{turns}{orphan}]}}"#)
}

/// Turns for [`chat_repair_of_turns_reusing_one_id_is_not_quadratic`]:
/// four values each (two messages, a `tool_calls` array, a call), within
/// [`toolwarden_wire::MAX_REQUEST_ITEMS`] (a search per turn over 40,000
/// turns is still over a billion steps).
const N_TURNS: usize = N / 2;

#[test]
fn chat_repair_of_turns_reusing_one_id_is_not_quadratic() {
    let body = chat_turns_reusing_one_id(N_TURNS);
    let repaired = linear(
        "Chat repair of turns reusing one id",
        N_TURNS,
        &body,
        || repair(Dialect::OpenAiChat, body.as_bytes()),
    )
    .unwrap();
    // Each turn's result stays with its call; only the orphan goes.
    assert_eq!(repaired.changes.len(), 1, "{:?}", repaired.changes);
    let text = String::from_utf8_lossy(&repaired.body);
    assert!(!text.contains("\"gone\""));
    assert_eq!(text.matches(r#""tool_call_id":"a""#).count(), N_TURNS);
}

#[test]
fn responses_repair_of_distinct_calls_reusing_one_call_id_is_not_quadratic() {
    // Each call its own tool, so each repeat is a distinct call: renamed,
    // with the output after it.
    let calls = joined(N_REPAIR, |i| {
        format!(
            r#"{{"type":"function_call","call_id":"a","name":"f{i}","arguments":"{{}}"}},{{"type":"function_call_output","call_id":"a","output":"ok"}}"#
        )
    });
    let body = format!(r#"{{"model":"m","input":[{{"role":"user","content":"hi"}},{calls}]}}"#);
    let repaired = linear("Responses repair", N_REPAIR, &body, || {
        repair(Dialect::OpenAiResponses, body.as_bytes())
    })
    .unwrap();
    let text = String::from_utf8_lossy(&repaired.body);
    // The last repeat gets the last name, its output with it.
    let last = format!("\"a_{}\"", N_REPAIR);
    assert_eq!(text.matches(&last).count(), 2);
}
