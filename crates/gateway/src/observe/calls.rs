//! A response's tool calls, recorded on the proxy's own path, before the
//! client can have them: when a stream's final event is fed (before its
//! bytes go on to the client; the transport may stay open a while), else
//! when the response ends (before its last bytes go out). A client's
//! answer to a call can then never be recorded before the call: its
//! request finds the call in [`super::names::Names`] (its tool, its
//! execution time; a reused id's new run in [`super::reused::ReusedIds`]),
//! and the recorder's queue holds the call ahead of the result, so the
//! store pairs them and `/metrics` counts the result under its tool. (The
//! request's own record, with usage and timings, is made later, off the
//! path: `finished`.)

use toolwarden_wire::{Dialect, ResponseView, detect::Program};

use super::{RequestBase, Sinks, request::RequestInfo};
use crate::limits::{clip_name, owned_id, owned_name};
use crate::recorder::{Event, ToolCallRecord};

/// Record `view`'s calls from the `skip`-th on (those before were recorded
/// at the stream's final event), as made at `at_ms` (unix ms).
pub(super) fn record(
    sinks: &Sinks,
    base: &RequestBase,
    info: &RequestInfo,
    view: &ResponseView,
    at_ms: i64,
    skip: usize,
) {
    if view.calls.len() <= skip {
        return;
    }
    // Names cut to `MAX_NAME_LEN`: every call record copies them.
    let model = info
        .model
        .clone()
        .or_else(|| view.model.as_deref().map(owned_name));
    let response_id = view.id.as_deref().map(owned_id);
    // One fingerprint for the response's calls: how a result whose
    // client rewrote the call id finds its call (`wire::turn`).
    let calls = view
        .calls
        .iter()
        .map(|c| (c.name.as_str(), c.arguments.as_str()));
    let turn = Some(toolwarden_store::stored_fingerprint(
        toolwarden_wire::turn::fingerprint(calls),
    ));
    let session = &info.session.id;
    // Only a Responses request (continuing a `previous_response_id`) or an
    // Anthropic message thread's `continue` can answer a call without
    // holding it; other requests resend it.
    let continued = base.dialect == Some(Dialect::OpenAiResponses) || info.threaded;
    for (index, call) in view.calls.iter().enumerate().skip(skip) {
        // Cut before the names map too: a result named from it gets the
        // same name as its call.
        let tool = clip_name(&call.name);
        // A byte check first: a call's arguments are parsed only when at
        // most 1 KiB and naming a `command` or `cmd`.
        let program = continued
            .then(|| Program::of_arguments(&call.arguments))
            .flatten();
        sinks
            .names
            .insert_call(session, &call.id, (tool.to_owned(), at_ms, false, program));
        if !toolwarden_store::is_unique_call_id(&call.id) {
            sinks.reused.call(session, &call.id);
        }
        let queued = sinks.recorder.record(Event::ToolCall(ToolCallRecord {
            request_id: base.request_id.clone(),
            session_id: session.clone(),
            provider: base.provider.as_str().to_string(),
            model: model.clone(),
            response_id: response_id.clone(),
            dialect: base.dialect.map(|d| d.as_str().to_string()),
            call_index: u32::try_from(index).unwrap_or(u32::MAX),
            call_id: owned_id(&call.id),
            tool: tool.to_owned(),
            arguments_bytes: call.arguments.len() as u64,
            at_ms,
            turn,
            threaded: info.threaded,
        }));
        if !queued {
            // Folded into the recorder's counts: so will its result be.
            sinks
                .names
                .insert_call(session, &call.id, (tool.to_owned(), at_ms, true, program));
        }
    }
}
