//! An Ingress and Gateways on the shared listen address (docs/gateway-api.md §8 item 9):
//! an Ingress keeps its host name whole, an older Gateway keeps a name a newer one claims on
//! the same socket, and each loser is told: a Warning event on the Gateway and on each route
//! (`IngressConflict`, `HostnameConflict`, beside the manifests), and a listener left with
//! nothing to serve is `Conflicted=True` in its Gateway's status.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::fmt::Write as _;

use support::{Backends, Controller, events, eventually};

const CLASS: &str = "shared-class";

/// The Ingress `e2e/web` (`shared.example.com`, `/ingress`), the Gateways `first` (a listener
/// without host name) and `second` (a listener for `route.example.com`, created later), the
/// route `route` on `first` for both host names (`/gateway`) and the route `late` on `second`.
fn manifests(backends: &Backends) -> String {
    let mut m = String::from(support::CLASS);
    for name in ["ingress-web", "gateway-web"] {
        m.push_str(&support::service("e2e", name, &[backends.port(name)]));
    }
    m.push_str(&support::ingress(
        "e2e",
        "web",
        "shared.example.com",
        "",
        None,
        &[("Prefix", "/ingress", "ingress-web")],
    ));
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
         metadata: {{name: route, namespace: e2e}}\n\
         spec: {{parentRefs: [{{name: first}}], \
         hostnames: [shared.example.com, route.example.com], \
         rules: [{{matches: [{{path: {{type: PathPrefix, value: /gateway}}}}], \
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
async fn an_ingress_keeps_its_host_and_the_losers_are_told() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["ingress-web", "gateway-web"]).await;
    let controller = Controller::start(&manifests(&backends)).await;
    eventually("the route served on its own host name", || async {
        controller
            .get("route.example.com", "/gateway")
            .await
            .backend()
            == "gateway-web"
    })
    .await;
    // The Ingress keeps `shared.example.com` whole: its path is served, the route's is not
    // (no fall-through from the Ingress's server to the Gateway's).
    assert_eq!(
        controller
            .get("shared.example.com", "/ingress")
            .await
            .backend(),
        "ingress-web"
    );
    let lost = controller.get("shared.example.com", "/gateway").await;
    assert_eq!((lost.status, lost.backend()), (404, "-"));
    // `first`, older, keeps `route.example.com`: `late`'s backend never answers there.
    assert_eq!(
        controller.get("route.example.com", "/").await.backend(),
        "-"
    );

    let dir = controller.manifests_dir();
    eventually("the events of the losers", || async {
        let events = events(&dir, "e2e");
        has_event(&events, "HTTPRoute", "route", "IngressConflict")
            && has_event(&events, "Gateway", "first", "IngressConflict")
            && has_event(&events, "Gateway", "second", "HostnameConflict")
            && has_event(&events, "HTTPRoute", "late", "HostnameConflict")
    })
    .await;
    let events = events(&dir, "e2e");
    let route = events
        .iter()
        .find(|e| e.contains("reason: IngressConflict") && e.contains("name: route\n"))
        .unwrap();
    assert!(
        route.contains("shared.example.com") && route.contains("Ingress e2e/web"),
        "{route}"
    );
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
}
