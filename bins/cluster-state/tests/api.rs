//! The API source against a fake API server that answers with recorded responses: the same
//! snapshots as the manifest source, watch events, reconnects, relists, and status writes.
#![cfg(feature = "kube-api")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::http::Method;
use cluster_state::k8s::api::networking::v1::{
    IngressLoadBalancerIngress, IngressLoadBalancerStatus,
};
use cluster_state::k8s::apimachinery::pkg::util::intstr::IntOrString;
use cluster_state::{Kind, ObjectRef, Snapshot, Source, StatusError};
use support::fake_api::{FakeApi, Reply, Script, Seen};
use tokio::sync::watch;

/// Liveness only: how long the source may take (a retry waits up to ~1.6 s of backoff).
const PATIENCE: Duration = Duration::from_secs(30);

const SERVICES: &str = "/api/v1/services";

fn recorded(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/api")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// Where the API serves the objects of `kind` in every namespace.
fn collection(kind: Kind) -> String {
    let plural = match kind {
        Kind::Service => "services",
        Kind::EndpointSlice => "endpointslices",
        Kind::Ingress => "ingresses",
        Kind::IngressClass => "ingressclasses",
        Kind::Secret => "secrets",
        Kind::ConfigMap => "configmaps",
        Kind::Lease => "leases",
        Kind::Namespace => "namespaces",
    };
    match kind.api_version() {
        "v1" => format!("/api/v1/{plural}"),
        group_version => format!("/apis/{group_version}/{plural}"),
    }
}

async fn wait_for(
    snapshots: &mut watch::Receiver<Arc<Snapshot>>,
    done: impl Fn(&Snapshot) -> bool,
) -> Arc<Snapshot> {
    let waited = tokio::time::timeout(PATIENCE, snapshots.wait_for(|s| done(s))).await;
    let snapshot = waited.expect("no such snapshot in time").unwrap();
    Arc::clone(&snapshot)
}

fn watches(seen: &[Seen]) -> impl Iterator<Item = &Seen> {
    seen.iter().filter(|request| request.is_watch())
}

fn service_names(snapshot: &Snapshot) -> Vec<String> {
    snapshot.services.keys().map(ToString::to_string).collect()
}

#[tokio::test]
async fn the_api_source_publishes_what_the_manifest_source_does() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cluster");
    let manifests = Source::manifests(&examples, Kind::ALL, Duration::from_millis(50));
    let expected = manifests.await.unwrap().current();

    // The same objects, as List responses of the API.
    let mut script = Script::default();
    for kind in Kind::ALL {
        let items: Vec<_> = expected.objects(*kind).collect();
        let list = serde_json::json!({
            "apiVersion": kind.api_version(),
            "kind": format!("{}List", kind.name()),
            "metadata": {"resourceVersion": "7"},
            "items": items,
        });
        script.list(&collection(*kind), Reply::ok(list.to_string()));
    }
    let api = FakeApi::start(script).await;
    let source = Source::api(api.client(), Kind::ALL);
    let mut snapshots = source.snapshots();
    assert_eq!(
        snapshots.borrow().revision,
        0,
        "nothing before every kind is listed"
    );

    let snapshot = wait_for(&mut snapshots, |s| s.revision > 0).await;
    assert_eq!(snapshot.revision, 1);
    assert!(snapshot.same_objects(&expected));
    assert_eq!(snapshot.changes, expected.changes);

    // Then each kind is watched from its list's version.
    let all_watched = |seen: &[Seen]| watches(seen).count() == Kind::ALL.len();
    for watch in watches(&api.wait_for_requests(all_watched).await) {
        assert_eq!(
            watch.param("resourceVersion").as_deref(),
            Some("7"),
            "{watch:?}"
        );
    }
}

#[tokio::test]
async fn watch_events_add_modify_and_delete() {
    let mut script = Script::default();
    script
        .list(SERVICES, Reply::ok(recorded("services.list.json")))
        .watch(SERVICES, &recorded("services.watch.jsonl"), false);
    let api = FakeApi::start(script).await;
    let source = Source::api(api.client(), &[Kind::Service]);
    let mut snapshots = source.snapshots();

    let done = |s: &Snapshot| service_names(s) == ["shop/a", "shop/c"];
    let snapshot = wait_for(&mut snapshots, done).await;
    let a = &snapshot.services[&ObjectRef::new("shop", "a")];
    let port = &a.spec.as_ref().unwrap().ports.as_ref().unwrap()[0];
    assert_eq!(
        port.target_port,
        Some(IntOrString::Int(9090)),
        "MODIFIED applied"
    );
    assert!(snapshot.revision >= 2);
    assert!(
        snapshot.endpoint_slices.is_empty(),
        "only the kinds asked for"
    );
}

#[tokio::test]
async fn errors_are_retried_and_an_expired_watch_relists() {
    // The first list fails; the first watch closes at once (resumed from the same version),
    // the second is told its version expired (410), so the source lists again.
    let mut script = Script::default();
    script
        .list(
            SERVICES,
            Reply {
                status: 500,
                body: recorded("server-error.json"),
            },
        )
        .list(SERVICES, Reply::ok(recorded("services.list.json")))
        .list(SERVICES, Reply::ok(recorded("services.relist.json")))
        .watch(SERVICES, "", true)
        .watch(SERVICES, &recorded("services.watch-expired.jsonl"), true);
    let api = FakeApi::start(script).await;
    let source = Source::api(api.client(), &[Kind::Service]);
    let mut snapshots = source.snapshots();

    let first = wait_for(&mut snapshots, |s| s.revision > 0).await;
    assert_eq!(service_names(&first), ["shop/a", "shop/b"]);
    let relisted = wait_for(&mut snapshots, |s| {
        s.services.contains_key(&ObjectRef::new("web", "d"))
    })
    .await;
    assert_eq!(
        service_names(&relisted),
        ["shop/a", "web/d"],
        "b is gone with the relist"
    );
    let changed: Vec<_> = relisted
        .changes
        .of(Kind::Service)
        .map(ToString::to_string)
        .collect();
    assert_eq!(changed, ["shop/a", "shop/b", "web/d"]);

    let seen = api
        .wait_for_requests(|seen| watches(seen).count() == 3)
        .await;
    let lists = seen.iter().filter(|r| !r.is_watch()).count();
    assert_eq!(lists, 3, "{seen:#?}");
    let versions: Vec<_> = watches(&seen)
        .map(|r| r.param("resourceVersion").unwrap())
        .collect();
    assert_eq!(versions, ["1000", "1000", "2000"], "{seen:#?}");
}

#[tokio::test]
async fn ingress_status_is_patched_on_the_status_subresource() {
    let path = "/apis/networking.k8s.io/v1/namespaces/shop/ingresses/shop/status";
    let patched = serde_json::json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "shop", "namespace": "shop", "resourceVersion": "12"},
        "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}},
    });
    let mut script = Script::default();
    script.write(Method::PATCH, path, Reply::ok(patched.to_string()));
    script.write(
        Method::PATCH,
        "/apis/networking.k8s.io/v1/namespaces/shop/ingresses/nope/status",
        Reply {
            status: 404,
            body: recorded("ingress-not-found.json"),
        },
    );
    let api = FakeApi::start(script).await;
    let source = Source::api(api.client(), &[]);
    let status = IngressLoadBalancerStatus {
        ingress: Some(vec![IngressLoadBalancerIngress {
            ip: Some("192.0.2.10".into()),
            ..IngressLoadBalancerIngress::default()
        }]),
    };
    let key = ObjectRef::new("shop", "shop");
    source
        .write_ingress_status(&key, status.clone())
        .await
        .unwrap();
    let seen = api.seen();
    let patch = seen.iter().find(|r| r.path == path).unwrap();
    assert_eq!(patch.method, Method::PATCH);
    assert_eq!(patch.content_type, "application/merge-patch+json");
    let body: serde_json::Value = serde_json::from_str(&patch.body).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}})
    );

    let missing = ObjectRef::new("shop", "nope");
    let error = source
        .write_ingress_status(&missing, status)
        .await
        .unwrap_err();
    assert!(matches!(error, StatusError::NotFound { .. }), "{error}");
}
