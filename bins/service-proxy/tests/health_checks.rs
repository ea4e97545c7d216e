//! The health-check node port servers on 127.0.0.1: their answers as endpoints come and go,
//! and the proxy's own `/healthz`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use service_proxy::health::{HealthCheckServers, ProxyHealth, ServiceHealth, healthz_router};
use service_proxy::metrics::Metrics;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// A port that was free a moment ago.
async fn free_port() -> u16 {
    let listener = TcpListener::bind((LOCALHOST, 0)).await.unwrap();
    listener.local_addr().unwrap().port()
}

/// `GET /` on `port`: the status code and the body, or `None` when nothing listens.
async fn get(port: u16, path: &str) -> Option<(u16, String)> {
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
    let body = response
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    assert!(
        response.contains("content-type: application/json"),
        "{response}"
    );
    assert!(
        response.contains("x-content-type-options: nosniff"),
        "{response}"
    );
    Some((status, body))
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
