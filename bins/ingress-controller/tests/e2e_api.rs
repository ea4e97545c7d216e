//! Two replicas on cluster-state's fake API server (`--kubeconfig`), electing their leader on
//! a Lease of that server (`--election-id` in `POD_NAMESPACE`, lease-driver's KubernetesStore): both serve
//! the Ingress read from the API; only the Lease's holder PATCHes its status and POSTs the
//! event of its invalid annotation, each once however many renewals; Secrets are listed and watched with the field selector
//! `type=kubernetes.io/tls`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::path::Path;

use axum::http::Method;
use cluster_state::fake_api::{FakeApi, Reply, Script, Seen};
use serde_json::{Value, json};
use support::{Backends, Controller, backend_ip, eventually};

const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/ingress-nginx/leases";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/lead/events";
const STATUS: &str = "/apis/networking.k8s.io/v1/namespaces/lead/ingresses/web/status";
const SECRETS: &str = "/api/v1/secrets";
const WRITES: &str = "ingress_controller_status_writes_total";
const EVENTS_RECORDED: &str = "ingress_controller_events_total";

fn list(api_version: &str, kind: &str, items: &[Value]) -> Reply {
    let list = json!({
        "apiVersion": api_version,
        "kind": format!("{kind}List"),
        "metadata": {"resourceVersion": "1"},
        "items": items,
    });
    Reply::ok(list.to_string())
}

/// The fake API: an IngressClass, a Service with one endpoint (`port`), an Ingress with an
/// invalid annotation; no TLS Secret; Lease and Event stores; the status PATCH answered.
fn script(port: u16) -> Script {
    let mut script = Script::default();
    let class = json!({
        "metadata": {"name": "nginx"},
        "spec": {"controller": "k8s.io/ingress-nginx"},
    });
    let service = json!({
        "metadata": {"name": "a", "namespace": "lead"},
        "spec": {"ports": [{"name": "http", "port": 80}]},
    });
    let slice = json!({
        "metadata": {"name": "a-0", "namespace": "lead",
                     "labels": {"kubernetes.io/service-name": "a"}},
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": port}],
        "endpoints": [{"addresses": [backend_ip().to_string()]}],
    });
    let ingress = json!({
        "metadata": {"name": "web", "namespace": "lead", "uid": "0c5f-web",
                     "annotations": {"nginx.ingress.kubernetes.io/limit-rps": "lots"}},
        "spec": {"ingressClassName": "nginx", "rules": [{"host": "web.example.com", "http": {
            "paths": [{"path": "/", "pathType": "Prefix", "backend": {
                "service": {"name": "a", "port": {"number": 80}}}}]}}]},
    });
    let networking = "networking.k8s.io/v1";
    script
        .list(
            "/apis/networking.k8s.io/v1/ingressclasses",
            list(networking, "IngressClass", &[class]),
        )
        .list(
            "/apis/networking.k8s.io/v1/ingresses",
            list(networking, "Ingress", std::slice::from_ref(&ingress)),
        )
        .list("/api/v1/services", list("v1", "Service", &[service]))
        .list(
            "/apis/discovery.k8s.io/v1/endpointslices",
            list("discovery.k8s.io/v1", "EndpointSlice", &[slice]),
        )
        .list(SECRETS, list("v1", "Secret", &[]))
        .list("/api/v1/namespaces", list("v1", "Namespace", &[]))
        .write(Method::PATCH, STATUS, Reply::ok(ingress.to_string()))
        .store(LEASES)
        .store(EVENTS);
    script
}

fn kubeconfig(dir: &Path, api: &FakeApi) -> std::path::PathBuf {
    let text = format!(
        "apiVersion: v1\nkind: Config\n\
         clusters: [{{name: fake, cluster: {{server: '{}'}}}}]\n\
         users: [{{name: fake, user: {{}}}}]\n\
         contexts: [{{name: fake, context: {{cluster: fake, user: fake}}}}]\n\
         current-context: fake\n",
        api.url().to_string().trim_end_matches('/')
    );
    let path = dir.join("kubeconfig");
    std::fs::write(&path, text).unwrap();
    path
}

fn count(seen: &[Seen], method: &Method, path: &str) -> usize {
    seen.iter()
        .filter(|r| r.method == *method && r.path == path)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_the_api_elect_on_a_lease_and_only_the_leader_writes() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["a"]).await;
    let api = FakeApi::start(script(backends.port("a"))).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig(dir.path(), &api);
    let args = || -> Vec<String> {
        [
            "--publish-status-address",
            "192.0.2.10",
            // ingress-nginx's flag: the Lease's name, in the pod's namespace (POD_NAMESPACE).
            "--election-id",
            "ingress-controller-leader",
            // Long enough that a loaded machine never loses the lease by a slow renewal.
            "--lease-ms",
            "15000",
            "--renew-ms",
            "10000",
            "--retry-ms",
            "500",
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let one = Controller::start_api(&kubeconfig, "one", &args()).await;
    let two = Controller::start_api(&kubeconfig, "two", &args()).await;
    assert_eq!(one.get("web.example.com", "/").await.backend(), "a");
    assert_eq!(two.get("web.example.com", "/").await.backend(), "a");

    let lease = format!("{LEASES}/ingress-controller-leader");
    eventually("a status and an event written", || async {
        let seen = api.seen();
        count(&seen, &Method::PATCH, STATUS) > 0 && count(&seen, &Method::POST, EVENTS) > 0
    })
    .await;
    let holder = api.object(&lease).unwrap()["spec"]["holderIdentity"].clone();
    let (leader, follower) = if holder == "one" {
        (&one, &two)
    } else {
        (&two, &one)
    };
    // The server sees a request before the replica counts its answer.
    eventually("the leader's counts", || async {
        leader.metric(WRITES).await >= 1.0 && leader.metric(EVENTS_RECORDED).await >= 1.0
    })
    .await;
    assert_eq!(leader.metric(EVENTS_RECORDED).await, 1.0);
    assert_eq!(follower.metric(WRITES).await, 0.0);
    assert_eq!(follower.metric(EVENTS_RECORDED).await, 0.0);
    // A renewal is no change of leadership and the status already holds: no second PATCH.
    let renewals = count(&api.seen(), &Method::PUT, &lease);
    eventually("three more lease renewals", || async {
        count(&api.seen(), &Method::PUT, &lease) >= renewals + 3
    })
    .await;
    assert_eq!(count(&api.seen(), &Method::PATCH, STATUS), 1);
    assert_eq!(leader.metric(WRITES).await, 1.0);
    // One event, however many reconciles and renewals.
    let seen = api.seen();
    assert_eq!(count(&seen, &Method::POST, EVENTS), 1);

    let post = seen
        .iter()
        .find(|r| r.method == Method::POST && r.path == EVENTS)
        .unwrap();
    let event: Value = serde_json::from_str(&post.body).unwrap();
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["reason"], "InvalidAnnotation");
    assert_eq!(event["reportingInstance"], holder);
    assert_eq!(event["regarding"]["uid"], "0c5f-web");
    let note = event["note"].as_str().unwrap();
    assert!(
        note.contains("nginx.ingress.kubernetes.io/limit-rps"),
        "{note}"
    );
    let patch: Value =
        serde_json::from_str(&seen.iter().find(|r| r.path == STATUS).unwrap().body).unwrap();
    assert_eq!(
        patch,
        json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}})
    );

    // Only TLS Secrets are read: every Secret list and watch carries the field selector.
    let secrets: Vec<_> = seen.iter().filter(|r| r.path == SECRETS).collect();
    assert!(!secrets.is_empty());
    for request in secrets {
        assert_eq!(
            request.param("fieldSelector"),
            Some("type%3Dkubernetes.io%2Ftls"),
            "{request:?}"
        );
    }
}

/// `--status-update-interval`: the leader compares the status the API holds with its own
/// every interval and writes it again where it differs. The fake API's watch never shows the
/// PATCHed status (as if someone had reset it), so each re-check finds drift and fixes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leader_rechecks_the_status_every_interval_and_fixes_drift() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["a"]).await;
    let api = FakeApi::start(script(backends.port("a"))).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig(dir.path(), &api);
    let args = [
        "--publish-status-address=192.0.2.10",
        "--disable-leader-election",
        // ingress-nginx's minimum.
        "--status-update-interval=5",
    ]
    .map(str::to_owned);
    let one = Controller::start_api(&kubeconfig, "one", &args).await;
    eventually("the first status write", || async {
        count(&api.seen(), &Method::PATCH, STATUS) >= 1
    })
    .await;
    let first = std::time::Instant::now();
    eventually("the drift fixed at the next re-check", || async {
        count(&api.seen(), &Method::PATCH, STATUS) >= 2
    })
    .await;
    // Not before the interval (nothing else changed meanwhile).
    assert!(
        first.elapsed() >= std::time::Duration::from_secs(3),
        "{:?}",
        first.elapsed()
    );
    eventually("two writes counted", || async {
        one.metric(WRITES).await >= 2.0
    })
    .await;
}
