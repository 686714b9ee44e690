//! The HTTP side: routing, authentication, validation, scripts and faults.

use std::{convert::Infallible, sync::Arc, time::Duration};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use toolwarden_coding::Codings;
use toolwarden_wire::Dialect;

use crate::{
    Fault, ReceivedRequest, Scripted, Shared,
    answer::{denied, error_response, fault_reply, json_response, response},
    api_headers::Api,
    body::{Body, End, chunked, full},
    cloud,
    continuation::{self, Previous},
    envelope::{self, Provider},
    json::Obj,
    plan::{fnv1a, plan},
    render,
    stream_error::{self, Framing},
    thread::Thread,
};

/// One model route: which dialect, Gemini's model and streaming mode.
#[derive(Debug)]
struct Route {
    dialect: Dialect,
    model: Option<String>,
    /// Gemini `:streamGenerateContent`.
    gemini_stream: bool,
    /// Gemini `?alt=sse`.
    gemini_sse: bool,
}

/// Handle one request.
pub(crate) async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    if crate::ws::is_upgrade(&req) {
        return crate::ws::handle(shared, req).await;
    }
    let (parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return Ok(plain(
                StatusCode::BAD_REQUEST,
                format!("mock provider: could not read the request body: {e}"),
            ));
        }
    };
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().map(str::to_string);
    if shared.opts.record {
        shared.lock_received().push(ReceivedRequest {
            method: parts.method.clone(),
            path: path.clone(),
            query: query.clone(),
            headers: parts.headers.clone(),
            body: body.clone(),
        });
    }
    shared
        .requests
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let api = Api::of_request(&parts.method, &path, query.as_deref(), &parts.headers);
    let id = format!("req_mock{:016x}", fnv1a(&body));
    let mut resp = answer(&shared, &parts, &path, query.as_deref(), api, body).await;
    // Every answer of an API carries its request id (an error's too).
    if let Some(api) = api
        && let Ok(v) = header::HeaderValue::from_str(&id)
        && !resp.headers().contains_key(api.request_id_header())
    {
        resp.headers_mut().insert(api.request_id_header(), v);
    }
    Ok(resp)
}

/// The answer to a request already read and recorded.
async fn answer(
    shared: &Arc<Shared>,
    parts: &http::request::Parts,
    path: &str,
    query: Option<&str>,
    api: Option<Api>,
    body: Bytes,
) -> Response<Body> {
    let fault = shared.fault();
    match &fault {
        Fault::Hang => std::future::pending::<()>().await,
        Fault::Delay(d) => tokio::time::sleep(*d).await,
        Fault::Status(code, body) => return fault_reply(api, *code, None, body),
        Fault::StatusWithHeaders(code, headers, body) => {
            return fault_reply(api, *code, Some(headers), body);
        }
        _ => {}
    }

    // Issue 18: STS AssumeRole and the SSO portal, Google's token endpoint,
    // AWS's IMDS and container credentials.
    let opts = &shared.opts;
    let federation = opts
        .aws_credential_service
        .as_ref()
        .zip(opts.aws_key.as_ref())
        .and_then(|(service, key)| crate::aws_federation::serve(service, key, parts, path, &body));
    let federation = federation.or_else(|| {
        let key = opts.google_key.as_ref()?;
        let aws = crate::google_federation::aws_signers(opts);
        crate::google_federation::serve(key, &aws, parts, path, &body)
    });
    if let Some((status, content_type, text)) =
        federation.or_else(|| crate::cloud_auth::serve(shared, parts, path, &body))
    {
        let mut resp = response(status, content_type, full(text));
        // IMDSv2 answers a session token with its lifetime.
        if path == "/latest/api/token"
            && let Some(ttl) = parts.headers.get("x-aws-ec2-metadata-token-ttl-seconds")
        {
            resp.headers_mut()
                .insert("x-aws-ec2-metadata-token-ttl-seconds", ttl.clone());
        }
        return resp;
    }
    if let Some(reply) = crate::count_tokens::serve(shared, parts, path, query, &body) {
        return reply;
    }
    if let Some(reply) = conversations(shared, parts, path, query, &body) {
        return reply;
    }
    if parts.method == Method::POST && crate::compact::is_compact_path(path) {
        let body = match decoded(&parts.headers, body) {
            Ok(body) => body,
            Err(message) => {
                let body = envelope::invalid_request(Dialect::OpenAiResponses, &message);
                return error_response(api, StatusCode::BAD_REQUEST, body);
            }
        };
        let (status, reply) =
            crate::compact::answer(&parts.headers, query, shared.opts.api_key.as_deref(), &body);
        return json_response(status, reply);
    }
    // Issue 18: Azure OpenAI, Vertex AI and Bedrock paths.
    let cloud_route = (parts.method == Method::POST)
        .then(|| cloud::route(path, query))
        .flatten();
    let route = match &cloud_route {
        Some(c) => Route {
            dialect: c.dialect,
            model: c.model.clone(),
            gemini_stream: c.path_stream,
            gemini_sse: c.gemini_sse,
        },
        None => match route(&parts.method, path, query) {
            Some(route) => route,
            None => return other_route(shared, parts, path, query),
        },
    };
    let provider = Provider::of(route.dialect);
    if let Some(c) = &cloud_route {
        let denied = cloud::check_auth(
            c,
            parts,
            &body,
            shared.opts.api_key.as_deref(),
            cloud::AwsAuth {
                key: shared.opts.aws_key.as_ref(),
                api_key: shared.opts.bedrock_api_key.as_deref(),
            },
            shared
                .opts
                .google_key
                .as_ref()
                .map(|k| k.access_token.as_str()),
        );
        if let Some((status, headers, body)) = denied {
            let mut resp = json_response(status, body);
            for (k, v) in headers {
                if let (Ok(k), Ok(v)) = (
                    header::HeaderName::from_bytes(k.as_bytes()),
                    header::HeaderValue::from_str(&v),
                ) {
                    resp.headers_mut().insert(k, v);
                }
            }
            return resp;
        }
    } else if let Some((status, body)) = envelope::check_auth(
        provider,
        &parts.headers,
        query,
        shared.opts.api_key.as_deref(),
    ) {
        return json_response(status, body);
    }
    // Anthropic's own API (not its cloud routes, whose bodies name the
    // version) requires the version header.
    let anthropic_api = route.dialect == Dialect::Anthropic && cloud_route.is_none();
    if anthropic_api
        && shared.opts.validate
        && let Some(message) = anthropic_version_error(&parts.headers)
    {
        let body = envelope::invalid_request(Dialect::Anthropic, &message);
        return error_response(api, StatusCode::BAD_REQUEST, body);
    }
    // Bedrock answers a request it rejects in AWS's shape.
    let bedrock = cloud_route
        .as_ref()
        .is_some_and(|c| c.cloud == cloud::Cloud::Bedrock);
    let invalid_request = |dialect, message: &str| {
        if bedrock {
            Obj::new().str("message", message).done()
        } else {
            envelope::invalid_request(dialect, message)
        }
    };
    // A compressed body (the Codex CLI sends `content-encoding: zstd`) is
    // read decoded, as the real APIs read it.
    let body = match decoded(&parts.headers, body) {
        Ok(body) => body,
        Err(message) => {
            let body = invalid_request(route.dialect, &message);
            return error_response(api, StatusCode::BAD_REQUEST, body);
        }
    };
    if anthropic_api
        && shared.opts.validate
        && let Some(message) = anthropic_missing_field(&body)
    {
        let body = envelope::invalid_request(Dialect::Anthropic, &message);
        return error_response(api, StatusCode::BAD_REQUEST, body);
    }
    // An Anthropic message thread: a `continue` is read as the whole
    // conversation (`thread`).
    let thread = if anthropic_api {
        match shared.threads.read(&parts.headers, &body) {
            Ok(t) => t,
            Err((status, body)) => return error_response(api, status, body),
        }
    } else {
        Thread::None
    };
    let body = match &thread {
        Thread::Continue { whole } => whole.clone(),
        _ => body,
    };
    // A Responses request is kept, and continues the response it names
    // (`continuation`).
    // Only where continuations are checked (`validate`): kept for nothing
    // else, and parsing each body costs the bench's shared CPUs.
    let responses_body = (shared.opts.validate && route.dialect == Dialect::OpenAiResponses)
        .then(|| serde_json::from_slice::<serde_json::Value>(&body).ok())
        .flatten();
    let mut kept = Kept::default();
    if shared.opts.validate {
        let violation = match &responses_body {
            Some(v) => {
                kept = match Kept::of(shared, v) {
                    Ok(kept) => kept,
                    Err((status, body)) => return error_response(api, status, body),
                };
                match &kept.whole {
                    Some(whole) => {
                        crate::rules::violation_value(route.dialect, route.model.as_deref(), whole)
                    }
                    None => crate::rules::violation(route.dialect, route.model.as_deref(), &body),
                }
            }
            None => crate::rules::violation(route.dialect, route.model.as_deref(), &body),
        };
        if let Some(message) = violation {
            let body = invalid_request(route.dialect, &message);
            return error_response(api, StatusCode::BAD_REQUEST, body);
        }
    }
    // Agent mode plays its scripts over the request as the API reads it.
    let context = kept
        .whole
        .as_ref()
        .filter(|_| shared.opts.agent.is_some())
        .and_then(|whole| serde_json::to_vec(whole).ok());

    let streaming = route.gemini_stream || wants_stream(&body);
    let (status, headers, chunks, delay) = match shared.pop_script() {
        Some(Scripted::Json(b)) => (
            StatusCode::OK,
            vec![("content-type".to_string(), "application/json".to_string())],
            vec![b],
            Duration::ZERO,
        ),
        Some(Scripted::Sse(chunks, delay)) => (
            StatusCode::OK,
            vec![(
                "content-type".to_string(),
                "text/event-stream; charset=utf-8".to_string(),
            )],
            chunks,
            delay,
        ),
        Some(Scripted::Raw(raw)) => (
            StatusCode::from_u16(raw.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            raw.headers,
            raw.chunks,
            raw.delay,
        ),
        None => {
            let agent_body = context.as_deref().unwrap_or(&body);
            let (status, mut headers, chunks, delay) =
                default_reply(shared, &route, &body, agent_body, streaming);
            let chunks = match &cloud_route {
                Some(c) => cloud::shape_reply(c, &mut headers, chunks, streaming),
                None => chunks,
            };
            (status, headers, chunks, delay)
        }
    };
    let is_sse = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v.contains("event-stream"));
    if let Some(v) = &responses_body
        && status == StatusCode::OK
    {
        let events = continuation::reply_events(&chunks, is_sse);
        if let Some(id) = &kept.conversation
            && let Some((_, output)) = continuation::response_in(events.iter().map(|e| e.as_ref()))
        {
            shared.conversations.append(id, v, output);
        }
        let events = events.iter().map(|e| e.as_ref());
        continuation::remember(&shared.responses, None, v, kept.previous, events);
    }
    if !matches!(thread, Thread::None) && status == StatusCode::OK {
        let events = continuation::reply_events(&chunks, is_sse);
        shared
            .threads
            .hold(&body, events.iter().map(|e| e.as_ref()));
    }
    let cut = match &shared.opts.cut_stream {
        Some((model, n)) if streaming && route.model.as_ref() == Some(model) => Some(*n),
        _ => None,
    };
    let (chunks, end) = match (cut, &fault) {
        (Some(n), _) => cut_midway(chunks, n),
        (None, Fault::ErrorEventAfter(n, kind)) if streaming && status == StatusCode::OK => {
            let framing = if bedrock {
                Framing::EventStream
            } else if route.dialect == Dialect::Gemini && !route.gemini_sse {
                Framing::GeminiArray
            } else {
                Framing::Sse(route.dialect)
            };
            let chunks = stream_error::inject(framing, chunks, *n, *kind);
            (chunks, End::Finish)
        }
        (None, _) => apply_body_fault(&fault, chunks, is_sse || streaming),
    };
    let end = match end {
        End::Finish if (is_sse || streaming) && !shared.opts.stream_tail.is_zero() => {
            End::Linger(shared.opts.stream_tail)
        }
        end => end,
    };
    // As Anthropic's API does for clients that accept it: a successful
    // reply in gzip, a stream flushed event by event.
    let gzip = shared.opts.gzip
        && !bedrock
        && status.is_success()
        && !chunks.is_empty()
        && accepts_gzip(&parts.headers)
        && !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-encoding"));
    let chunks = if gzip {
        gzip_chunks(chunks, &end)
    } else {
        chunks
    };
    let chunks = match shared.opts.split_chunks {
        Some(size) => recut(chunks, size),
        None => chunks,
    };
    let mut resp = Response::new(chunked(
        chunks,
        delay,
        shared.opts.flush_each_event,
        end,
        shared.open_streams.clone(),
    ));
    *resp.status_mut() = status;
    if gzip {
        resp.headers_mut().insert(
            header::CONTENT_ENCODING,
            header::HeaderValue::from_static("gzip"),
        );
    }
    for (k, v) in headers {
        if let (Ok(k), Ok(v)) = (
            header::HeaderName::from_bytes(k.as_bytes()),
            header::HeaderValue::from_str(&v),
        ) {
            resp.headers_mut().append(k, v);
        }
    }
    // The id of the body as read (decoded), the same for a request
    // however it was compressed.
    let id = format!("req_mock{:016x}", fnv1a(&body));
    let id_header = api.map_or("x-request-id", Api::request_id_header);
    if let Ok(v) = header::HeaderValue::from_str(&id) {
        resp.headers_mut().insert(id_header, v);
    }
    resp
}

/// What a Responses request continues on the API's side.
#[derive(Default)]
struct Kept {
    /// The response its `previous_response_id` names.
    previous: Option<Arc<continuation::Stored>>,
    /// The stored conversation it adds to (`conversation`).
    conversation: Option<String>,
    /// The request as the API reads it, with either before its own input.
    whole: Option<serde_json::Value>,
}

impl Kept {
    /// What `v` continues, or the API's refusal: an unknown previous
    /// response or conversation, or both named at once.
    fn of(shared: &Shared, v: &serde_json::Value) -> Result<Kept, (StatusCode, String)> {
        let stored = shared.conversations.context(v)?;
        Ok(
            match (continuation::previous(&shared.responses, None, v), stored) {
                (Previous::NotFound(id), _) => {
                    return Err((StatusCode::BAD_REQUEST, previous_not_found(&id)));
                }
                (Previous::Found(p), _) => Kept {
                    whole: Some(continuation::with_context(v, &p)),
                    previous: Some(p),
                    conversation: None,
                },
                (Previous::None, Some((id, items))) => Kept {
                    whole: Some(crate::conversation::with_items(v, items)),
                    previous: None,
                    conversation: Some(id),
                },
                (Previous::None, None) => Kept::default(),
            },
        )
    }
}

/// Anthropic's 400 text for a request without `anthropic-version`:
/// "anthropic-version: header is required" (PipedreamHQ/pipedream#9697,
/// envoyproxy/ai-gateway#1909). Its value is not judged: which dates the
/// API takes is Anthropic's to say (the pinned Python SDK sends
/// `2026-10-21`), and a list here would refuse real clients.
fn anthropic_version_error(headers: &http::HeaderMap) -> Option<String> {
    (!headers.contains_key("anthropic-version"))
        .then(|| "anthropic-version: header is required".to_string())
}

/// Anthropic's 400 text for a Messages body without one of its required
/// fields, in the schema's order: "model: Field required", "messages: …",
/// "max_tokens: Field required" (the API's validation text, quoted in many
/// client threads). A body that is not a JSON object is left to the rules'
/// parse error.
fn anthropic_missing_field(body: &[u8]) -> Option<String> {
    // Which fields are there, nothing kept: a 20 KB body is scanned, not
    // built into a tree (the mock shares the bench's CPUs).
    #[derive(serde::Deserialize)]
    struct Required {
        model: Option<serde::de::IgnoredAny>,
        messages: Option<serde::de::IgnoredAny>,
        max_tokens: Option<serde::de::IgnoredAny>,
    }
    let r: Required = serde_json::from_slice(body).ok()?;
    [
        ("model", r.model.is_some()),
        ("messages", r.messages.is_some()),
        ("max_tokens", r.max_tokens.is_some()),
    ]
    .into_iter()
    .find(|(_, there)| !there)
    .map(|(field, _)| format!("{field}: Field required"))
}

type Reply = (StatusCode, Vec<(String, String)>, Vec<Bytes>, Duration);

/// Whether `accept-encoding` takes gzip (a `gzip` entry without `q=0`).
fn accepts_gzip(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|entry| {
            let mut parts = entry.split(';').map(str::trim);
            let name = parts.next().unwrap_or("");
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name.eq_ignore_ascii_case("x-gzip")) && !refused
        })
}

/// The chunks as one gzip stream, each flushed so that it decodes on
/// arrival; the trailer goes with the last chunk of a reply that ends
/// normally (one cut off or held open never gets it).
fn gzip_chunks(chunks: Vec<Bytes>, end: &End) -> Vec<Bytes> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut out: Vec<Bytes> = Vec::with_capacity(chunks.len());
    for chunk in &chunks {
        // Writing to a Vec cannot fail.
        let _ = encoder.write_all(chunk).and_then(|()| encoder.flush());
        out.push(Bytes::from(std::mem::take(encoder.get_mut())));
    }
    if matches!(end, End::Finish | End::Linger(_)) {
        let trailer = encoder.finish().unwrap_or_default();
        if let Some(last) = out.pop() {
            let mut whole = last.to_vec();
            whole.extend_from_slice(&trailer);
            out.push(Bytes::from(whole));
        }
    }
    out
}

/// The same bytes in pieces of `size` (at least 1).
fn recut(chunks: Vec<Bytes>, size: usize) -> Vec<Bytes> {
    let whole = Bytes::from(chunks.concat());
    let size = size.max(1);
    (0..whole.len())
        .step_by(size)
        .map(|at| whole.slice(at..(at + size).min(whole.len())))
        .collect()
}

/// Largest decoded request body the mock reads.
const MAX_DECODED: usize = 64 << 20;

/// The request body with its `content-encoding` undone.
fn decoded(headers: &http::HeaderMap, body: Bytes) -> Result<Bytes, String> {
    let mut value = Vec::new();
    for v in headers.get_all(header::CONTENT_ENCODING) {
        if !value.is_empty() {
            value.extend_from_slice(b", ");
        }
        value.extend_from_slice(v.as_bytes());
    }
    let codings = Codings::parse(&value).map_err(|e| e.detail)?;
    if codings.is_identity() {
        return Ok(body);
    }
    codings
        .decode(&body, MAX_DECODED)
        .map(Bytes::from)
        .map_err(|e| format!("could not decode the request body: {}", e.detail))
}

/// The reply to `body`; agent mode plays its scripts over `agent_body`
/// (the request with the context it continues).
fn default_reply(
    shared: &Shared,
    route: &Route,
    body: &[u8],
    agent_body: &[u8],
    streaming: bool,
) -> Reply {
    let calls = shared.opts.calls_per_reply;
    let mut p = if let Some(agent) = &shared.opts.agent {
        agent.plan(route.dialect, agent_body, route.model.as_deref())
    } else {
        plan(
            route.dialect,
            body,
            route.model.as_deref(),
            &shared.opts.default_tool,
            calls,
        )
    };
    p.response_id_pad = shared.opts.response_id_pad;
    p.arg_pieces = shared.opts.arg_pieces;
    let ct = |s: &str| vec![("content-type".to_string(), s.to_string())];
    if !streaming {
        let ctype = if route.dialect == Dialect::Gemini {
            "application/json; charset=UTF-8"
        } else {
            "application/json"
        };
        let body = Bytes::from(render::json_body(route.dialect, &p));
        return (StatusCode::OK, ct(ctype), vec![body], Duration::ZERO);
    }
    let ctype = match route.dialect {
        Dialect::Gemini if !route.gemini_sse => "application/json; charset=UTF-8",
        Dialect::Gemini => "text/event-stream",
        _ => "text/event-stream; charset=utf-8",
    };
    let events = render::stream_events(route.dialect, &p, route.gemini_sse);
    (StatusCode::OK, ct(ctype), events, shared.opts.chunk_delay)
}

/// Truncate, break or stall the body as the fault says.
fn apply_body_fault(fault: &Fault, mut chunks: Vec<Bytes>, streaming: bool) -> (Vec<Bytes>, End) {
    match fault {
        Fault::ResetMidStream(n) => {
            if chunks.len() == 1 {
                let b = chunks.remove(0);
                let mid = b.len() / 2;
                chunks = vec![b.slice(..mid), b.slice(mid..)];
            }
            chunks.truncate(*n);
            (chunks, End::Reset)
        }
        Fault::StallAfter(n) => {
            chunks.truncate(*n);
            (chunks, End::Stall)
        }
        Fault::MalformedSse if streaming => {
            let mut out: Vec<Bytes> = chunks.into_iter().take(1).collect();
            out.push(Bytes::from_static(
                b"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_del\n\n",
            ));
            out.push(Bytes::from_static(b"this line has no field name\n\n"));
            out.push(Bytes::from_static(b"event: \xff\xfe\ndata: {]\n\n"));
            out.push(Bytes::from_static(b"data: [DONE"));
            (out, End::Finish)
        }
        Fault::MalformedSse => {
            let joined: Vec<u8> = chunks.concat();
            let cut = joined.len() / 2;
            (vec![Bytes::copy_from_slice(&joined[..cut])], End::Finish)
        }
        _ => (chunks, End::Finish),
    }
}

/// `n` chunks and half of the next, then a reset ([`crate::MockOptions::cut_stream`]).
fn cut_midway(mut chunks: Vec<Bytes>, n: usize) -> (Vec<Bytes>, End) {
    if let Some(next) = chunks.get(n).cloned() {
        chunks.truncate(n);
        chunks.push(next.slice(..next.len() / 2));
    }
    (chunks, End::Reset)
}

/// `"stream": true` at the top level of the body.
fn wants_stream(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Top {
        #[serde(default)]
        stream: Option<serde_json::Value>,
    }
    serde_json::from_slice::<Top>(body)
        .ok()
        .and_then(|t| t.stream)
        .and_then(|s| s.as_bool())
        .unwrap_or(false)
}

fn route(method: &Method, path: &str, query: Option<&str>) -> Option<Route> {
    if method != Method::POST {
        return None;
    }
    let simple = |dialect| {
        Some(Route {
            dialect,
            model: None,
            gemini_stream: false,
            gemini_sse: false,
        })
    };
    match path {
        "/v1/messages" => return simple(Dialect::Anthropic),
        "/v1/chat/completions" => return simple(Dialect::OpenAiChat),
        "/v1/responses" => return simple(Dialect::OpenAiResponses),
        // The ChatGPT backend's Responses path (the Codex CLI signed in
        // with ChatGPT).
        p if p.ends_with("/backend-api/codex/responses") => {
            return simple(Dialect::OpenAiResponses);
        }
        _ => {}
    }
    let rest = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))?;
    let (model, method) = rest.rsplit_once(':')?;
    let gemini_stream = match method {
        "generateContent" => false,
        "streamGenerateContent" => true,
        _ => return None,
    };
    let gemini_sse = query.is_some_and(|q| q.split('&').any(|kv| kv == "alt=sse"));
    Some(Route {
        dialect: Dialect::Gemini,
        model: Some(model.to_string()),
        gemini_stream,
        gemini_sse,
    })
}

/// The Conversations API (`conversation`), with OpenAI's authentication.
fn conversations(
    shared: &Shared,
    parts: &http::request::Parts,
    path: &str,
    query: Option<&str>,
    body: &Bytes,
) -> Option<Response<Body>> {
    if !path.starts_with("/v1/conversations") {
        return None;
    }
    if let Some(denied) = denied(shared, Provider::OpenAi, parts, query) {
        return Some(denied);
    }
    let (status, body) =
        shared
            .conversations
            .serve(&parts.method, path, query.unwrap_or(""), body)?;
    Some(json_response(status, body))
}

/// Model listings, and 404 for anything else, in the provider's envelope.
fn other_route(
    shared: &Shared,
    parts: &http::request::Parts,
    path: &str,
    query: Option<&str>,
) -> Response<Body> {
    if parts.method == Method::GET && path == "/healthz" {
        return response(StatusCode::OK, "text/plain", full("ok\n"));
    }
    if parts.method == Method::GET && path == "/_mock/received" {
        // For tests driving the mock as a process: how each request came
        // (method and path; WebSocket messages as their upgrade's `GET`).
        let list: Vec<serde_json::Value> = shared
            .lock_received()
            .iter()
            .map(|r| serde_json::json!({"method": r.method.as_str(), "path": r.path}))
            .collect();
        let body = serde_json::Value::Array(list).to_string();
        return json_response(StatusCode::OK, body);
    }
    if let Some(reply) = crate::models::serve(shared, parts, path, query) {
        return reply;
    }
    let provider = Provider::from_headers(&parts.headers, path);
    let body = envelope::error_body(
        provider,
        StatusCode::NOT_FOUND,
        "not_found_error",
        None,
        None,
        &format!("Not found: {} {path}", parts.method),
    );
    json_response(StatusCode::NOT_FOUND, body)
}

/// The Responses API's 400 for a `previous_response_id` it does not have
/// (see `continuation`).
pub(crate) fn previous_not_found(id: &str) -> String {
    envelope::error_body(
        Provider::OpenAi,
        StatusCode::BAD_REQUEST,
        "invalid_request_error",
        Some("previous_response_id"),
        Some("previous_response_not_found"),
        &continuation::not_found_message(id),
    )
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
    response(status, "text/plain", full(text))
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn recut_keeps_every_byte() {
        let chunks = vec![Bytes::from_static(b"abc"), Bytes::from_static(b"defg")];
        assert_eq!(recut(chunks.clone(), 3), ["abc", "def", "g"]);
        assert_eq!(recut(chunks, 0).len(), 7);
        assert!(recut(Vec::new(), 5).is_empty());
    }

    #[test]
    fn gzip_only_for_clients_that_take_it() {
        let take = |v: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(header::ACCEPT_ENCODING, v.parse().unwrap());
            accepts_gzip(&h)
        };
        assert!(take("gzip, deflate"));
        assert!(take("br;q=1.0, GZIP;q=0.5"));
        assert!(!take("gzip;q=0"));
        assert!(!take("identity"));
        assert!(!take("br, zstd"));
        assert!(!accepts_gzip(&http::HeaderMap::new()));
    }

    #[test]
    fn gzipped_chunks_decode_as_they_arrive() {
        let chunks = vec![
            Bytes::from_static(b"event: a\ndata: {}\n\n"),
            Bytes::from_static(b"event: b\ndata: {}\n\n"),
        ];
        let out = gzip_chunks(chunks.clone(), &End::Finish);
        assert_eq!(out.len(), 2);
        // The first chunk alone already gives the first event.
        let mut first = String::new();
        let _ = flate2::read::GzDecoder::new(&out[0][..]).read_to_string(&mut first);
        assert_eq!(first, "event: a\ndata: {}\n\n");
        // All of it is one complete gzip stream.
        let whole: Vec<u8> = out.concat();
        let mut text = String::new();
        flate2::read::GzDecoder::new(&whole[..])
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text.as_bytes(), chunks.concat());
        // Cut off: no trailer, so the stream is incomplete.
        let cut: Vec<u8> = gzip_chunks(chunks, &End::Reset).concat();
        let mut text = String::new();
        assert!(
            flate2::read::GzDecoder::new(&cut[..])
                .read_to_string(&mut text)
                .is_err()
        );
    }
}
