//! A TCP proxy in front of the test PostgreSQL that can lose a COMMIT with
//! its connection ([`Cut`]), as a network that breaks at the wrong moment
//! does: the store under test connects through it ([`PgProxy::url`]).
//!
//! It reads the client's side of the wire protocol message by message
//! (the startup packets, then a type byte and a length per message) and
//! knows a COMMIT by its simple `Query` message, which is how sqlx sends it.
//!
//! It can also make its open connections half-open
//! ([`PgProxy::hold_open_connections`]): whatever either side sends on them
//! is held, not passed on, and neither side learns the connection is gone;
//! or make the one that next sends a ping alone (sqlx's ping: a `Sync`
//! message by itself) half-open from that ping on
//! ([`PgProxy::hold_at_next_ping`]).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// How the next COMMIT is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// The COMMIT reaches the server, which commits and answers; the answer
    /// is lost with the connection.
    AnswerLost,
    /// The connection breaks before the COMMIT reaches the server, which
    /// rolls the transaction back.
    CommitLost,
}

/// The proxy: listening until dropped (the tasks end with the test's runtime).
pub struct PgProxy {
    /// The URL given, pointing at the proxy.
    pub url: String,
    state: Arc<State>,
}

#[derive(Debug)]
struct State {
    /// Armed for the next COMMIT on any connection.
    cut: Mutex<Option<Cut>>,
    /// COMMITs lost so far.
    cuts: AtomicU32,
    /// Whether a connection that lost its COMMIT may break (else it is held).
    released: watch::Sender<bool>,
    /// Connections accepted so far, the next one's number.
    accepted: AtomicU64,
    /// Connections numbered below it are half-open: nothing more passes.
    held_below: AtomicU64,
    /// The next connection to send a ping alone goes half-open there.
    hold_next_ping: AtomicBool,
}

/// The startup packet's protocol version 3.0 (SSL and GSS requests and
/// cancel requests have codes of their own and no type byte either).
const PROTOCOL_3: u32 = 196_608;
const COMMIT: &[u8] = b"COMMIT\0";
/// A `Sync` message: what sqlx's ping sends, alone.
const SYNC: &[u8] = b"S\0\0\0\x04";

// === impl PgProxy ===

impl PgProxy {
    /// A proxy to the server of `url` (`postgres://user@host:port/db?…`).
    pub async fn start(url: &str) -> PgProxy {
        let (head, rest) = url.split_once("://").expect("a URL");
        let authority_end = rest.find('/').unwrap_or(rest.len());
        let (authority, path) = rest.split_at(authority_end);
        let (user, server) = match authority.rsplit_once('@') {
            Some((user, server)) => (format!("{user}@"), server.to_owned()),
            None => (String::new(), authority.to_owned()),
        };
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State {
            cut: Mutex::new(None),
            cuts: AtomicU32::new(0),
            released: watch::Sender::new(true),
            accepted: AtomicU64::new(0),
            held_below: AtomicU64::new(0),
            hold_next_ping: AtomicBool::new(false),
        });
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let n = shared.accepted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(relay(client, n, server.clone(), shared.clone()));
            }
        });
        PgProxy {
            url: format!("{head}://{user}127.0.0.1:{port}{path}"),
            state,
        }
    }

    /// Loses the next COMMIT, as `cut` says.
    pub fn cut_next_commit(&self, cut: Cut) {
        self.state.released.send_replace(true);
        *self.state.cut.lock().unwrap() = Some(cut);
    }

    /// Loses the next COMMIT, as `cut` says, once [`PgProxy::release`] is
    /// called: until then the client waits for its answer (and the server,
    /// with [`Cut::CommitLost`], for the COMMIT).
    pub fn cut_next_commit_held(&self, cut: Cut) {
        self.state.released.send_replace(false);
        *self.state.cut.lock().unwrap() = Some(cut);
    }

    /// Lets a held connection break.
    pub fn release(&self) {
        self.state.released.send_replace(true);
    }

    /// Makes every connection open now half-open: from now on nothing
    /// either side sends on it passes, and neither side is told. Later
    /// connections are relayed as before.
    pub fn hold_open_connections(&self) {
        let accepted = self.state.accepted.load(Ordering::SeqCst);
        self.state.held_below.store(accepted, Ordering::SeqCst);
    }

    /// Makes the next connection that sends a ping alone (a `Sync`
    /// message by itself, as sqlx's ping is) half-open from that ping on:
    /// it is not passed on, and nothing more passes either way.
    pub fn hold_at_next_ping(&self) {
        self.state.hold_next_ping.store(true, Ordering::SeqCst);
    }

    /// COMMITs lost so far.
    pub fn cuts(&self) -> u32 {
        self.state.cuts.load(Ordering::SeqCst)
    }
}

/// One client connection (the `number`th accepted), relayed to a
/// connection of its own to the server.
async fn relay(client: TcpStream, number: u64, server: String, state: Arc<State>) {
    let Ok(upstream) = TcpStream::connect(&server).await else {
        return;
    };
    let (mut client_rd, mut client_wr) = client.into_split();
    let (mut server_rd, mut server_wr) = upstream.into_split();
    let answer_lost = Arc::new(AtomicBool::new(false));
    let lose_answer = answer_lost.clone();
    let (released, released_up) = (state.released.subscribe(), state.released.subscribe());
    let held_down = state.clone();
    // Half-open: what was read is neither passed on nor answered, and the
    // connection stays open.
    let held = Arc::new(AtomicBool::new(false));
    let held_here = held.clone();
    let half_open = move |state: &State, held: &AtomicBool| {
        held.load(Ordering::SeqCst) || number < state.held_below.load(Ordering::SeqCst)
    };
    // Client to server, message by message. Returning drops both halves it
    // holds: the server reads the end of its input after what was sent.
    let up = async move {
        let mut buf = Vec::new();
        let mut startup = true;
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let Ok(n) = client_rd.read(&mut chunk).await else {
                return;
            };
            if n == 0 {
                return;
            }
            if !startup
                && buf.is_empty()
                && &chunk[..n] == SYNC
                && state.hold_next_ping.swap(false, Ordering::SeqCst)
            {
                held_here.store(true, Ordering::SeqCst);
            }
            if half_open(&state, &held_here) {
                return std::future::pending().await;
            }
            buf.extend_from_slice(&chunk[..n]);
            let mut out = Vec::new();
            while let Some(len) = message_len(&buf, startup) {
                let msg: Vec<u8> = buf.drain(..len).collect();
                if startup {
                    startup = be32(&msg[4..8]) != PROTOCOL_3;
                } else if msg[0] == b'Q' && &msg[5..] == COMMIT {
                    let cut = state.cut.lock().unwrap().take();
                    if let Some(cut) = cut {
                        if cut == Cut::AnswerLost {
                            lose_answer.store(true, Ordering::SeqCst);
                            out.extend_from_slice(&msg);
                        }
                        let _ = server_wr.write_all(&out).await;
                        state.cuts.fetch_add(1, Ordering::SeqCst);
                        let _ = released_up.clone().wait_for(|r| *r).await;
                        return;
                    }
                }
                out.extend_from_slice(&msg);
            }
            if !out.is_empty() && server_wr.write_all(&out).await.is_err() {
                return;
            }
        }
    };
    // Server to client; once a COMMIT's answer is to be lost, its first
    // bytes end the connection instead (the client sends nothing after a
    // COMMIT until it is answered, so they are the answer).
    let down = async move {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let n = match server_rd.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if half_open(&held_down, &held) {
                return std::future::pending().await;
            }
            if answer_lost.load(Ordering::SeqCst) {
                let _ = released.clone().wait_for(|r| *r).await;
                return;
            }
            if client_wr.write_all(&chunk[..n]).await.is_err() {
                return;
            }
        }
    };
    tokio::join!(up, down);
}

/// The length of the first whole message in `buf`, if it holds one.
fn message_len(buf: &[u8], startup: bool) -> Option<usize> {
    let len = if startup {
        be32(buf.get(..4)?) as usize
    } else {
        1 + be32(buf.get(1..5)?) as usize
    };
    (buf.len() >= len).then_some(len)
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b.try_into().expect("4 bytes"))
}
