//! The controller's Prometheus metrics, and request counts read from nginx at scrape time.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// Labels of reload counts.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReloadLabels {
    /// `success` or `failure`.
    pub result: &'static str,
}

/// Labels of request counts.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The backend (`namespace/service:port`, or `-` for nginx's own answers).
    pub backend: String,
    /// The HTTP status.
    pub status: String,
}

/// Every metric the controller exports.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Configuration loads (start or reload), by result.
    pub reloads: Family<ReloadLabels, Counter>,
    /// 1 if the last configuration was accepted, else 0.
    pub last_reload_successful: Gauge,
    /// Hash of the running configuration text.
    pub config_hash: Gauge,
    /// Backend tables sent to nginx's balancer (no reload).
    pub backend_updates: Counter,
    /// Times nginx had to be restarted after it died.
    pub nginx_restarts: Counter,
    /// Objects problems in the current model.
    pub problems: Gauge,
    /// Ingress statuses written (by this replica, as leader).
    pub status_writes: Counter,
    /// Events recorded on Ingresses (by this replica, as leader).
    pub events: Counter,
    /// Requests served by nginx, by backend and status (since nginx started).
    pub requests: Family<RequestLabels, Counter>,
}

impl Metrics {
    /// Registers every metric in a new registry.
    pub fn register(&self) -> Registry {
        let mut registry = Registry::with_prefix("ingress_controller");
        registry.register(
            "reloads",
            "nginx configuration loads, by result",
            self.reloads.clone(),
        );
        registry.register(
            "config_last_reload_successful",
            "Whether the last configuration nginx was given was accepted",
            self.last_reload_successful.clone(),
        );
        registry.register(
            "config_hash",
            "Hash of the running nginx configuration",
            self.config_hash.clone(),
        );
        registry.register(
            "backend_updates",
            "Backend tables sent to the balancer without a reload",
            self.backend_updates.clone(),
        );
        registry.register(
            "nginx_restarts",
            "nginx restarts after it died",
            self.nginx_restarts.clone(),
        );
        registry.register(
            "problems",
            "Refused object fields and annotations in the current model",
            self.problems.clone(),
        );
        registry.register(
            "status_writes",
            "Ingress statuses written by this replica as leader",
            self.status_writes.clone(),
        );
        registry.register(
            "events",
            "Events recorded on Ingresses by this replica as leader",
            self.events.clone(),
        );
        registry.register(
            "requests",
            "Requests served by nginx since it started",
            self.requests.clone(),
        );
        registry
    }

    /// Replaces the request counts with nginx's.
    pub fn set_requests(&self, counts: Vec<(String, String, u64)>) {
        self.requests.clear();
        for (backend, status, count) in counts {
            self.requests
                .get_or_create(&RequestLabels { backend, status })
                .inc_by(count);
        }
    }
}
