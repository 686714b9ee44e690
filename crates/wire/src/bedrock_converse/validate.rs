//! Pairing defects Bedrock's Converse API rejects (`ValidationException`),
//! worded as Bedrock words them:
//!
//! - the `toolUse` ids of an assistant message must all be answered by
//!   `toolResult` blocks in the next message, a user message: else
//!   "Expected toolResult blocks at messages.N.content for the following
//!   Ids: …" (N the message after the calls);
//! - a user message may not hold more `toolResult` blocks than the previous
//!   turn has `toolUse` blocks: "The number of toolResult blocks at
//!   messages.N.content exceeds the number of toolUse blocks of previous
//!   turn.";
//! - a `toolResult` whose id is not a `toolUse` of the previous turn is
//!   reported on its own (Bedrock then names the unanswered call with the
//!   first text);
//! - the answering message must open with its `toolResult` blocks: Claude's
//!   own text, which Bedrock passes on ("The model returned the following
//!   errors: messages.N: Did not find K `tool_result` block(s) at the
//!   beginning of this message. …");
//! - one message's `toolUse` ids are distinct, and so are its `toolResult`
//!   ids: "The toolUse blocks at messages.N.content contain duplicate Ids:
//!   …", "The toolResult blocks at messages.N.content contain duplicate
//!   Ids: …" (BerriAI/litellm#20048; judged before the count, which then
//!   takes each id once); one id in two turns is not refused so. A system
//!   tool Bedrock ran (a `toolUse` of `type: "server_tool_use"`, answered in
//!   its own message) is left out of the pairing, not of this rule;
//! - a `text` block is not empty or only whitespace: "The text field in the
//!   ContentBlock object at messages.N.content.J is blank. Add text to the
//!   text field, and try again." (continuedev/continue#9767,
//!   OpenHands/OpenHands#5339; whitespace alone is refused too,
//!   langchain-ai/langchain-aws#593); one inside a `toolResult`'s `content`
//!   is not judged so (Bedrock with Claude takes `[{"text": ""}]` there,
//!   NousResearch/hermes-agent#55092, measured);
//! - a `toolResult` of `status: "error"` has something in its `content`:
//!   "The content field at messages.N.content.J.toolResult cannot be empty
//!   when status value is error."
//!   (aws-samples/sample-multi-agent-orchestration-chat-on-agentcore#15);
//!   without the status, `[]` is taken (with Claude; Nemotron refuses it,
//!   strands-agents/sdk-python#2122: a model's rule, not judged here);
//! - a `toolUse`'s `input`, and a `json` block of a `toolResult`'s
//!   `content`, is a JSON object: "The format of the value at
//!   messages.N.content.J.toolUse.input is invalid. Provide a json object
//!   for the field and try again." (vercel/ai#19023, a call whose arguments
//!   the model wrote as broken JSON, replayed as a string), "… at
//!   messages.N.content.J.toolResult.content.K.json is invalid. …"
//!   (aws/aws-sdk-js-v3#7330, sigoden/aichat#1542: a tool's array or string
//!   result); an `input` of `null`, in other words: "The value at
//!   messages.N.content.J.toolUse.input is empty." (aaif-goose/goose#8050,
//!   zed-industries/zed#33369);
//! - a message holds at least one block: "The content field in the Message
//!   object at messages.N is empty. Add a ContentBlock object to the content
//!   field and try again." (earendil-works/pi#3443,
//!   archestra-ai/archestra#4220);
//! - with a Claude model ([`ModelFamily::Claude`]), a prefill (a last
//!   `assistant` message) whose last block that is not blank is a `text`
//!   block ending in whitespace: Claude's own text, which Bedrock passes
//!   on: "The model returned the following errors: messages: final
//!   assistant content cannot end with trailing whitespace"
//!   (aws/aws-sdk-net#4015, tigy32/Tycode#10; the rule is Anthropic's API's,
//!   [`crate::prefill`]). A last assistant message of blank blocks alone
//!   is left out (removed by repair), and the one before it judged.

use std::borrow::Cow;

use ahash::AHashSet;

use super::model::{Request, Shape};
use crate::{Defect, DefectKind, ModelFamily, WireError, splice::utf8};

/// Claude's refusal of a prefill ending in whitespace, as Bedrock passes it
/// on.
pub(super) const TRAILING_WHITESPACE: &str = "The model returned the following errors: messages: final assistant content cannot end with trailing whitespace";

pub(crate) fn validate(body: &[u8], model: ModelFamily) -> Result<Vec<Defect>, WireError> {
    let req: Request<'_> = serde_json::from_str(utf8(body)?)?;
    let shapes: Vec<Shape<'_>> = req.messages.iter().map(Shape::of).collect();
    Ok(defects(&shapes, model))
}

pub(super) fn defects(msgs: &[Shape<'_>], model: ModelFamily) -> Vec<Defect> {
    let mut out = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        let prev_calls: Vec<&str> = match i.checked_sub(1).map(|p| &msgs[p]) {
            Some(p) if p.is_assistant() && m.is_user() => p.calls().map(|(_, id)| id).collect(),
            _ => Vec::new(),
        };
        if m.empty {
            out.push(Defect {
                kind: DefectKind::EmptyMessage,
                message_index: i,
                call_ids: Vec::new(),
                message: format!(
                    "The content field in the Message object at messages.{i} is empty. Add a ContentBlock object to the content field and try again."
                ),
            });
        }
        for &j in &m.empty_errors {
            // Both lists are in block order.
            let at = |list: &[(usize, Cow<'_, str>, bool)]| {
                let k = list.binary_search_by_key(&j, |t| t.0).ok()?;
                Some(list[k].1.to_string())
            };
            let id = at(&m.tools).or_else(|| at(&m.server));
            out.push(Defect {
                kind: DefectKind::EmptyErrorResult,
                message_index: i,
                call_ids: id.into_iter().collect(),
                message: format!(
                    "The content field at messages.{i}.content.{j}.toolResult cannot be empty when status value is error."
                ),
            });
        }
        for &(j, part) in &m.not_objects {
            let message = match part {
                None if m.null_inputs.binary_search(&j).is_ok() => {
                    format!("The value at messages.{i}.content.{j}.toolUse.input is empty.")
                }
                None => format!(
                    "The format of the value at messages.{i}.content.{j}.toolUse.input is invalid. Provide a json object for the field and try again."
                ),
                Some(k) => format!(
                    "The format of the value at messages.{i}.content.{j}.toolResult.content.{k}.json is invalid. Provide a json object for the field and try again."
                ),
            };
            out.push(Defect {
                kind: DefectKind::NonObjectJson,
                message_index: i,
                call_ids: Vec::new(),
                message,
            });
        }
        for &j in &m.blank {
            out.push(Defect {
                kind: DefectKind::BlankText,
                message_index: i,
                call_ids: Vec::new(),
                message: format!(
                    "The text field in the ContentBlock object at messages.{i}.content.{j} is blank. Add text to the text field, and try again."
                ),
            });
        }
        // Bedrock's order: the calls' ids, the results', the pairing.
        if m.is_assistant() {
            let calls = m.all(true);
            check_repeated(i, "toolUse", calls.iter().map(|c| c.1), &mut out);
        }
        let results = m.all(false);
        check_repeated(i, "toolResult", results.iter().map(|r| r.1), &mut out);
        if m.is_user() || m.results().next().is_some() {
            check_results(i, m, &prev_calls, &mut out);
        }
        if m.is_assistant() {
            check_answered(i, m, msgs.get(i + 1), &mut out);
        }
    }
    if model == ModelFamily::Claude
        && let Some(i) = prefill_ending_in_space(msgs)
    {
        out.push(Defect {
            kind: DefectKind::TrailingWhitespace,
            message_index: i,
            call_ids: Vec::new(),
            message: TRAILING_WHITESPACE.to_string(),
        });
    }
    out.sort_by_key(|d| d.message_index);
    out
}

/// The prefill Claude would refuse, ending in whitespace: the last message,
/// an assistant one, or the one before it when the last holds blank text
/// blocks alone, which repair removes (see [`crate::prefill`]).
fn prefill_ending_in_space(msgs: &[Shape<'_>]) -> Option<usize> {
    let last = msgs.len().checked_sub(1)?;
    let i = match &msgs[last] {
        m if !m.is_assistant() => return None,
        m if m.only_blank && last > 0 => last - 1,
        _ => last,
    };
    let m = &msgs[i];
    (m.is_assistant() && m.ends_in_space).then_some(i)
}

/// The ids that message `i`'s `kind` blocks (`toolUse`, `toolResult`)
/// repeat, each once, in order, as Bedrock lists them: "The toolUse blocks
/// at messages.N.content contain duplicate Ids: …".
fn check_repeated<'s>(
    i: usize,
    kind: &str,
    ids: impl Iterator<Item = &'s str>,
    out: &mut Vec<Defect>,
) {
    let (mut seen, mut listed) = (AHashSet::new(), AHashSet::new());
    let repeated: Vec<&str> = ids
        .filter(|&id| !seen.insert(id) && listed.insert(id))
        .collect();
    if repeated.is_empty() {
        return;
    }
    out.push(Defect {
        kind: DefectKind::DuplicateCallId,
        message_index: i,
        call_ids: repeated.iter().map(|s| s.to_string()).collect(),
        message: format!(
            "The {kind} blocks at messages.{i}.content contain duplicate Ids: {}",
            repeated.join(", ")
        ),
    });
}

/// The calls of assistant message `i` against the message after it.
/// Membership is by set: a client controls how many calls a message holds.
fn check_answered(i: usize, m: &Shape<'_>, next: Option<&Shape<'_>>, out: &mut Vec<Defect>) {
    let answered: AHashSet<&str> = match next {
        Some(n) if n.is_user() => n.results().map(|(_, id)| id).collect(),
        _ => AHashSet::new(),
    };
    // Each unanswered id once, in call order.
    let mut listed: AHashSet<&str> = AHashSet::new();
    let missing: Vec<&str> = m
        .calls()
        .map(|(_, id)| id)
        .filter(|&id| !answered.contains(id) && listed.insert(id))
        .collect();
    let n = i + 1;
    if missing.is_empty() {
        let Some(next) = next else { return };
        // Results at block 0, 1, …: the message opens with them.
        let leading = next
            .results()
            .enumerate()
            .take_while(|(k, (j, _))| k == j)
            .count();
        // Distinct ids: a repeated one is not judged here.
        let calls = m.calls().map(|(_, id)| id).collect::<AHashSet<_>>().len();
        if leading < calls {
            out.push(Defect {
                kind: DefectKind::ResultsNotFirst,
                message_index: n,
                call_ids: next.results().skip(leading).map(|(_, id)| id.to_string()).collect(),
                message: format!(
                    "The model returned the following errors: messages.{n}: Did not find {calls} `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks."
                ),
            });
        }
        return;
    }
    out.push(Defect {
        kind: DefectKind::MissingResult,
        message_index: n,
        call_ids: missing.iter().map(|s| s.to_string()).collect(),
        message: format!(
            "Expected toolResult blocks at messages.{n}.content for the following Ids: {}",
            missing.join(", ")
        ),
    });
}

/// The results of message `i` against the calls of the turn before it
/// (`calls`, repeats included: Bedrock compares the counts). A repeated
/// result id is judged before, as Bedrock judges it ([`check_repeated`]);
/// the count and the orphans take each id once.
fn check_results(i: usize, m: &Shape<'_>, calls: &[&str], out: &mut Vec<Defect>) {
    let mut seen: AHashSet<&str> = AHashSet::new();
    let results: Vec<(usize, &str)> = m.results().filter(|(_, id)| seen.insert(id)).collect();
    let call_ids: AHashSet<&str> = calls.iter().copied().collect();
    // Distinct results all naming a call are no more than the calls: when
    // they are more, some answer none.
    if results.len() > calls.len() {
        out.push(Defect {
            kind: DefectKind::OrphanResult,
            message_index: i,
            call_ids: results
                .iter()
                .filter(|(_, id)| !call_ids.contains(id))
                .map(|(_, id)| id.to_string())
                .collect(),
            message: format!(
                "The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of previous turn."
            ),
        });
        return;
    }
    for (j, id) in results {
        if !call_ids.contains(id) {
            out.push(Defect {
                kind: DefectKind::OrphanResult,
                message_index: i,
                call_ids: vec![id.to_string()],
                message: format!(
                    "messages.{i}.content.{j}: the toolResult's toolUseId {id} matches no toolUse block of the previous turn"
                ),
            });
        }
    }
}
