//! A request whose endpoint refuses the connection is passed to the next endpoint, as
//! ingress-nginx does by default (`proxy-next-upstream: error timeout`, 3 tries): with one
//! endpoint of two refusing (nothing listens on its port), every request is answered by the
//! other one. `proxy-next-upstream: off` turns that off.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use support::{Backends, CLASS, Controller, backend_ip, eventually, ingress, service};

/// A port on the backends' address where nothing listens: connections to it are refused.
async fn refusing_port() -> u16 {
    let listener = tokio::net::TcpListener::bind((backend_ip(), 0))
        .await
        .unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_is_retried_on_the_other_endpoint() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["web"]).await;
    let dead = refusing_port().await;
    let mut m = String::from(CLASS);
    // One Service, two endpoints: the refusing one and the live one.
    m.push_str(&service("e2e", "web", &[dead, backends.port("web")]));
    m.push_str(&ingress(
        "e2e",
        "retry",
        "retry.example.com",
        "",
        None,
        &[("Prefix", "/", "web")],
    ));
    m.push_str(&ingress(
        "e2e",
        "no-retry",
        "no-retry.example.com",
        "nginx.ingress.kubernetes.io/proxy-next-upstream: 'off'",
        None,
        &[("Prefix", "/", "web")],
    ));
    let controller = Controller::start(&m).await;
    eventually("the backend table loaded", || async {
        controller.get("retry.example.com", "/").await.status == 200
    })
    .await;

    // Round robin starts every other request on the refusing endpoint (per worker): each of
    // them must reach the live one.
    for i in 0..40 {
        let path = format!("/r{i}");
        let response = controller.get("retry.example.com", &path).await;
        assert_eq!(response.status, 200, "request {i}: {response:?}");
        assert_eq!(response.body, format!("web {path}"));
    }

    // Without passing on, the requests that start on the refusing endpoint fail.
    let mut failed = 0;
    for i in 0..20 {
        let response = controller
            .get("no-retry.example.com", &format!("/n{i}"))
            .await;
        match response.status {
            200 => assert_eq!(response.backend(), "web"),
            502 => failed += 1,
            other => panic!("request {i}: {other} {response:?}"),
        }
    }
    assert!(failed > 0, "no request met the refusing endpoint");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_refusing_endpoint_fails_at_once() {
    if support::ran_elsewhere() {
        return;
    }
    let dead = refusing_port().await;
    let mut m = String::from(CLASS);
    m.push_str(&service("e2e", "gone", &[dead]));
    m.push_str(&ingress(
        "e2e",
        "gone",
        "gone.example.com",
        "",
        None,
        &[("Prefix", "/", "gone")],
    ));
    let controller = Controller::start(&m).await;
    eventually("a 502 from the refusing endpoint", || async {
        controller.get("gone.example.com", "/").await.status == 502
    })
    .await;
    let started = std::time::Instant::now();
    assert_eq!(controller.get("gone.example.com", "/").await.status, 502);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
}
