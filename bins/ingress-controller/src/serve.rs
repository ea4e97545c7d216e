//! `/healthz` and `/metrics` over HTTP.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use cluster_state::SourceHealth;
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
    /// Whether the object source keeps up, once it runs (a stuck manifest watcher turns
    /// `/healthz` red too).
    pub source: OnceLock<SourceHealth>,
    /// Where nginx runs (its control socket and pid file, read at scrape time).
    pub nginx: crate::render::Options,
}

/// The router: `/healthz` (200 once nginx serves, while it answers on its control socket and
/// the object source keeps up, else 503, as ingress-nginx's, which asks its nginx too) and
/// `/metrics`.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .with_state(shared)
}

async fn healthz(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    if !shared.healthy.load(Ordering::Relaxed) {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "nginx is not serving\n".to_owned(),
        );
    }
    if !crate::nginx::answers(&shared.nginx.control_socket()).await {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "nginx does not answer on its control socket\n".to_owned(),
        );
    }
    match shared.source.get().and_then(|h| h.problem(Instant::now())) {
        Some(problem) => (StatusCode::SERVICE_UNAVAILABLE, format!("{problem}\n")),
        None => (StatusCode::OK, "ok\n".to_owned()),
    }
}

async fn metrics(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    shared.metrics.scrape(&shared.nginx).await;
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
