//! Records → OTLP spans by the OpenTelemetry GenAI semantic conventions:
//! a `chat {model}` span per model request, an `execute_tool {tool}` span
//! per tool result. Every span of a session shares one trace id (derived
//! from the session id) and carries `gen_ai.conversation.id`, so a
//! conversation reads as one trace; a record of no session gets its
//! request's own.
//!
//! The ids and conversions here are what [`super::encode`] writes spans
//! with. `chat` and `execute_tool`, which build prost's `Span` messages,
//! are compiled for the tests only: they are the reference the encoder's
//! bytes are checked against.

#[cfg(test)]
use opentelemetry_proto::tonic::{
    common::v1::{AnyValue, KeyValue, any_value::Value},
    trace::v1::{Span, Status, span::SpanKind, status::StatusCode},
};
use toolwarden_core::TraceParent;
use toolwarden_store::RequestRecord;
#[cfg(test)]
use toolwarden_store::ToolResultRecord;
use toolwarden_wire::Dialect;

#[cfg(test)]
fn kv(key: &str, value: Value) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue { value: Some(value) }),
    }
}

#[cfg(test)]
fn text(key: &str, value: &str) -> KeyValue {
    kv(key, Value::StringValue(value.to_string()))
}

#[cfg(test)]
fn int(key: &str, value: i64) -> KeyValue {
    kv(key, Value::IntValue(value))
}

fn fnv1a(seed: u64, parts: &[&[u8]]) -> u64 {
    let mut h = seed;
    for part in parts {
        for b in *part {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        h = (h ^ 0xff).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// 16 bytes from the session id: one trace per conversation.
#[cfg(test)]
pub(crate) fn trace_id(session: &str) -> Vec<u8> {
    trace_id_bytes(session).to_vec()
}

pub(crate) fn trace_id_bytes(session: &str) -> [u8; 16] {
    let a = fnv1a(0xcbf2_9ce4_8422_2325, &[session.as_bytes()]);
    let b = fnv1a(0x8422_2325_cbf2_9ce4, &[session.as_bytes()]);
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&a.to_be_bytes());
    id[8..].copy_from_slice(&b.to_be_bytes());
    id
}

#[cfg(test)]
fn span_id(parts: &[&[u8]]) -> Vec<u8> {
    span_id_bytes(parts).to_vec()
}

pub(crate) fn span_id_bytes(parts: &[&[u8]]) -> [u8; 8] {
    fnv1a(0x1234_5678_9abc_def1, parts).max(1).to_be_bytes()
}

pub(crate) fn nanos(ms: f64) -> u64 {
    if ms.is_finite() && ms > 0.0 {
        (ms * 1e6) as u64
    } else {
        0
    }
}

/// The `gen_ai.provider.name` of a provider label: the GenAI registry's
/// well-known values.
pub(crate) fn provider_name(provider: &str) -> &str {
    match provider {
        "gemini" => "gcp.gemini",
        "vertex" => "gcp.vertex_ai",
        "azure" => "azure.ai.openai",
        "bedrock" => "aws.bedrock",
        other => other,
    }
}

/// What a span's trace id is derived from: its session, or, for a record
/// of no session (`unknown`: nothing named one), its request, so that
/// such records do not all share one trace that grows for the life of the
/// deployment.
pub(crate) fn trace_key<'a>(session_id: &'a str, request_id: &'a str) -> &'a str {
    if session_id == "unknown" {
        request_id
    } else {
        session_id
    }
}

/// The `gen_ai.operation.name` of a model request: `generate_content`
/// for the Gemini dialect (the Gemini API's and Vertex AI's
/// `:generateContent` / `:streamGenerateContent`, which the GenAI
/// semantic conventions name so), `chat` for the others.
pub(crate) fn operation(r: &RequestRecord) -> &'static str {
    if r.dialect.as_deref() == Some(Dialect::Gemini.as_str()) {
        "generate_content"
    } else {
        "chat"
    }
}

/// The upstream's status, when an answer came: `None` for a request it
/// never answered (status 0; the gateway's own 502/504 after a refused
/// connection or a timeout; a client gone before the head, recorded
/// 499), whose span then has no `http.response.status_code` (the
/// conventions set it only when a response was received).
pub(crate) fn response_status(r: &RequestRecord) -> Option<u16> {
    let answered = r.status != 0 && (r.first_byte_ms.is_some() || r.error.is_none());
    answered.then_some(r.status)
}

/// A span's trace and parent span: the client's span when its request
/// named one (W3C `traceparent`: the span joins the client's trace), else
/// a root in the trace of its session ([`trace_key`]).
pub(crate) fn placement(
    session_id: &str,
    request_id: &str,
    parent: Option<&TraceParent>,
) -> ([u8; 16], Option<[u8; 8]>) {
    match parent {
        Some(p) => (p.trace_id, Some(p.parent_id)),
        None => (trace_id_bytes(trace_key(session_id, request_id)), None),
    }
}

/// The span of one proxied model request (`{operation} {model}`, or the
/// operation alone without `gen_ai.request.model` when the request named
/// none; [`operation`]).
#[cfg(test)]
pub(crate) fn chat(r: &RequestRecord) -> Span {
    let op = operation(r);
    let mut attributes = vec![
        text("gen_ai.operation.name", op),
        text("gen_ai.provider.name", provider_name(&r.provider)),
    ];
    if let Some(model) = &r.model {
        attributes.push(text("gen_ai.request.model", model));
    }
    attributes.extend([
        text("gen_ai.conversation.id", &r.session_id),
        kv("gen_ai.request.stream", Value::BoolValue(r.streaming)),
    ]);
    if let Some(status) = response_status(r) {
        attributes.push(int("http.response.status_code", i64::from(status)));
    }
    attributes.push(text("url.path", &r.path));
    if let (Some(host), Some(port)) = (&r.server_address, r.server_port) {
        attributes.push(text("server.address", host));
        attributes.push(int("server.port", i64::from(port)));
    }
    if let Some(id) = &r.response_id {
        attributes.push(text("gen_ai.response.id", id));
    }
    if let Some(n) = r.input_tokens {
        attributes.push(int(
            "gen_ai.usage.input_tokens",
            i64::try_from(n).unwrap_or(i64::MAX),
        ));
    }
    if let Some(n) = r.output_tokens {
        attributes.push(int(
            "gen_ai.usage.output_tokens",
            i64::try_from(n).unwrap_or(i64::MAX),
        ));
    }
    if !r.repairs.is_empty() {
        attributes.push(int("toolwarden.repairs", r.repairs.len() as i64));
    }
    let failed = r.status >= 400 || r.error.is_some();
    let status = if failed {
        let kind = if r.error.is_some() {
            "gateway_error".to_string()
        } else {
            r.status.to_string()
        };
        attributes.push(text("error.type", &kind));
        Some(Status {
            code: StatusCode::Error as i32,
            message: kind,
        })
    } else {
        None
    };
    let start = nanos(r.at_ms as f64);
    let (trace, parent) = placement(&r.session_id, &r.request_id, r.trace_parent.as_ref());
    Span {
        trace_id: trace.to_vec(),
        span_id: span_id(&[b"chat", r.request_id.as_bytes()]),
        parent_span_id: parent.map(|p| p.to_vec()).unwrap_or_default(),
        // The client's `tracestate` goes with its trace (W3C Trace Context).
        trace_state: r
            .trace_state
            .clone()
            .filter(|_| parent.is_some())
            .unwrap_or_default(),
        name: r
            .model
            .as_ref()
            .map_or_else(|| op.to_string(), |model| format!("{op} {model}")),
        kind: SpanKind::Client as i32,
        start_time_unix_nano: start,
        end_time_unix_nano: start + nanos(r.upstream_latency_ms),
        attributes,
        status,
        ..Span::default()
    }
}

/// The `execute_tool` span of one tool result: it ends when the result
/// reached the gateway and lasts the estimated client-side execution time.
#[cfg(test)]
pub(crate) fn execute_tool(r: &ToolResultRecord, tool: &str) -> Span {
    let mut attributes = vec![
        text("gen_ai.operation.name", "execute_tool"),
        text("gen_ai.tool.name", tool),
        text("gen_ai.tool.call.id", &r.call_id),
        text("gen_ai.tool.type", "function"),
        text("gen_ai.conversation.id", &r.session_id),
        text("gen_ai.provider.name", provider_name(&r.provider)),
        text("toolwarden.verdict.basis", &r.basis),
        int(
            "toolwarden.result.bytes",
            i64::try_from(r.content_bytes).unwrap_or(i64::MAX),
        ),
    ];
    if let Some(model) = &r.model {
        attributes.push(text("gen_ai.request.model", model));
    }
    let status = if r.failed {
        attributes.push(text("error.type", "tool_error"));
        Some(Status {
            code: StatusCode::Error as i32,
            message: format!("tool failed ({})", r.basis),
        })
    } else {
        None
    };
    let end = nanos(r.at_ms as f64);
    let exec = nanos(r.exec_ms.unwrap_or(0.0));
    let (trace, parent) = placement(&r.session_id, &r.request_id, r.trace_parent.as_ref());
    Span {
        trace_id: trace.to_vec(),
        parent_span_id: parent.map(|p| p.to_vec()).unwrap_or_default(),
        // The client's `tracestate` goes with its trace (W3C Trace Context).
        trace_state: r
            .trace_state
            .clone()
            .filter(|_| parent.is_some())
            .unwrap_or_default(),
        span_id: span_id(&[
            b"tool",
            r.session_id.as_bytes(),
            r.call_id.as_bytes(),
            &r.message_index.to_be_bytes(),
        ]),
        name: format!("execute_tool {tool}"),
        kind: SpanKind::Internal as i32,
        start_time_unix_nano: end.saturating_sub(exec),
        end_time_unix_nano: end,
        attributes,
        status,
        ..Span::default()
    }
}
