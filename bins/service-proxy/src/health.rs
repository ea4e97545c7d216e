//! HTTP: the proxy's own `/healthz` and `/livez` (the healthz port), `/metrics`, `/proxyMode`,
//! `/configz` and a plain `/healthz` (the metrics port, as kube-proxy's `serveMetrics`), and
//! one health-check server per `healthCheckNodePort` of the Services with
//! `externalTrafficPolicy: Local` (`pkg/proxy/healthcheck` in kube-proxy).

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::metrics::Metrics;

/// Whether the proxy keeps up: a change queued and not applied within `timeout` makes it
/// unhealthy (kube-proxy's `healthTimeout`, 2 × the sync period), and so does an object source
/// that does not keep up (a stuck manifest watcher: no change would ever be queued).
pub struct ProxyHealth {
    timeout: Duration,
    state: Mutex<HealthState>,
    /// Whether the object source is healthy at a time, once it runs.
    source: OnceLock<SourceCheck>,
}

type SourceCheck = Box<dyn Fn(Instant) -> bool + Send + Sync>;

impl fmt::Debug for ProxyHealth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyHealth")
            .field("timeout", &self.timeout)
            .field("state", &self.state)
            .field("source", &self.source.get().map(|_| "checked"))
            .finish()
    }
}

#[derive(Debug, Default)]
struct HealthState {
    last_updated: Option<SystemTime>,
    /// When the oldest change not yet applied was queued.
    oldest_pending: Option<Instant>,
    /// Whether the node may receive load-balancer traffic ([`crate::node::eligible`]), once
    /// the Node is watched; `None` before (eligible, as kube-proxy while it starts).
    node_eligible: Option<bool>,
}

impl ProxyHealth {
    /// Healthy until a change waits longer than `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            state: Mutex::default(),
            source: OnceLock::new(),
        }
    }

    /// From now on the proxy is healthy only while `source_healthy` says the object source is
    /// (`cluster_state::SourceHealth::healthy`); set once, later calls are ignored.
    pub fn watch_source(&self, source_healthy: impl Fn(Instant) -> bool + Send + Sync + 'static) {
        let _ = self.source.set(Box::new(source_healthy));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HealthState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A change was queued at `now`.
    pub fn queued(&self, now: Instant) {
        self.lock().oldest_pending.get_or_insert(now);
    }

    /// Every queued change was applied (a successful sync with nothing left pending).
    pub fn updated(&self, at: SystemTime) {
        let mut state = self.lock();
        state.last_updated = Some(at);
        state.oldest_pending = None;
    }

    /// The node as the source now has it (`None`: no such Node): from now on `/healthz`
    /// answers 503 while the node is not eligible ([`crate::node::eligible`]). A change of
    /// eligibility is logged.
    pub fn node_seen(&self, node: Option<&k8s_openapi::api::core::v1::Node>) {
        let eligible = crate::node::eligible(node);
        let before = self.lock().node_eligible.replace(eligible);
        if before != Some(eligible) && !eligible {
            let why = if node.is_some() {
                "it is being deleted or tainted ToBeDeletedByClusterAutoscaler"
            } else {
                "its Node object is missing (and without it no zone for topology hints)"
            };
            tracing::warn!(
                why,
                "node not eligible for load-balancer traffic: /healthz answers 503"
            );
        } else if before == Some(false) && eligible {
            tracing::info!("node eligible for load-balancer traffic again");
        }
    }

    /// Whether the node may receive load-balancer traffic: kube-proxy's `nodeEligible`
    /// (true until the Node is watched).
    pub fn node_eligible(&self) -> bool {
        self.lock().node_eligible.unwrap_or(true)
    }

    /// Whether the proxy is healthy at `now` (the node's eligibility aside: `/livez` and the
    /// health-check node ports ignore it).
    pub fn healthy(&self, now: Instant) -> bool {
        let synced = self
            .lock()
            .oldest_pending
            .is_none_or(|t| now.duration_since(t) < self.timeout);
        synced && self.source.get().is_none_or(|source| source(now))
    }

    /// The body of `/healthz` (with `nodeEligible`) and `/livez` (without), as kube-proxy's
    /// `ProxyHealth`: when healthy, `lastUpdated` is the current time (kube-proxy's compatibility
    /// with its older releases), else the last successful sync. kube-proxy's per-family
    /// `status` is left out: the proxy's health here is one for every family.
    fn body(&self, healthy: bool, now: SystemTime, node_eligible: Option<bool>) -> String {
        let last = if healthy {
            Some(now)
        } else {
            self.lock().last_updated
        };
        let mut json = serde_json::json!({
            "lastUpdated": last.map(rfc3339).unwrap_or_default(),
            "currentTime": rfc3339(now),
            "healthy": healthy,
        });
        if let (Some(eligible), Some(map)) = (node_eligible, json.as_object_mut()) {
            map.insert("nodeEligible".into(), eligible.into());
        }
        json.to_string()
    }
}

/// `2026-11-30T09:30:00Z`: UTC, to the second (Go's `time.RFC3339`, which kube-proxy's
/// `/healthz` body uses). A time outside the range of [`jiff::Timestamp`] (years -9999 to
/// 9999) prints as the Unix epoch.
pub fn rfc3339(time: SystemTime) -> String {
    let timestamp = jiff::Timestamp::try_from(time).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    // Precision 0: the fraction of a second is dropped, not rounded.
    format!("{timestamp:.0}")
}

fn json_response(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// `/healthz` and `/livez`, each counted in its own metric, as kube-proxy's
/// (`pkg/proxy/healthcheck/proxy_health.go`): `/livez` answers 200 while the proxy is healthy,
/// else 503; `/healthz` answers 503 also while the node is not eligible (being deleted, or
/// tainted by the Cluster Autoscaler: load balancers should drain it), and says so in
/// `nodeEligible`.
pub fn healthz_router(health: Arc<ProxyHealth>, metrics: Arc<Metrics>) -> Router {
    let handler = move |count: fn(&Metrics, u16), with_node: bool| {
        let (health, metrics) = (Arc::clone(&health), Arc::clone(&metrics));
        move || {
            let (health, metrics) = (Arc::clone(&health), Arc::clone(&metrics));
            async move {
                let healthy = health.healthy(Instant::now());
                let eligible = with_node.then(|| health.node_eligible());
                let status = if healthy && eligible != Some(false) {
                    StatusCode::OK
                } else {
                    StatusCode::SERVICE_UNAVAILABLE
                };
                count(&metrics, status.as_u16());
                json_response(status, health.body(healthy, SystemTime::now(), eligible))
            }
        }
    };
    Router::new()
        .route("/healthz", get(handler(Metrics::healthz, true)))
        .route("/livez", get(handler(Metrics::livez, false)))
}

/// What the metrics port serves besides `/metrics`: the proxy mode and the effective
/// configuration (`crate::config::configz`).
#[derive(Clone, Debug)]
pub struct MetricsPort {
    /// `/proxyMode`'s text (`iptables` or `nftables`).
    pub proxy_mode: &'static str,
    /// `/configz`'s JSON.
    pub configz: serde_json::Value,
}

fn text_response(body: String) -> Response {
    let headers = [
        (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    (headers, body).into_response()
}

/// The metrics port, as kube-proxy's `serveMetrics`: `/metrics` in the Prometheus text format,
/// `/proxyMode` (the mode as plain text), `/configz` (the configuration as JSON) and `/healthz`
/// (`ok`: the server answers; the proxy's health is on the healthz port).
pub fn metrics_router(metrics: Arc<Metrics>, port: MetricsPort) -> Router {
    let MetricsPort {
        proxy_mode,
        configz,
    } = port;
    let configz = configz.to_string();
    Router::new()
        .route(
            "/metrics",
            get(move || {
                let metrics = Arc::clone(&metrics);
                async move {
                    (
                        [(
                            header::CONTENT_TYPE,
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )],
                        metrics.encode(),
                    )
                }
            }),
        )
        .route(
            "/proxyMode",
            get(move || async move { text_response(proxy_mode.to_owned()) }),
        )
        .route(
            "/configz",
            get(move || {
                let body = configz.clone();
                async move { json_response(StatusCode::OK, body) }
            }),
        )
        .route("/healthz", get(|| async { text_response("ok".to_owned()) }))
}

/// What a health-check node port reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceHealth {
    /// The Service's namespace.
    pub namespace: String,
    /// The Service's name.
    pub name: String,
    /// Ready endpoints on this node.
    pub local_endpoints: usize,
}

#[derive(Serialize)]
struct ServiceRef<'a> {
    namespace: &'a str,
    name: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ServiceBody<'a> {
    service: ServiceRef<'a>,
    local_endpoints: usize,
    service_proxy_healthy: bool,
}

/// kube-proxy's answer: 200 with local endpoints and a healthy proxy, else 503; the body is
/// JSON indented with tabs, without a trailing newline.
pub fn service_answer(service: &ServiceHealth, proxy_healthy: bool) -> (StatusCode, String) {
    let body = ServiceBody {
        service: ServiceRef {
            namespace: &service.namespace,
            name: &service.name,
        },
        local_endpoints: service.local_endpoints,
        service_proxy_healthy: proxy_healthy,
    };
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"\t");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    // Serializing plain strings and numbers cannot fail.
    let _ = body.serialize(&mut serializer);
    let status = if service.local_endpoints > 0 && proxy_healthy {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, String::from_utf8_lossy(&out).into_owned())
}

type Shared = Arc<Mutex<BTreeMap<u16, ServiceHealth>>>;

/// The health-check servers, one per node port, started and stopped as Services come and go.
#[derive(Debug)]
pub struct HealthCheckServers {
    address: IpAddr,
    proxy: Arc<ProxyHealth>,
    services: Shared,
    servers: BTreeMap<u16, JoinHandle<()>>,
}

impl HealthCheckServers {
    /// Servers listening on `address`.
    pub fn new(address: IpAddr, proxy: Arc<ProxyHealth>) -> Self {
        Self {
            address,
            proxy,
            services: Shared::default(),
            servers: BTreeMap::new(),
        }
    }

    /// Serves exactly `wanted` (by node port): new ports get a server, gone ones lose theirs,
    /// the others answer with the new counts at once. A port that cannot be bound is logged
    /// and retried on the next update.
    pub async fn update(&mut self, wanted: BTreeMap<u16, ServiceHealth>) {
        let gone: Vec<u16> = self
            .servers
            .keys()
            .filter(|p| !wanted.contains_key(p))
            .copied()
            .collect();
        for port in gone {
            if let Some(server) = self.servers.remove(&port) {
                server.abort();
                tracing::info!(port, "health-check node port closed");
            }
        }
        let new: Vec<u16> = wanted
            .keys()
            .filter(|p| !self.servers.contains_key(p))
            .copied()
            .collect();
        *self.services.lock().unwrap_or_else(PoisonError::into_inner) = wanted;
        for port in new {
            match TcpListener::bind(SocketAddr::new(self.address, port)).await {
                Ok(listener) => {
                    let router = self.service_router(port);
                    let server = tokio::spawn(async move {
                        if let Err(error) = axum::serve(listener, router).await {
                            tracing::warn!(port, %error, "health-check server stopped");
                        }
                    });
                    self.servers.insert(port, server);
                    tracing::info!(port, "health-check node port open");
                }
                Err(error) => {
                    tracing::warn!(port, %error, "cannot open health-check node port");
                }
            }
        }
    }

    fn service_router(&self, port: u16) -> Router {
        let (services, proxy) = (Arc::clone(&self.services), Arc::clone(&self.proxy));
        Router::new().fallback(move || {
            let (services, proxy) = (Arc::clone(&services), Arc::clone(&proxy));
            async move {
                let service = services
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get(&port)
                    .cloned();
                match service {
                    Some(service) => {
                        let (status, body) =
                            service_answer(&service, proxy.healthy(Instant::now()));
                        json_response(status, body)
                    }
                    None => StatusCode::NOT_FOUND.into_response(),
                }
            }
        })
    }
}

impl Drop for HealthCheckServers {
    fn drop(&mut self) {
        self.servers.values().for_each(JoinHandle::abort);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_body_is_kube_proxys() {
        let service = ServiceHealth {
            namespace: "ns".into(),
            name: "web".into(),
            local_endpoints: 2,
        };
        let (status, body) = service_answer(&service, true);
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            body,
            "{\n\t\"service\": {\n\t\t\"namespace\": \"ns\",\n\t\t\"name\": \"web\"\n\t},\n\t\"localEndpoints\": 2,\n\t\"serviceProxyHealthy\": true\n}"
        );
        let none = ServiceHealth {
            local_endpoints: 0,
            ..service.clone()
        };
        assert_eq!(
            service_answer(&none, true).0,
            StatusCode::SERVICE_UNAVAILABLE
        );
        assert_eq!(
            service_answer(&service, false).0,
            StatusCode::SERVICE_UNAVAILABLE
        );
    }

    #[test]
    fn a_change_left_pending_too_long_makes_the_proxy_unhealthy() {
        let health = ProxyHealth::new(Duration::from_secs(60));
        let t0 = Instant::now();
        assert!(health.healthy(t0));
        health.queued(t0);
        assert!(health.healthy(t0 + Duration::from_secs(59)));
        assert!(!health.healthy(t0 + Duration::from_secs(61)));
        health.updated(SystemTime::now());
        assert!(health.healthy(t0 + Duration::from_secs(61)));
    }

    #[test]
    fn a_stuck_object_source_makes_the_proxy_unhealthy() {
        let health = ProxyHealth::new(Duration::from_secs(60));
        let t0 = Instant::now();
        let stuck_after = t0 + Duration::from_secs(120);
        health.watch_source(move |now| now <= stuck_after);
        assert!(health.healthy(t0));
        assert!(!health.healthy(stuck_after + Duration::from_secs(1)));
    }

    #[test]
    fn rfc3339_dates() {
        use std::time::UNIX_EPOCH;
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(1_796_031_000)),
            "2026-11-30T09:30:00Z"
        );
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00Z"
        );
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_millis(1_796_031_000_999)),
            "2026-11-30T09:30:00Z"
        );
    }
}
