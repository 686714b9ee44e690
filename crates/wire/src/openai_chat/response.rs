//! The response view of a non-streaming Chat Completions body (or an
//! error body): the first choice's calls.

use std::borrow::Cow;

use toolwarden_core::ToolCall;

use super::model::{Completion, legacy_id};
use crate::{ResponseView, Usage, WireError};

pub(crate) fn response_view(body: &[u8]) -> Result<ResponseView, WireError> {
    let c: Completion<'_> = serde_json::from_slice(body)?;
    let mut view = ResponseView {
        id: c.id.map(Cow::into_owned),
        model: c.model.map(Cow::into_owned),
        error: c.error.map(|e| e.describe()),
        ..ResponseView::default()
    };
    if let Some(u) = c.usage {
        view.usage = Usage {
            input_tokens: u.prompt_tokens,
            output_tokens: u.completion_tokens,
        };
    }
    let mut choices = c.choices.unwrap_or_default();
    choices.sort_by_key(|ch| ch.index);
    // Several choices (`n` > 1) are alternatives: the client continues
    // with one, and the first one's calls are the response's, as Gemini's
    // are candidate 0's (see `crate::choices`).
    choices.truncate(1);
    for choice in choices {
        if view.stop_reason.is_none() {
            view.stop_reason = choice.finish_reason.map(Cow::into_owned);
        }
        let Some(message) = choice.message.or(choice.delta) else {
            continue;
        };
        for tc in message.tool_calls.into_iter().flatten() {
            let id = tc.id.clone().unwrap_or_default().into_owned();
            let (name, arguments) = tc.parts();
            view.calls.push(ToolCall {
                id,
                name: name.into_owned(),
                arguments: arguments.into_owned(),
            });
        }
        if let Some(f) = message.function_call {
            let name = f.name.unwrap_or_default();
            view.calls.push(ToolCall {
                id: legacy_id(&name, 0),
                name: name.into_owned(),
                arguments: f.arguments.unwrap_or_default().into_owned(),
            });
        }
    }
    Ok(view)
}
