//! The HTTP endpoints: `/health` (200 `OK`, also during lameduck; 503 with the reason while
//! the object source of node-local mode is stuck), `/ready` (200 `OK`; 503 `Shutting down`
//! once shutdown starts, or the names of the plugins not ready yet) and `/metrics` (the exposition text). Plugins that
//! name the same address share one server.
//!
//! [`serve`] bounds what clients can hold: at most [`MAX_CONNECTIONS`] connections at once
//! (more wait in the listen queue), and a request head must arrive whole within
//! [`HEADER_TIMEOUT`] (hyper's header read timeout, also between keep-alive requests), so a
//! client sending its headers a byte at a time cannot keep a connection.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::accept::Backoff;
use crate::metrics::Metrics;

/// Open connections per HTTP server.
pub const MAX_CONNECTIONS: usize = 64;
/// Time for a request head to arrive whole.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// State the endpoints read.
pub struct HttpState {
    /// Set when shutdown starts.
    pub shutting_down: AtomicBool,
    /// The registry.
    pub metrics: Arc<Metrics>,
    /// Why the mode's object source is stuck, if the mode has one.
    pub source_check: Option<SourceCheck>,
    /// The running plan's plugins that report readiness.
    pub ready_checks: std::sync::RwLock<Vec<ReadyCheck>>,
}

/// A plugin that reports readiness: its name, and whether it is ready now.
pub type ReadyCheck = (&'static str, Arc<dyn Fn() -> bool + Send + Sync>);

/// Why an object source is unhealthy at a moment (one line), or `None` while it is healthy.
pub type SourceCheck = Arc<dyn Fn(Instant) -> Option<String> + Send + Sync>;

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

/// Serves `router` on `listener` (HTTP/1.1) until the task is aborted, within
/// [`MAX_CONNECTIONS`] and [`HEADER_TIMEOUT`].
pub async fn serve(listener: TcpListener, router: Router) {
    let local = listener
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut backoff = Backoff::default();
    loop {
        let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => {
                backoff.accepted(local);
                stream
            }
            Err(e) => {
                backoff.failed(local, &e).await;
                continue;
            }
        };
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(permit);
        });
    }
}

/// CoreDNS's health self-check: `GET /health` on `addr` every second, timed into
/// `coredns_health_request_duration_seconds`; failures count in
/// `coredns_health_request_failures_total`.
pub async fn self_check(addr: SocketAddr, metrics: Arc<Metrics>) {
    let target = match addr.ip() {
        ip if ip.is_unspecified() => SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port()),
        _ => addr,
    };
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let start = Instant::now();
        let healthy = tokio::time::timeout(Duration::from_secs(1), get_health(target)).await;
        if matches!(healthy, Ok(Ok(true))) {
            metrics
                .health_duration
                .observe(start.elapsed().as_secs_f64());
        } else {
            metrics.health_failures.inc();
        }
    }
}

async fn get_health(target: SocketAddr) -> std::io::Result<bool> {
    let mut stream = TcpStream::connect(target).await?;
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await?;
    let mut reply = Vec::new();
    stream.take(4096).read_to_end(&mut reply).await?;
    Ok(reply.starts_with(b"HTTP/1.1 200"))
}

async fn health(State(state): State<Arc<HttpState>>) -> (StatusCode, String) {
    health_at(&state, Instant::now())
}

/// `/health` at `now`: `OK`, or 503 with why the object source is stuck.
fn health_at(state: &HttpState, now: Instant) -> (StatusCode, String) {
    let check = state.source_check.as_ref();
    match check.and_then(|problem| problem(now)) {
        None => (StatusCode::OK, "OK".to_owned()),
        Some(problem) => (StatusCode::SERVICE_UNAVAILABLE, problem),
    }
}

async fn ready(State(state): State<Arc<HttpState>>) -> (StatusCode, String) {
    if state.shutting_down.load(Ordering::Relaxed) {
        return (StatusCode::SERVICE_UNAVAILABLE, "Shutting down".to_owned());
    }
    // As CoreDNS's `ready`: 503 naming the plugins not ready yet, sorted, comma-separated.
    let mut not_ready: Vec<&str> = match state.ready_checks.read() {
        Ok(checks) => checks.iter().filter(|(_, ok)| !ok()).map(|c| c.0).collect(),
        Err(_) => Vec::new(),
    };
    not_ready.sort_unstable();
    not_ready.dedup();
    if not_ready.is_empty() {
        (StatusCode::OK, "OK".to_owned())
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, not_ready.join(","))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn state(source_check: Option<SourceCheck>) -> HttpState {
        HttpState {
            shutting_down: AtomicBool::new(false),
            metrics: Arc::new(Metrics::new()),
            source_check,
            ready_checks: Default::default(),
        }
    }

    #[test]
    fn health_is_red_while_the_object_source_is_stuck() {
        let now = Instant::now();
        assert_eq!(health_at(&state(None), now), (StatusCode::OK, "OK".into()));
        let healthy: SourceCheck = Arc::new(|_| None);
        let fine = health_at(&state(Some(healthy)), now);
        assert_eq!(fine, (StatusCode::OK, "OK".into()));
        let stuck: SourceCheck = Arc::new(|_| Some("the manifest watcher is stuck".into()));
        assert_eq!(
            health_at(&state(Some(stuck)), now),
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "the manifest watcher is stuck".into()
            )
        );
    }
}
