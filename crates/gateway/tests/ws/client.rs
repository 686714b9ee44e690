//! WebSocket clients for the tests: `yawc` for whole conversations, and a
//! raw one (hand-made frames) for what a library would not send.

use std::time::Duration;

use bytes::Bytes;
use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};
use yawc::{Frame, OpCode, Options, WebSocket};

/// A test socket.
pub type Socket = WebSocket<TcpStream>;

/// What a socket runs over: TCP, or TLS to a gateway serving HTTPS.
pub trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Stream for S {}

/// Connect to `base` (`http://ADDR`) `/v1/responses` with these headers.
pub async fn connect(base: &str, headers: &[(&str, &str)], deflate: bool) -> Socket {
    try_connect(base, headers, deflate)
        .await
        .unwrap_or_else(|e| panic!("websocket to {base}: {e}"))
}

/// As [`connect`], or the handshake's error.
pub async fn try_connect(
    base: &str,
    headers: &[(&str, &str)],
    deflate: bool,
) -> Result<Socket, yawc::WebSocketError> {
    connect_path(base, "/v1/responses", headers, deflate).await
}

/// A socket to `path` at `base`, or the handshake's error.
pub async fn connect_path(
    base: &str,
    path: &str,
    headers: &[(&str, &str)],
    deflate: bool,
) -> Result<Socket, yawc::WebSocketError> {
    let addr = base.trim_start_matches("http://");
    let url: url::Url = format!("ws://{addr}{path}").parse().expect("url");
    let tcp = TcpStream::connect(addr).await.expect("tcp connect");
    let mut request = yawc::HttpRequest::builder();
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let options = if deflate {
        Options::default().with_compression_level(yawc::CompressionLevel::fast())
    } else {
        Options::default()
    }
    .with_max_payload_read(64 << 20)
    .with_max_read_buffer(64 << 20);
    WebSocket::handshake_with_request(url, tcp, options, request).await
}

/// Send one text message.
pub async fn send_text<S: Stream>(ws: &mut WebSocket<S>, text: impl Into<Bytes>) {
    ws.send(Frame::text(text.into())).await.expect("send");
}

/// The next text message (pings and pongs skipped), or the close frame's
/// code when the socket closes.
pub async fn next<S: Stream>(ws: &mut WebSocket<S>) -> Result<Bytes, Option<u16>> {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), ws.next_frame())
            .await
            .expect("a frame within 10 s");
        match frame {
            Ok(f) if f.opcode() == OpCode::Text => return Ok(f.into_payload()),
            Ok(f) if f.opcode() == OpCode::Close => return Err(f.close_code().map(u16::from)),
            Ok(_) => {}
            Err(_) => return Err(None),
        }
    }
}

/// Send a `response.create` and read its events up to the last one.
pub async fn turn<S: Stream>(ws: &mut WebSocket<S>, body: &Value) -> Vec<Bytes> {
    let mut message = body.clone();
    message["type"] = json!("response.create");
    send_text(ws, message.to_string()).await;
    let mut events = Vec::new();
    loop {
        let event = next(ws).await.expect("an event, not a close");
        let v: Value = serde_json::from_slice(&event).expect("a JSON event");
        events.push(event);
        if matches!(
            v["type"].as_str(),
            Some("response.completed" | "response.failed" | "response.incomplete" | "error")
        ) {
            return events;
        }
    }
}

/// The function calls (`call_id`, `name`) and the response id of a turn.
pub fn calls_of(events: &[Bytes]) -> (Vec<(String, String)>, String) {
    let mut calls = Vec::new();
    let mut id = String::new();
    for e in events {
        let v: Value = serde_json::from_slice(e).expect("json");
        if v["type"] == "response.output_item.done" && v["item"]["type"] == "function_call" {
            calls.push((
                v["item"]["call_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                v["item"]["name"].as_str().unwrap_or_default().to_string(),
            ));
        }
        if v["type"] == "response.completed" {
            id = v["response"]["id"].as_str().unwrap_or_default().to_string();
        }
    }
    (calls, id)
}

/// A raw client: the handshake by hand, then frames as bytes.
pub struct Raw {
    pub tcp: TcpStream,
    /// The `101`'s head.
    pub head: String,
}

impl Raw {
    /// Upgrade with these extra header lines (`"name: value"`); returns the
    /// answer's head and the connection (whatever the status).
    pub async fn connect(base: &str, extra: &[&str]) -> Raw {
        Raw::connect_path(base, "/v1/responses", extra).await
    }

    /// As [`Raw::connect`], to `path`.
    pub async fn connect_path(base: &str, path: &str, extra: &[&str]) -> Raw {
        let addr = base.trim_start_matches("http://");
        let mut tcp = TcpStream::connect(addr).await.expect("tcp connect");
        let mut head = format!(
            "GET {path} HTTP/1.1\r\nhost: {addr}\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nauthorization: Bearer sk-test\r\n"
        );
        for line in extra {
            head.push_str(line);
            head.push_str("\r\n");
        }
        head.push_str("\r\n");
        tcp.write_all(head.as_bytes()).await.expect("write head");
        let mut buf = Vec::new();
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
            let mut byte = [0u8; 1];
            let n = tcp.read(&mut byte).await.expect("read head");
            assert!(
                n > 0,
                "closed before the head: {}",
                String::from_utf8_lossy(&buf)
            );
            buf.push(byte[0]);
        }
        Raw {
            tcp,
            head: String::from_utf8_lossy(&buf).into_owned(),
        }
    }

    /// Write one masked frame: `first` is the FIN/RSV/opcode byte.
    pub async fn frame(&mut self, first: u8, payload: &[u8]) {
        let out = Raw::encode(first, payload);
        self.tcp.write_all(&out).await.expect("write frame");
    }

    /// One masked frame's bytes (a client's): `first` is the FIN/RSV/opcode
    /// byte.
    pub fn encode(first: u8, payload: &[u8]) -> Vec<u8> {
        Raw::encode_with(first, payload, Some([0x11, 0x22, 0x33, 0x44]))
    }

    /// One unmasked frame's bytes (a server's).
    pub fn encode_unmasked(first: u8, payload: &[u8]) -> Vec<u8> {
        Raw::encode_with(first, payload, None)
    }

    fn encode_with(first: u8, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
        let mut out = vec![first];
        let len = payload.len();
        let masked = if mask.is_some() { 0x80 } else { 0 };
        if len < 126 {
            out.push(masked | len as u8);
        } else if len < 65536 {
            out.push(masked | 126);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        } else {
            out.push(masked | 127);
            out.extend_from_slice(&(len as u64).to_be_bytes());
        }
        match mask {
            Some(mask) => {
                out.extend_from_slice(&mask);
                out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
            }
            None => out.extend_from_slice(payload),
        }
        out
    }

    /// Read one uncompressed frame (a server's, or a client's, unmasked):
    /// (opcode byte, payload); `None` at EOF.
    pub async fn read_frame(&mut self) -> Option<(u8, Vec<u8>)> {
        let read = async {
            let mut h = [0u8; 2];
            self.tcp.read_exact(&mut h).await.ok()?;
            let len = match h[1] & 0x7f {
                126 => {
                    let mut l = [0u8; 2];
                    self.tcp.read_exact(&mut l).await.ok()?;
                    u16::from_be_bytes(l) as usize
                }
                127 => {
                    let mut l = [0u8; 8];
                    self.tcp.read_exact(&mut l).await.ok()?;
                    u64::from_be_bytes(l) as usize
                }
                n => n as usize,
            };
            let mut mask = [0u8; 4];
            if h[1] & 0x80 != 0 {
                self.tcp.read_exact(&mut mask).await.ok()?;
            }
            let mut payload = vec![0u8; len];
            self.tcp.read_exact(&mut payload).await.ok()?;
            for (i, b) in payload.iter_mut().enumerate() {
                *b ^= mask[i % 4];
            }
            Some((h[0], payload))
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("a frame or EOF within 10 s")
    }

    /// Frames until a close: its code (`None` for EOF without one).
    pub async fn close_code(&mut self) -> Option<u16> {
        while let Some((op, payload)) = self.read_frame().await {
            if op & 0x0f == 0x8 {
                return (payload.len() >= 2).then(|| u16::from_be_bytes([payload[0], payload[1]]));
            }
        }
        None
    }
}
