//! The state every part of the gateway reads: [`Shared`] (per request, on
//! both HTTP paths and WebSocket turns) and [`AdminState`] (the admin API,
//! the dashboard, alerts). It names the types it holds and nothing that
//! uses it, so handlers depend on it and not on the server or on `admin`.

use std::{fmt, net::SocketAddr, sync::Arc, time::Instant};

use http::{HeaderValue, Response, StatusCode, header};

use crate::{Config, body::GatewayBody, observe::Sinks, recorder::Store};

/// The client's address, put in each request's extensions by the server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PeerAddr(pub SocketAddr);

/// What admin handlers can reach.
#[derive(Debug, Clone)]
pub(crate) struct AdminState {
    /// The store, when a database is configured.
    pub store: Option<Store>,
    /// Recorder and metrics.
    pub sinks: Arc<Sinks>,
    /// The gateway is bound to a loopback address.
    pub loopback_only: bool,
    /// The bearer token required otherwise.
    pub admin_token: Option<String>,
    /// Tools `/api/stats` lists at most (`dashboard_tool_rows`).
    pub tool_rows: usize,
}

/// State shared by every request.
pub(crate) struct Shared {
    /// The validated config.
    pub config: Config,
    /// The address the gateway listens on, as bound (`config.listen`'s
    /// port 0 is the port given): its own credential clients refuse to
    /// reach it (`local::own`).
    pub(crate) addr: std::net::SocketAddr,
    /// Recorder, metrics, names, detector.
    pub sinks: Arc<Sinks>,
    /// The store, when a database is configured.
    pub store: Option<Store>,
    pub(crate) admin: axum::Router,
    /// The runtime that started the gateway: the store and `/api/*` live there.
    pub(crate) control: tokio::runtime::Handle,
    pub(crate) started: Instant,
    /// Client connections open, capped by `max_client_connections`.
    pub(crate) connections: Arc<crate::limits::ConnectionSlots>,
    /// Request bodies held at once, capped by `max_buffered_request_bytes`.
    pub(crate) body_budget: Arc<crate::limits::body_budget::BodyBudget>,
    /// How response bodies are read for their calls: `response_parse_limit`
    /// and the copies, streams' parses and upstream WebSocket messages held
    /// at once, capped by `max_buffered_response_bytes`.
    pub(crate) parse_bounds: crate::observe::ParseBounds,
    /// Client connections per worker.
    pub(crate) balance: Arc<crate::balance::Balance>,
    /// The upstream client with no pool (`upstream::build_unpooled_client`):
    /// an idempotent request goes again on a new connection through it
    /// (`proxy::replay`). Each worker's pooled client is its own.
    pub(crate) unpooled: crate::http_client::HttpClient,
    /// This gateway's hold on its JSONL log (`PATH.lock`), for as long as
    /// anything here may write it.
    pub(crate) _jsonl_claim: Option<toolwarden_store::JsonlClaim>,
}

// === impl Shared ===

impl Shared {
    /// `GET /healthz`.
    pub(crate) fn healthz(&self) -> Response<GatewayBody> {
        let c = self.sinks.recorder.counters();
        let body = serde_json::json!({
            "ok": true,
            "version": env!("CARGO_PKG_VERSION"),
            "uptime_s": self.started.elapsed().as_secs(),
            "workers": self.config.workers,
            "worker_connections": self.balance.open(),
            "database": self.store.as_ref().map(|s| s.backend()),
            "recorder": {
                "events_written": c.events_written,
                "events_dropped": c.events_dropped,
                "write_errors": c.write_errors,
                "backlog": c.backlog,
                "events_aggregated": c.events_aggregated,
                "aggregate_overflow": c.aggregate_overflow,
            },
            "request_bodies": {
                "held_bytes": self.body_budget.held_bytes(),
                "max_bytes": self.config.max_buffered_request_bytes,
                "refused": self.body_budget.refused(),
            },
            "response_copies": {
                "held_bytes": self.parse_bounds.copies.held_bytes(),
                "max_bytes": self.config.max_buffered_response_bytes,
                "refused": self.parse_bounds.copies.refused(),
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
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}
