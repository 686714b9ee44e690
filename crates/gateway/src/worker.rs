//! Proxy workers, one thread each (thread-per-core, as nginx and pingora
//! do): every worker runs its own single-threaded tokio runtime, accepts
//! from the shared listening socket (handing a connection to a less loaded
//! worker, [`crate::balance`]), serves its connections to the end and
//! keeps its own upstream connection pool. A request therefore never hops
//! between threads on its way through the gateway: the client connection,
//! the upstream connection and the observation of the response are all
//! polled by the same thread, which is what keeps the per-request CPU low
//! (cross-thread wake-ups cost more than the proxying itself).
//!
//! The rest — the recorder, the store and `/api/*` — runs on the runtime
//! that called [`crate::Gateway::start`] (the control runtime); an admin
//! request is handed to it.

use std::{convert::Infallible, net::SocketAddr, sync::Arc, time::Duration};

use http::{HeaderValue, Request, Response, StatusCode, header};
use hyper::{body::Incoming, service::service_fn};
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    server::conn::auto,
};
use tokio::{
    net::TcpListener,
    sync::{mpsc, oneshot, watch},
    task::JoinSet,
};
use tower_service::Service;

use crate::{
    balance::{Balance, Handed, Load, Placement},
    body::GatewayBody,
    client_conn::ClientConn,
    client_io::ClientIo,
    h1::{self, pool::Pool},
    metrics::events::TlsHandshakeFailed,
    proxy,
    routes::Route,
    shutdown::raised,
    startup::GatewayError,
    state::{PeerAddr, Shared},
    stream_stall::StreamExec,
    upstream::HttpClient,
    ws,
};

/// How long a stopping worker waits for the records of its last responses.
const SETTLE: Duration = Duration::from_secs(5);

/// Period of the timer that is always due before hyper's header-read timers.
const HEARTBEAT: Duration = Duration::from_secs(10);

/// What a worker's connections share: its upstream clients and hyper's
/// connection builder.
struct Local {
    /// hyper-util's pooled client (requests hyper serves).
    client: HttpClient,
    /// The fast path's upstream connections.
    pool: Arc<Pool>,
    builder: auto::Builder<StreamExec>,
}

/// What a worker needs to know about stopping.
pub(crate) struct Signals {
    /// `true`: stop accepting, finish in-flight requests.
    pub shutdown: watch::Receiver<bool>,
    /// `true`: the grace period is over, close what is left.
    pub force: watch::Receiver<bool>,
    /// Held by the worker and each of its connections; the gateway knows
    /// every connection is closed when all clones are dropped.
    pub guard: mpsc::Sender<()>,
}

/// Where a worker's connections come from.
pub(crate) struct Intake {
    /// The shared listening socket.
    pub listener: std::net::TcpListener,
    /// Connections per worker.
    pub balance: Arc<Balance>,
    /// Connections other workers accepted for this one.
    pub inbox: mpsc::Receiver<Handed>,
}

/// Start worker `index` on its own thread; the receiver completes when the
/// thread has finished (connections closed, records handed to the recorder).
pub(crate) fn spawn(
    index: usize,
    intake: Intake,
    shared: Arc<Shared>,
    signals: Signals,
) -> Result<oneshot::Receiver<()>, GatewayError> {
    let client = crate::upstream::build_client(&shared.config)?;
    let pool = Arc::new(Pool::new(&shared.config)?);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| GatewayError::worker(format!("cannot start a worker runtime: {e}")))?;
    let (exited, on_exit) = oneshot::channel();
    std::thread::Builder::new()
        .name(format!("toolwarden-w{index}"))
        .spawn(move || {
            runtime.block_on(serve(index, intake, shared, client, pool, signals));
            let _ = exited.send(());
        })
        .map_err(|e| GatewayError::worker(format!("cannot start a worker thread: {e}")))?;
    Ok(on_exit)
}

async fn serve(
    index: usize,
    intake: Intake,
    shared: Arc<Shared>,
    client: HttpClient,
    pool: Arc<Pool>,
    signals: Signals,
) {
    let Signals {
        mut shutdown,
        force,
        guard,
    } = signals;
    let Intake {
        listener,
        balance,
        mut inbox,
    } = intake;
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(e) => {
            tracing::error!(error = %e, "worker cannot use the listening socket");
            return;
        }
    };
    // hyper arms a 30 s header-read timer for every request head it waits
    // for. When that is the earliest timer the event loop knows of, arming
    // it wakes the loop (an eventfd write and an extra epoll round) to
    // shorten its sleep: once per request. A timer that is always due
    // sooner keeps those from ever being the earliest. On each beat it
    // closes the fast path's idle upstream connections that are too old
    // or that the upstream closed.
    let sweep = pool.clone();
    let heartbeat = tokio::spawn(async move {
        loop {
            tokio::time::sleep(HEARTBEAT).await;
            sweep.sweep();
        }
    });
    // Each HTTP/2 stream is its own task, ended when its client leaves a
    // chunk unread for `client_body_timeout` (`stream_stall`).
    let mut builder = auto::Builder::new(StreamExec::new(shared.config.client_body_timeout));
    // Header names keep their case both ways (the upstream client keeps
    // it too: `upstream::client`), as on the fast path; a head longer than
    // the fast path takes is refused with 431 here too.
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(shared.config.client_head_timeout)
        .preserve_header_case(true)
        .max_buf_size(crate::h1::head::MAX_HEAD);
    // An HTTP/2 client that stops answering is let go: pinged every
    // `client_head_timeout`, closed when a ping goes unanswered as long.
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(shared.config.client_head_timeout)
        .keep_alive_timeout(shared.config.client_head_timeout);
    let local = Arc::new(Local {
        client,
        pool,
        builder,
    });
    let mut connections = JoinSet::new();
    // Held by each relayed WebSocket (they outlive their connection's task).
    let (sockets, mut sockets_closed) = mpsc::channel::<()>(1);
    loop {
        let kept = tokio::select! {
            _ = raised(&mut shutdown) => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            Some(handed) = inbox.recv() => match tokio::net::TcpStream::from_std(handed.stream) {
                Ok(stream) => Kept { stream, peer: handed.peer, slot: handed.slot, load: handed.load },
                Err(e) => {
                    tracing::warn!(error = %e, "cannot take over a connection");
                    continue;
                }
            },
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let Some(slot) = shared.connections.try_take() else {
                        let slots = shared.connections.clone();
                        let metrics = shared.sinks.metrics.clone();
                        let tls = shared.config.tls.clone().map(|tls| {
                            (tls, move |reason| metrics.emit(TlsHandshakeFailed { reason }))
                        });
                        connections.spawn(async move { slots.refuse(stream, tls).await });
                        continue;
                    };
                    crate::sockets::tune(&stream);
                    match place(&balance, index, stream, peer, slot) {
                        Some(kept) => kept,
                        None => continue,
                    }
                }
                Err(e) => {
                    // Out of file descriptors and the like: back off briefly.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let Kept {
            stream,
            peer,
            slot,
            load,
        } = kept;
        // Its places in the counts, held by the connection's task and by
        // each WebSocket relayed from it (which outlives the task): given
        // back when the last of them ends.
        let places: Arc<dyn std::any::Any + Send + Sync> = Arc::new((slot, load));
        let conn = connection(
            stream,
            peer,
            shared.clone(),
            local.clone(),
            (shutdown.clone(), force.clone()),
            [guard.clone(), sockets.clone()],
            places.clone(),
        );
        connections.spawn(async move {
            conn.await;
            drop(places);
        });
    }
    heartbeat.abort();
    drop(listener);
    // Connections handed over and not taken yet close with the inbox.
    drop(inbox);
    drop(guard);
    while connections.join_next().await.is_some() {}
    // WebSockets close themselves (1001) when the gateway stops: their
    // last turns, their close handshakes.
    drop(sockets);
    let _ = tokio::time::timeout(SETTLE, sockets_closed.recv()).await;
    // Responses that finished on this thread are recorded by tasks on this
    // runtime: let them run before the runtime goes away.
    shared.sinks.settle(SETTLE).await;
}

/// A connection this worker serves, with its places in the counts (both
/// given back when it ends).
struct Kept {
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    /// Its place under `max_client_connections`.
    slot: crate::limits::Slot,
    /// Its place in this worker's count.
    load: Load,
}

/// A connection this worker accepted: kept (returned) or handed to a less
/// loaded worker (`None`). One that cannot be handed over is kept.
fn place(
    balance: &Arc<Balance>,
    index: usize,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    slot: crate::limits::Slot,
) -> Option<Kept> {
    let load = match balance.place(index) {
        Placement::Keep(load) => {
            return Some(Kept {
                stream,
                peer,
                slot,
                load,
            });
        }
        Placement::Hand(load) => load,
    };
    let stream = match stream.into_std() {
        Ok(stream) => stream,
        Err(e) => {
            tracing::warn!(error = %e, "cannot hand over a connection");
            return None;
        }
    };
    let handed = Handed {
        stream,
        peer,
        slot,
        load,
    };
    let Handed {
        stream, peer, slot, ..
    } = balance.hand(handed).err()?;
    // The other worker's inbox is full or it has stopped: serve it here.
    let stream = tokio::net::TcpStream::from_std(stream).ok()?;
    Some(Kept {
        stream,
        peer,
        slot,
        load: balance.count(index),
    })
}

async fn connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    local: Arc<Local>,
    (mut shutdown, mut force): (watch::Receiver<bool>, watch::Receiver<bool>),
    [guard, socket_guard]: [mpsc::Sender<()>; 2],
    places: Arc<dyn std::any::Any + Send + Sync>,
) {
    // HTTPS: the handshake first, under the head's deadline. No request is
    // in progress yet: the gateway stopping closes the connection.
    let stream = match &shared.config.tls {
        None => ClientIo::Plain(stream),
        Some(tls) => tokio::select! {
            done = tls.accept(stream, shared.config.client_head_timeout, |reason| {
                shared.sinks.metrics.emit(TlsHandshakeFailed { reason });
            }) => match done {
                Ok(tls) => ClientIo::Tls(Box::new(tls)),
                Err(_) => return drop(guard),
            },
            _ = raised(&mut shutdown) => return drop(guard),
            _ = raised(&mut force) => return drop(guard),
        },
    };
    // The fast path first; hyper takes over what it does not serve (and a
    // connection that chose HTTP/2 by ALPN, whose preface it hands over).
    let io = tokio::select! {
        ended = h1::serve(stream, &shared, &local.pool, &mut shutdown) => match ended {
            h1::Ended::Closed => return drop(guard),
            h1::Ended::Fallback(io) => io,
        },
        _ = raised(&mut force) => return drop(guard),
    };
    let client = local.client.clone();
    let pool = local.pool.clone();
    let head_timeout = shared.config.client_head_timeout;
    // What the connection has sent, for the idle rule below, and whether
    // its write limit cut it off, for its HTTP/2 streams.
    let activity = Arc::new(ClientConn::default());
    let seen = activity.clone();
    // A client that stops reading its answers is cut off.
    let io = crate::write_limit::WriteLimit::marking(
        io,
        shared.config.client_body_timeout,
        activity.clone(),
    );
    let stopping = ws::Stopping {
        shutdown: shutdown.clone(),
        force: force.clone(),
        guards: [guard.clone(), socket_guard],
        places,
    };
    let service = service_fn(move |mut req: Request<Incoming>| {
        seen.request(req.version());
        if req.version() == http::Version::HTTP_2 {
            // hyper spawns the request's stream task next: it is this
            // connection's (`stream_stall`).
            crate::stream_stall::next_stream_on(&seen);
        }
        req.extensions_mut().insert(PeerAddr(peer));
        let shared = shared.clone();
        let client = client.clone();
        let pool = pool.clone();
        let stopping = stopping.clone();
        async move {
            // DNS rebinding: a host this gateway does not answer, refused
            // on every route before anything reads or forwards it.
            if let Some(refused) =
                crate::rebinding::refusal(&shared, req.method(), req.uri(), req.headers())
            {
                return Ok::<_, Infallible>(refused.map(GatewayBody::on_stream));
            }
            // A WebSocket: WebSocket mode on a Responses path (read), any
            // other to a provider relayed unread.
            let upstreams = &shared.config.upstreams;
            if let Some(route) =
                ws::upgrade_route(req.method(), req.uri(), req.headers(), upstreams)
            {
                return Ok::<_, Infallible>(
                    ws::handle(shared, pool, client, req, route, stopping)
                        .await
                        .map(GatewayBody::on_stream),
                );
            }
            Ok::<_, Infallible>(
                dispatch(shared, client, req)
                    .await
                    .map(GatewayBody::on_stream),
            )
        }
    });
    // Made before the connection, so dropped after it: a connection that
    // a write to its client ended (it read nothing for
    // `client_body_timeout`) is dropped in it, and the observations of
    // the responses dropped with it record that (`write_limit::cut`); an
    // HTTP/2 connection's streams end in their own tasks, each under the
    // same cut (`stream_stall`).
    let cut = crate::write_limit::CutScope::default();
    let conn = local
        .builder
        .serve_connection_with_upgrades(TokioIo::new(io), service);
    tokio::pin!(conn);
    // hyper's HTTP/1 reads each head under `header_read_timeout`, but
    // nothing times an HTTP/2 connection's preface, its settings or its
    // first request, nor the version sniff before either: a connection
    // that sends `PRI * HTTP/2.0` and then nothing held its socket and its
    // place under `max_client_connections` for good. Whatever the
    // protocol, a connection that has not sent a whole request within
    // `client_head_timeout` is closed. And nothing of hyper's closes an
    // idle HTTP/2 connection whose client answers the pings: one that has
    // started no request for `client_head_timeout` (the longest idle wait
    // of a kept-alive HTTP/1 connection too) is sent GOAWAY, which lets
    // the streams still open finish and then closes it.
    let check = tokio::time::sleep(head_timeout);
    tokio::pin!(check);
    let mut last = 0;
    let mut checking = true;
    loop {
        tokio::select! {
            _ = conn.as_mut() => {
                if let Some(limit) = activity.cut() {
                    cut.enter(limit);
                }
                break;
            }
            _ = raised(&mut shutdown) => {
                conn.as_mut().graceful_shutdown();
                tokio::select! {
                    _ = conn.as_mut() => {}
                    _ = raised(&mut force) => {}
                }
                break;
            }
            _ = &mut check, if checking => {
                let (requests, http2) = activity.snapshot();
                if requests == 0 {
                    tracing::debug!(%peer, "no request within client_head_timeout: connection closed");
                    break;
                }
                if !http2 {
                    // HTTP/1: hyper's head timeout covers the idle waits.
                    checking = false;
                } else if requests == last {
                    tracing::debug!(%peer, "HTTP/2 connection idle for client_head_timeout: GOAWAY");
                    conn.as_mut().graceful_shutdown();
                    checking = false;
                } else {
                    last = requests;
                    check.as_mut().reset(tokio::time::Instant::now() + head_timeout);
                }
            }
        }
    }
    drop(guard);
}

async fn dispatch(
    shared: Arc<Shared>,
    client: HttpClient,
    req: Request<Incoming>,
) -> Response<GatewayBody> {
    match Route::classify(
        req.method(),
        req.uri().path(),
        req.uri().query(),
        req.headers(),
    ) {
        Route::Proxy(route) => proxy::handle(shared, &client, req, route).await,
        Route::Healthz => shared.healthz(),
        Route::Metrics => {
            let text = shared
                .sinks
                .metrics
                .render(shared.sinks.recorder.counters());
            let mut response = Response::new(GatewayBody::full(text));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            response
        }
        Route::Admin => {
            // The store belongs to the control runtime: query it there.
            let mut router = shared.admin.clone();
            let req = req.map(axum::body::Body::new);
            let answer = shared
                .control
                .spawn(async move { router.call(req).await })
                .await;
            match answer {
                Ok(Ok(response)) => response.map(GatewayBody::Admin),
                Ok(Err(never)) => match never {},
                Err(e) => {
                    tracing::error!(error = %e, "admin request failed");
                    let mut response = Response::new(GatewayBody::full("internal error"));
                    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                    response
                }
            }
        }
    }
}
