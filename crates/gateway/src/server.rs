//! The server: [`Gateway::start`] opens the store, starts the recorder,
//! binds, and starts the proxy workers ([`crate::worker`]: one thread and
//! event loop each, HTTP/1.1 and HTTP/2 cleartext with hyper); each request
//! is routed by [`crate::routes::Route::classify`].
//! [`RunningGateway::shutdown`] stops accepting, lets in-flight requests
//! finish within the grace period, then drains the recorder.

use std::{
    fmt,
    net::SocketAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use tokio::sync::{mpsc, oneshot, watch};

pub(crate) use crate::startup::{GatewayError, GatewayErrorKind};
pub(crate) use crate::state::Shared;
use crate::{
    Config,
    admin::{self, AdminState},
    metrics::{Metrics, MetricsObserver},
    observe::Sinks,
    recorder::{Recorder, RecorderOptions, Store},
    worker::{self, Signals},
};

/// Starts gateways.
#[derive(Debug)]
pub struct Gateway;

/// A gateway serving in this process.
pub struct RunningGateway {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    force: watch::Sender<bool>,
    workers: Vec<oneshot::Receiver<()>>,
    connections: mpsc::Receiver<()>,
}

/// Connections the kernel queues before the workers accept them (what
/// `TcpListener::bind` gives).
const LISTEN_BACKLOG: u32 = 1024;

// === impl Gateway ===

impl Gateway {
    /// Bind, open the store (if configured) and check that it takes
    /// writes, listen, start the recorder and serve. The port is bound
    /// first, so a port in use leaves no database behind, and listened on
    /// once the store is ready, so a long migration refuses connections
    /// (a TCP health check sees it down) rather than holding them.
    pub async fn start(config: Config) -> Result<RunningGateway, GatewayError> {
        // Said before anything can fail, so that a failed start shows them.
        for warning in &config.warnings {
            tracing::warn!("{warning}");
        }
        let bind_error = |e: std::io::Error| GatewayError {
            kind: GatewayErrorKind::Bind,
            message: format!("cannot listen on {}: {e}", config.listen),
        };
        let socket = if config.listen.is_ipv4() {
            tokio::net::TcpSocket::new_v4()
        } else {
            tokio::net::TcpSocket::new_v6()
        }
        .map_err(bind_error)?;
        // As `TcpListener::bind` does: a port in TIME_WAIT is no obstacle.
        socket.set_reuseaddr(true).map_err(bind_error)?;
        socket.bind(config.listen).map_err(bind_error)?;
        let store_error = |e: toolwarden_store::StoreError| GatewayError {
            kind: GatewayErrorKind::Store,
            message: e.to_string(),
        };
        let store = match &config.database {
            Some(url) => {
                let store = Store::open_with(url, store_options(&config))
                    .await
                    .map_err(store_error)?;
                store.check_writable().await.map_err(|e| GatewayError {
                    kind: GatewayErrorKind::Store,
                    message: format!("the database does not take writes: {e}"),
                })?;
                Some(store)
            }
            None => None,
        };
        let jsonl_claim = match &config.jsonl {
            Some(log) => Some(log.claim().map_err(|e| GatewayError {
                kind: GatewayErrorKind::Config,
                message: format!("cannot write the JSONL log {}: {e}", log.path.display()),
            })?),
            None => None,
        };
        let detector = config.detector().map_err(|e| GatewayError {
            kind: GatewayErrorKind::Config,
            message: format!("detector settings: {e}"),
        })?;
        // Fails early on a TLS set-up problem; each worker builds its own
        // pooled client.
        let unpooled = crate::upstream::build_unpooled_client(&config)?;
        let listener = socket.listen(LISTEN_BACKLOG).map_err(bind_error)?;
        let addr = listener.local_addr().map_err(|e| GatewayError {
            kind: GatewayErrorKind::Bind,
            message: format!("cannot read the bound address: {e}"),
        })?;
        let listener = listener.into_std().map_err(|e| GatewayError {
            kind: GatewayErrorKind::Bind,
            message: format!("cannot hand the listening socket to the workers: {e}"),
        })?;
        let metrics = Arc::new(Metrics::new());
        let recorder = Recorder::start_with_aggregate(
            store.clone(),
            RecorderOptions {
                queue_capacity: config.memory.record_queue_capacity,
                batch_max: config.memory.record_batch_max,
                flush_interval: config.memory.record_flush,
                jsonl: config.jsonl.clone(),
            },
            config.memory.record_aggregate_keys,
            crate::otel::observer(
                config.otlp.as_ref(),
                MetricsObserver(metrics.clone()),
                |protocol| match protocol {
                    crate::otel::OtlpProtocol::Grpc => crate::upstream::build_http2_client(&config),
                    _ => crate::upstream::build_client(&config),
                },
            )?,
        );
        let sinks = Arc::new(Sinks::bounded(recorder, metrics, detector, &config.memory));
        let admin = admin::admin_router(AdminState {
            store: store.clone(),
            sinks: sinks.clone(),
            loopback_only: config.is_loopback(),
            admin_token: config.admin_token.clone(),
            tool_rows: config.dashboard_tool_rows,
        });
        let connections = crate::limits::ConnectionSlots::new(config.max_client_connections);
        let body_budget =
            crate::limits::body_budget::BodyBudget::new(config.max_buffered_request_bytes);
        let parse_bounds = crate::observe::ParseBounds::new(
            config.response_parse_limit,
            config.max_buffered_response_bytes,
        );
        let (balance, inboxes) = crate::balance::Balance::new(config.workers);
        let shared = Arc::new(Shared {
            config,
            addr,
            sinks,
            store,
            admin,
            control: tokio::runtime::Handle::current(),
            started: Instant::now(),
            connections,
            body_budget,
            parse_bounds,
            balance,
            unpooled,
            _jsonl_claim: jsonl_claim,
        });
        let (shutdown, shutdown_rx) = watch::channel(false);
        crate::alerts::start(
            &shared.config,
            shared.store.as_ref(),
            &shared.sinks,
            addr,
            shutdown_rx.clone(),
        )?;
        crate::retention::start(
            shared.store.as_ref(),
            shared.config.retention,
            shared.sinks.metrics.retention.clone(),
            shutdown_rx.clone(),
        );
        // A renewed certificate is served without a restart.
        if let Some(tls) = shared.config.tls.clone() {
            tokio::spawn(tls.watch(crate::server_tls::RELOAD_CHECK, shutdown_rx.clone()));
        }
        let (force, force_rx) = watch::channel(false);
        let (guard, connections) = mpsc::channel(1);
        let mut workers = Vec::with_capacity(shared.config.workers);
        let balance = shared.balance.clone();
        for (index, inbox) in inboxes.into_iter().enumerate() {
            let listener = listener.try_clone().map_err(|e| GatewayError {
                kind: GatewayErrorKind::Bind,
                message: format!("cannot share the listening socket: {e}"),
            })?;
            let intake = worker::Intake {
                listener,
                balance: balance.clone(),
                inbox,
            };
            let signals = Signals {
                shutdown: shutdown_rx.clone(),
                force: force_rx.clone(),
                guard: guard.clone(),
            };
            match worker::spawn(index, intake, shared.clone(), signals) {
                Ok(exited) => workers.push(exited),
                Err(e) => {
                    // Stop the workers already running.
                    let _ = shutdown.send(true);
                    let _ = force.send(true);
                    return Err(e);
                }
            }
        }
        tracing::info!(%addr, workers = workers.len(), "toolwarden gateway listening");
        Ok(RunningGateway {
            addr,
            shared,
            shutdown,
            force,
            workers,
            connections,
        })
    }
}

/// The store's bounds from the config (issue 14).
fn store_options(config: &Config) -> crate::recorder::StoreOptions {
    crate::recorder::StoreOptions {
        max_connections: config.memory.database_max_connections,
        sqlite_cache_kib: config.memory.database_cache_kib,
        sqlite_writer_cache_kib: config.memory.database_writer_cache_kib,
        sqlite_writer_idle: config.memory.database_writer_idle,
        pg_write_timeout: config.memory.database_write_timeout,
        ..crate::recorder::StoreOptions::default()
    }
}

// === impl RunningGateway ===

impl RunningGateway {
    /// The bound address (useful with port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`, or `https://ADDR` when serving HTTPS.
    pub fn base_url(&self) -> String {
        crate::env::base_url(self.addr, self.shared.config.tls.is_some())
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
    /// period; then they are cut), then drain the recorder (at most
    /// `record_drain`; what it could not write is dropped, counted, logged
    /// and reported). Requests a worker still held when the drain began
    /// (busy past the shutdown's bound) are logged and reported in
    /// `unrecorded_requests`: each request's record is either among the
    /// recorder's events (`events_written` or `events_dropped`) or
    /// counted there, never both.
    pub async fn shutdown(mut self) -> toolwarden_store::ShutdownReport {
        let _ = self.shutdown.send(true);
        let grace = self.shared.config.shutdown_grace;
        if tokio::time::timeout(grace, self.connections.recv())
            .await
            .is_err()
        {
            tracing::warn!(
                ?grace,
                "in-flight requests outlived the grace period; closing them"
            );
            // Before the cut: what it drops is recorded as the shutdown's.
            self.shared.sinks.grace_over.raise();
            let _ = self.force.send(true);
            let _ = tokio::time::timeout(Duration::from_secs(1), self.connections.recv()).await;
        }
        // Each worker lets the records of its last responses reach the
        // recorder before its thread ends.
        join_workers(std::mem::take(&mut self.workers), WORKERS_EXIT).await;
        self.shared.sinks.settle(Duration::from_secs(1)).await;
        // A worker still busy past `WORKERS_EXIT` (the analysis of a very
        // large request body on a loaded machine) holds requests whose
        // records were not made in time: said and counted, not lost unseen.
        // Sealed before the drain: a request whose record was handed
        // before is among the recorder's events (written or dropped), one
        // not handed by now is counted here and never handed afterwards.
        let unrecorded = self.shared.sinks.unrecorded.seal().await;
        let drain = self.shared.config.record_drain;
        let mut report = self.shared.sinks.recorder.shutdown_within(drain).await;
        report.unrecorded_requests = unrecorded;
        if report.unrecorded_requests > 0 {
            tracing::error!(
                requests = report.unrecorded_requests,
                "requests still being read or recorded when the shutdown ended: not recorded \
                 (a worker was busy past the shutdown's bound)"
            );
        }
        if report.abandoned > 0 || !report.unwritten.is_empty() {
            tracing::error!(
                not_written = report.abandoned,
                written = report.events_written,
                unwritten_calls = report.unwritten.calls,
                unwritten_failures = report.unwritten.failures,
                ?drain,
                "recording could not finish within record_drain_ms: events not written were dropped \
                 (their per-tool counts are in the line before)"
            );
        } else if self.shared.store.is_some() || self.shared.config.jsonl.is_some() {
            tracing::info!(
                written = report.events_written,
                dropped = report.events_dropped,
                "recording drained"
            );
        } else {
            // `--database none` and no JSONL: the events went to the
            // metrics only; "written" would say otherwise.
            tracing::debug!(
                observed = report.events_written,
                "events observed for the metrics (no database, no JSONL)"
            );
        }
        settle_exports(&self.shared.sinks.metrics, EXPORTS_SETTLE).await;
        report
    }

    /// Serve until SIGINT or SIGTERM, then [`RunningGateway::shutdown`].
    pub async fn wait(self) {
        shutdown_signal().await;
        tracing::info!("shutting down");
        self.shutdown().await;
    }
}

/// How long a shutdown waits, in all, for the workers' threads to end
/// once their connections are closed (each settles its last records for
/// up to 5 s: `worker`'s `SETTLE`).
const WORKERS_EXIT: Duration = Duration::from_secs(6);

/// Waits for every worker's thread to end, all at once and at most
/// `within` in all (they stop side by side: one after another, each with
/// its own bound, N busy workers held the shutdown N times as long). Says
/// how many were still running.
async fn join_workers(workers: Vec<oneshot::Receiver<()>>, within: Duration) {
    let total = workers.len();
    let mut exiting: futures_util::stream::FuturesUnordered<_> = workers.into_iter().collect();
    let mut exited = 0;
    let joined = tokio::time::timeout(within, async {
        while let Some(_ended) = futures_util::StreamExt::next(&mut exiting).await {
            exited += 1;
        }
    })
    .await;
    if joined.is_err() {
        tracing::warn!(
            running = total - exited,
            ?within,
            "workers still settling their last records when the shutdown went on"
        );
    }
}

/// How long a shutdown waits, after the recorder's drain, for the alert
/// notifications and spans already handed to their exporters (the spans of
/// the last records wait up to one OTLP flush interval, 1 s by default).
const EXPORTS_SETTLE: Duration = Duration::from_secs(2);

/// Waits until the exporters have delivered (or given up on) what they
/// hold, or `within` has passed; what they still hold then is lost with
/// the process, and said so.
async fn settle_exports(metrics: &Metrics, within: Duration) {
    let started = Instant::now();
    let mut pending = metrics.exports_pending();
    while pending != (0, 0) && started.elapsed() < within {
        tokio::time::sleep(Duration::from_millis(10)).await;
        pending = metrics.exports_pending();
    }
    let (notifications, spans) = pending;
    if notifications + spans > 0 {
        tracing::error!(
            notifications,
            spans,
            ?within,
            "alert notifications and spans not delivered when the shutdown ended: lost"
        );
    }
}

impl Drop for RunningGateway {
    /// Dropped without [`RunningGateway::shutdown`]: stop the workers
    /// (connections are closed at once).
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        self.shared.sinks.grace_over.raise();
        let _ = self.force.send(true);
    }
}

impl fmt::Debug for RunningGateway {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunningGateway")
            .field("addr", &self.addr)
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::{sync::oneshot, time::Instant};

    use super::join_workers;
    use crate::observe::{Observation, tests::base};

    /// Each request is in one field of the shutdown's report: one whose
    /// record was handed before the shutdown among the recorder's events,
    /// one a worker still holds (busy past the shutdown's bound, in the
    /// analysis of a very large body) in `unrecorded_requests`, and its
    /// record, made after the report, goes nowhere: it is not also among
    /// the recorder's dropped events. Before, it was in both (and one
    /// handed between the drain and the count in neither: the seal's wait,
    /// `unrecorded`'s tests).
    #[tokio::test]
    async fn each_request_is_in_one_field_of_the_shutdown_report() {
        let config = crate::Config::for_tests("http://127.0.0.1:9");
        let gateway = crate::Gateway::start(config).await.expect("gateway starts");
        let sinks = gateway.shared.sinks.clone();
        // One served before the shutdown: recorded, not reported.
        drop(Observation::new(sinks.clone(), base()));
        sinks.settle(Duration::from_secs(5)).await;
        // One the shutdown outlives: the worker's, as far as the shutdown sees.
        let held = Observation::new(sinks.clone(), base());
        let report = gateway.shutdown().await;
        let fields = (
            report.events_written,
            report.events_dropped,
            report.unrecorded_requests,
        );
        assert_eq!(fields, (1, 0, 1), "{report:?}");
        // It ends after the report: its record goes nowhere.
        drop(held);
        sinks.settle(Duration::from_secs(5)).await;
        let after = sinks.recorder.counters();
        assert_eq!(
            (after.events_written, after.events_dropped),
            (1, 0),
            "the request reported as unrecorded was counted again: {after:?}"
        );
    }

    /// Several workers busy past the bound hold the shutdown for the bound
    /// once, not once each; workers that end return it at once.
    #[tokio::test(start_paused = true)]
    async fn busy_workers_are_waited_for_together_within_one_bound() {
        let within = Duration::from_secs(6);
        let (busy, exits): (Vec<_>, Vec<_>) = (0..4).map(|_| oneshot::channel::<()>()).unzip();
        let started = Instant::now();
        join_workers(exits, within).await;
        assert_eq!(started.elapsed(), within);
        drop(busy);

        // One ends after 2 s, one after 5 s: 5 s in all.
        let (ends, exits): (Vec<_>, Vec<_>) = (0..2).map(|_| oneshot::channel::<()>()).unzip();
        for (end, after) in ends.into_iter().zip([2, 5]) {
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(after)).await;
                let _ = end.send(());
            });
        }
        let started = Instant::now();
        join_workers(exits, within).await;
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }
}
