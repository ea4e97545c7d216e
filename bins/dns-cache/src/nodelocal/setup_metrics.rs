//! node-cache's own metric, `coredns_nodecache_setup_errors_total{errortype}`, served on
//! `-metrics-listen-address` at `/metrics`.

use std::sync::Arc;

use axum::Router;
use axum::http::header;
use axum::routing::get;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// The `errortype` label values, each pre-set to 0 as node-cache does.
pub const ERROR_TYPES: [&str; 5] = [
    "iptables",
    "iptables_lock",
    "interface_add",
    "interface_check",
    "configmap",
];

type Labels = Vec<(&'static str, &'static str)>;

/// The setup error counters.
pub struct SetupMetrics {
    registry: Registry,
    errors: Family<Labels, Counter>,
}

impl SetupMetrics {
    /// The registry with every error type at 0.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("coredns_nodecache");
        let errors = Family::<Labels, Counter>::default();
        registry.register(
            "setup_errors",
            "The number of errors during periodic network setup for node-cache",
            errors.clone(),
        );
        for kind in ERROR_TYPES {
            let _ = errors.get_or_create(&vec![("errortype", kind)]);
        }
        Self { registry, errors }
    }

    /// Counts one error of `kind` (one of [`ERROR_TYPES`]).
    pub fn error(&self, kind: &'static str) {
        self.errors.get_or_create(&vec![("errortype", kind)]).inc();
    }

    /// The exposition text.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

impl Default for SetupMetrics {
    fn default() -> Self {
        Self::new()
    }
}

/// Serves `/metrics` on `address` until the task is aborted; a bind failure is logged.
pub async fn serve(address: String, metrics: Arc<SetupMetrics>) {
    let listener = match tokio::net::TcpListener::bind(&address).await {
        Ok(listener) => listener,
        Err(e) => {
            tracing::error!("Failed to start the node-cache metrics server on {address}: {e}");
            return;
        }
    };
    let app = Router::new().route(
        "/metrics",
        get(move || async move {
            (
                [(
                    header::CONTENT_TYPE,
                    "text/plain; version=0.0.4; charset=utf-8",
                )],
                metrics.encode(),
            )
        }),
    );
    crate::server::http::serve(listener, app).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_type_starts_at_zero() {
        let metrics = SetupMetrics::new();
        metrics.error("iptables");
        let text = metrics.encode();
        assert!(
            text.contains("coredns_nodecache_setup_errors_total{errortype=\"iptables\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("coredns_nodecache_setup_errors_total{errortype=\"configmap\"} 0\n"),
            "{text}"
        );
    }
}
