//! The request view: calls and results of an Anthropic Messages body.
//!
//! Verdicts: `is_error: true` is an explicit failure and `is_error: false`
//! an explicit success (the client said so). When `is_error` is *absent*
//! the client did not flag the result either way: many clients never set it
//! (hand-written loops and frameworks translating from OpenAI's flagless
//! format return `"Error: …"` as plain content), so the content decides:
//! MCP `isError` inside it, then the [`Detector`] (`Basis::Heuristic` when
//! it reads as a failure, `Basis::None` otherwise). Server tool results
//! (`web_search_tool_result`, …) are explicit: their content is either
//! results or a `*_tool_result_error` object.

use std::{borrow::Cow, collections::HashMap};

use serde_json::value::RawValue;
use toolwarden_core::Verdict;

use super::model::{Block, BlockClass, Content, Request, classify};
use crate::{
    CallView, Detector, RequestView, ResultView, WireError,
    text::{Fnv64, Judge, flagless_verdict},
};

pub(crate) fn request_view<'a>(
    body: &'a [u8],
    detector: &Detector,
) -> Result<RequestView<'a>, WireError> {
    view_with(body, &|c| detector.is_failure(c))
}

/// [`request_view`] with the content detector given as a function.
pub(super) fn view_with<'a>(
    body: &'a [u8],
    judge: Judge<'_>,
) -> Result<RequestView<'a>, WireError> {
    let req: Request<'a> = serde_json::from_slice(body)?;
    let last_assistant = req.messages.iter().rposition(|m| m.role == "assistant");
    let mut view = RequestView {
        model: req.model,
        stream: req.stream.unwrap_or(false),
        message_count: req.messages.len(),
        metadata_user_id: req.metadata.and_then(|m| m.user_id),
        ..RequestView::default()
    };
    let mut hash = Fnv64::default();
    if let Some(system) = req.system {
        hash_system(&mut hash, system);
    }
    let first_user = req.messages.iter().position(|m| m.role == "user");
    let mut names: HashMap<Cow<'a, str>, usize> = HashMap::new();
    for (i, msg) in req.messages.into_iter().enumerate() {
        let new = last_assistant.is_none_or(|a| i > a);
        let blocks = match msg.content {
            Content::Text(t) => {
                if Some(i) == first_user {
                    hash.field(t.as_bytes());
                }
                continue;
            }
            Content::Blocks(b) => b,
        };
        for block in blocks {
            if Some(i) == first_user {
                if let Some(t) = &block.text {
                    hash.field(t.as_bytes());
                }
            }
            match classify(&block.kind) {
                BlockClass::Call | BlockClass::ServerCall => {
                    let id = block.id.unwrap_or_default();
                    names.insert(id.clone(), view.calls.len());
                    view.calls.push(CallView {
                        id,
                        name: block.name.unwrap_or_default(),
                        arguments: block
                            .input
                            .map_or(Cow::Borrowed("{}"), |r| Cow::Borrowed(r.get())),
                        message_index: i,
                    });
                }
                BlockClass::Result | BlockClass::ServerResult => {
                    let result = result_view(block, i, new, judge, &names, &view.calls);
                    view.results.push(result);
                }
                BlockClass::Other => {}
            }
        }
    }
    view.first_turn_hash = Some(hash.finish());
    Ok(view)
}

fn result_view<'a>(
    block: Block<'a>,
    message_index: usize,
    new: bool,
    judge: Judge<'_>,
    names: &HashMap<Cow<'a, str>, usize>,
    calls: &[CallView<'a>],
) -> ResultView<'a> {
    let call_id = block.tool_use_id.unwrap_or_default();
    let tool = names.get(&call_id).map(|&c| calls[c].name.clone());
    let content = block.content.unwrap_or_default();
    let server = classify(&block.kind) == BlockClass::ServerResult;
    let verdict = if block.is_error == Some(true)
        || content.is_error == Some(true)
        || content.is_error_object()
    {
        Verdict::explicit(true)
    } else if block.is_error == Some(false) || content.is_error == Some(false) || server {
        Verdict::explicit(false)
    } else {
        flagless_verdict(&content.text, judge)
    };
    ResultView {
        call_id,
        tool,
        content: content.text,
        verdict,
        message_index,
        new,
    }
}

/// The system prompt's text: a string or text blocks (attributes such as
/// `cache_control` move between turns, so they are left out of the hash).
fn hash_system(hash: &mut Fnv64, system: &RawValue) {
    #[derive(serde::Deserialize)]
    struct Part<'a> {
        #[serde(borrow, default)]
        text: Option<Cow<'a, str>>,
    }
    let raw = system.get();
    if let Ok(s) = serde_json::from_str::<Cow<'_, str>>(raw) {
        hash.field(s.as_bytes());
    } else if let Ok(parts) = serde_json::from_str::<Vec<Part<'_>>>(raw) {
        for t in parts.iter().filter_map(|p| p.text.as_deref()) {
            hash.field(t.as_bytes());
        }
    } else {
        hash.field(raw.as_bytes());
    }
    hash.write(b"\x00system-end");
}
