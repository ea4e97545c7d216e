//! The API source against a fake API server that answers with recorded responses: the same
//! snapshots as the manifest source, watch events, reconnects, relists, status writes, TLS
//! Secrets only (a field selector), and events.
#![cfg(feature = "fake-api")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::http::Method;
use cluster_state::fake_api::{FakeApi, Reply, Script, Seen};
use cluster_state::k8s::api::events::v1::{Event, EventSeries};
use cluster_state::k8s::api::networking::v1::{
    IngressLoadBalancerIngress, IngressLoadBalancerStatus,
};
use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use cluster_state::k8s::apimachinery::pkg::util::intstr::IntOrString;
use cluster_state::k8s::jiff::Timestamp;
use cluster_state::{
    ApiCall, EVENT_API_CALLS, EventError, Filter, INVALID_OBJECT_EVENT_API_CALLS, Kind, ObjectRef,
    Reporter, Snapshot, Source, Status, StatusError, api_calls,
};
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
    let plural = kind.resource();
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

/// The requests of `seen` as RBAC names them: `verb group/resource[/subresource]`, sorted,
/// without repeats.
fn rbac_calls(seen: &[Seen]) -> Vec<String> {
    let mut calls: Vec<_> = seen.iter().map(rbac_call).collect();
    calls.sort();
    calls.dedup();
    calls
}

/// `GET /apis/networking.k8s.io/v1/namespaces/shop/ingresses/shop` is
/// `get networking.k8s.io/ingresses`, as [`ApiCall`]'s `Display` writes it.
fn rbac_call(request: &Seen) -> String {
    let segments: Vec<&str> = request.path.trim_start_matches('/').split('/').collect();
    let (group, rest) = match segments.as_slice() {
        ["api", _version, rest @ ..] => ("core", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => panic!("not an API path: {request:?}"),
    };
    let rest = match rest {
        ["namespaces", _namespace, rest @ ..] if !rest.is_empty() => rest,
        rest => rest,
    };
    let (resource, name, subresource) = match rest {
        [resource] => (*resource, None, None),
        [resource, name] => (*resource, Some(*name), None),
        [resource, name, sub] => (*resource, Some(*name), Some(*sub)),
        _ => panic!("not a resource path: {request:?}"),
    };
    let verb = match (&request.method, name) {
        (&Method::GET, _) if request.is_watch() => "watch",
        (&Method::GET, None) => "list",
        (&Method::GET, Some(_)) => "get",
        (&Method::POST, _) => "create",
        (&Method::PUT, _) => "update",
        (&Method::PATCH, _) => "patch",
        _ => panic!("unexpected method: {request:?}"),
    };
    let resource = subresource.map_or(resource.to_owned(), |sub| format!("{resource}/{sub}"));
    format!("{verb} {group}/{resource}")
}

fn declared(calls: impl IntoIterator<Item = ApiCall>) -> Vec<String> {
    let mut calls: Vec<_> = calls.into_iter().map(|call| call.to_string()).collect();
    calls.sort();
    calls
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
    let api = FakeApi::start(script).await.unwrap();
    let source = Source::api(api.client().unwrap(), Kind::ALL);
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
    let seen = api.wait_for_requests(PATIENCE, all_watched).await.unwrap();
    for watch in watches(&seen) {
        assert_eq!(watch.param("resourceVersion"), Some("7"), "{watch:?}");
    }
    // The RBAC rules derived from `api_calls` are exactly what the source asks for.
    assert_eq!(rbac_calls(&seen), declared(api_calls(Kind::ALL, &[])));
}

#[tokio::test]
async fn watch_events_add_modify_and_delete() {
    let mut script = Script::default();
    script
        .list(SERVICES, Reply::ok(recorded("services.list.json")))
        .watch(SERVICES, &recorded("services.watch.jsonl"), false);
    let api = FakeApi::start(script).await.unwrap();
    let source = Source::api(api.client().unwrap(), &[Kind::Service]);
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
    let api = FakeApi::start(script).await.unwrap();
    let source = Source::api(api.client().unwrap(), &[Kind::Service]);
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

    // The 500 and the 410, both retried.
    let metrics = common::metrics(&source);
    assert!(
        metrics.contains("cluster_state_api_request_errors_total 2\n"),
        "{metrics}"
    );

    let three_watches = |seen: &[Seen]| watches(seen).count() == 3;
    let seen = api
        .wait_for_requests(PATIENCE, three_watches)
        .await
        .unwrap();
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
    let api = FakeApi::start(script).await.unwrap();
    let source = Source::api(api.client().unwrap(), &[]);
    let status = IngressLoadBalancerStatus {
        ingress: Some(vec![IngressLoadBalancerIngress {
            ip: Some("192.0.2.10".into()),
            ..IngressLoadBalancerIngress::default()
        }]),
    };
    let key = ObjectRef::new("shop", "shop");
    source
        .write_status(&key, Status::Ingress(status.clone()))
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
        .write_status(&missing, Status::Ingress(status))
        .await
        .unwrap_err();
    assert!(matches!(error, StatusError::NotFound { .. }), "{error}");
    assert_eq!(
        rbac_calls(&api.seen()),
        declared(api_calls(&[], &[Kind::Ingress]))
    );
}

/// GatewayClass (cluster-scoped), Gateway and HTTPRoute statuses are merge-patched whole on
/// their `status` subresources, at the paths of their CRDs' group and version.
#[tokio::test]
async fn gateway_api_statuses_are_patched_on_their_status_subresources() {
    use cluster_state::gateway::{GatewayClassStatus, GatewayStatus, RouteStatus};

    let group = "/apis/gateway.networking.k8s.io/v1";
    let paths = [
        format!("{group}/gatewayclasses/nginx/status"),
        format!("{group}/namespaces/infra/gateways/gw/status"),
        format!("{group}/namespaces/shop/httproutes/web/status"),
        format!("{group}/namespaces/shop/grpcroutes/echo/status"),
    ];
    let mut script = Script::default();
    let specs = [
        (
            "GatewayClass",
            serde_json::json!({"controllerName": "example.com/gateway"}),
        ),
        (
            "Gateway",
            serde_json::json!({"gatewayClassName": "nginx", "listeners": []}),
        ),
        ("HTTPRoute", serde_json::json!({})),
        ("GRPCRoute", serde_json::json!({})),
    ];
    for (path, (kind, spec)) in paths.iter().zip(specs) {
        let body = serde_json::json!({"apiVersion": "gateway.networking.k8s.io/v1",
            "kind": kind, "metadata": {"name": "x"}, "spec": spec});
        script.write(Method::PATCH, path, Reply::ok(body.to_string()));
    }
    let api = FakeApi::start(script).await.unwrap();
    let source = Source::api(api.client().unwrap(), &[]);
    let writes = [
        (
            ObjectRef::cluster("nginx"),
            Status::GatewayClass(GatewayClassStatus::default()),
        ),
        (
            ObjectRef::new("infra", "gw"),
            Status::Gateway(GatewayStatus::default()),
        ),
        (
            ObjectRef::new("shop", "web"),
            Status::HttpRoute(RouteStatus::default()),
        ),
        (
            ObjectRef::new("shop", "echo"),
            Status::GrpcRoute(RouteStatus::default()),
        ),
    ];
    for (key, status) in writes {
        source.write_status(&key, status).await.unwrap();
    }
    let seen = api.seen();
    for path in &paths {
        let patch = seen.iter().find(|r| &r.path == path).unwrap();
        assert_eq!(patch.content_type, "application/merge-patch+json");
        let body: serde_json::Value = serde_json::from_str(&patch.body).unwrap();
        assert!(body["status"].is_object(), "{body}");
    }
    let kinds = [
        Kind::GatewayClass,
        Kind::Gateway,
        Kind::HttpRoute,
        Kind::GrpcRoute,
    ];
    assert_eq!(rbac_calls(&seen), declared(api_calls(&[], &kinds)));
}

#[tokio::test]
async fn a_lease_is_a_compare_and_swap_register_on_its_resource_version() {
    use cluster_state::k8s::api::coordination::v1::LeaseSpec;
    use cluster_state::{LeaseClient, LeaseError};

    let leases = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
    let mut script = Script::default();
    script.store(leases);
    let api = FakeApi::start(script).await.unwrap();
    let lease = LeaseClient::new(api.client().unwrap(), "kube-system", "ingress");
    let spec = |holder: &str| LeaseSpec {
        holder_identity: Some(holder.into()),
        lease_duration_seconds: Some(15),
        ..LeaseSpec::default()
    };

    assert!(lease.get().await.unwrap().is_none());
    let missing = lease.replace(spec("a"), "1").await.unwrap_err();
    assert!(matches!(missing, LeaseError::NotFound), "{missing}");
    let created = lease.create(spec("a")).await.unwrap();
    let again = lease.create(spec("b")).await.unwrap_err();
    assert!(matches!(again, LeaseError::Conflict), "{again}");

    let (read, version) = lease.get().await.unwrap().unwrap();
    assert_eq!(
        (read.holder_identity.as_deref(), version.as_str()),
        (Some("a"), created.as_str())
    );
    let replaced = lease.replace(spec("b"), &version).await.unwrap();
    assert_ne!(replaced, version);
    let stale = lease.replace(spec("c"), &version).await.unwrap_err();
    assert!(matches!(stale, LeaseError::Conflict), "{stale}");

    let stored = api.object(&format!("{leases}/ingress")).unwrap();
    assert_eq!(stored["spec"]["holderIdentity"], "b");
    assert_eq!(stored["metadata"]["resourceVersion"], replaced.as_str());
    let put = api
        .seen()
        .into_iter()
        .rfind(|r| r.method == Method::PUT)
        .unwrap();
    assert_eq!(put.path, format!("{leases}/ingress"));
    assert_eq!(rbac_calls(&api.seen()), declared(LeaseClient::API_CALLS));
}

#[tokio::test]
async fn one_node_only_is_listed_and_watched_with_a_field_selector() {
    let node = |name: &str| serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}});
    // The manifest source drops the other Nodes.
    let dir = tempfile::tempdir().unwrap();
    for name in ["node-a", "node-b"] {
        let text = serde_json::to_string(&node(name)).unwrap();
        std::fs::write(dir.path().join(format!("{name}.json")), text).unwrap();
    }
    let only_a = Filter::default().only_node("node-a");
    let manifests =
        Source::manifests_filtered(dir.path(), &[Kind::Node], only_a, Duration::from_millis(50));
    let expected = manifests.await.unwrap().current();
    let names: Vec<_> = expected.nodes.keys().map(ToString::to_string).collect();
    assert_eq!(names, ["node-a"]);

    // The API source asks the server for that one alone, in its list and its watch.
    let selector = "metadata.name%3Dnode-a";
    api_source_narrows(Kind::Node, only_a, &expected, selector).await;
}

/// Serves the objects of `kind` in `expected` from a fake API server to an API source
/// narrowed by `filter`; checks that it publishes exactly them and that its every list and
/// watch asks for `selector` (URL-encoded) alone.
async fn api_source_narrows(kind: Kind, filter: Filter, expected: &Snapshot, selector: &str) {
    let items: Vec<_> = expected.objects(kind).collect();
    let list = serde_json::json!({
        "apiVersion": kind.api_version(), "kind": format!("{kind}List"),
        "metadata": {"resourceVersion": "3"}, "items": items,
    });
    let mut script = Script::default();
    script.list(&collection(kind), Reply::ok(list.to_string()));
    let api = FakeApi::start(script).await.unwrap();
    let source = Source::api_filtered(api.client().unwrap(), &[kind], filter, None);
    let mut snapshots = source.snapshots();
    let snapshot = wait_for(&mut snapshots, |s| s.revision > 0).await;
    assert!(snapshot.same_objects(expected));
    let seen = api
        .wait_for_requests(PATIENCE, |seen| watches(seen).count() > 0)
        .await
        .unwrap();
    let (lists, watched): (Vec<_>, Vec<_>) = seen.iter().partition(|r| !r.is_watch());
    assert!(!lists.is_empty());
    for request in lists.iter().chain(&watched) {
        assert_eq!(
            request.param("fieldSelector"),
            Some(selector),
            "{request:?}"
        );
    }
}

#[tokio::test]
async fn tls_secrets_only_are_listed_and_watched_with_a_field_selector() {
    // The manifest source drops the other Secrets.
    let dir = tempfile::tempdir().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cluster");
    let tls = examples.join("ingress/shop-tls-secret.yaml");
    std::fs::copy(tls, dir.path().join("tls.yaml")).unwrap();
    let opaque = "apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: shop}\n\
                  type: Opaque\ndata: {token: c2VjcmV0}\n";
    std::fs::write(dir.path().join("opaque.yaml"), opaque).unwrap();
    let everything = Source::manifests(dir.path(), &[Kind::Secret], Duration::from_millis(50));
    assert_eq!(everything.await.unwrap().current().secrets.len(), 2);
    let manifests = Source::manifests_filtered(
        dir.path(),
        &[Kind::Secret],
        Filter::TLS_SECRETS,
        Duration::from_millis(50),
    );
    let expected = manifests.await.unwrap().current();
    let names: Vec<_> = expected.secrets.keys().map(ToString::to_string).collect();
    assert_eq!(names, ["shop/shop-tls"]);

    // The API source asks the server for them alone, in its list and its watch.
    let selector = "type%3Dkubernetes.io%2Ftls";
    api_source_narrows(Kind::Secret, Filter::TLS_SECRETS, &expected, selector).await;
}

fn event(name: &str, count: Option<i32>) -> Event {
    let time = MicroTime(Timestamp::from_second(1_796_032_800).unwrap());
    Event {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("shop".into()),
            ..ObjectMeta::default()
        },
        event_time: Some(time.clone()),
        series: count.map(|count| EventSeries {
            count,
            last_observed_time: time,
        }),
        type_: Some("Warning".into()),
        reason: Some("InvalidAnnotation".into()),
        note: Some("annotation limit-rps: not a number".into()),
        ..Event::default()
    }
}

#[tokio::test]
async fn events_are_created_and_their_repeats_patch_the_series() {
    let events = "/apis/events.k8s.io/v1/namespaces/shop/events";
    let mut script = Script::default();
    script.store(events);
    script.write(
        Method::PATCH,
        &format!("{events}/web.1"),
        Reply::ok(serde_json::to_string(&event("web.1", Some(2))).unwrap()),
    );
    let api = FakeApi::start(script).await.unwrap();
    let source = Source::api(api.client().unwrap(), &[]);

    source.record_event(&event("web.1", None)).await.unwrap();
    let created = api.object(&format!("{events}/web.1")).unwrap();
    assert_eq!(created["reason"], "InvalidAnnotation");
    assert_eq!(created["regarding"], serde_json::Value::Null);

    // A repeat patches the series alone.
    source.record_event(&event("web.1", Some(2))).await.unwrap();
    let seen = api.seen();
    let patch = seen.iter().find(|r| r.method == Method::PATCH).unwrap();
    assert_eq!(patch.path, format!("{events}/web.1"));
    assert_eq!(patch.content_type, "application/merge-patch+json");
    let body: serde_json::Value = serde_json::from_str(&patch.body).unwrap();
    assert_eq!(body["series"]["count"], 2);
    assert_eq!(body.as_object().unwrap().len(), 1, "{body}");

    // A repeat of an event the server no longer has (404) creates it again.
    source.record_event(&event("web.2", Some(3))).await.unwrap();
    let recreated = api.object(&format!("{events}/web.2")).unwrap();
    assert_eq!(recreated["series"]["count"], 3);

    let invalid = source.record_event(&event("../web", None)).await; // check-paths: ignore
    assert!(
        matches!(invalid, Err(EventError::InvalidName { .. })),
        "{invalid:?}"
    );
    assert_eq!(rbac_calls(&api.seen()), declared(EVENT_API_CALLS));
}

/// The recorded list of Services with `b`'s port renamed to `name`.
fn services_with_port_name(name: &str) -> String {
    let mut list: serde_json::Value =
        serde_json::from_str(&recorded("services.list.json")).unwrap();
    let b = list["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|item| item["metadata"]["name"] == "b")
        .unwrap();
    b["spec"]["ports"][0]["name"] = name.into();
    list.to_string()
}

#[tokio::test]
async fn an_invalid_object_from_the_api_is_left_out_and_recorded_as_an_event() {
    // Issue #28's payload: a port name that would be an iptables rule of its own.
    let payload = "x\n-A KUBE-SERVICES -p tcp -d 10.96.0.1 --dport 443 -j DNAT \
                   --to-destination 6.6.6.6:443\n#";
    let events = "/apis/events.k8s.io/v1/namespaces/shop/events";
    let mut script = Script::default();
    script
        .list(SERVICES, Reply::ok(services_with_port_name(payload)))
        .watch(SERVICES, "", false)
        .store(events);
    let api = FakeApi::start(script).await.unwrap();
    let reporter = Reporter {
        controller: "kube-node-net/service-proxy",
        instance: "node-1".into(),
    };
    let client = api.client().unwrap();
    let source = Source::api_filtered(client, &[Kind::Service], Filter::default(), Some(reporter));
    let mut snapshots = source.snapshots();

    let first = wait_for(&mut snapshots, |s| s.revision > 0).await;
    assert_eq!(service_names(&first), ["shop/a"], "b is left out");

    let posted = tokio::time::timeout(PATIENCE, async {
        loop {
            let seen = api.seen();
            if let Some(post) = seen.iter().find(|r| r.method == Method::POST) {
                return post.clone();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("an event for the invalid Service");
    assert_eq!(posted.path, events);
    let event: Event = serde_json::from_str(&posted.body).unwrap();
    let regarding = event.regarding.unwrap();
    assert_eq!(
        (regarding.kind.as_deref(), regarding.name.as_deref()),
        (Some("Service"), Some("b"))
    );
    assert_eq!(event.reason.as_deref(), Some("Invalid"));
    assert_eq!(event.reporting_instance.as_deref(), Some("node-1"));
    let note = event.note.unwrap();
    assert!(note.contains("spec.ports[0].name"), "{note}");
    assert!(!note.contains('\n'), "the payload is escaped: {note}");
    let calls = rbac_calls(&api.seen());
    let expected = api_calls(&[Kind::Service], &[])
        .into_iter()
        .chain(INVALID_OBJECT_EVENT_API_CALLS);
    assert_eq!(calls, declared(expected));
}

#[tokio::test]
async fn events_are_files_beside_the_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let source = Source::manifests(dir.path(), &[], Duration::from_millis(50));
    let source = source.await.unwrap();
    source.record_event(&event("web.1", None)).await.unwrap();
    source.record_event(&event("web.1", Some(2))).await.unwrap();
    let path = dir.path().join(".status/events/shop/web.1.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let parsed = cluster_state::parse_manifest(&path, &text);
    assert!(parsed.is_ok(), "{parsed:?}");
    for expected in [
        "kind: Event",
        "apiVersion: events.k8s.io/v1",
        "count: 2",
        "InvalidAnnotation",
    ] {
        assert!(text.contains(expected), "{expected} in {text}");
    }
    let entries = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
    assert_eq!(entries, 1, "no temporary file left");
    let invalid = source.record_event(&event("../web", None)).await; // check-paths: ignore
    assert!(
        matches!(invalid, Err(EventError::InvalidName { .. })),
        "{invalid:?}"
    );
}

#[tokio::test]
async fn absent_gateway_api_crds_do_not_hold_the_snapshot_back_and_are_picked_up_later() {
    // The Gateway API kinds' lists answer 404 with the API server's plain-text body (their
    // CRDs are not installed); HTTPRoutes appear on the second asking.
    let routes = "/apis/gateway.networking.k8s.io/v1/httproutes";
    let not_served = Reply {
        status: 404,
        body: "404 page not found".to_owned(),
    };
    let route_list = serde_json::json!({
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRouteList",
        "metadata": {"resourceVersion": "9"},
        "items": [{
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "9"},
            "spec": {"parentRefs": [{"name": "gateway"}]},
        }],
    });
    let mut script = Script::default();
    script
        .list(SERVICES, Reply::ok(recorded("services.list.json")))
        .list(routes, not_served.clone())
        .list(routes, Reply::ok(route_list.to_string()));
    for kind in [
        Kind::GatewayClass,
        Kind::Gateway,
        Kind::GrpcRoute,
        Kind::ReferenceGrant,
    ] {
        script.list(&collection(kind), not_served.clone());
    }
    let api = FakeApi::start(script).await.unwrap();
    let kinds = [
        Kind::Service,
        Kind::GatewayClass,
        Kind::Gateway,
        Kind::HttpRoute,
        Kind::GrpcRoute,
        Kind::ReferenceGrant,
    ];
    let source = Source::api(api.client().unwrap(), &kinds);
    let mut snapshots = source.snapshots();

    let first = wait_for(&mut snapshots, |s| s.revision > 0).await;
    assert_eq!(first.revision, 1);
    assert!(!first.services.is_empty(), "the served kinds are there");
    assert!(first.http_routes.is_empty());

    let later = wait_for(&mut snapshots, |s| !s.http_routes.is_empty()).await;
    let route = &later.http_routes[&ObjectRef::new("shop", "web")];
    assert_eq!(route.spec.parent_refs()[0].name, "gateway");
    assert_eq!(later.services, first.services);
    let seen = api.seen();
    let lists = |path: &str| {
        let path = path.to_owned();
        seen.iter()
            .filter(move |r| r.path == path && !r.is_watch())
            .count()
    };
    assert!(lists(routes) >= 2, "asked again");
    assert!(lists(&collection(Kind::Gateway)) >= 1);
}
