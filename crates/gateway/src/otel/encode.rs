//! The spans of [`super::spans`], protobuf-encoded straight from the
//! records: no `Span` message, no owned attribute keys or values, one
//! buffer per span. The bytes are those prost writes for the `Span` that
//! `spans::chat` / `spans::execute_tool` (the tests' reference) build (fields in
//! tag order, proto3 defaults left out), which the tests check; the export
//! task frames them into an `ExportTraceServiceRequest` ([`request_body`]).

use opentelemetry_proto::tonic::{
    common::v1::InstrumentationScope,
    resource::v1::Resource,
    trace::v1::{span::SpanKind, status::StatusCode},
};
use prost::{
    Message,
    encoding::{WireType, encode_key, encode_varint, encoded_len_varint},
};
use toolwarden_store::{RequestRecord, ToolResultRecord};

use super::OtlpProtocol;
use super::spans::{
    nanos, operation, placement, provider_name, response_status, span_id_bytes as span_id,
};

/// A gRPC message's prefix: its compressed flag and its length.
const GRPC_PREFIX: usize = 5;

/// An attribute's value.
#[derive(Clone, Copy)]
enum Val<'a> {
    Str(&'a str),
    Int(i64),
    Bool(bool),
}

/// Bytes of a length-delimited payload of `n` bytes with its length prefix.
fn delimited(n: usize) -> usize {
    encoded_len_varint(n as u64) + n
}

fn put_bytes(out: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// A string field of several pieces (left out when empty, as prost does).
fn put_text(out: &mut Vec<u8>, tag: u32, pieces: &[&str]) {
    let n: usize = pieces.iter().map(|p| p.len()).sum();
    if n == 0 {
        return;
    }
    encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(n as u64, out);
    for p in pieces {
        out.extend_from_slice(p.as_bytes());
    }
}

fn put_fixed64(out: &mut Vec<u8>, tag: u32, v: u64) {
    if v != 0 {
        encode_key(tag, WireType::SixtyFourBit, out);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn put_varint(out: &mut Vec<u8>, tag: u32, v: u64) {
    if v != 0 {
        encode_key(tag, WireType::Varint, out);
        encode_varint(v, out);
    }
}

/// `Span.attributes` (9): a `KeyValue { key, value: AnyValue }`.
fn attr(out: &mut Vec<u8>, key: &str, value: Val<'_>) {
    let any = match value {
        Val::Str(s) => 1 + delimited(s.len()),
        Val::Int(i) => 1 + encoded_len_varint(i as u64),
        Val::Bool(_) => 2,
    };
    let kv = 1 + delimited(key.len()) + 1 + delimited(any);
    encode_key(9, WireType::LengthDelimited, out);
    encode_varint(kv as u64, out);
    put_bytes(out, 1, key.as_bytes());
    encode_key(2, WireType::LengthDelimited, out);
    encode_varint(any as u64, out);
    match value {
        Val::Str(s) => put_bytes(out, 1, s.as_bytes()),
        Val::Bool(b) => {
            encode_key(2, WireType::Varint, out);
            encode_varint(u64::from(b), out);
        }
        Val::Int(i) => {
            encode_key(3, WireType::Varint, out);
            encode_varint(i as u64, out);
        }
    }
}

/// `Span.status` (15): code ERROR and `message` in pieces.
fn error_status(out: &mut Vec<u8>, message: &[&str]) {
    let n: usize = message.iter().map(|p| p.len()).sum();
    let code = StatusCode::Error as u64;
    let len = if n == 0 { 0 } else { 1 + delimited(n) } + 1 + encoded_len_varint(code);
    encode_key(15, WireType::LengthDelimited, out);
    encode_varint(len as u64, out);
    put_text(out, 2, message);
    put_varint(out, 3, code);
}

/// Appends the `chat {model}` (or `generate_content {model}`:
/// [`operation`]) span of one proxied model request.
pub(crate) fn chat(r: &RequestRecord, out: &mut Vec<u8>) {
    let (trace, parent) = placement(&r.session_id, &r.request_id, r.trace_parent.as_ref());
    put_bytes(out, 1, &trace);
    put_bytes(out, 2, &span_id(&[b"chat", r.request_id.as_bytes()]));
    if let Some(parent) = parent {
        // The client's `tracestate`, as it came, goes with its trace.
        put_text(out, 3, &[r.trace_state.as_deref().unwrap_or_default()]);
        put_bytes(out, 4, &parent);
    }
    // `{gen_ai.operation.name} {gen_ai.request.model}`, the operation
    // alone when the request named no model (semantic conventions).
    let op = operation(r);
    match &r.model {
        Some(model) => put_text(out, 5, &[op, " ", model]),
        None => put_text(out, 5, &[op]),
    }
    put_varint(out, 6, SpanKind::Client as u64);
    let start = nanos(r.at_ms as f64);
    put_fixed64(out, 7, start);
    put_fixed64(out, 8, start + nanos(r.upstream_latency_ms));
    attr(out, "gen_ai.operation.name", Val::Str(op));
    attr(
        out,
        "gen_ai.provider.name",
        Val::Str(provider_name(&r.provider)),
    );
    if let Some(model) = &r.model {
        attr(out, "gen_ai.request.model", Val::Str(model));
    }
    attr(out, "gen_ai.conversation.id", Val::Str(&r.session_id));
    attr(out, "gen_ai.request.stream", Val::Bool(r.streaming));
    if let Some(status) = response_status(r) {
        attr(
            out,
            "http.response.status_code",
            Val::Int(i64::from(status)),
        );
    }
    attr(out, "url.path", Val::Str(&r.path));
    if let (Some(host), Some(port)) = (&r.server_address, r.server_port) {
        attr(out, "server.address", Val::Str(host));
        attr(out, "server.port", Val::Int(i64::from(port)));
    }
    if let Some(id) = &r.response_id {
        attr(out, "gen_ai.response.id", Val::Str(id));
    }
    let count = |n: u64| Val::Int(i64::try_from(n).unwrap_or(i64::MAX));
    if let Some(n) = r.input_tokens {
        attr(out, "gen_ai.usage.input_tokens", count(n));
    }
    if let Some(n) = r.output_tokens {
        attr(out, "gen_ai.usage.output_tokens", count(n));
    }
    if !r.repairs.is_empty() {
        attr(out, "toolwarden.repairs", Val::Int(r.repairs.len() as i64));
    }
    if r.error.is_some() {
        attr(out, "error.type", Val::Str("gateway_error"));
        error_status(out, &["gateway_error"]);
    } else if r.status >= 400 {
        let digits = itoa_u16(r.status);
        attr(out, "error.type", Val::Str(digits.as_str()));
        error_status(out, &[digits.as_str()]);
    }
}

/// Appends the `execute_tool {tool}` span of one tool result, lasting
/// `exec_ms` (else the record's own estimate) and ending at the result.
pub(crate) fn execute_tool(
    r: &ToolResultRecord,
    tool: &str,
    exec_ms: Option<f64>,
    out: &mut Vec<u8>,
) {
    let (trace, parent) = placement(&r.session_id, &r.request_id, r.trace_parent.as_ref());
    put_bytes(out, 1, &trace);
    put_bytes(
        out,
        2,
        &span_id(&[
            b"tool",
            r.session_id.as_bytes(),
            r.call_id.as_bytes(),
            &r.message_index.to_be_bytes(),
        ]),
    );
    if let Some(parent) = parent {
        // The client's `tracestate`, as it came, goes with its trace.
        put_text(out, 3, &[r.trace_state.as_deref().unwrap_or_default()]);
        put_bytes(out, 4, &parent);
    }
    put_text(out, 5, &["execute_tool ", tool]);
    put_varint(out, 6, SpanKind::Internal as u64);
    let end = nanos(r.at_ms as f64);
    let exec = nanos(exec_ms.or(r.exec_ms).unwrap_or(0.0));
    put_fixed64(out, 7, end.saturating_sub(exec));
    put_fixed64(out, 8, end);
    attr(out, "gen_ai.operation.name", Val::Str("execute_tool"));
    attr(out, "gen_ai.tool.name", Val::Str(tool));
    attr(out, "gen_ai.tool.call.id", Val::Str(&r.call_id));
    attr(out, "gen_ai.tool.type", Val::Str("function"));
    attr(out, "gen_ai.conversation.id", Val::Str(&r.session_id));
    attr(
        out,
        "gen_ai.provider.name",
        Val::Str(provider_name(&r.provider)),
    );
    attr(out, "toolwarden.verdict.basis", Val::Str(&r.basis));
    attr(
        out,
        "toolwarden.result.bytes",
        Val::Int(i64::try_from(r.content_bytes).unwrap_or(i64::MAX)),
    );
    if let Some(model) = &r.model {
        attr(out, "gen_ai.request.model", Val::Str(model));
    }
    if r.failed {
        attr(out, "error.type", Val::Str("tool_error"));
        error_status(out, &["tool failed (", &r.basis, ")"]);
    }
}

/// An HTTP status as decimal digits, without allocating.
struct Digits {
    buf: [u8; 5],
    len: usize,
}

impl Digits {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

fn itoa_u16(mut n: u16) -> Digits {
    let mut buf = [0u8; 5];
    let mut len = 0;
    loop {
        buf[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf[..len].reverse();
    Digits { buf, len }
}

/// The parts of every export request that do not change: the resource
/// (`service.name`, `service.version`) and the instrumentation scope.
#[derive(Debug)]
pub(crate) struct Framing {
    resource: Vec<u8>,
    scope: Vec<u8>,
}

impl Framing {
    /// This gateway's `resource` and scope, encoded once.
    pub(crate) fn new(resource: Resource) -> Framing {
        let request = super::export_request(resource, Vec::new());
        let rs = &request.resource_spans[0];
        let scope: &InstrumentationScope = rs.scope_spans[0].scope.as_ref().expect("a scope");
        Framing {
            resource: rs.resource.as_ref().expect("a resource").encode_to_vec(),
            scope: scope.encode_to_vec(),
        }
    }
}

/// Appends `span` (encoded by [`chat`] or [`execute_tool`]) as one
/// `ScopeSpans.spans` field: what [`request_body`] takes.
pub(crate) fn frame_span(out: &mut Vec<u8>, span: &[u8]) {
    put_bytes(out, 2, span);
}

/// An `ExportTraceServiceRequest` carrying `framed` (spans appended by
/// [`frame_span`]): the bytes prost writes for [`super::export_request`]
/// of the same spans.
///
/// Over gRPC the message goes in its length-prefixed frame: a byte that
/// says it is not compressed, then its length (4 bytes, big-endian).
pub(crate) fn request_body(framing: &Framing, framed: &[u8], protocol: OtlpProtocol) -> Vec<u8> {
    let scope_spans = 1 + delimited(framing.scope.len()) + framed.len();
    let resource_spans = 1 + delimited(framing.resource.len()) + 1 + delimited(scope_spans);
    let message = 1 + delimited(resource_spans);
    let mut out;
    match protocol {
        OtlpProtocol::HttpProtobuf => out = Vec::with_capacity(message),
        OtlpProtocol::Grpc => {
            out = Vec::with_capacity(GRPC_PREFIX + message);
            out.push(0);
            // A batch is bounded far below 4 GiB (`batch` spans).
            out.extend_from_slice(&(message as u32).to_be_bytes());
        }
    }
    encode_key(1, WireType::LengthDelimited, &mut out);
    encode_varint(resource_spans as u64, &mut out);
    put_bytes(&mut out, 1, &framing.resource);
    encode_key(2, WireType::LengthDelimited, &mut out);
    encode_varint(scope_spans as u64, &mut out);
    put_bytes(&mut out, 1, &framing.scope);
    out.extend_from_slice(framed);
    out
}

/// `message` (an encoded `ExportTraceServiceRequest`) gzipped at the
/// fastest level, and over gRPC in its frame marked compressed.
pub(crate) fn gzipped(message: &[u8], protocol: OtlpProtocol) -> Vec<u8> {
    use std::io::Write as _;
    let mut out = Vec::with_capacity(GRPC_PREFIX + message.len() / 4);
    if protocol == OtlpProtocol::Grpc {
        out.extend_from_slice(&[1, 0, 0, 0, 0]);
    }
    let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = gz.write_all(message);
    let mut out = gz.finish().unwrap_or_default();
    if protocol == OtlpProtocol::Grpc {
        let len = (out.len() - GRPC_PREFIX) as u32;
        out[1..GRPC_PREFIX].copy_from_slice(&len.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otel::{export_request, spans};

    fn request(status: u16, error: bool, tokens: bool) -> RequestRecord {
        RequestRecord {
            request_id: "req-1".into(),
            session_id: "sess-é".into(),
            session_source: "header".into(),
            at_ms: 1_764_000_000_123,
            provider: "gemini".into(),
            dialect: None,
            path: "/v1/messages".into(),
            model: Some("claude-x".into()).filter(|_| tokens),
            status,
            streaming: tokens,
            upstream_latency_ms: 12.5,
            first_byte_ms: None,
            overhead_us: 3.0,
            input_tokens: Some(1200).filter(|_| tokens),
            output_tokens: Some(u64::MAX).filter(|_| tokens),
            response_id: Some("msg_1".into()).filter(|_| tokens),
            repairs: if tokens { vec!["dup".into()] } else { vec![] },
            repair_mode: "repair".into(),
            parse_error: None,
            calls_incomplete: false,
            error: Some("boom".into()).filter(|_| error),
            trace_parent: None,
            trace_state: None,
            server_address: None,
            server_port: None,
        }
    }

    fn result(failed: bool, model: bool, exec: Option<f64>) -> ToolResultRecord {
        ToolResultRecord {
            request_id: "req-2".into(),
            session_id: "s".into(),
            provider: "anthropic".into(),
            model: Some("m".into()).filter(|_| model),
            call_id: "toolu_1".into(),
            message_index: 7,
            tool: Some("book".into()),
            failed,
            basis: "is_error".into(),
            content_bytes: 300,
            excerpt: Some("x".repeat(100)),
            at_ms: 1_764_000_000_000,
            exec_ms: exec,
            previous_response_id: None,
            answers: None,
            trace_parent: None,
            trace_state: None,
            latest_of_its_id: false,
            first_turn: None,
        }
    }

    #[test]
    fn chat_spans_are_the_bytes_prost_writes() {
        for (status, error, tokens) in [
            (200, false, true),
            (200, false, false),
            (429, false, true),
            (502, true, false),
            (0, false, false),
        ] {
            let mut r = request(status, error, tokens);
            for parent in [None, Some(PARENT)] {
                r.trace_parent = parent.map(|p| toolwarden_core::TraceParent::parse(p).unwrap());
                r.trace_state = Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7".into());
                let mut out = Vec::new();
                chat(&r, &mut out);
                assert_eq!(out, spans::chat(&r).encode_to_vec(), "{status} {error}");
            }
        }
    }

    /// A request that named no model: the span is `chat` without
    /// `gen_ai.request.model` (it was `chat unknown`, the model "unknown").
    #[test]
    fn a_request_without_a_model_is_named_by_its_operation() {
        let r = request(200, false, false);
        assert_eq!(r.model, None);
        let mut out = Vec::new();
        chat(&r, &mut out);
        let span = opentelemetry_proto::tonic::trace::v1::Span::decode(&out[..]).unwrap();
        assert_eq!(span.name, "chat");
        assert!(
            !span
                .attributes
                .iter()
                .any(|kv| kv.key == "gen_ai.request.model"),
            "{:?}",
            span.attributes
        );
    }

    /// A Gemini-dialect request (the Gemini API's or Vertex AI's
    /// `:generateContent`): the semantic conventions' `generate_content`
    /// operation, not `chat`; the other dialects stay `chat`.
    #[test]
    fn gemini_requests_are_generate_content() {
        for (provider, dialect, op) in [
            ("gemini", Some("gemini"), "generate_content"),
            ("vertex", Some("gemini"), "generate_content"),
            ("vertex", Some("anthropic"), "chat"),
            ("openai", Some("openai-chat"), "chat"),
            ("gemini", None, "chat"),
        ] {
            for model in [Some("gemini-2.5-pro"), None] {
                let mut r = request(200, false, true);
                r.provider = provider.into();
                r.dialect = dialect.map(Into::into);
                r.model = model.map(Into::into);
                let mut out = Vec::new();
                chat(&r, &mut out);
                assert_eq!(out, spans::chat(&r).encode_to_vec());
                let span = opentelemetry_proto::tonic::trace::v1::Span::decode(&out[..]).unwrap();
                let name = model.map_or(op.to_string(), |m| format!("{op} {m}"));
                assert_eq!(span.name, name, "{provider} {dialect:?}");
                let attr = span
                    .attributes
                    .iter()
                    .find(|kv| kv.key == "gen_ai.operation.name")
                    .and_then(|kv| kv.value.as_ref()?.value.clone());
                assert_eq!(
                    attr,
                    Some(
                        opentelemetry_proto::tonic::common::v1::any_value::Value::StringValue(
                            op.into()
                        )
                    )
                );
            }
        }
    }

    /// `http.response.status_code` is the upstream's answer: a request it
    /// never answered (status 0, the gateway's own 502 after a refused
    /// connection, a client gone before the head) has none, not `0` or
    /// the gateway's status.
    #[test]
    fn a_request_without_an_answer_has_no_response_status() {
        let status_of = |r: &RequestRecord| {
            let mut out = Vec::new();
            chat(r, &mut out);
            assert_eq!(out, spans::chat(r).encode_to_vec());
            let span = opentelemetry_proto::tonic::trace::v1::Span::decode(&out[..]).unwrap();
            span.attributes
                .iter()
                .find(|kv| kv.key == "http.response.status_code")
                .and_then(|kv| kv.value.as_ref()?.value.clone())
        };
        let int = |n| Some(opentelemetry_proto::tonic::common::v1::any_value::Value::IntValue(n));
        let mut r = request(0, false, false);
        assert_eq!(status_of(&r), None, "status 0");
        r = request(502, true, false);
        assert_eq!(status_of(&r), None, "the gateway's own 502");
        r.status = 499;
        r.error = Some("client disconnected before the response finished".into());
        assert_eq!(status_of(&r), None, "gone before the head");
        r.first_byte_ms = Some(40.0);
        r.status = 200;
        assert_eq!(status_of(&r), int(200), "cut after the head");
        r = request(429, false, true);
        assert_eq!(status_of(&r), int(429));
        r.first_byte_ms = Some(3.0);
        assert_eq!(status_of(&r), int(429));
    }

    /// A client's span (W3C `traceparent`).
    const PARENT: &[u8] = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    /// Under a client's span, a span takes its trace and names it as the
    /// parent.
    #[test]
    fn a_clients_span_is_the_parent() {
        let mut t = result(true, true, None);
        t.trace_parent = Some(toolwarden_core::TraceParent::parse(PARENT).unwrap());
        let mut out = Vec::new();
        execute_tool(&t, "book", None, &mut out);
        let span = opentelemetry_proto::tonic::trace::v1::Span::decode(&out[..]).unwrap();
        assert_eq!(span, spans::execute_tool(&t, "book"));
        assert_eq!(span.trace_id[..2], [0x4b, 0xf9]);
        assert_eq!(
            span.parent_span_id,
            [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]
        );
    }

    /// The client's `tracestate` goes into the spans of its trace as it
    /// came: a vendor's entry (Datadog's sampling priority, a Dynatrace
    /// tenant) reaches its backend; without a client's span there is none.
    #[test]
    fn a_clients_tracestate_is_the_spans() {
        let state = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";
        let mut r = request(200, false, true);
        r.trace_state = Some(state.into());
        let mut t = result(false, true, Some(1.0));
        t.trace_state = Some(state.into());
        let decode = |out: &[u8]| opentelemetry_proto::tonic::trace::v1::Span::decode(out).unwrap();
        for parent in [Some(PARENT), None] {
            r.trace_parent = parent.map(|p| toolwarden_core::TraceParent::parse(p).unwrap());
            t.trace_parent = r.trace_parent;
            let (mut a, mut b) = (Vec::new(), Vec::new());
            chat(&r, &mut a);
            execute_tool(&t, "book", None, &mut b);
            let expected = if parent.is_some() { state } else { "" };
            assert_eq!(decode(&a).trace_state, expected);
            assert_eq!(decode(&b).trace_state, expected);
            assert_eq!(a, spans::chat(&r).encode_to_vec());
            assert_eq!(b, spans::execute_tool(&t, "book").encode_to_vec());
        }
    }

    /// The upstream is the span's server (`server.address`, and
    /// `server.port` with it, as the GenAI conventions ask); a record
    /// that names none has neither.
    #[test]
    fn the_upstream_is_the_spans_server() {
        let mut r = request(200, false, true);
        r.server_address = Some("generativelanguage.googleapis.com".into());
        r.server_port = Some(443);
        let attrs = |r: &RequestRecord| {
            let mut out = Vec::new();
            chat(r, &mut out);
            assert_eq!(out, spans::chat(r).encode_to_vec());
            let span = opentelemetry_proto::tonic::trace::v1::Span::decode(&out[..]).unwrap();
            let get = |key: &str| {
                span.attributes
                    .iter()
                    .find(|kv| kv.key == key)
                    .and_then(|kv| kv.value.as_ref()?.value.clone())
            };
            (get("server.address"), get("server.port"))
        };
        use opentelemetry_proto::tonic::common::v1::any_value::Value;
        assert_eq!(
            attrs(&r),
            (
                Some(Value::StringValue(
                    "generativelanguage.googleapis.com".into()
                )),
                Some(Value::IntValue(443))
            )
        );
        r.server_address = None;
        r.server_port = None;
        assert_eq!(attrs(&r), (None, None));
    }

    /// The GenAI registry's provider names; a record of no session gets
    /// its request's trace, not one shared by every such record.
    #[test]
    fn providers_and_traces_of_records_without_a_session() {
        for (label, name) in [
            ("azure", "azure.ai.openai"),
            ("vertex", "gcp.vertex_ai"),
            ("bedrock", "aws.bedrock"),
            ("gemini", "gcp.gemini"),
            ("anthropic", "anthropic"),
            ("openai", "openai"),
        ] {
            assert_eq!(spans::provider_name(label), name);
        }
        let mut a = request(200, false, true);
        a.session_id = "unknown".into();
        let mut b = a.clone();
        b.request_id = "req-other".into();
        let (sa, sb) = (spans::chat(&a), spans::chat(&b));
        assert_ne!(sa.trace_id, sb.trace_id, "one trace per request");
        let mut named = a.clone();
        named.session_id = "s1".into();
        let mut same = b.clone();
        same.session_id = "s1".into();
        assert_eq!(spans::chat(&named).trace_id, spans::chat(&same).trace_id);
        let mut r = result(false, true, None);
        r.session_id = "unknown".into();
        let mut out = Vec::new();
        execute_tool(&r, "book", None, &mut out);
        assert_eq!(out, spans::execute_tool(&r, "book").encode_to_vec());
        assert_eq!(
            spans::execute_tool(&r, "book").trace_id,
            spans::trace_id("req-2")
        );
    }

    #[test]
    fn tool_spans_are_the_bytes_prost_writes() {
        for (failed, model, exec, over) in [
            (false, true, Some(30.0), None),
            (true, false, None, None),
            (true, true, Some(5.0), Some(1e9)),
            (false, false, Some(f64::NAN), Some(-1.0)),
        ] {
            let r = result(failed, model, exec);
            let mut out = Vec::new();
            execute_tool(&r, "book", over, &mut out);
            let mut expected = r.clone();
            expected.exec_ms = over.or(exec);
            let span = spans::execute_tool(&expected, "book");
            assert_eq!(out, span.encode_to_vec(), "{failed} {model}");
        }
    }

    #[test]
    fn request_bodies_are_the_bytes_prost_writes() {
        let resource = crate::otel::resource(
            &[
                ("service.name".into(), "gw".into()),
                ("team".into(), "a".into()),
            ],
            &crate::otel::instance_id(),
        );
        let framing = Framing::new(resource.clone());
        let (r, t) = (request(200, false, true), result(true, true, Some(1.0)));
        let mut a = Vec::new();
        chat(&r, &mut a);
        let mut b = Vec::new();
        execute_tool(&t, "book", None, &mut b);
        let many: Vec<Vec<u8>> = (0..300).map(|_| b.clone()).collect();
        for encoded in [vec![], vec![a.clone()], vec![a, b], many] {
            let decoded = encoded
                .iter()
                .map(|s| opentelemetry_proto::tonic::trace::v1::Span::decode(&s[..]).unwrap())
                .collect();
            let mut framed = Vec::new();
            for span in &encoded {
                frame_span(&mut framed, span);
            }
            let body = request_body(&framing, &framed, OtlpProtocol::HttpProtobuf);
            let message = export_request(resource.clone(), decoded).encode_to_vec();
            assert_eq!(body, message);
            // gRPC: the same message behind its 5-byte prefix.
            let grpc = request_body(&framing, &framed, OtlpProtocol::Grpc);
            assert_eq!(grpc[0], 0, "not compressed");
            assert_eq!(grpc[1..5], (message.len() as u32).to_be_bytes());
            assert_eq!(grpc[5..], message[..]);
            // gzip: the same message once decompressed, over gRPC in a
            // frame marked compressed.
            let gunzip = |bytes: &[u8]| {
                let mut out = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes), &mut out)
                    .unwrap();
                out
            };
            assert_eq!(
                gunzip(&gzipped(&message, OtlpProtocol::HttpProtobuf)),
                message
            );
            let framed = gzipped(&message, OtlpProtocol::Grpc);
            assert_eq!(framed[0], 1, "compressed");
            assert_eq!(framed[1..5], ((framed.len() - 5) as u32).to_be_bytes());
            assert_eq!(gunzip(&framed[5..]), message);
        }
    }
}
