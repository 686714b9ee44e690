//! The server: [`Gateway::start`] opens the store, starts the recorder,
//! binds, and serves HTTP/1.1 and HTTP/2 (cleartext) with hyper; each
//! request is routed by [`Route::classify`]. [`RunningGateway::shutdown`]
//! stops accepting, lets in-flight requests finish within the grace period,
//! then drains the recorder.

use std::{
    convert::Infallible,
    fmt,
    net::SocketAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use http::{HeaderValue, Request, Response, StatusCode, header};
use hyper::{body::Incoming, service::service_fn};
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::conn::auto,
};
use tokio::{
    net::TcpListener,
    sync::{mpsc, watch},
    task::JoinHandle,
};
use tower_service::Service;

use crate::{
    Config,
    admin::{self, AdminState, PeerAddr},
    body::GatewayBody,
    metrics::{Metrics, MetricsObserver},
    observe::Sinks,
    proxy::{self, upstream::HttpClient},
    recorder::{Recorder, RecorderOptions, Store},
    routes::Route,
};

/// State shared by every request.
pub struct Shared {
    /// The validated config.
    pub config: Config,
    /// The upstream client.
    pub client: HttpClient,
    /// Recorder, metrics, names, detector.
    pub sinks: Arc<Sinks>,
    /// The store, when a database is configured.
    pub store: Option<Store>,
    admin: axum::Router,
    started: Instant,
}

/// Starts gateways.
#[derive(Debug)]
pub struct Gateway;

/// A gateway serving in this process.
pub struct RunningGateway {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    force: watch::Sender<bool>,
    accept: JoinHandle<()>,
    connections: mpsc::Receiver<()>,
}

/// What kind of start-up failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GatewayErrorKind {
    /// The database could not be opened.
    Store,
    /// The listen address could not be bound.
    Bind,
    /// The TLS client could not be set up.
    Tls,
    /// A setting is unusable (e.g. a detector pattern).
    Config,
}

/// The gateway could not start.
#[derive(Debug)]
pub struct GatewayError {
    kind: GatewayErrorKind,
    message: String,
}

// === impl Gateway ===

impl Gateway {
    /// Open the store (if configured), start the recorder, bind and serve.
    pub async fn start(config: Config) -> Result<RunningGateway, GatewayError> {
        let store = match &config.database {
            Some(url) => Some(Store::open(url).await.map_err(|e| GatewayError {
                kind: GatewayErrorKind::Store,
                message: e.to_string(),
            })?),
            None => None,
        };
        let detector = config.detector().map_err(|e| GatewayError {
            kind: GatewayErrorKind::Config,
            message: format!("detector settings: {e}"),
        })?;
        let client = proxy::upstream::build_client(&config)?;
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|e| GatewayError {
                kind: GatewayErrorKind::Bind,
                message: format!("cannot listen on {}: {e}", config.listen),
            })?;
        let addr = listener.local_addr().map_err(|e| GatewayError {
            kind: GatewayErrorKind::Bind,
            message: format!("cannot read the bound address: {e}"),
        })?;
        let metrics = Arc::new(Metrics::new());
        let recorder = Recorder::start(
            store.clone(),
            RecorderOptions {
                queue_capacity: 65_536,
                batch_max: 1024,
                flush_interval: Duration::from_millis(50),
                jsonl: config.jsonl.clone(),
            },
            Arc::new(MetricsObserver(metrics.clone())),
        );
        let sinks = Arc::new(Sinks::new(recorder, metrics, detector));
        let admin = admin::admin_router(AdminState {
            store: store.clone(),
            sinks: sinks.clone(),
            loopback_only: config.is_loopback(),
            admin_token: config.admin_token.clone(),
        });
        let shared = Arc::new(Shared {
            config,
            client,
            sinks,
            store,
            admin,
            started: Instant::now(),
        });
        let (shutdown, shutdown_rx) = watch::channel(false);
        let (force, force_rx) = watch::channel(false);
        let (conn_tx, connections) = mpsc::channel(1);
        let accept = tokio::spawn(accept_loop(
            listener,
            shared.clone(),
            shutdown_rx,
            force_rx,
            conn_tx,
        ));
        tracing::info!(%addr, "toolwarden gateway listening");
        Ok(RunningGateway {
            addr,
            shared,
            shutdown,
            force,
            accept,
            connections,
        })
    }
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
    force: watch::Receiver<bool>,
    conn_tx: mpsc::Sender<()>,
) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new());
    let builder = Arc::new(builder);
    loop {
        let (stream, peer) = tokio::select! {
            _ = shutdown.changed() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: back off briefly.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let builder = builder.clone();
        let mut shutdown = shutdown.clone();
        let mut force = force.clone();
        let guard = conn_tx.clone();
        tokio::spawn(async move {
            let service = service_fn(move |mut req: Request<Incoming>| {
                req.extensions_mut().insert(PeerAddr(peer));
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(dispatch(shared, req).await) }
            });
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = shutdown.changed() => {
                    conn.as_mut().graceful_shutdown();
                    tokio::select! {
                        _ = conn.as_mut() => {}
                        _ = force.changed() => {}
                    }
                }
            }
            drop(guard);
        });
    }
}

async fn dispatch(shared: Arc<Shared>, req: Request<Incoming>) -> Response<GatewayBody> {
    match Route::classify(req.method(), req.uri().path(), req.headers()) {
        Route::Proxy(route) => proxy::handle(shared, req, route).await,
        Route::Healthz => healthz(&shared),
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
            let mut router = shared.admin.clone();
            match router.call(req.map(axum::body::Body::new)).await {
                Ok(response) => response.map(GatewayBody::Admin),
                Err(never) => match never {},
            }
        }
    }
}

fn healthz(shared: &Shared) -> Response<GatewayBody> {
    let c = shared.sinks.recorder.counters();
    let body = serde_json::json!({
        "ok": true,
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_s": shared.started.elapsed().as_secs(),
        "database": shared.store.as_ref().map(|s| s.backend()),
        "recorder": {
            "events_written": c.events_written,
            "events_dropped": c.events_dropped,
            "write_errors": c.write_errors,
            "backlog": c.backlog,
        },
    });
    let mut response = Response::new(GatewayBody::full(body.to_string()));
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

// === impl RunningGateway ===

impl RunningGateway {
    /// The bound address (useful with port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The event recorder.
    pub fn recorder(&self) -> &Recorder {
        &self.shared.sinks.recorder
    }

    /// The metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.shared.sinks.metrics
    }

    /// The store, when a database is configured.
    pub fn store(&self) -> Option<&Store> {
        self.shared.store.as_ref()
    }

    /// Stop accepting, let in-flight requests finish (at most the grace
    /// period; then they are cut), then drain the recorder.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        let _ = (&mut self.accept).await;
        let grace = self.shared.config.shutdown_grace;
        if tokio::time::timeout(grace, self.connections.recv())
            .await
            .is_err()
        {
            tracing::warn!(
                ?grace,
                "in-flight requests outlived the grace period; closing them"
            );
            let _ = self.force.send(true);
            let _ = tokio::time::timeout(Duration::from_secs(1), self.connections.recv()).await;
        }
        // Let observations of just-finished responses reach the recorder.
        self.shared.sinks.settle(Duration::from_secs(5)).await;
        self.shared.sinks.recorder.shutdown().await;
    }

    /// Serve until SIGINT or SIGTERM, then [`RunningGateway::shutdown`].
    pub async fn wait(self) {
        shutdown_signal().await;
        tracing::info!("shutting down");
        self.shutdown().await;
    }
}

impl fmt::Debug for RunningGateway {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunningGateway")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

// === impl GatewayError ===

impl GatewayError {
    pub(crate) fn tls(message: String) -> GatewayError {
        GatewayError {
            kind: GatewayErrorKind::Tls,
            message: format!("cannot set up TLS for upstreams: {message}"),
        }
    }

    /// What failed.
    pub fn kind(&self) -> GatewayErrorKind {
        self.kind
    }
}

impl fmt::Display for GatewayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for GatewayError {}
