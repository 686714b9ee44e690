//! The request view: calls and results of an Anthropic Messages body.
//!
//! Verdicts: the Messages API has an error flag, so it decides.
//! `is_error: true` is an explicit failure, `is_error: false` an explicit
//! success, and an absent `is_error` means the client did not flag the
//! result: the API's default is success, and harnesses that do report
//! failures (Claude Code: every failure in its recorded sessions carries
//! `is_error: true`) always set it, so the content detector is *not* run
//! (it would only add false positives on the main client, and would cost
//! more than the parse itself). Such results get `Basis::None`; a consumer
//! that wants heuristics for unflagging clients can apply
//! [`Detector::is_failure`] to results whose basis is `None`. MCP-style
//! `isError` carried inside the content is still honoured (explicit).
//! Server tool results (`web_search_tool_result`, …) are explicit: their
//! content is either results or a `*_tool_result_error` object.
//!
//! Speed: the body is validated as UTF-8 once (SIMD) and parsed with
//! `serde_json::from_str` into borrowed flat structs (see `model`), which
//! spares the per-string validation of `from_slice`.

use std::{borrow::Cow, collections::HashMap};

use serde_json::value::RawValue;
use toolwarden_core::Verdict;

use super::model::{Block, BlockClass, Content, Request, classify};
use crate::{
    CallView, Detector, RequestView, ResultView, WireError,
    splice::utf8,
    text::{Fnv64, mcp_is_error},
};

/// The detector is not used: see the module docs.
pub(crate) fn request_view<'a>(
    body: &'a [u8],
    _detector: &Detector,
) -> Result<RequestView<'a>, WireError> {
    let req: Request<'a> = serde_json::from_str(utf8(body)?)?;
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
                    let result = result_view(block, i, new, &names, &view.calls);
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
        match mcp_is_error(&content.text) {
            Some(flag) => Verdict::explicit(flag),
            None => Verdict::NONE,
        }
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
