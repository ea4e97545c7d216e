//! An Ingress and Gateways on the shared listen address (docs/gateway-api.md §8 item 9): an
//! Ingress host and an HTTPRoute of the same host name share one server, each path served by
//! its owner and a path both claim by the older; an older Gateway keeps a name a newer one
//! claims on the same socket. Each loser is told, beside the manifests: `IngressConflict` on a
//! route that loses a path to the Ingress, `HTTPRouteConflict` on an Ingress that loses one to
//! a route, `HostnameConflict` on the newer Gateway and its route, and `Conflicted=True` on
//! that Gateway's listener, left with nothing to serve.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::fmt::Write as _;

use support::{Backends, Controller, events, eventually, https_get_sni};

/// Where the controller's nginx listens.
const LOCALHOST: std::net::IpAddr = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

const CLASS: &str = "shared-class";

/// The Ingress `e2e/web` (`shared.example.com`: `/ingress` and `/both`; created at `created`,
/// none when empty), the Gateways `first` (a listener without host name) and `second` (a
/// listener for `route.example.com`, created later), the route `route` on `first` for both
/// host names (`/gateway` and `/both`, created 2026-01-01) and the route `late` on `second`.
fn manifests(backends: &Backends, created: &str) -> String {
    let mut m = String::from(support::CLASS);
    for name in ["ingress-web", "gateway-web"] {
        m.push_str(&support::service("e2e", name, &[backends.port(name)]));
    }
    let ingress = support::ingress(
        "e2e",
        "web",
        "shared.example.com",
        "",
        None,
        &[
            ("Prefix", "/ingress", "ingress-web"),
            ("Prefix", "/both", "ingress-web"),
        ],
    );
    let stamp = if created.is_empty() {
        String::new()
    } else {
        format!("  creationTimestamp: '{created}'\n")
    };
    m.push_str(&ingress.replace("  namespace: e2e\n", &format!("  namespace: e2e\n{stamp}")));
    let _ = write!(
        m,
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n\
         metadata: {{name: {CLASS}}}\nspec: {{controllerName: {}}}\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{name: first, namespace: e2e, creationTimestamp: '2026-01-01T00:00:00Z'}}\n\
         spec: {{gatewayClassName: {CLASS}, listeners: [{{name: http, port: 80, protocol: HTTP}}]}}\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{name: second, namespace: e2e, creationTimestamp: '2026-01-02T00:00:00Z'}}\n\
         spec: {{gatewayClassName: {CLASS}, listeners: [{{name: named, port: 80, \
         protocol: HTTP, hostname: route.example.com}}]}}\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{name: route, namespace: e2e, creationTimestamp: '2026-01-01T00:00:00Z'}}\n\
         spec: {{parentRefs: [{{name: first}}], \
         hostnames: [shared.example.com, route.example.com], \
         rules: [{{matches: [{{path: {{type: PathPrefix, value: /gateway}}}}, \
         {{path: {{type: PathPrefix, value: /both}}}}], \
         backendRefs: [{{name: gateway-web, port: 80}}]}}]}}\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{name: late, namespace: e2e}}\n\
         spec: {{parentRefs: [{{name: second}}], \
         rules: [{{backendRefs: [{{name: ingress-web, port: 80}}]}}]}}\n",
        ingress_controller::gateway::DEFAULT_CONTROLLER_NAME
    );
    m
}

/// Whether one of `events` regards `kind` `name` with `reason`.
fn has_event(events: &[String], kind: &str, name: &str, reason: &str) -> bool {
    events.iter().any(|e| {
        e.contains(&format!("reason: {reason}"))
            && e.contains(&format!("kind: {kind}"))
            && e.contains(&format!("name: {name}\n"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ingress_and_a_route_share_a_host_path_by_path() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["ingress-web", "gateway-web"]).await;
    // The Ingress without a creation time: the oldest.
    let controller = Controller::start(&manifests(&backends, "")).await;
    eventually("the route served on its own host name", || async {
        controller
            .get("route.example.com", "/gateway")
            .await
            .backend()
            == "gateway-web"
    })
    .await;
    let backend = |path: &'static str| {
        let controller = &controller;
        async move {
            controller
                .get("shared.example.com", path)
                .await
                .backend()
                .to_owned()
        }
    };
    // One server for the shared host: each path served by its owner, `/both` by the older
    // claimant (the Ingress), and what neither claims answered 404 (no fall-through).
    assert_eq!(backend("/ingress").await, "ingress-web");
    assert_eq!(backend("/gateway/x").await, "gateway-web");
    assert_eq!(backend("/both").await, "ingress-web");
    assert_eq!(backend("/both/x").await, "ingress-web");
    let other = controller.get("shared.example.com", "/other").await;
    assert_eq!((other.status, other.backend()), (404, "-"));
    // `first`, older, keeps `route.example.com`: `late`'s backend never answers there.
    assert_eq!(
        controller.get("route.example.com", "/").await.backend(),
        "-"
    );

    let dir = controller.manifests_dir();
    eventually("the events of the losers", || async {
        let events = events(&dir, "e2e");
        has_event(&events, "HTTPRoute", "route", "IngressConflict")
            && has_event(&events, "Gateway", "second", "HostnameConflict")
            && has_event(&events, "HTTPRoute", "late", "HostnameConflict")
    })
    .await;
    let events_now = events(&dir, "e2e");
    let lost = events_now
        .iter()
        .find(|e| e.contains("reason: IngressConflict") && e.contains("name: route\n"))
        .unwrap();
    assert!(
        lost.contains("shared.example.com") && lost.contains("Ingress e2e/web"),
        "{lost}"
    );
    assert!(!has_event(
        &events_now,
        "Ingress",
        "web",
        "HTTPRouteConflict"
    ));
    // `second`'s only listener serves nothing: Conflicted in its status; `first` keeps
    // serving and is not conflicted.
    let status = |name: &str| {
        std::fs::read_to_string(dir.join(format!(".status/gateways/e2e/{name}.yaml")))
            .unwrap_or_default()
    };
    eventually("the listener's Conflicted condition", || async {
        status("second").contains("reason: HostnameConflict")
    })
    .await;
    let first = status("first");
    assert!(!first.contains("reason: HostnameConflict"), "{first}");
    assert!(first.contains("reason: NoConflicts"), "{first}");

    // The Ingress now younger than the route: the route takes `/both`, the Ingress is told.
    controller
        .update(&manifests(&backends, "2026-06-01T00:00:00Z"))
        .await;
    eventually("the route's `/both`", || async {
        backend("/both/x").await == "gateway-web"
    })
    .await;
    assert_eq!(backend("/both").await, "gateway-web");
    assert_eq!(backend("/ingress").await, "ingress-web");
    eventually("the event on the Ingress", || async {
        has_event(&events(&dir, "e2e"), "Ingress", "web", "HTTPRouteConflict")
    })
    .await;
}

/// On the HTTPS port too: an Ingress host under `tls` and a Gateway HTTPS listener of the
/// same name are one server, each path served by its owner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ingress_and_a_route_share_a_tls_host() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["ingress-web", "gateway-web"]).await;
    let dir = tempfile::tempdir().unwrap();
    let host = "secure.example.com";
    let (crt, key) = support::self_signed(dir.path(), "e2e", host, &format!("DNS:{host}"));
    let (crt, key) = (
        std::fs::read_to_string(crt).unwrap(),
        std::fs::read_to_string(key).unwrap(),
    );
    let mut m = String::from(support::CLASS);
    for name in ["ingress-web", "gateway-web"] {
        m.push_str(&support::service("e2e", name, &[backends.port(name)]));
    }
    m.push_str(&support::tls_secret("e2e", "secure", &crt, &key));
    let ingress = support::ingress(
        "e2e",
        "secure",
        host,
        "",
        None,
        &[("Prefix", "/ingress", "ingress-web")],
    );
    m.push_str(&support::with_tls(&ingress, host, "secure"));
    let _ = write!(
        m,
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n\
         metadata: {{name: {CLASS}}}\nspec: {{controllerName: {}}}\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{name: tls, namespace: e2e}}\n\
         spec: {{gatewayClassName: {CLASS}, listeners: [{{name: https, port: 443, \
         protocol: HTTPS, hostname: {host}, \
         tls: {{mode: Terminate, certificateRefs: [{{name: secure}}]}}}}]}}\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{name: secure, namespace: e2e}}\n\
         spec: {{parentRefs: [{{name: tls}}], \
         rules: [{{matches: [{{path: {{type: PathPrefix, value: /gateway}}}}], \
         backendRefs: [{{name: gateway-web, port: 80}}]}}]}}\n",
        ingress_controller::gateway::DEFAULT_CONTROLLER_NAME
    );
    let controller = Controller::start(&m).await;
    let port = controller.https;
    eventually("the route's path on the shared TLS host", || async move {
        https_get_sni(LOCALHOST, port, host, host, "/gateway/x").1 == "gateway-web"
    })
    .await;
    let answer = https_get_sni(LOCALHOST, port, host, host, "/ingress");
    assert_eq!(answer.1, "ingress-web");
    let answer = https_get_sni(LOCALHOST, port, host, host, "/other");
    assert_eq!(answer, (404, "-".to_owned()));
    // S-HN.2: the shared server answers as the Ingress's alone would, whatever the SNI (no
    // 421, which ingress-nginx does not answer), on both APIs' paths.
    for path in ["/ingress", "/gateway/x"] {
        let answer = https_get_sni(LOCALHOST, port, "other.example.com", host, path);
        assert_eq!(answer.0, 200, "{path}");
    }
    // One `server` for the name on the HTTPS port: nginx would warn of a conflicting name.
    let conf = std::fs::read_to_string(controller.prefix().join("nginx.conf")).unwrap();
    let names = conf
        .lines()
        .filter(|l| l.trim() == format!("server_name {host};"))
        .count();
    // The Ingress's own server on the HTTP port, the shared one on the HTTPS port.
    assert_eq!(names, 2, "{conf}");
}
