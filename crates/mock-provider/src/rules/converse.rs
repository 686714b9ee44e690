//! Bedrock Converse: 400 `ValidationException`, worded as Bedrock words it
//! (camel-ai/camel#3954, agno-agi/agno#6698, genkit-ai/aws-bedrock-js-plugin#664):
//!
//! - an assistant message's `toolUse` ids not all answered by `toolResult`
//!   blocks of the next message (a user message): "Expected toolResult
//!   blocks at messages.N.content for the following Ids: ID, ID" (N the
//!   message after the calls) — also what a result with a wrong id or a
//!   second result for one call leads to, since then some call goes
//!   unanswered;
//! - more `toolResult` blocks than the previous turn has `toolUse` blocks:
//!   "The number of toolResult blocks at messages.N.content exceeds the
//!   number of toolUse blocks of previous turn.";
//! - the answering message not opening with its `toolResult` blocks:
//!   Claude's own text, passed on ("The model returned the following
//!   errors: messages.N: Did not find K `tool_result` block(s) at the
//!   beginning of this message. …", langchain-ai/langchain-aws#451, from
//!   ConverseStream). Other models refuse any other block beside the
//!   results ("Conversation blocks and tool result blocks cannot be
//!   provided in the same turn.", langchain-ai/langchain-aws#141), which the
//!   mock, judging bodies without their model, does not check;
//! - a `toolUseId` (of a `toolUse` or a `toolResult`) over 64 characters,
//!   judged before all else (a schema check; the API reference gives
//!   `toolUseId` a length of 1 to 64): "1 validation error detected: Value
//!   'ID' at 'messages.N.member.content.J.member.toolUse.toolUseId' failed
//!   to satisfy constraint: Member must have length less than or equal to
//!   64", in the form Bedrock gives a name over 64 (microsoft/mcp#842: "Value
//!   '…' at 'toolConfig.tools.111.member.toolSpec.name' failed to satisfy
//!   constraint: Member must have length less than or equal to 64");
//! - one message's `toolUse` blocks, or its `toolResult` blocks, repeating
//!   an id, judged before the pairing (a second result for one call is
//!   refused so, not as a count or an unanswered call,
//!   BerriAI/litellm#20047): "The toolUse blocks at messages.N.content
//!   contain duplicate Ids: ID" (double16/Cyber-AutoAgent-ng#27, from
//!   ConverseStream), "The toolResult blocks at messages.N.content contain
//!   duplicate Ids: ID" (BerriAI/litellm#20048); several repeated ids are
//!   listed as the unanswered ones are; a system tool's blocks included.
//! - a `text` block empty or only whitespace, judged after the ids'
//!   length: "The text field in the ContentBlock object at
//!   messages.N.content.J is blank. Add text to the text field, and try
//!   again." (continuedev/continue#9767, OpenHands/OpenHands#5339,
//!   aws/bedrock-agentcore-sdk-python#185; whitespace alone,
//!   langchain-ai/langchain-aws#593); not one inside a `toolResult`'s
//!   `content`, which Bedrock takes (NousResearch/hermes-agent#55092,
//!   measured with Claude);
//! - a message holding no block: "The content field in the Message object
//!   at messages.N is empty. Add a ContentBlock object to the content field
//!   and try again." (earendil-works/pi#3443, archestra-ai/archestra#4220),
//!   judged with the blank text blocks, before it;
//! - a `toolResult` of `status: "error"` whose `content` is `[]`: "The
//!   content field at messages.N.content.J.toolResult cannot be empty when
//!   status value is error."
//!   (aws-samples/sample-multi-agent-orchestration-chat-on-agentcore#15),
//!   after the blank text blocks. Without the status, `[]` is taken (Claude
//!   takes it; some models refuse it, which the mock, judging bodies without
//!   their model, does not check);
//! - a `toolUse`'s `input`, or a `json` block of a `toolResult`'s
//!   `content`, that is not a JSON object: "The format of the value at
//!   messages.N.content.J.toolUse.input is invalid. Provide a json object
//!   for the field and try again." (vercel/ai#19023), "… at
//!   messages.N.content.J.toolResult.content.K.json is invalid. …"
//!   (aws/aws-sdk-js-v3#7330), after the error results; an `input` of
//!   `null` in other words: "The value at messages.N.content.J.toolUse.input
//!   is empty." (aaif-goose/goose#8050, zed-industries/zed#33369);
//! - to a Claude model (`anthropic.claude-…` in the path, behind a
//!   cross-region profile's prefix or in an ARN), after all the above: a
//!   last message of role `assistant` (a prefill) whose last block is a
//!   `text` ending in whitespace, Claude's own refusal passed on: "The
//!   model returned the following errors: messages: final assistant
//!   content cannot end with trailing whitespace" (aws/aws-sdk-net#4015,
//!   tigy32/Tycode#10; whitespace as on Anthropic's API). Other models take
//!   it.
//!
//! A system tool Bedrock ran (a `toolUse` of `type: "server_tool_use"`, its
//! `toolResult` in the same assistant message) is no call the next message
//! answers and no result of the turn before.

use std::collections::HashSet;

use serde_json::Value;

use super::{list, text};

/// The longest `toolUseId` the API takes, in characters.
const MAX_TOOL_USE_ID_CHARS: usize = 64;

/// Whether the model id a Bedrock path names (as written: `:` may be
/// `%3A`, an ARN's `/` `%2F`) is one of Claude's.
pub(super) fn is_claude(id: &str) -> bool {
    let id = id
        .replace("%3A", ":")
        .replace("%2F", "/")
        .replace("%2f", "/");
    let name = id.rsplit('/').next().unwrap_or_default();
    let name = match name.split_once('.') {
        Some((region, rest)) if region.chars().all(|c| c.is_ascii_lowercase() || c == '-') => {
            if rest.starts_with("anthropic.") {
                rest
            } else {
                name
            }
        }
        _ => name,
    };
    name.starts_with("anthropic.claude")
}

/// `claude`: the path names a Claude model.
pub(super) fn violation(body: &Value, claude: bool) -> Option<String> {
    let msgs = list(body, "messages");
    if let Some(problem) = id_too_long(msgs)
        .or_else(|| empty_message(msgs))
        .or_else(|| blank_text(msgs))
        .or_else(|| empty_error_result(msgs))
        .or_else(|| not_an_object(msgs))
        .or_else(|| repeated_ids(msgs))
    {
        return Some(problem);
    }
    for (i, m) in msgs.iter().enumerate() {
        let results = client_ids(m, "toolResult");
        if !results.is_empty() {
            let prev_calls = i
                .checked_sub(1)
                .map(|p| &msgs[p])
                .filter(|p| text(p, "role") == "assistant" && text(m, "role") == "user")
                .map_or(0, |p| client_ids(p, "toolUse").len());
            if results.len() > prev_calls {
                return Some(format!(
                    "The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of previous turn."
                ));
            }
        }
        if text(m, "role") == "assistant" {
            let next = msgs.get(i + 1).filter(|n| text(n, "role") == "user");
            let answered: HashSet<&str> = next
                .map(|n| client_ids(n, "toolResult").into_iter().collect())
                .unwrap_or_default();
            let mut listed = HashSet::new();
            let missing: Vec<&str> = client_ids(m, "toolUse")
                .into_iter()
                .filter(|id| !answered.contains(id) && listed.insert(*id))
                .collect();
            if !missing.is_empty() {
                return Some(format!(
                    "Expected toolResult blocks at messages.{}.content for the following Ids: {}",
                    i + 1,
                    missing.join(", ")
                ));
            }
            // Distinct ids: a repeated one is not judged here.
            let calls = client_ids(m, "toolUse")
                .into_iter()
                .collect::<HashSet<_>>()
                .len();
            let leading = next.map_or(0, |n| {
                list(n, "content")
                    .iter()
                    .take_while(|b| b.get("toolResult").is_some())
                    .count()
            });
            if calls > 0 && leading < calls {
                return Some(format!(
                    "The model returned the following errors: messages.{}: Did not find {calls} `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
                    i + 1
                ));
            }
        }
    }
    if claude {
        return trailing_whitespace(msgs);
    }
    None
}

/// A last assistant message (a prefill) whose last block is a text ending
/// in whitespace, which Claude refuses.
fn trailing_whitespace(msgs: &[Value]) -> Option<String> {
    let last = msgs.last().filter(|m| text(m, "role") == "assistant")?;
    let end = list(last, "content").last()?.get("text")?.as_str()?;
    // JavaScript's whitespace: Unicode's but U+0085, and U+FEFF.
    let space = |c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}';
    end.ends_with(space).then(|| {
        "The model returned the following errors: messages: final assistant content cannot end with trailing whitespace".to_string()
    })
}

/// The first `toolUseId` longer than the API takes.
fn id_too_long(msgs: &[Value]) -> Option<String> {
    msgs.iter().enumerate().find_map(|(i, m)| {
        list(m, "content").iter().enumerate().find_map(|(j, b)| {
            ["toolUse", "toolResult"].into_iter().find_map(|kind| {
                let id = text(b.get(kind)?, "toolUseId");
                (id.chars().count() > MAX_TOOL_USE_ID_CHARS).then(|| {
                    format!(
                        "1 validation error detected: Value '{id}' at 'messages.{i}.member.content.{j}.member.{kind}.toolUseId' failed to satisfy constraint: Member must have length less than or equal to {MAX_TOOL_USE_ID_CHARS}"
                    )
                })
            })
        })
    })
}

/// The first `toolResult` of `status: "error"` whose `content` is `[]`.
fn empty_error_result(msgs: &[Value]) -> Option<String> {
    msgs.iter().enumerate().find_map(|(i, m)| {
        list(m, "content").iter().enumerate().find_map(|(j, b)| {
            let r = b.get("toolResult")?;
            let empty = r.get("content")?.as_array()?.is_empty();
            (empty && text(r, "status") == "error").then(|| {
                format!(
                    "The content field at messages.{i}.content.{j}.toolResult cannot be empty when status value is error."
                )
            })
        })
    })
}

/// The first `toolUse.input`, or `json` block of a `toolResult`'s
/// `content`, that is not an object.
fn not_an_object(msgs: &[Value]) -> Option<String> {
    msgs.iter().enumerate().find_map(|(i, m)| {
        list(m, "content").iter().enumerate().find_map(|(j, b)| {
            let at = match (b.get("toolUse"), b.get("toolResult")) {
                (Some(u), _) if u.get("input").is_some_and(Value::is_null) => {
                    return Some(format!(
                        "The value at messages.{i}.content.{j}.toolUse.input is empty."
                    ));
                }
                (Some(u), _) => u
                    .get("input")
                    .filter(|v| !v.is_object())
                    .map(|_| "toolUse.input".to_string()),
                (None, Some(r)) => list(r, "content").iter().enumerate().find_map(|(k, p)| {
                    p.get("json")
                        .filter(|v| !v.is_object() && !v.is_null())
                        .map(|_| format!("toolResult.content.{k}.json"))
                }),
                _ => None,
            }?;
            Some(format!(
                "The format of the value at messages.{i}.content.{j}.{at} is invalid. Provide a json object for the field and try again."
            ))
        })
    })
}

/// The first message holding no block.
fn empty_message(msgs: &[Value]) -> Option<String> {
    let empty = |m: &Value| {
        m.get("content")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
    };
    msgs.iter().position(empty).map(|i| {
        format!(
            "The content field in the Message object at messages.{i} is empty. Add a ContentBlock object to the content field and try again."
        )
    })
}

/// The first `text` block that is empty or only whitespace.
fn blank_text(msgs: &[Value]) -> Option<String> {
    msgs.iter().enumerate().find_map(|(i, m)| {
        list(m, "content").iter().enumerate().find_map(|(j, b)| {
            let blank = b.get("text")?.as_str()?.trim().is_empty();
            blank.then(|| {
                format!(
                    "The text field in the ContentBlock object at messages.{i}.content.{j} is blank. Add text to the text field, and try again."
                )
            })
        })
    })
}

/// The first message whose `toolUse` (or `toolResult`) blocks repeat an
/// id, each repeated id once, in order.
fn repeated_ids(msgs: &[Value]) -> Option<String> {
    msgs.iter().enumerate().find_map(|(i, m)| {
        ["toolUse", "toolResult"].into_iter().find_map(|kind| {
            let (mut seen, mut listed) = (HashSet::new(), HashSet::new());
            let repeated: Vec<&str> = ids(m, kind)
                .into_iter()
                .filter(|id| !seen.insert(*id) && listed.insert(*id))
                .collect();
            (!repeated.is_empty()).then(|| {
                format!(
                    "The {kind} blocks at messages.{i}.content contain duplicate Ids: {}",
                    repeated.join(", ")
                )
            })
        })
    })
}

/// [`ids`] without a system tool Bedrock ran itself (a `toolUse` of
/// `type: "server_tool_use"`, Nova's `nova_grounding`) or the `toolResult`
/// answering it in the same message: Bedrock wrote both, the client
/// answers nothing (the API reference's `ToolUseBlock.type`). Only an
/// assistant message holds them.
fn client_ids<'a>(m: &'a Value, kind: &str) -> Vec<&'a str> {
    let blocks = list(m, "content");
    let assistant = text(m, "role") == "assistant";
    let is_server = |u: &Value| assistant && text(u, "type") == "server_tool_use";
    let server: HashSet<&str> = blocks
        .iter()
        .filter_map(|b| b.get("toolUse").filter(|u| is_server(u)))
        .map(|u| text(u, "toolUseId"))
        .collect();
    blocks
        .iter()
        .filter_map(|b| b.get(kind))
        .filter(|b| match kind {
            "toolUse" => !is_server(b),
            _ => !server.contains(text(b, "toolUseId")),
        })
        .map(|b| text(b, "toolUseId"))
        .collect()
}

/// The `toolUseId` of each `kind` block (`toolUse`, `toolResult`), in order.
fn ids<'a>(m: &'a Value, kind: &str) -> Vec<&'a str> {
    list(m, "content")
        .iter()
        .filter_map(|b| b.get(kind))
        .map(|b| text(b, "toolUseId"))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(messages: Value) -> Option<String> {
        violation(&json!({"messages": messages}), false)
    }

    fn calls(ids: &[&str]) -> Value {
        let blocks: Vec<Value> = ids
            .iter()
            .map(|id| json!({"toolUse": {"toolUseId": id, "name": "f", "input": {}}}))
            .collect();
        json!({"role": "assistant", "content": blocks})
    }

    fn results(ids: &[&str]) -> Value {
        let blocks: Vec<Value> = ids
            .iter()
            .map(|id| json!({"toolResult": {"toolUseId": id, "content": [{"text": "ok"}]}}))
            .collect();
        json!({"role": "user", "content": blocks})
    }

    fn user() -> Value {
        json!({"role": "user", "content": [{"text": "go"}]})
    }

    #[test]
    fn answered_calls_pass() {
        assert_eq!(
            check(json!([user(), calls(&["a", "b"]), results(&["b", "a"])])),
            None
        );
    }

    #[test]
    fn unanswered_calls_are_named_at_the_next_message() {
        let got = check(json!([
            user(),
            calls(&["tooluse_a", "tooluse_b"]),
            results(&["tooluse_a"])
        ]));
        assert_eq!(
            got.as_deref(),
            Some(
                "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_b"
            )
        );
        // A wrong id leaves a call unanswered.
        let wrong = check(json!([user(), calls(&["a"]), results(&["z"])]));
        assert_eq!(
            wrong.as_deref(),
            Some("Expected toolResult blocks at messages.2.content for the following Ids: a")
        );
    }

    #[test]
    fn ids_repeated_in_one_message() {
        // A repeated result is refused as such, before the pairing.
        let repeated = check(json!([user(), calls(&["a", "b"]), results(&["a", "a"])]));
        assert_eq!(
            repeated.as_deref(),
            Some("The toolResult blocks at messages.2.content contain duplicate Ids: a")
        );
        let more = check(json!([user(), calls(&["a"]), results(&["a", "a"])]));
        assert_eq!(
            more.as_deref(),
            Some("The toolResult blocks at messages.2.content contain duplicate Ids: a")
        );
        let calls_twice = check(json!([
            user(),
            calls(&["b", "a", "b", "a", "a"]),
            results(&["a", "b"])
        ]));
        assert_eq!(
            calls_twice.as_deref(),
            Some("The toolUse blocks at messages.1.content contain duplicate Ids: b, a")
        );
        // One id in two turns is not judged so.
        let turns = check(json!([
            user(),
            calls(&["a"]),
            results(&["a"]),
            calls(&["a"]),
            results(&["a"])
        ]));
        assert_eq!(turns, None);
    }

    #[test]
    fn results_open_the_answering_message() {
        let text_first = json!({"role": "user", "content": [
            {"text": "here"},
            {"toolResult": {"toolUseId": "a", "content": [{"text": "ok"}]}}]});
        let got = check(json!([user(), calls(&["a"]), text_first]));
        assert_eq!(
            got.as_deref(),
            Some(
                "The model returned the following errors: messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks."
            )
        );
        let text_after = json!({"role": "user", "content": [
            {"toolResult": {"toolUseId": "a", "content": [{"text": "ok"}]}},
            {"text": "here"}]});
        assert_eq!(check(json!([user(), calls(&["a"]), text_after])), None);
    }

    #[test]
    fn more_results_than_calls() {
        let got = check(json!([user(), calls(&["a"]), results(&["a", "x"])]));
        assert_eq!(
            got.as_deref(),
            Some(
                "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of previous turn."
            )
        );
        let first = check(json!([results(&["x"])]));
        assert!(first.unwrap().contains("messages.0.content exceeds"));
    }

    fn system_tool(id: &str) -> [Value; 2] {
        [
            json!({"toolUse": {"toolUseId": id, "name": "nova_grounding", "input": {}, "type": "server_tool_use"}}),
            json!({"toolResult": {"toolUseId": id, "content": [{"text": "found"}], "type": "nova_grounding_result"}}),
        ]
    }

    #[test]
    fn a_system_tool_bedrock_ran_is_answered_in_its_own_message() {
        let [s, r] = system_tool("tooluse_s");
        let call = json!({"toolUse": {"toolUseId": "c", "name": "f", "input": {}}});
        let turn = json!({"role": "assistant", "content": [s, r, call]});
        assert_eq!(check(json!([user(), turn, results(&["c"])])), None);
        let last = json!({"role": "assistant", "content": system_tool("tooluse_s")});
        assert_eq!(check(json!([user(), last])), None);
        // Its id repeated is refused as any other.
        let [s2, r2] = system_tool("tooluse_s");
        let [s, r] = system_tool("tooluse_s");
        let twice = json!({"role": "assistant", "content": [s, r, s2, r2]});
        assert_eq!(
            check(json!([user(), twice])).as_deref(),
            Some("The toolUse blocks at messages.1.content contain duplicate Ids: tooluse_s")
        );
    }

    #[test]
    fn blank_text_blocks_are_refused() {
        for blank in ["", " ", "\n\t "] {
            let turn = json!({"role": "assistant", "content": [{"text": "ok"}, {"text": blank}]});
            assert_eq!(
                check(json!([user(), turn])).as_deref(),
                Some(
                    "The text field in the ContentBlock object at messages.1.content.1 is blank. Add text to the text field, and try again."
                )
            );
        }
        let fine = json!({"role": "assistant", "content": [{"text": " ok "}]});
        assert_eq!(check(json!([user(), fine])), None);
        // Inside a result's content, Bedrock takes it.
        let result = json!({"role": "user", "content": [
            {"toolResult": {"toolUseId": "a", "content": [{"text": ""}]}}]});
        assert_eq!(check(json!([user(), calls(&["a"]), result])), None);
    }

    #[test]
    fn an_error_result_with_nothing_in_it_is_refused() {
        let result = |status: &str| {
            json!({"role": "user", "content": [
                {"toolResult": {"toolUseId": "a", "content": [], "status": status}}]})
        };
        assert_eq!(
            check(json!([user(), calls(&["a"]), result("error")])).as_deref(),
            Some(
                "The content field at messages.2.content.0.toolResult cannot be empty when status value is error."
            )
        );
        assert_eq!(
            check(json!([user(), calls(&["a"]), result("success")])),
            None
        );
    }

    #[test]
    fn values_that_must_be_objects() {
        let call = |input: Value| {
            json!({"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "a", "name": "f", "input": input}}]})
        };
        assert_eq!(
            check(json!([user(), call(json!("{\"x\": 1}")), results(&["a"])])).as_deref(),
            Some(
                "The format of the value at messages.1.content.0.toolUse.input is invalid. Provide a json object for the field and try again."
            )
        );
        assert_eq!(
            check(json!([user(), call(json!({})), results(&["a"])])),
            None
        );
        let result = |v: Value| {
            json!({"role": "user", "content": [
                {"toolResult": {"toolUseId": "a", "content": [{"text": "t"}, {"json": v}]}}]})
        };
        assert_eq!(
            check(json!([user(), call(json!({})), result(json!([1]))])).as_deref(),
            Some(
                "The format of the value at messages.2.content.0.toolResult.content.1.json is invalid. Provide a json object for the field and try again."
            )
        );
        assert_eq!(
            check(json!([user(), call(json!({})), result(json!({"k": []}))])),
            None
        );
    }

    #[test]
    fn a_message_without_blocks_is_refused() {
        let empty = json!({"role": "assistant", "content": []});
        let blank = json!({"role": "user", "content": [{"text": ""}]});
        assert_eq!(
            check(json!([user(), empty, blank])).as_deref(),
            Some(
                "The content field in the Message object at messages.1 is empty. Add a ContentBlock object to the content field and try again."
            )
        );
    }

    #[test]
    fn a_tool_use_id_over_64_characters() {
        let most = format!("tooluse_{}", "x".repeat(56));
        assert_eq!(most.len(), 64);
        assert_eq!(
            check(json!([user(), calls(&[&most]), results(&[&most])])),
            None
        );
        let long = format!("{most}y");
        let at = |path: &str| {
            format!(
                "1 validation error detected: Value '{long}' at '{path}' failed to satisfy constraint: Member must have length less than or equal to 64"
            )
        };
        assert_eq!(
            check(json!([
                user(),
                calls(&["a", &long]),
                results(&["a", &long])
            ])),
            Some(at("messages.1.member.content.1.member.toolUse.toolUseId"))
        );
        assert_eq!(
            check(json!([user(), calls(&["a"]), results(&["a", &long])])),
            Some(at(
                "messages.2.member.content.1.member.toolResult.toolUseId"
            ))
        );
    }

    #[test]
    fn a_null_input_is_refused_as_empty() {
        let call = json!({"role": "assistant", "content": [
            {"text": "now"},
            {"toolUse": {"toolUseId": "a", "name": "f", "input": null}}]});
        assert_eq!(
            check(json!([user(), call, results(&["a"])])).as_deref(),
            Some("The value at messages.1.content.1.toolUse.input is empty.")
        );
    }

    #[test]
    fn claude_refuses_a_prefill_ending_in_whitespace() {
        let want = "The model returned the following errors: messages: final assistant content cannot end with trailing whitespace";
        for end in ["so ", "{\n", "x\u{a0}", "x\u{feff}"] {
            let prefill = json!({"role": "assistant", "content": [{"text": end}]});
            let body = json!({"messages": [user(), prefill]});
            assert_eq!(violation(&body, true).as_deref(), Some(want), "{end:?}");
            assert_eq!(violation(&body, false), None);
        }
        for end in ["so", "x\u{85}"] {
            let prefill = json!({"role": "assistant", "content": [{"text": end}]});
            assert_eq!(
                violation(&json!({"messages": [user(), prefill]}), true),
                None
            );
        }
        // Not a prefill: the last message is the user's.
        let turn = json!({"role": "assistant", "content": [{"text": "so "}]});
        let body = json!({"messages": [user(), turn, user()]});
        assert_eq!(violation(&body, true), None);
    }

    #[test]
    fn claude_by_the_path_s_model_id() {
        for id in [
            "anthropic.claude-3-5-sonnet-20240620-v1%3A0",
            "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
            "global.anthropic.claude-opus-4-8",
            "arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Feu.anthropic.claude-x",
        ] {
            assert!(is_claude(id), "{id}");
        }
        for id in [
            "amazon.nova-pro-v1%3A0",
            "meta.llama4-maverick-17b-instruct-v1:0",
            "arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Aapplication-inference-profile%2Fabc",
        ] {
            assert!(!is_claude(id), "{id}");
        }
    }
}
