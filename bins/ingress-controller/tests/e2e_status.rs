//! Ingress status over the controller's life, beside the manifests (no election: this
//! replica writes): the published address is written once, and cleared when the controller
//! stops for good (`--update-status-on-shutdown`, default true, as ingress-nginx); with
//! `--update-status-on-shutdown=false` it stays.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use support::{Backends, CLASS, Controller, eventually, ingress, service};

async fn objects() -> (Backends, String) {
    let backends = Backends::start(&["a"]).await;
    let mut m = String::from(CLASS);
    m.push_str(&service("st", "a", &[backends.port("a")]));
    m.push_str(&ingress(
        "st",
        "web",
        "web.example.com",
        "",
        None,
        &[("Prefix", "/", "a")],
    ));
    (backends, m)
}

/// The published status of Ingress st/web, as the file beside the manifests holds it.
fn status(c: &Controller) -> String {
    std::fs::read_to_string(c.manifests_dir().join(".status/ingresses/st/web.yaml"))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_is_cleared_when_the_controller_stops_for_good() {
    if support::ran_elsewhere() {
        return;
    }
    let (_backends, m) = objects().await;
    let args = ["--publish-status-address=192.0.2.10".to_owned()];
    let mut c = Controller::start_with(&m, &args).await;
    eventually("the status written", || async {
        status(&c).contains("192.0.2.10")
    })
    .await;
    c.stop();
    let after = status(&c);
    assert!(!after.contains("192.0.2.10"), "{after}");
    assert!(after.contains("ingress: []"), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_update_status_on_shutdown_the_status_stays() {
    if support::ran_elsewhere() {
        return;
    }
    let (_backends, m) = objects().await;
    let args = [
        "--publish-status-address=192.0.2.10".to_owned(),
        "--update-status-on-shutdown=false".to_owned(),
    ];
    let mut c = Controller::start_with(&m, &args).await;
    eventually("the status written", || async {
        status(&c).contains("192.0.2.10")
    })
    .await;
    c.stop();
    assert!(status(&c).contains("192.0.2.10"), "{}", status(&c));
}

/// A GatewayClass of ours, a Gateway of it, an HTTPRoute it allows and one it does not.
const GATEWAY_API: &str = r"
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ours}
spec: {controllerName: kube-node-net.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: st, generation: 1}
spec:
  gatewayClassName: ours
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: st, generation: 1}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: a, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: elsewhere, namespace: other, generation: 1}
spec:
  parentRefs: [{name: gw, namespace: st}]
  rules: [{backendRefs: [{name: a, port: 80}]}]
";

/// The status (`"True"`, …) of the first condition of type `type_` in the status file `yaml`
/// (each condition is written as a block that starts with its `lastTransitionTime`).
fn condition_status(yaml: &str, type_: &str) -> Option<String> {
    let block = yaml
        .split("lastTransitionTime:")
        .find(|block| block.lines().any(|l| l.trim() == format!("type: {type_}")))?;
    let status = block
        .lines()
        .find_map(|l| l.trim().strip_prefix("status: "))?;
    Some(status.trim_matches('"').to_owned())
}

/// The status file of `resource` `key` beside the manifests.
fn status_file(c: &Controller, resource: &str, key: &str) -> String {
    let path = c
        .manifests_dir()
        .join(format!(".status/{resource}/{key}.yaml"));
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The Gateway API statuses are written beside the manifests as an API server would keep
/// them: the class Accepted, the Gateway Accepted and, once nginx runs it, Programmed, with the
/// published address and one attached route, the route Accepted under our controller, and the route from a namespace the
/// listener does not allow (`from: Same` by default) refused with `NotAllowedByListeners`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_api_statuses_are_written_beside_the_manifests() {
    if support::ran_elsewhere() {
        return;
    }
    let (_backends, mut m) = objects().await;
    m.push_str(GATEWAY_API);
    let args = ["--publish-status-address=192.0.2.10".to_owned()];
    let mut c = Controller::start_with(&m, &args).await;
    eventually("the route statuses written", || async {
        status_file(&c, "httproutes", "st/web").contains("ResolvedRefs")
            && status_file(&c, "httproutes", "other/elsewhere").contains("NotAllowedByListeners")
    })
    .await;
    eventually("the Gateway programmed", || async {
        let gateway = status_file(&c, "gateways", "st/gw");
        condition_status(&gateway, "Programmed").as_deref() == Some("True")
    })
    .await;
    let class = status_file(&c, "gatewayclasses", "ours");
    assert_eq!(
        condition_status(&class, "Accepted").as_deref(),
        Some("True"),
        "{class}"
    );
    let gateway = status_file(&c, "gateways", "st/gw");
    assert!(gateway.contains("192.0.2.10"), "{gateway}");
    assert_eq!(
        condition_status(&gateway, "Accepted").as_deref(),
        Some("True")
    );
    assert!(gateway.contains("attachedRoutes: 1"), "{gateway}");
    let route = status_file(&c, "httproutes", "st/web");
    assert!(
        route.contains("controllerName: kube-node-net.io/gateway-controller"),
        "{route}"
    );
    c.stop();
}

/// With `--gateway-addresses`, a Gateway is served on an address of its own from the pool, and
/// that address is what its status publishes (not the Ingress status's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_on_its_own_address_publishes_it() {
    if support::ran_elsewhere() {
        return;
    }
    let (_backends, mut m) = objects().await;
    m.push_str(GATEWAY_API);
    let args = [
        "--publish-status-address=192.0.2.10".to_owned(),
        "--gateway-addresses=127.0.1.0/24".to_owned(),
    ];
    let mut c = Controller::start_with(&m, &args).await;
    eventually("the Gateway programmed on its own address", || async {
        let gateway = status_file(&c, "gateways", "st/gw");
        condition_status(&gateway, "Programmed").as_deref() == Some("True")
            && gateway.contains("127.0.1.")
    })
    .await;
    let gateway = status_file(&c, "gateways", "st/gw");
    assert!(!gateway.contains("192.0.2.10"), "{gateway}");
    c.stop();
}
