//! The health-check node port servers on 127.0.0.1: their answers as endpoints come and go,
//! and the proxy's own `/healthz`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Node;
use service_proxy::cli::Args;
use service_proxy::config::configz::{configz, proxy_mode};
use service_proxy::health::{
    HealthCheckServers, MetricsPort, ProxyHealth, ServiceHealth, healthz_router, metrics_router,
};
use service_proxy::metrics::Metrics;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// A port that was free a moment ago.
async fn free_port() -> u16 {
    let listener = TcpListener::bind((LOCALHOST, 0)).await.unwrap();
    listener.local_addr().unwrap().port()
}

/// `GET path` on `port`: the status code and the whole response, or `None` when nothing
/// listens.
async fn get_raw(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(SocketAddr::new(LOCALHOST, port))
        .await
        .ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(
        Duration::from_secs(10),
        stream.read_to_string(&mut response),
    )
    .await
    .unwrap()
    .unwrap();
    let status = response.split(' ').nth(1)?.parse().ok()?;
    Some((status, response))
}

fn body_of(response: &str) -> String {
    response
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned()
}

/// `GET path` on `port` answered in JSON: the status code and the body, or `None` when
/// nothing listens.
async fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let (status, response) = get_raw(port, path).await?;
    assert!(
        response.contains("content-type: application/json"),
        "{response}"
    );
    assert!(
        response.contains("x-content-type-options: nosniff"),
        "{response}"
    );
    Some((status, body_of(&response)))
}

/// Polls until `get` answers as `check` wants (servers start asynchronously).
async fn eventually(port: u16, check: impl Fn(Option<(u16, String)>) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check(get(port, "/").await) {
        assert!(
            Instant::now() < deadline,
            "port {port} never answered as expected"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn web(local_endpoints: usize) -> ServiceHealth {
    ServiceHealth {
        namespace: "demo".into(),
        name: "web".into(),
        local_endpoints,
    }
}

#[tokio::test]
async fn answers_follow_the_local_endpoints() {
    let proxy = Arc::new(ProxyHealth::new(Duration::from_secs(60)));
    let mut servers = HealthCheckServers::new(LOCALHOST, Arc::clone(&proxy));
    let port = free_port().await;

    servers.update(BTreeMap::from([(port, web(2))])).await;
    eventually(port, |answer| answer.is_some()).await;
    let (status, body) = get(port, "/any/path").await.unwrap();
    assert_eq!(status, 200);
    assert!(body.contains("\"localEndpoints\": 2"), "{body}");
    assert!(body.contains("\"namespace\": \"demo\""), "{body}");

    // The last local endpoint goes: 503, same server.
    servers.update(BTreeMap::from([(port, web(0))])).await;
    let (status, body) = get(port, "/").await.unwrap();
    assert_eq!(status, 503);
    assert!(body.contains("\"localEndpoints\": 0"), "{body}");

    // It comes back.
    servers.update(BTreeMap::from([(port, web(1))])).await;
    assert_eq!(get(port, "/").await.unwrap().0, 200);

    // The Service goes: the port closes.
    servers.update(BTreeMap::new()).await;
    eventually(port, |answer| answer.is_none()).await;
}

#[tokio::test]
async fn healthz_turns_503_when_a_change_waits_too_long() {
    let proxy = Arc::new(ProxyHealth::new(Duration::from_millis(200)));
    let metrics = Arc::new(Metrics::new());
    let listener = TcpListener::bind((LOCALHOST, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let router = healthz_router(Arc::clone(&proxy), Arc::clone(&metrics));
    let server = tokio::spawn(async move { axum::serve(listener, router).await });

    let (status, body) = get(port, "/healthz").await.unwrap();
    assert_eq!(status, 200);
    assert!(body.contains("\"nodeEligible\":true"), "{body}");
    proxy.queued(Instant::now() - Duration::from_secs(1));
    assert_eq!(get(port, "/healthz").await.unwrap().0, 503);
    assert_eq!(get(port, "/livez").await.unwrap().0, 503);
    proxy.updated(std::time::SystemTime::now());
    assert_eq!(get(port, "/healthz").await.unwrap().0, 200);
    let text = metrics.encode();
    assert!(
        text.contains("kubeproxy_proxy_healthz_total{code=\"503\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("kubeproxy_proxy_livez_total{code=\"503\"} 1"),
        "{text}"
    );
    server.abort();
}

/// Serves `router` on a free port of 127.0.0.1 until the returned task is aborted.
async fn serve(router: axum::Router) -> (u16, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind((LOCALHOST, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    (port, server)
}

fn node(yaml: &str) -> Node {
    serde_saphyr::from_str(yaml).unwrap()
}

#[tokio::test]
async fn healthz_follows_the_nodes_eligibility_and_livez_ignores_it() {
    let proxy = Arc::new(ProxyHealth::new(Duration::from_secs(60)));
    let metrics = Arc::new(Metrics::new());
    let (port, server) = serve(healthz_router(Arc::clone(&proxy), Arc::clone(&metrics))).await;
    let answer = |path| async move { get(port, path).await.unwrap() };

    // The Node as it normally is: eligible.
    proxy.node_seen(Some(&node("metadata: {name: node-a}")));
    let (status, body) = answer("/healthz").await;
    assert_eq!(status, 200);
    assert!(body.contains("\"nodeEligible\":true"), "{body}");
    assert!(body.contains("\"healthy\":true"), "{body}");

    // Tainted by the Cluster Autoscaler: load balancers must drain it; the proxy still lives.
    let tainted = "metadata: {name: node-a}\nspec: {taints: [{key: ToBeDeletedByClusterAutoscaler, \
                   value: '1733360000', effect: NoSchedule}]}";
    proxy.node_seen(Some(&node(tainted)));
    let (status, body) = answer("/healthz").await;
    assert_eq!(status, 503);
    assert!(body.contains("\"nodeEligible\":false"), "{body}");
    assert!(body.contains("\"healthy\":true"), "{body}");
    let (status, body) = answer("/livez").await;
    assert_eq!(status, 200);
    assert!(!body.contains("nodeEligible"), "{body}");

    // Being deleted.
    let deleting = "metadata: {name: node-a, deletionTimestamp: '2026-12-05T01:00:00Z'}";
    proxy.node_seen(Some(&node(deleting)));
    assert_eq!(answer("/healthz").await.0, 503);

    // No Node at all: not eligible either (kube-proxy's NodeEligible of a nil Node).
    proxy.node_seen(None);
    let (status, body) = answer("/healthz").await;
    assert_eq!(status, 503);
    assert!(body.contains("\"nodeEligible\":false"), "{body}");
    assert_eq!(answer("/livez").await.0, 200);

    proxy.node_seen(Some(&node("metadata: {name: node-a}")));
    assert_eq!(answer("/healthz").await.0, 200);
    let text = metrics.encode();
    assert!(
        text.contains("kubeproxy_proxy_healthz_total{code=\"503\"} 3"),
        "{text}"
    );
    server.abort();
}

#[tokio::test]
async fn the_metrics_port_serves_proxy_mode_configz_and_process_metrics() {
    use clap::Parser;
    let args = Args::try_parse_from(["service-proxy", "--hostname-override=node-a"]).unwrap();
    let port = MetricsPort {
        proxy_mode: proxy_mode(&args),
        configz: configz(&args),
    };
    let (port, server) = serve(metrics_router(Arc::new(Metrics::new()), port)).await;

    let (status, response) = get_raw(port, "/proxyMode").await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(body_of(&response), "iptables");
    assert!(
        response.contains("content-type: text/plain; charset=utf-8"),
        "{response}"
    );

    let (status, body) = get(port, "/configz").await.unwrap();
    assert_eq!(status, 200);
    let value: serde_json::Value = serde_json::from_str(&body).unwrap();
    let config = &value["kubeproxy.config.k8s.io"];
    assert_eq!(config["HostnameOverride"], "node-a");
    assert_eq!(config["Mode"], "iptables");
    assert_eq!(config["IPTables"]["SyncPeriod"], "30s");

    let (status, response) = get_raw(port, "/healthz").await.unwrap();
    assert_eq!((status, body_of(&response).as_str()), (200, "ok"));

    let (status, response) = get_raw(port, "/metrics").await.unwrap();
    assert_eq!(status, 200);
    let text = body_of(&response);
    for name in [
        "process_cpu_seconds_total ",
        "process_resident_memory_bytes ",
        "process_virtual_memory_bytes ",
        "process_open_fds ",
        "process_max_fds ",
        "process_start_time_seconds ",
        "# TYPE process_cpu_seconds counter",
        "# TYPE process_resident_memory_bytes gauge",
        "kubeproxy_sync_proxy_rules_iptables_restore_failures_total ",
    ] {
        assert!(text.contains(name), "{name} missing from\n{text}");
    }
    let start: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("process_start_time_seconds "))
        .unwrap()
        .parse()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(
        start <= now + 1.0 && start > now - 86_400.0 * 365.0,
        "{start}"
    );
    server.abort();
}
