//! The request body on the fast path: read whole after its head, as it
//! arrives (bounded by `max_request_bytes`, `client_body_timeout_ms` and
//! the bodies held at once, `max_buffered_request_bytes`), and a refused
//! body's rest read and dropped after the answer ([`linger`]).

use std::sync::Arc;

use bytes::BytesMut;
use tokio::{
    io::{AsyncRead, AsyncReadExt},
    sync::watch,
    time::{Instant, timeout_at},
};

use super::{READ_CHUNK, exchange, head::RequestHead};
use crate::{
    client_io::ClientIo,
    errors::{ProxyError, ProxyErrorKind},
    limits::body_budget::{Held, NoRoom},
    observe::Observation,
    pipeline,
    shutdown::raised,
    state::Shared,
};

/// Read the whole body after the head, with what it holds of
/// `max_buffered_request_bytes`; `None` when the connection must close
/// (body too large: answered 413; no room for it: 503; not sent whole in
/// time, or cut: 400). A refused body's rest is read and dropped until the
/// gateway stops, at the latest.
pub(super) async fn read_body(
    client: &mut ClientIo,
    buf: &mut BytesMut,
    shared: &Arc<Shared>,
    head: &RequestHead,
    at_ms: i64,
    shutdown: &mut watch::Receiver<bool>,
) -> Option<(bytes::Bytes, Held)> {
    let fail = |err: &ProxyError| {
        let base =
            pipeline::request_base(shared, &head.route, &head.path, head.client.clone(), at_ms);
        Observation::new(shared.sinks.clone(), base).fail(err);
    };
    let host = head
        .route
        .provider
        .upstream(&shared.config.upstreams)
        .map_or("", |u| u.host());
    let limit = shared.config.client_body_timeout;
    let deadline = Instant::now() + limit;
    let body_len = match usize::try_from(head.body_len) {
        Ok(n) if n <= shared.config.max_request_bytes => n,
        _ => {
            let err = pipeline::too_large(shared, host);
            fail(&err);
            if exchange::reply_error(client, head.route.provider, &err, true, limit)
                .await
                .is_ok()
            {
                linger(client, deadline, shutdown).await;
            }
            return None;
        }
    };
    let total = head.len + body_len;
    let mut held = shared.body_budget.hold();
    if let Err(stop) = read_to(client, buf, total, deadline, &mut held).await {
        drop(held);
        // The client may be sending the rest: after the answer, it is
        // read and dropped.
        let sending = matches!(stop, BodyStop::NoRoom(_));
        let err = stop.into_error(shared, host);
        fail(&err);
        // Answered as hyper's path answers it, for a client still
        // reading; then closed.
        let replied = exchange::reply_error(client, head.route.provider, &err, true, limit).await;
        if sending && replied.is_ok() {
            linger(client, deadline, shutdown).await;
        }
        return None;
    }
    let _ = buf.split_to(head.len);
    Some((buf.split_to(body_len).freeze(), held))
}

/// Most of a body reserved ahead of its bytes.
const BODY_RESERVE: usize = 64 * 1024;

/// Why a body did not arrive whole.
#[derive(Debug)]
enum BodyStop {
    /// Not by the deadline (`client_body_timeout_ms`).
    Timeout,
    /// The read failed.
    Failed(std::io::Error),
    /// The client closed its side first.
    Closed,
    /// `max_buffered_request_bytes` of bodies are held.
    NoRoom(NoRoom),
}

impl BodyStop {
    /// What the client is answered (400 naming the setting; 503 for no
    /// room).
    fn into_error(self, shared: &Shared, host: &str) -> ProxyError {
        let detail = match self {
            BodyStop::NoRoom(no_room) => return pipeline::overloaded(host, no_room),
            BodyStop::Timeout => format!(
                "the client did not send the whole body within client_body_timeout_ms ({} ms)",
                shared.config.client_body_timeout.as_millis()
            ),
            BodyStop::Failed(e) => format!("reading the request body failed: {e}"),
            BodyStop::Closed => "the client closed the connection before the whole body".into(),
        };
        ProxyError::new(ProxyErrorKind::ClientBody, host, detail)
    }
}

/// Read from `client` until `buf` holds `total` bytes, by `deadline`. The
/// buffer grows as the bytes arrive (doubling), at most [`BODY_RESERVE`]
/// ahead of them: a `content-length` is only the client's word, and
/// reserving it whole before the body came let a client that announced a
/// body of `max_request_bytes` and sent none of it make the gateway
/// allocate that much, per connection. What it reserves is `held` under
/// `max_buffered_request_bytes` first.
async fn read_to(
    client: &mut (impl AsyncRead + Unpin),
    buf: &mut BytesMut,
    total: usize,
    deadline: Instant,
    held: &mut Held,
) -> Result<(), BodyStop> {
    while buf.len() < total {
        let ahead = (total - buf.len()).min(BODY_RESERVE);
        held.cover(buf.len() + ahead).map_err(BodyStop::NoRoom)?;
        buf.reserve(ahead);
        match timeout_at(deadline, client.read_buf(buf)).await {
            Ok(Ok(n)) if n > 0 => {}
            Ok(Ok(_)) => return Err(BodyStop::Closed),
            Ok(Err(e)) => return Err(BodyStop::Failed(e)),
            Err(_) => return Err(BodyStop::Timeout),
        }
    }
    held.cover(total).map_err(BodyStop::NoRoom)
}

/// After an answer that refused a body the client may still be sending
/// (too large, no room): the write side is shut and what the client sends
/// is read and dropped until it closes, by `deadline`, as nginx's
/// lingering close. Closed with bytes unread, the socket is reset, and a
/// client still writing its body (Python's `http.client`, the SDKs built
/// on it or on `httpx`) sees the reset, not the answer, and may send the
/// whole body again. The gateway stopping ends it: it is no request in
/// flight.
async fn linger(client: &mut ClientIo, deadline: Instant, stop: &mut watch::Receiver<bool>) {
    use tokio::io::AsyncWriteExt;
    if client.shutdown().await.is_err() {
        return;
    }
    let mut scratch = vec![0u8; READ_CHUNK];
    let draining = async {
        while let Ok(Ok(n)) = timeout_at(deadline, client.read(&mut scratch)).await {
            if n == 0 {
                break;
            }
        }
    };
    tokio::select! {
        () = draining => {}
        () = raised(stop) => {}
    }
}

#[cfg(test)]
mod tests {
    use tokio::{io::AsyncWriteExt, net::TcpStream};

    use super::*;
    use crate::limits::body_budget::BodyBudget;

    /// A body announced large and sent in part holds about what was sent,
    /// not what was announced; sent whole, it is read whole.
    #[tokio::test]
    async fn a_body_is_reserved_as_it_arrives() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut sender = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (mut client, _) = listener.accept().await.unwrap();
        let total = 256 << 20;
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        let mut buf = BytesMut::new();
        let budget = BodyBudget::new(1 << 30);
        let mut held = budget.hold();
        sender.write_all(&[b'x'; 100]).await.unwrap();
        let reading = read_to(&mut client, &mut buf, total, deadline, &mut held);
        let waited = tokio::time::timeout(std::time::Duration::from_millis(200), reading).await;
        assert!(waited.is_err(), "still waiting for the rest");
        assert_eq!(&buf[..], &[b'x'; 100][..]);
        assert!(buf.capacity() <= 2 * BODY_RESERVE, "{}", buf.capacity());
        assert!(budget.held_bytes() <= 2 * BODY_RESERVE, "held as it came");

        let rest: Vec<u8> = (0..(3 << 20) - 100).map(|i| (i % 251) as u8).collect();
        let total = 3 << 20;
        let writing = async {
            sender.write_all(&rest).await.unwrap();
            sender.write_all(b"next").await.unwrap();
        };
        let reading = read_to(&mut client, &mut buf, total, deadline, &mut held);
        let (read, ()) = tokio::join!(reading, writing);
        read.unwrap();
        assert_eq!(budget.held_bytes(), total, "the whole body held");
        drop(held);
        assert_eq!(budget.held_bytes(), 0);
        assert!(buf.len() >= total);
        assert_eq!(&buf[100..total], &rest[..]);
        assert!(
            buf.capacity() < 2 * total + BODY_RESERVE,
            "{}",
            buf.capacity()
        );
        drop(sender);
        let mut buf = BytesMut::new();
        assert!(matches!(
            read_to(
                &mut client,
                &mut buf,
                total + 10,
                deadline,
                &mut budget.hold()
            )
            .await,
            Err(BodyStop::Closed)
        ));
    }

    /// A body that would take the budget past `max_buffered_request_bytes`
    /// stops as it reaches it, holding no more than the budget, whatever
    /// the body announced; its holding is given back.
    #[tokio::test]
    async fn a_body_past_the_budget_stops_at_it() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut sender = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (mut client, _) = listener.accept().await.unwrap();
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        let budget = BodyBudget::new(1 << 20);
        let mut other = budget.hold();
        other.cover(512 << 10).expect("room");
        let body = vec![b'y'; 1 << 20];
        let writing = async {
            // The reader stops early: the rest may not be read.
            let _ = sender.write_all(&body).await;
        };
        let mut buf = BytesMut::new();
        let mut held = budget.hold();
        let reading = read_to(&mut client, &mut buf, 1 << 20, deadline, &mut held);
        let (read, ()) = tokio::join!(reading, writing);
        assert!(
            matches!(read, Err(BodyStop::NoRoom(NoRoom { max })) if max == 1 << 20),
            "{read:?}"
        );
        assert!(buf.capacity() <= 512 << 10, "{}", buf.capacity());
        assert_eq!(budget.refused(), 1);
        drop((held, other));
        assert_eq!(budget.held_bytes(), 0);
    }
}
