//! `/healthz` and `/metrics` over HTTP.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::registry::Registry;

use crate::metrics::Metrics;

/// What the endpoints read.
#[derive(Debug)]
pub struct Shared {
    /// The metrics.
    pub metrics: Metrics,
    /// Their registry.
    pub registry: Registry,
    /// Whether nginx runs a configuration.
    pub healthy: AtomicBool,
    /// nginx's control socket, for request counts.
    pub control_socket: std::path::PathBuf,
}

/// The router: `/healthz` (200 once nginx serves, else 503) and `/metrics`.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .with_state(shared)
}

async fn healthz(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    if shared.healthy.load(Ordering::Relaxed) {
        (StatusCode::OK, "ok\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "nginx is not serving\n")
    }
}

async fn metrics(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    if let Ok(counts) = crate::control::request_counts(&shared.control_socket).await {
        shared.metrics.set_requests(counts);
    }
    let mut text = String::new();
    match prometheus_client::encoding::text::encode(&mut text, &shared.registry) {
        Ok(()) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            text,
        ),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            [(header::CONTENT_TYPE, "text/plain")],
            "cannot encode metrics\n".into(),
        ),
    }
}
