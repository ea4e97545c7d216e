//! The HTTP endpoints: `/health` (200 `OK`, also during lameduck), `/ready` (200 `OK`; 503
//! `Shutting down` once shutdown starts) and `/metrics` (the exposition text). Plugins that
//! name the same address share one server.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::metrics::Metrics;

/// State the endpoints read.
pub struct HttpState {
    /// Set when shutdown starts.
    pub shutting_down: AtomicBool,
    /// The registry.
    pub metrics: Arc<Metrics>,
}

/// Which endpoints one address serves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Endpoints {
    /// `/health`.
    pub health: bool,
    /// `/ready`.
    pub ready: bool,
    /// `/metrics`.
    pub metrics: bool,
}

/// The router for `endpoints`.
pub fn router(endpoints: Endpoints, state: Arc<HttpState>) -> Router {
    let mut router = Router::new();
    if endpoints.health {
        router = router.route("/health", get(health));
    }
    if endpoints.ready {
        router = router.route("/ready", get(ready));
    }
    if endpoints.metrics {
        router = router.route("/metrics", get(metrics));
    }
    router.with_state(state)
}

async fn health() -> &'static str {
    "OK"
}

async fn ready(State(state): State<Arc<HttpState>>) -> (StatusCode, &'static str) {
    if state.shutting_down.load(Ordering::Relaxed) {
        (StatusCode::SERVICE_UNAVAILABLE, "Shutting down")
    } else {
        (StatusCode::OK, "OK")
    }
}

async fn metrics(State(state): State<Arc<HttpState>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
}
