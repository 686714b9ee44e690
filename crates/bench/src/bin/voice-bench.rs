//! `voice-bench`: what reading voice sockets costs the gateway. An OpenAI
//! Realtime socket and a Gemini Live socket, each straight to an upstream
//! on loopback and through the gateway, in one run.
//!
//! The upstream (in this process) speaks the real event shapes (those of
//! `crates/gateway/tests/ws/voice.rs`). A **turn** is two round trips:
//!
//! - Realtime: the client streams [`CHUNKS`] `input_audio_buffer.append`
//!   (each [`CHUNK_MS`] ms of 24 kHz PCM16, base64) and `response.create`;
//!   the upstream answers `response.created`, an audio message item with
//!   [`DELTAS`] `response.output_audio.delta` (100 ms of 24 kHz PCM16
//!   each), its `.done` events, a `function_call` item
//!   (`output_item.added`, `function_call_arguments.delta`/`.done`,
//!   `output_item.done`) and `response.done` with both items; the client
//!   answers the call with `conversation.item.create`
//!   (`function_call_output`), which the upstream echoes
//!   (`conversation.item.created`, `.added`, `.done`);
//! - Gemini Live: `setup` once; per turn [`CHUNKS`] `realtimeInput` audio
//!   (16 kHz PCM16) and `audioStreamEnd`; the upstream answers, in binary
//!   frames, [`DELTAS`] `serverContent` audio `inlineData` (24 kHz) and a
//!   `toolCall`; the client's `toolResponse` is answered by a text part and
//!   `turnComplete` with `usageMetadata`.
//!
//! Measured: added latency per turn (through − direct within each round,
//! the paths' order rotating from round to round; medians), the gateway's
//! CPU per message (user + system of its process, over blocks of turns),
//! and that the gateway counted every call and result exactly
//! (`toolwarden_tool_calls_total`, `toolwarden_tool_results_total` per
//! provider: reading happened). `--baseline PATH`: a second gateway child,
//! another build's `toolwarden-bench` (its `--serve-gateway`), measured in
//! the same rounds, for reading's cost as a ratio. `--unrecorded`: the
//! children record nothing (reading's cost without the records').
//!
//! ```text
//! cargo build --release -p toolwarden-bench
//! target/release/voice-bench [--turns 400] [--runs 3] [--baseline /path/to/old/toolwarden-bench] [--unrecorded]
//! ```

#![forbid(unsafe_code)]

#[allow(dead_code)]
#[path = "../child.rs"]
mod child;
// The HTTPS switch the gateway child reads; its client side is `load.rs`'s.
#[allow(dead_code)]
#[path = "../tls.rs"]
mod tls;

#[allow(dead_code)]
#[path = "../admin.rs"]
mod admin;

use std::{convert::Infallible, net::SocketAddr, path::PathBuf, process::ExitCode, time::Instant};

use bytes::Bytes;
use futures_util::SinkExt;
use http_body_util::Full;
use hyper::{Request, Response, body::Incoming, service::service_fn};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use yawc::{Frame, OpCode, Options, WebSocket};

use child::GatewayChild;

/// Audio messages the client sends per turn.
const CHUNKS: usize = 10;
/// Milliseconds of audio in each of the client's messages.
const CHUNK_MS: usize = 50;
/// Audio messages the upstream sends per turn (100 ms each).
const DELTAS: usize = 10;

const REALTIME_PATH: &str = "/v1/realtime?model=gpt-realtime";
const LIVE_PATH: &str =
    "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=AIza-bench";

/// Base64 of `bytes` random bytes (what PCM16 audio looks like encoded).
fn base64_audio(bytes: usize) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let len = bytes.div_ceil(3) * 4;
    (0..len)
        .map(|_| ALPHABET[fastrand::usize(..64)] as char)
        .collect()
}

/// PCM16 mono bytes for `ms` milliseconds at `rate` Hz.
fn pcm_bytes(rate: usize, ms: usize) -> usize {
    rate * ms / 1000 * 2
}

fn text(s: String) -> Frame {
    Frame::text(Bytes::from(s))
}

fn binary(s: String) -> Frame {
    Frame::binary(Bytes::from(s))
}

// ---------------------------------------------------------------- upstream

/// The upstream's audio, made once.
struct UpstreamAudio {
    out: String,
}

/// The Realtime server's answer to one client message (its `n`th
/// `response.create` numbers its ids).
fn realtime_answer(message: &[u8], n: &mut usize, audio: &UpstreamAudio) -> Vec<Frame> {
    if message.starts_with(br#"{"type":"input_audio_buffer.append""#) {
        return Vec::new();
    }
    if message.starts_with(br#"{"type":"response.create""#) {
        *n += 1;
        let (r, a, f, c) = (
            format!("resp_{n}"),
            format!("item_a{n}"),
            format!("item_f{n}"),
            format!("call_{n}"),
        );
        let transcript = "Let me look that flight up for you.";
        let args = r#"{\"flight\":\"TP123\"}"#;
        let message_item = |status: &str, content: &str| {
            format!(
                r#"{{"id":"{a}","object":"realtime.item","type":"message","status":"{status}","role":"assistant","content":[{content}]}}"#
            )
        };
        let call_item = |status: &str, arguments: &str| {
            format!(
                r#"{{"id":"{f}","object":"realtime.item","type":"function_call","status":"{status}","name":"lookup_flight","call_id":"{c}","arguments":"{arguments}"}}"#
            )
        };
        let done_content = format!(r#"{{"type":"output_audio","transcript":"{transcript}"}}"#);
        let mut out = vec![text(format!(
            r#"{{"type":"response.created","event_id":"ev_{n}_0","response":{{"object":"realtime.response","id":"{r}","status":"in_progress","output":[]}}}}"#
        ))];
        out.push(text(format!(
            r#"{{"type":"response.output_item.added","event_id":"ev_{n}_1","response_id":"{r}","output_index":0,"item":{}}}"#,
            message_item("in_progress", "")
        )));
        for i in 0..DELTAS {
            out.push(text(format!(
                r#"{{"type":"response.output_audio.delta","event_id":"ev_{n}_d{i}","response_id":"{r}","item_id":"{a}","output_index":0,"content_index":0,"delta":"{}"}}"#,
                audio.out
            )));
        }
        out.push(text(format!(
            r#"{{"type":"response.output_audio.done","event_id":"ev_{n}_2","response_id":"{r}","item_id":"{a}","output_index":0,"content_index":0}}"#
        )));
        out.push(text(format!(
            r#"{{"type":"response.output_audio_transcript.done","event_id":"ev_{n}_3","response_id":"{r}","item_id":"{a}","output_index":0,"content_index":0,"transcript":"{transcript}"}}"#
        )));
        out.push(text(format!(
            r#"{{"type":"response.output_item.done","event_id":"ev_{n}_4","response_id":"{r}","output_index":0,"item":{}}}"#,
            message_item("completed", &done_content)
        )));
        out.push(text(format!(
            r#"{{"type":"response.output_item.added","event_id":"ev_{n}_5","response_id":"{r}","output_index":1,"item":{}}}"#,
            call_item("in_progress", "")
        )));
        out.push(text(format!(
            r#"{{"type":"response.function_call_arguments.delta","event_id":"ev_{n}_6","response_id":"{r}","item_id":"{f}","output_index":1,"call_id":"{c}","delta":"{args}"}}"#
        )));
        out.push(text(format!(
            r#"{{"type":"response.function_call_arguments.done","event_id":"ev_{n}_7","response_id":"{r}","item_id":"{f}","output_index":1,"call_id":"{c}","name":"lookup_flight","arguments":"{args}"}}"#
        )));
        out.push(text(format!(
            r#"{{"type":"response.output_item.done","event_id":"ev_{n}_8","response_id":"{r}","output_index":1,"item":{}}}"#,
            call_item("completed", args)
        )));
        out.push(text(format!(
            r#"{{"type":"response.done","event_id":"ev_{n}_9","response":{{"object":"realtime.response","id":"{r}","status":"completed","status_details":null,"output":[{},{}],"conversation_id":"conv_1","usage":{{"total_tokens":1530,"input_tokens":1200,"output_tokens":330}}}}}}"#,
            message_item("completed", &done_content),
            call_item("completed", args)
        )));
        return out;
    }
    let Ok(m) = serde_json::from_slice::<serde_json::Value>(message) else {
        return Vec::new();
    };
    match m["type"].as_str() {
        Some("conversation.item.create") => {
            let mut item = m["item"].clone();
            item["id"] = serde_json::json!(format!("item_o{n}"));
            item["object"] = serde_json::json!("realtime.item");
            item["status"] = serde_json::json!("completed");
            ["created", "added", "done"]
                .iter()
                .enumerate()
                .map(|(i, what)| {
                    text(format!(
                        r#"{{"type":"conversation.item.{what}","event_id":"ev_{n}_e{i}","previous_item_id":"item_f{n}","item":{item}}}"#
                    ))
                })
                .collect()
        }
        Some("session.update") => vec![text(format!(
            r#"{{"type":"session.updated","event_id":"ev_s","session":{{"type":"realtime","tools":{}}}}}"#,
            m["session"]["tools"]
        ))],
        _ => Vec::new(),
    }
}

/// The Gemini Live server's answer to one client message (binary frames).
fn live_answer(message: &[u8], n: &mut usize, audio: &UpstreamAudio) -> Vec<Frame> {
    if message.starts_with(br#"{"realtimeInput":{"audio":{"#) {
        return Vec::new();
    }
    if message.starts_with(br#"{"realtimeInput":{"audioStreamEnd""#) {
        *n += 1;
        let mut out: Vec<Frame> = (0..DELTAS)
            .map(|_| {
                binary(format!(
                    r#"{{"serverContent":{{"modelTurn":{{"parts":[{{"inlineData":{{"mimeType":"audio/pcm;rate=24000","data":"{}"}}}}]}}}}}}"#,
                    audio.out
                ))
            })
            .collect();
        out.push(binary(format!(
            r#"{{"toolCall":{{"functionCalls":[{{"id":"fc_{n}","name":"lookup_order","args":{{"order":"A17"}}}}]}}}}"#
        )));
        return out;
    }
    if message.starts_with(br#"{"toolResponse""#) {
        return vec![
            binary(r#"{"serverContent":{"modelTurn":{"parts":[{"text":"It was delivered on Monday."}]}}}"#.into()),
            binary(r#"{"serverContent":{"turnComplete":true},"usageMetadata":{"promptTokenCount":1200,"responseTokenCount":330,"totalTokenCount":1530}}"#.into()),
        ];
    }
    if message.starts_with(br#"{"setup""#) {
        return vec![binary(r#"{"setupComplete":{}}"#.into())];
    }
    Vec::new()
}

/// Serve one upgraded socket: Realtime or Live by the path.
async fn serve_socket(mut socket: WebSocket<yawc::HttpStream>, live: bool) {
    let audio = UpstreamAudio {
        out: base64_audio(pcm_bytes(24_000, 100)),
    };
    let mut n = 0;
    if !live {
        let created = r#"{"type":"session.created","event_id":"ev_c","session":{"type":"realtime","model":"gpt-realtime"}}"#;
        if socket.send(text(created.into())).await.is_err() {
            return;
        }
    }
    while let Ok(frame) = socket.next_frame().await {
        if !matches!(frame.opcode(), OpCode::Text | OpCode::Binary) {
            if frame.opcode() == OpCode::Close {
                return;
            }
            continue;
        }
        let answer = if live {
            live_answer(frame.payload(), &mut n, &audio)
        } else {
            realtime_answer(frame.payload(), &mut n, &audio)
        };
        for frame in answer {
            if socket.send(frame).await.is_err() {
                return;
            }
        }
    }
}

/// The upstream: a WebSocket server on loopback for both protocols.
async fn start_upstream() -> Result<SocketAddr, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("upstream bind: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("upstream address: {e}"))?;
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let service = service_fn(move |mut req: Request<Incoming>| {
                let live = req.uri().path().contains("BidiGenerateContent");
                let response = match WebSocket::upgrade(&mut req) {
                    Ok((response, upgrade)) => {
                        tokio::spawn(async move {
                            if let Ok(socket) = upgrade.await {
                                serve_socket(socket, live).await;
                            }
                        });
                        let (parts, _) = response.into_parts();
                        Response::from_parts(parts, Full::new(Bytes::new()))
                    }
                    Err(_) => {
                        let mut r = Response::new(Full::new(Bytes::from("not a WebSocket")));
                        *r.status_mut() = http::StatusCode::BAD_REQUEST;
                        r
                    }
                };
                async move { Ok::<_, Infallible>(response) }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .with_upgrades(),
            );
        }
    });
    Ok(addr)
}

// ------------------------------------------------------------------ client

type Socket = WebSocket<TcpStream>;

async fn connect(addr: SocketAddr, path: &str) -> Result<Socket, String> {
    let url: url::Url = format!("ws://{addr}{path}")
        .parse()
        .map_err(|e| format!("url: {e}"))?;
    let tcp = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect {addr}: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let req = yawc::HttpRequest::builder().header("authorization", "Bearer sk-bench");
    WebSocket::handshake_with_request(url, tcp, Options::default().with_no_delay(), req)
        .await
        .map_err(|e| format!("handshake {addr}{path}: {e}"))
}

/// Read until a message starting with `prefix`; the messages read.
async fn read_until(ws: &mut Socket, prefix: &[u8]) -> Result<usize, String> {
    let mut read = 0;
    loop {
        let frame = ws.next_frame().await.map_err(|e| format!("reading: {e}"))?;
        match frame.opcode() {
            OpCode::Text | OpCode::Binary => read += 1,
            OpCode::Close => return Err("the socket closed".into()),
            _ => continue,
        }
        if frame.payload().starts_with(prefix) {
            return Ok(read);
        }
    }
}

/// The protocols measured.
#[derive(Clone, Copy)]
enum Protocol {
    Realtime,
    Live,
}

const PROTOCOLS: [Protocol; 2] = [Protocol::Realtime, Protocol::Live];

impl Protocol {
    fn name(self) -> &'static str {
        match self {
            Protocol::Realtime => "OpenAI Realtime",
            Protocol::Live => "Gemini Live",
        }
    }

    fn provider(self) -> &'static str {
        match self {
            Protocol::Realtime => "openai",
            Protocol::Live => "gemini",
        }
    }
}

/// One voice socket and the turns it has had.
struct Voice {
    ws: Socket,
    protocol: Protocol,
    turns: usize,
    /// The client's audio message, made once.
    chunk: Bytes,
}

impl Voice {
    async fn open(addr: SocketAddr, protocol: Protocol) -> Result<Voice, String> {
        let (path, chunk) = match protocol {
            Protocol::Realtime => (
                REALTIME_PATH,
                format!(
                    r#"{{"type":"input_audio_buffer.append","audio":"{}"}}"#,
                    base64_audio(pcm_bytes(24_000, CHUNK_MS))
                ),
            ),
            Protocol::Live => (
                LIVE_PATH,
                format!(
                    r#"{{"realtimeInput":{{"audio":{{"data":"{}","mimeType":"audio/pcm;rate=16000"}}}}}}"#,
                    base64_audio(pcm_bytes(16_000, CHUNK_MS))
                ),
            ),
        };
        let mut ws = connect(addr, path).await?;
        match protocol {
            Protocol::Realtime => {
                read_until(&mut ws, br#"{"type":"session.created""#).await?;
                let update = r#"{"type":"session.update","session":{"type":"realtime","output_modalities":["audio"],"tools":[{"type":"function","name":"lookup_flight","description":"Look a flight up","parameters":{"type":"object","properties":{"flight":{"type":"string"}}}}]}}"#;
                send(&mut ws, text(update.into())).await?;
                read_until(&mut ws, br#"{"type":"session.updated""#).await?;
            }
            Protocol::Live => {
                let setup = r#"{"setup":{"model":"models/gemini-live-2.5-flash","generationConfig":{"responseModalities":["AUDIO"]},"tools":[{"functionDeclarations":[{"name":"lookup_order","description":"Look an order up","parameters":{"type":"OBJECT","properties":{"order":{"type":"STRING"}}}}]}]}}"#;
                send(&mut ws, text(setup.into())).await?;
                read_until(&mut ws, br#"{"setupComplete""#).await?;
            }
        }
        Ok(Voice {
            ws,
            protocol,
            turns: 0,
            chunk: Bytes::from(chunk),
        })
    }

    /// One turn (two round trips); the messages it took, both ways.
    async fn turn(&mut self) -> Result<usize, String> {
        self.turns += 1;
        let n = self.turns;
        for _ in 0..CHUNKS {
            send(&mut self.ws, Frame::text(self.chunk.clone())).await?;
        }
        let (ask, answered, result, done) = match self.protocol {
            Protocol::Realtime => (
                r#"{"type":"response.create"}"#.to_string(),
                &br#"{"type":"response.done""#[..],
                format!(
                    r#"{{"type":"conversation.item.create","item":{{"type":"function_call_output","call_id":"call_{n}","output":"{{\"flight\":\"TP123\",\"departs\":\"09:05\",\"gate\":\"B12\",\"status\":\"on time\"}}"}}}}"#
                ),
                &br#"{"type":"conversation.item.done""#[..],
            ),
            Protocol::Live => (
                r#"{"realtimeInput":{"audioStreamEnd":true}}"#.to_string(),
                &br#"{"toolCall""#[..],
                format!(
                    r#"{{"toolResponse":{{"functionResponses":[{{"id":"fc_{n}","name":"lookup_order","response":{{"output":{{"status":"delivered","on":"Monday"}}}}}}]}}}}"#
                ),
                &br#"{"serverContent":{"turnComplete":true"#[..],
            ),
        };
        send(&mut self.ws, text(ask)).await?;
        let mut messages = CHUNKS + 2 + read_until(&mut self.ws, answered).await?;
        send(&mut self.ws, text(result)).await?;
        messages += read_until(&mut self.ws, done).await?;
        Ok(messages)
    }
}

async fn send(ws: &mut Socket, frame: Frame) -> Result<(), String> {
    ws.send(frame).await.map_err(|e| format!("sending: {e}"))
}

// ----------------------------------------------------------------- measure

fn median(samples: &mut [f64]) -> f64 {
    quantile(samples, 0.5)
}

fn quantile(samples: &mut [f64], q: f64) -> f64 {
    samples.sort_unstable_by(f64::total_cmp);
    let at = ((samples.len() as f64 * q) as usize).min(samples.len() - 1);
    samples[at]
}

/// A gateway measured: its child and its sockets, one per protocol.
struct Gateway {
    label: String,
    child: GatewayChild,
    sockets: [Voice; 2],
}

/// Sum of a `/metrics` sample's series of `name` whose labels include
/// `labels`.
fn metric(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (n, rest) = series.split_at(series.find('{').unwrap_or(series.len()));
            let all = labels
                .iter()
                .all(|(k, v)| rest.contains(&format!("{k}=\"{v}\"")));
            (n == name && all)
                .then(|| value.parse::<f64>().ok())
                .flatten()
        })
        .sum()
}

/// What a gateway counted, against the turns it carried, printed: every
/// call and result exactly, or nothing at all (a build that relays voice
/// sockets unread); anything else is an error.
async fn check_counts(gw: &Gateway) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..50 {
        let m = admin::get(gw.child.addr, "/metrics").await?;
        let counted: Vec<(f64, f64, usize)> = gw
            .sockets
            .iter()
            .map(|s| {
                let p = [("provider", s.protocol.provider())];
                (
                    metric(&m, "toolwarden_tool_calls_total", &p),
                    metric(&m, "toolwarden_tool_results_total", &p),
                    s.turns,
                )
            })
            .collect();
        if counted
            .iter()
            .all(|(calls, results, turns)| *calls == *turns as f64 && *results == *turns as f64)
        {
            for ((calls, results, _), s) in counted.iter().zip(&gw.sockets) {
                println!(
                    "- {}, {}: {calls} calls and {results} results counted of {} turns: exact.",
                    gw.label,
                    s.protocol.name(),
                    s.turns
                );
            }
            return Ok(());
        }
        if counted.iter().all(|(c, r, _)| *c == 0.0 && *r == 0.0) && last == m {
            println!(
                "- {}: no call or result counted over {} + {} turns: it relays voice sockets unread.",
                gw.label, gw.sockets[0].turns, gw.sockets[1].turns
            );
            return Ok(());
        }
        last = m;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Err(format!(
        "{}: the calls and results counted are not the turns carried",
        gw.label
    ))
}

struct Args {
    turns: usize,
    runs: usize,
    baseline: Option<PathBuf>,
    /// The children record nothing (no database, no JSONL; the workers of
    /// a recording child): reading's cost without the records'.
    unrecorded: bool,
}

async fn run(args: Args) -> Result<(), String> {
    let upstream = start_upstream().await?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut children = vec![("gateway".to_string(), child::sibling_gateway_exe()?)];
    if let Some(b) = args.baseline {
        children.push(("baseline".to_string(), b));
    }
    let mut gateways = Vec::new();
    for (i, (label, exe)) in children.into_iter().enumerate() {
        let db = format!("sqlite://{}", dir.path().join(format!("{i}.db")).display());
        let jsonl = dir.path().join(format!("{i}.jsonl")).display().to_string();
        let up = format!("http://{upstream}");
        let child = if args.unrecorded {
            GatewayChild::spawn_unrecorded(&exe, &up, child::gateway_workers(true))?
        } else {
            GatewayChild::spawn(&exe, &up, &db, &jsonl)?
        };
        let sockets = [
            Voice::open(child.addr, Protocol::Realtime).await?,
            Voice::open(child.addr, Protocol::Live).await?,
        ];
        println!("- {label}: {}", exe.display());
        gateways.push(Gateway {
            label,
            child,
            sockets,
        });
    }
    let mut direct = [
        Voice::open(upstream, Protocol::Realtime).await?,
        Voice::open(upstream, Protocol::Live).await?,
    ];
    let paths = gateways.len() + 1;

    // Warm up; the messages of a turn, per protocol.
    let mut per_turn = [0; 2];
    for _ in 0..50 {
        for (p, s) in direct.iter_mut().enumerate() {
            per_turn[p] = s.turn().await?;
        }
        for gw in &mut gateways {
            for s in &mut gw.sockets {
                s.turn().await?;
            }
        }
    }
    println!();
    println!(
        "A turn: {CHUNKS} client audio messages of {CHUNK_MS} ms, the ask, {DELTAS} upstream audio messages of 100 ms, one tool call and its result: {} messages (Realtime), {} (Live). {} runs of {} rounds; a round is one turn per path (order rotating); medians, added = through − direct within the round.",
        per_turn[0], per_turn[1], args.runs, args.turns
    );

    for protocol in PROTOCOLS {
        let p = protocol as usize;
        println!();
        println!("{}, latency per turn (two round trips):", protocol.name());
        println!();
        let mut header = "| run | direct p50 ms |".to_string();
        for gw in &gateways {
            header += &format!(
                " {0} p50 ms | {0} added p50 ms | {0} added p99 ms |",
                gw.label
            );
        }
        if gateways.len() == 2 {
            header += " gateway added − baseline added, p50 ms |";
        }
        println!("{header}");
        println!("|{}", "---|".repeat(header.matches('|').count() - 1));
        for run in 1..=args.runs {
            let mut times: Vec<Vec<f64>> = vec![Vec::new(); paths];
            let mut added: Vec<Vec<f64>> = vec![Vec::new(); gateways.len()];
            let mut diff = Vec::new();
            for round in 0..args.turns {
                let mut t = vec![0.0; paths];
                for k in 0..paths {
                    let path = (round + k) % paths;
                    let socket = match path {
                        0 => &mut direct[p],
                        g => &mut gateways[g - 1].sockets[p],
                    };
                    let start = Instant::now();
                    socket.turn().await?;
                    t[path] = start.elapsed().as_secs_f64() * 1e3;
                }
                for (i, v) in t.iter().enumerate() {
                    times[i].push(*v);
                }
                for g in 0..gateways.len() {
                    added[g].push(t[g + 1] - t[0]);
                }
                if gateways.len() == 2 {
                    diff.push(t[1] - t[2]);
                }
            }
            let mut row = format!("| {run} | {:.3} |", median(&mut times[0]));
            for g in 0..gateways.len() {
                row += &format!(
                    " {:.3} | {:.3} | {:.3} |",
                    median(&mut times[g + 1]),
                    median(&mut added[g]),
                    quantile(&mut added[g], 0.99)
                );
            }
            if !diff.is_empty() {
                row += &format!(" {:+.3} |", median(&mut diff));
            }
            println!("{row}");
        }
    }

    // CPU: blocks of turns through each gateway, protocols and gateways
    // alternating.
    let block = (args.turns / 4).max(10);
    println!();
    println!(
        "CPU: each gateway process's user + system time over blocks of {block} turns through it, gateways and protocols alternating, 4 blocks of each per run; per message (both ways, the ask and the result included)."
    );
    println!();
    let mut header = "| run |".to_string();
    for gw in &gateways {
        for protocol in PROTOCOLS {
            header += &format!(" {} {} µs/msg |", gw.label, protocol.name());
        }
    }
    if gateways.len() == 2 {
        for protocol in PROTOCOLS {
            header += &format!(" gateway / baseline, {} |", protocol.name());
        }
    }
    println!("{header}");
    println!("|{}", "---|".repeat(header.matches('|').count() - 1));
    for run in 1..=args.runs {
        let mut cpu = vec![[0.0f64; 2]; gateways.len()];
        let mut messages = vec![[0usize; 2]; gateways.len()];
        for _ in 0..4 {
            for protocol in PROTOCOLS {
                let p = protocol as usize;
                for (g, gw) in gateways.iter_mut().enumerate() {
                    let before = gw.child.cpu_secs_fine();
                    for _ in 0..block {
                        messages[g][p] += gw.sockets[p].turn().await?;
                    }
                    cpu[g][p] += gw.child.cpu_secs_fine() - before;
                }
            }
        }
        let per = |g: usize, p: usize| cpu[g][p] * 1e6 / messages[g][p] as f64;
        let mut row = format!("| {run} |");
        for g in 0..gateways.len() {
            row += &format!(" {:.2} | {:.2} |", per(g, 0), per(g, 1));
        }
        if gateways.len() == 2 {
            row += &format!(
                " {:.2} | {:.2} |",
                per(0, 0) / per(1, 0),
                per(0, 1) / per(1, 1)
            );
        }
        println!("{row}");
    }

    println!();
    for gw in &gateways {
        check_counts(gw).await?;
    }
    for gw in gateways {
        drop(gw.sockets);
        gw.child.stop();
    }
    Ok(())
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let mut args = Args {
        turns: 400,
        runs: 3,
        baseline: None,
        unrecorded: false,
    };
    let mut it = raw.iter();
    while let Some(flag) = it.next() {
        if flag == "--unrecorded" {
            args.unrecorded = true;
            continue;
        }
        let value = it.next();
        let number = value.and_then(|v| v.parse::<usize>().ok());
        match (flag.as_str(), number, value) {
            ("--turns", Some(n), _) => args.turns = n.max(10),
            ("--runs", Some(n), _) => args.runs = n.max(1),
            ("--baseline", _, Some(path)) => args.baseline = Some(path.into()),
            _ => {
                eprintln!(
                    "usage: voice-bench [--turns N] [--runs N] [--baseline PATH] [--unrecorded]"
                );
                return ExitCode::from(2);
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("voice-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("voice-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
