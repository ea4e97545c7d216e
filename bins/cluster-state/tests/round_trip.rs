//! Real-world manifests into the model and back: the Kubernetes documentation's examples and
//! the repository's `examples/cluster/` folder.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use cluster_state::k8s::ByteString;
use cluster_state::k8s::apimachinery::pkg::util::intstr::IntOrString;
use cluster_state::{Kind, Object, ObjectRef, Source, parse_manifest};

fn manifest(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/manifests")
        .join(name)
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cluster")
}

fn parse_file(path: &Path) -> Vec<Object> {
    let text = std::fs::read_to_string(path).unwrap();
    parse_manifest(path, &text).unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn documentation_examples_read_into_the_model() {
    let objects = parse_file(&manifest("api-reference.yaml"));
    let kinds: Vec<Kind> = objects.iter().map(Object::kind).collect();
    assert_eq!(kinds, Kind::ALL);

    let Object::Service(service) = &objects[0] else {
        panic!()
    };
    let port = &service.spec.as_ref().unwrap().ports.as_ref().unwrap()[0];
    assert_eq!(
        (port.port, port.target_port.clone()),
        (80, Some(IntOrString::Int(9376)))
    );
    assert_eq!(objects[0].key(), ObjectRef::new("default", "my-service"));

    let Object::EndpointSlice(slice) = &objects[1] else {
        panic!()
    };
    assert_eq!(slice.endpoints[0].addresses, ["10.1.2.3"]);
    assert_eq!(
        slice.endpoints[0].conditions.as_ref().unwrap().ready,
        Some(true)
    );

    let Object::Ingress(ingress) = &objects[2] else {
        panic!()
    };
    let rule = &ingress.spec.as_ref().unwrap().rules.as_ref().unwrap()[0];
    let path = &rule.http.as_ref().unwrap().paths[0];
    assert_eq!(
        (path.path.as_deref(), path.path_type.as_str()),
        (Some("/testpath"), "Prefix")
    );

    assert_eq!(objects[3].key(), ObjectRef::cluster("external-lb"));

    let Object::Secret(secret) = &objects[4] else {
        panic!()
    };
    let key = &secret.data.as_ref().unwrap()["tls.key"];
    assert_eq!(
        key,
        &ByteString(b"Example data for the TLS crt field".to_vec())
    );

    let Object::ConfigMap(config) = &objects[5] else {
        panic!()
    };
    let data = config.data.as_ref().unwrap();
    assert_eq!(data["player_initial_lives"], "3");
    assert!(data["game.properties"].ends_with("player.maximum-lives=5\n"));

    let Object::Lease(lease) = &objects[6] else {
        panic!()
    };
    assert_eq!(
        lease.spec.as_ref().unwrap().lease_duration_seconds,
        Some(15)
    );
    assert!(lease.spec.as_ref().unwrap().renew_time.is_some());

    let Object::Node(node) = &objects[8] else {
        panic!()
    };
    assert_eq!(objects[8].key(), ObjectRef::cluster("10.240.79.157"));
    let labels = node.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["topology.kubernetes.io/zone"], "us-east-1a");
    let spec = node.spec.as_ref().unwrap();
    assert_eq!(spec.taints.as_ref().unwrap()[0].effect, "NoExecute");

    assert_eq!(objects[10].key(), ObjectRef::cluster("example"));
    let Object::Gateway(gateway) = &objects[11] else {
        panic!()
    };
    let listener = &gateway.spec.listeners[0];
    assert_eq!((listener.protocol.as_str(), listener.port), ("HTTP", 80));
    assert_eq!(listener.allowed_routes().namespaces().from(), "Same");
    let Object::HttpRoute(route) = &objects[12] else {
        panic!()
    };
    assert_eq!(objects[12].key(), ObjectRef::new("default", "http-app-1"));
    let rules = route.spec.rules();
    let path = rules[0].matches()[0].path();
    assert_eq!((path.match_type(), path.value()), ("PathPrefix", "/bar"));
    let backend = &rules[1].backend_refs()[0];
    assert_eq!((backend.kind(), backend.weight()), ("Service", 1));
    assert_eq!(route.spec.parent_refs()[0].kind(), "Gateway");
    let Object::GrpcRoute(grpc) = &objects[13] else {
        panic!()
    };
    let method = grpc.spec.rules()[0].matches()[0].method.as_ref().unwrap();
    assert_eq!(method.service.as_deref(), Some("com.example.User"));
    let Object::ReferenceGrant(grant) = &objects[14] else {
        panic!()
    };
    assert_eq!(grant.spec.from[0].namespace, "prod");
}

#[test]
fn objects_survive_a_round_trip_through_api_json() {
    let objects = parse_file(&manifest("api-reference.yaml"));
    for object in &objects {
        let json = serde_json::to_string(object).unwrap();
        let again = parse_manifest(Path::new("again.json"), &json).unwrap();
        assert_eq!(again, std::slice::from_ref(object), "{json}");
    }
}

#[test]
fn unknown_fields_are_ignored() {
    let text = "
apiVersion: v1
kind: Service
metadata: {name: a, futureField: 1}
spec:
  ports: [{port: 80, futureField: {nested: [1, 2]}}]
futureTopLevel: true
";
    let objects = parse_manifest(Path::new("future.yaml"), text).unwrap();
    assert_eq!(objects.len(), 1);
}

#[tokio::test]
async fn the_example_cluster_loads_without_errors() {
    let source = Source::manifests(&examples(), Kind::ALL, Duration::from_millis(50))
        .await
        .unwrap();
    let snapshot = source.current();
    assert_eq!(snapshot.revision, 1);
    let names = |keys: Vec<&ObjectRef>| keys.iter().map(|k| k.to_string()).collect::<Vec<_>>();
    assert_eq!(
        names(snapshot.services.keys().collect()),
        [
            "kube-system/kube-dns",
            "shop/admin",
            "shop/checkout",
            "shop/legacy-api",
            "shop/sessions",
            "shop/web"
        ]
    );
    assert_eq!(snapshot.endpoint_slices.len(), 6);
    assert_eq!(snapshot.namespaces.len(), 2);
    assert_eq!(snapshot.ingress_classes.len(), 1);
    assert_eq!(snapshot.changes.len(), snapshot.len());

    let checkout = &snapshot.services[&ObjectRef::new("shop", "checkout")];
    let spec = checkout.spec.as_ref().unwrap();
    assert_eq!(spec.external_traffic_policy.as_deref(), Some("Local"));
    assert_eq!(spec.health_check_node_port, Some(32000));

    let ingress = &snapshot.ingresses[&ObjectRef::new("shop", "shop")];
    let tls = &ingress.spec.as_ref().unwrap().tls.as_ref().unwrap()[0];
    let secret = &snapshot.secrets[&ObjectRef::new("shop", tls.secret_name.as_ref().unwrap())];
    let certificate = &secret.data.as_ref().unwrap()["tls.crt"].0;
    assert!(certificate.starts_with(b"-----BEGIN CERTIFICATE-----"));

    let dns = &snapshot.config_maps[&ObjectRef::new("kube-system", "node-local-dns")];
    assert!(dns.data.as_ref().unwrap()["Corefile"].starts_with("cluster.local:53 {"));
}
