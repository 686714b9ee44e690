//! OpenAI Responses: the response object and its `response.*` events
//! with sequence numbers.

use bytes::Bytes;
use serde_json::{Map, Value};

use super::{CREATED, halves, pieces, sse_event};
use crate::{
    json::{Obj, array},
    plan::{CallKind, Plan},
};

fn responses_items(plan: &Plan, status: &str) -> Vec<String> {
    let mut items = Vec::new();
    if plan.calls.is_empty()
        && let Some(text) = &plan.text
    {
        items.push(responses_message(plan, text, status));
    }
    if !plan.calls.is_empty()
        && let Some(r) = plan.reasoning
    {
        items.push(reasoning_item(plan, r.encrypted));
    }
    for (i, _) in plan.calls.iter().enumerate() {
        items.push(responses_call(plan, i, status, true));
    }
    items
}

/// The `reasoning` item before a reasoning model's calls: no summary, and
/// its `encrypted_content` `null` unless the request's `include` asked for
/// it.
fn reasoning_item(plan: &Plan, encrypted: bool) -> String {
    let content = format!("gAAAAmock{:016x}", plan.seed);
    Obj::new()
        .str("id", &crate::rules::reasoning::reasoning_id(plan.seed))
        .str("type", "reasoning")
        .raw("summary", "[]")
        .opt_str("encrypted_content", encrypted.then_some(content.as_str()))
        .done()
}

fn responses_message(plan: &Plan, text: &str, status: &str) -> String {
    let part = Obj::new()
        .str("type", "output_text")
        .raw("annotations", "[]")
        .str("text", text)
        .done();
    Obj::new()
        .str("id", &plan.response_id("msg_"))
        .str("type", "message")
        .str("status", status)
        .raw("content", &array([part]))
        .str("role", "assistant")
        .done()
}

fn responses_call(plan: &Plan, i: usize, status: &str, with_args: bool) -> String {
    let c = &plan.calls[i];
    let id = plan.call_item_id(i);
    let call_id = plan.call_id("call_", i);
    let args = if with_args { c.arguments.as_str() } else { "" };
    let head = Obj::new().str("id", &id).str("type", c.kind.item_type());
    match c.kind {
        CallKind::Function => head
            .str("status", status)
            .str("arguments", args)
            .str("call_id", &call_id)
            .str("name", &c.name)
            .done(),
        CallKind::Custom => head
            .str("status", status)
            .str("call_id", &call_id)
            .str("input", args)
            .str("name", &c.name)
            .done(),
        // The commands follow the added item in `shell_call_command.*`
        // events, as the openai SDKs' accumulator reads them (appended to
        // `action.commands` by `command_index`).
        CallKind::Shell => {
            let action = if with_args {
                c.arguments.clone()
            } else {
                shell_action_without_commands(&c.arguments)
            };
            head.str("call_id", &call_id)
                .str("status", status)
                .raw("action", &action)
                .done()
        }
        // No event streams an operation or an action (none in the openai
        // SDK's stream events): the added item carries it whole.
        CallKind::ApplyPatch => head
            .str("call_id", &call_id)
            .str("status", status)
            .raw("operation", &c.arguments)
            .done(),
        CallKind::LocalShell => head
            .str("call_id", &call_id)
            .str("status", status)
            .raw("action", &c.arguments)
            .done(),
        CallKind::Computer => head
            .str("call_id", &call_id)
            .str("status", status)
            .raw("action", &c.arguments)
            .raw("pending_safety_checks", "[]")
            .done(),
    }
}

/// A shell call's `action` before its commands are streamed: the same
/// limits, `commands` empty.
fn shell_action_without_commands(action: &str) -> String {
    let mut v: Value = serde_json::from_str(action).unwrap_or_else(|_| Value::Object(Map::new()));
    if let Some(o) = v.as_object_mut() {
        o.insert("commands".to_string(), Value::Array(Vec::new()));
    }
    v.to_string()
}

/// A shell call's commands (none when its action has no `commands` list).
fn shell_commands(action: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(action).unwrap_or(Value::Null);
    v.get("commands")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect()
}

pub(super) fn responses_object(plan: &Plan, complete: bool) -> String {
    let status = if complete { "completed" } else { "in_progress" };
    let output = if complete {
        array(responses_items(plan, "completed"))
    } else {
        "[]".to_string()
    };
    let usage = if complete {
        Obj::new()
            .num("input_tokens", plan.input_tokens)
            .raw("input_tokens_details", r#"{"cached_tokens":0}"#)
            .num("output_tokens", plan.output_tokens)
            .raw("output_tokens_details", r#"{"reasoning_tokens":0}"#)
            .num("total_tokens", plan.input_tokens + plan.output_tokens)
            .done()
    } else {
        "null".to_string()
    };
    Obj::new()
        .str("id", &plan.response_id("resp_"))
        .str("object", "response")
        .num("created_at", CREATED)
        .str("status", status)
        .raw("error", "null")
        .raw("incomplete_details", "null")
        .raw("instructions", "null")
        .str("model", &plan.model)
        .raw("output", &output)
        .bool("parallel_tool_calls", true)
        .raw("previous_response_id", "null")
        .bool("store", true)
        .raw("usage", &usage)
        .done()
}

pub(super) fn responses_stream(plan: &Plan) -> Vec<Bytes> {
    let mut seq = 0u64;
    let mut out = Vec::new();
    // Each event: `type` and `sequence_number` first, then its fields.
    let mut ev = |kind: &str, fields: Obj| {
        let head = Obj::new()
            .str("type", kind)
            .num("sequence_number", seq)
            .done();
        let body = fields.done();
        let joined = if body == "{}" {
            head
        } else {
            format!("{},{}", &head[..head.len() - 1], &body[1..])
        };
        seq += 1;
        out.push(sse_event(kind, &joined));
    };
    let in_progress = responses_object(plan, false);
    ev("response.created", Obj::new().raw("response", &in_progress));
    ev(
        "response.in_progress",
        Obj::new().raw("response", &in_progress),
    );
    let mut index = 0u64;
    if plan.calls.is_empty() {
        let text = plan.text.clone().unwrap_or_default();
        let item_id = plan.response_id("msg_");
        let empty_item = Obj::new()
            .str("id", &item_id)
            .str("type", "message")
            .str("status", "in_progress")
            .raw("content", "[]")
            .str("role", "assistant")
            .done();
        ev(
            "response.output_item.added",
            Obj::new().num("output_index", 0).raw("item", &empty_item),
        );
        let part = |t: &str| {
            Obj::new()
                .str("type", "output_text")
                .raw("annotations", "[]")
                .str("text", t)
                .done()
        };
        ev(
            "response.content_part.added",
            Obj::new()
                .str("item_id", &item_id)
                .num("output_index", 0)
                .num("content_index", 0)
                .raw("part", &part("")),
        );
        for piece in halves(&text) {
            ev(
                "response.output_text.delta",
                Obj::new()
                    .str("item_id", &item_id)
                    .num("output_index", 0)
                    .num("content_index", 0)
                    .str("delta", piece),
            );
        }
        ev(
            "response.output_text.done",
            Obj::new()
                .str("item_id", &item_id)
                .num("output_index", 0)
                .num("content_index", 0)
                .str("text", &text),
        );
        ev(
            "response.content_part.done",
            Obj::new()
                .str("item_id", &item_id)
                .num("output_index", 0)
                .num("content_index", 0)
                .raw("part", &part(&text)),
        );
        ev(
            "response.output_item.done",
            Obj::new()
                .num("output_index", 0)
                .raw("item", &responses_message(plan, &text, "completed")),
        );
    }
    if !plan.calls.is_empty()
        && let Some(r) = plan.reasoning
    {
        let added = reasoning_item(plan, false);
        ev(
            "response.output_item.added",
            Obj::new().num("output_index", index).raw("item", &added),
        );
        ev(
            "response.output_item.done",
            Obj::new()
                .num("output_index", index)
                .raw("item", &reasoning_item(plan, r.encrypted)),
        );
        index += 1;
    }
    for (i, c) in plan.calls.iter().enumerate() {
        ev(
            "response.output_item.added",
            Obj::new()
                .num("output_index", index)
                .raw("item", &responses_call(plan, i, "in_progress", false)),
        );
        let item_id = plan.call_item_id(i);
        let streamed = match c.kind {
            CallKind::Function => Some((
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "arguments",
            )),
            CallKind::Custom => Some((
                "response.custom_tool_call_input.delta",
                "response.custom_tool_call_input.done",
                "input",
            )),
            CallKind::Shell | CallKind::ApplyPatch | CallKind::LocalShell | CallKind::Computer => {
                None
            }
        };
        if let Some((delta, done, field)) = streamed {
            for piece in pieces(&c.arguments, plan.arg_pieces) {
                ev(
                    delta,
                    Obj::new()
                        .str("item_id", &item_id)
                        .num("output_index", index)
                        .str("delta", piece),
                );
            }
            ev(
                done,
                Obj::new()
                    .str("item_id", &item_id)
                    .num("output_index", index)
                    .str(field, &c.arguments),
            );
        }
        if c.kind == CallKind::Shell {
            // By `output_index` and `command_index` alone, no `item_id`.
            for (k, command) in shell_commands(&c.arguments).iter().enumerate() {
                let at = |o: Obj| o.num("command_index", k as u64).num("output_index", index);
                ev(
                    "response.shell_call_command.added",
                    at(Obj::new().str("command", "")),
                );
                for piece in pieces(command, plan.arg_pieces) {
                    ev(
                        "response.shell_call_command.delta",
                        at(Obj::new()).str("delta", piece),
                    );
                }
                ev(
                    "response.shell_call_command.done",
                    at(Obj::new().str("command", command)),
                );
            }
        }
        ev(
            "response.output_item.done",
            Obj::new()
                .num("output_index", index)
                .raw("item", &responses_call(plan, i, "completed", true)),
        );
        index += 1;
    }
    ev(
        "response.completed",
        Obj::new().raw("response", &responses_object(plan, true)),
    );
    out
}
