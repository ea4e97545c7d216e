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

/// The reason of the first condition of type `type_` in the status file `yaml`.
fn condition_reason(yaml: &str, type_: &str) -> Option<String> {
    let block = yaml
        .split("lastTransitionTime:")
        .find(|block| block.lines().any(|l| l.trim() == format!("type: {type_}")))?;
    let reason = block
        .lines()
        .find_map(|l| l.trim().strip_prefix("reason: "))?;
    Some(reason.trim_matches('"').to_owned())
}

/// Replaces the manifests without waiting for a load: a step that changes only statuses
/// gives nginx nothing new.
fn replace_manifests(c: &Controller, manifests: &str) {
    let dir = c.manifests_dir();
    let tmp = dir.parent().unwrap().join("objects.yaml.next");
    std::fs::write(&tmp, manifests).unwrap();
    std::fs::rename(&tmp, dir.join("objects.yaml")).unwrap();
}

/// GATEWAY_API with the Gateway asking for `addresses` (a YAML flow list), and a second
/// Gateway `any` that asks for an address of the pool without naming it.
fn static_addresses(addresses: &str) -> String {
    let requested = GATEWAY_API.replace(
        "  gatewayClassName: ours\n",
        &format!("  gatewayClassName: ours\n  addresses: {addresses}\n"),
    );
    requested
        + r"
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: any, namespace: st, generation: 1}
spec:
  gatewayClassName: ours
  addresses: [{type: IPAddress}]
  listeners: [{name: http, port: 80, protocol: HTTP}]
"
}

/// S-GW.7, the steps of GatewayStaticAddresses (v1.6.1 `conformance/tests/
/// gateway-static-addresses.go`) with `127.0.1.77` usable (in the pool) and `10.9.9.9` not:
/// an unsupported address type → `Accepted=False/UnsupportedAddress`; without it, the unusable
/// address → `Programmed=False/AddressNotUsable`; the usable one alone → served there and
/// published, alone, as `IPAddress`. GatewayOptionalAddressValue's Gateway (a type without
/// value) gets an address of the pool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s_gw_7_a_gateway_gets_the_pool_address_it_asks_for() {
    if support::ran_elsewhere() {
        return;
    }
    let (_backends, base) = objects().await;
    let args = ["--gateway-addresses=127.0.1.0/24".to_owned()];
    let all = "[{type: test/fake-invalid-type, value: 'fake address teehee!'}, \
               {value: 10.9.9.9}, {value: 127.0.1.77}]";
    let mut c = Controller::start_with(&(base.clone() + &static_addresses(all)), &args).await;
    let reason =
        |c: &Controller, type_: &str| condition_reason(&status_file(c, "gateways", "st/gw"), type_);
    eventually("UnsupportedAddress", || async {
        reason(&c, "Accepted").as_deref() == Some("UnsupportedAddress")
    })
    .await;
    let gateway = status_file(&c, "gateways", "st/gw");
    assert_eq!(
        condition_status(&gateway, "Accepted").as_deref(),
        Some("False")
    );

    let two = "[{value: 10.9.9.9}, {value: 127.0.1.77}]";
    replace_manifests(&c, &(base.clone() + &static_addresses(two)));
    eventually("AddressNotUsable", || async {
        reason(&c, "Programmed").as_deref() == Some("AddressNotUsable")
    })
    .await;
    let gateway = status_file(&c, "gateways", "st/gw");
    assert_eq!(
        condition_status(&gateway, "Accepted").as_deref(),
        Some("True")
    );
    assert_eq!(
        condition_status(&gateway, "Programmed").as_deref(),
        Some("False")
    );

    replace_manifests(&c, &(base + &static_addresses("[{value: 127.0.1.77}]")));
    eventually("programmed on the address asked for", || async {
        reason(&c, "Programmed").as_deref() == Some("Programmed")
    })
    .await;
    let gateway = status_file(&c, "gateways", "st/gw");
    let published: Vec<&str> = gateway
        .lines()
        .filter_map(|l| l.trim().strip_prefix("value: "))
        .map(|v| v.trim_matches('"'))
        .collect();
    assert_eq!(published, ["127.0.1.77"], "{gateway}");
    assert!(gateway.contains("type: IPAddress"), "{gateway}");
    let to = std::net::SocketAddr::from(([127, 0, 1, 77], c.http));
    eventually("served on 127.0.1.77", || async {
        support::request_to(to, "GET", "web.example.com", "/", &[], "")
            .await
            .is_some_and(|r| r.status == 200 && r.backend() == "a")
    })
    .await;

    // The Gateway that names no value: the lowest free address of the pool.
    let any = status_file(&c, "gateways", "st/any");
    assert_eq!(
        condition_status(&any, "Programmed").as_deref(),
        Some("True"),
        "{any}"
    );
    assert!(any.contains("value: \"127.0.1.1\"\n"), "{any}");
    c.stop();
}

/// S-ST.2: a Gateway whose class goes to another controller gets our conditions reset to
/// `Unknown/Pending`, its listeners and addresses removed, written by the controller once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_that_stops_being_ours_is_reset() {
    if support::ran_elsewhere() {
        return;
    }
    let (_backends, mut m) = objects().await;
    m.push_str(GATEWAY_API);
    let args = ["--publish-status-address=192.0.2.10".to_owned()];
    let mut c = Controller::start_with(&m, &args).await;
    eventually("the Gateway programmed", || async {
        let gateway = status_file(&c, "gateways", "st/gw");
        condition_status(&gateway, "Programmed").as_deref() == Some("True")
    })
    .await;
    let theirs = m.replace(
        "spec: {controllerName: kube-node-net.io/gateway-controller}",
        "spec: {controllerName: example.com/other}",
    );
    replace_manifests(&c, &theirs);
    eventually("the Gateway reset", || async {
        let gateway = status_file(&c, "gateways", "st/gw");
        condition_status(&gateway, "Accepted").as_deref() == Some("Unknown")
    })
    .await;
    let gateway = status_file(&c, "gateways", "st/gw");
    assert_eq!(
        condition_reason(&gateway, "Programmed").as_deref(),
        Some("Pending")
    );
    assert!(!gateway.contains("ResolvedRefs"), "{gateway}");
    assert!(!gateway.contains("192.0.2.10"), "{gateway}");
    assert!(!gateway.contains("attachedRoutes"), "{gateway}");
    c.stop();
}

/// HTTPRouteInvalidParentRefSectionNameNotMatchingPort (v1.6.1): a parentRef whose
/// `sectionName` names the listener on port 80 but whose `port` is 81 matches no listener:
/// the route is `Accepted=False/NoMatchingParent` and the Gateway has no route attached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_name_on_another_port_matches_no_parent() {
    if support::ran_elsewhere() {
        return;
    }
    let (_backends, mut m) = objects().await;
    m.push_str(&GATEWAY_API.replace(
        "  parentRefs: [{name: gw}]",
        "  parentRefs: [{name: gw, sectionName: http, port: 81}]",
    ));
    let args = ["--publish-status-address=192.0.2.10".to_owned()];
    let mut c = Controller::start_with(&m, &args).await;
    eventually("the route refused", || async {
        let route = status_file(&c, "httproutes", "st/web");
        condition_reason(&route, "Accepted").as_deref() == Some("NoMatchingParent")
    })
    .await;
    let route = status_file(&c, "httproutes", "st/web");
    assert_eq!(route.matches("controllerName:").count(), 1, "{route}");
    assert_eq!(
        condition_status(&route, "Accepted").as_deref(),
        Some("False")
    );
    eventually("the Gateway written", || async {
        status_file(&c, "gateways", "st/gw").contains("attachedRoutes: 0")
    })
    .await;
    c.stop();
}
