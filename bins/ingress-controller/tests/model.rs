//! The model's Ingress v1 semantics: merging Ingresses per host (oldest wins), Exact over
//! Prefix, default backends, TLS, wildcards, class selection, regex scoping and canaries.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ingress_controller::class::Selection;
use ingress_controller::hosts::Host;
use ingress_controller::model::{self, Model, Target};
use ingress_controller::objects::Objects;
use ingress_controller::paths::LocationKey;
use k8s_openapi::api::networking::v1::Ingress;
use serde_json::{Value, json};

const CLASS_AND_SERVICES: &str = r#"
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: v1
kind: Service
metadata: {name: a, namespace: ns}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: a-1, namespace: ns, labels: {kubernetes.io/service-name: a}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints:
  - addresses: ["10.0.0.2", "10.0.0.1"]
  - addresses: ["10.0.0.3"]
    conditions: {ready: false}
---
apiVersion: v1
kind: Secret
metadata: {name: cert, namespace: ns}
type: kubernetes.io/tls
data:
  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
  tls.key: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCg==
"#;

fn build(ingresses: &str) -> Model {
    let mut objects = Objects::default();
    objects.add_yaml(CLASS_AND_SERVICES).unwrap();
    objects.add_yaml(ingresses).unwrap();
    model::build(
        &objects,
        &Selection {
            controller: "k8s.io/ingress-nginx".into(),
            namespace: None,
        },
    )
}

fn locations(model: &Model, host: &Host) -> Vec<(LocationKey, String, Target)> {
    let server = model.servers.iter().find(|s| s.host == *host).unwrap();
    server
        .locations
        .iter()
        .map(|l| (l.key.clone(), l.ingress.clone(), l.target.clone()))
        .collect()
}

/// An Ingress of class `nginx` with `spec`, as a program may build it: not checked as the API
/// server would check it (cluster-state leaves such objects out of what it reads, so these go
/// around it, for the controller's own checks).
fn unvalidated_ingress(name: &str, mut spec: Value) -> Ingress {
    if spec.get("ingressClassName").is_none() {
        spec["ingressClassName"] = json!("nginx");
    }
    let ingress = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": spec});
    serde_json::from_value(ingress).unwrap()
}

/// The model of the shared objects and `ingresses`, which no validation has seen.
fn build_unvalidated<const N: usize>(ingresses: [Ingress; N]) -> Model {
    let mut objects = Objects::default();
    objects.add_yaml(CLASS_AND_SERVICES).unwrap();
    objects.ingresses.extend(ingresses);
    model::build(
        &objects,
        &Selection {
            controller: "k8s.io/ingress-nginx".into(),
            namespace: None,
        },
    )
}

fn ingress(name: &str, created: &str, annotations: &str, spec: &str) -> String {
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  \
         namespace: ns\n  creationTimestamp: \"{created}\"\n  annotations: {{{annotations}}}\n\
         spec:\n  ingressClassName: nginx\n{spec}\n"
    )
}

fn backend(service: &str, port: &str) -> Target {
    Target::Backend(format!("ns/{service}:{port}"))
}

#[test]
fn several_ingresses_on_one_host_merge_and_the_oldest_wins() {
    let rules = |path: &str, kind: &str, service: &str| {
        format!(
            "  rules:\n  - host: h.example.com\n    http:\n      paths:\n      - {{path: {path}, \
             pathType: {kind}, backend: {{service: {{name: {service}, port: {{number: 80}}}}}}}}"
        )
    };
    let yaml = [
        ingress(
            "young",
            "2026-02-01T00:00:00Z",
            "",
            &rules("/x", "Prefix", "young"),
        ),
        ingress(
            "old",
            "2026-01-01T00:00:00Z",
            "",
            &rules("/x", "Prefix", "a"),
        ),
        ingress(
            "other",
            "2026-03-01T00:00:00Z",
            "",
            &rules("/y", "Exact", "a"),
        ),
        ingress(
            "exact",
            "2026-04-01T00:00:00Z",
            "",
            &rules("/x", "Exact", "exact"),
        ),
    ]
    .concat();
    let model = build(&yaml);
    let host = Host::Exact("h.example.com".into());
    assert_eq!(
        locations(&model, &host),
        [
            // The youngest Ingress's Exact /x takes `= /x` from the Prefix rule.
            (
                LocationKey::Exact("/x".into()),
                "ns/exact".into(),
                backend("exact", "80")
            ),
            (
                LocationKey::Exact("/y".into()),
                "ns/other".into(),
                backend("a", "80")
            ),
            (
                LocationKey::Prefix("/x/".into()),
                "ns/old".into(),
                backend("a", "80")
            ),
        ]
    );
    assert_eq!(
        model.ingresses,
        ["ns/old", "ns/young", "ns/other", "ns/exact"]
    );
    let conflict = model
        .problems
        .iter()
        .find(|p| p.ingress == cluster_state::ObjectRef::new("ns", "young"))
        .unwrap();
    assert!(
        conflict
            .message
            .contains("already served by Ingress ns/old"),
        "{conflict}"
    );
    // Endpoints: ready ones only, sorted.
    assert_eq!(
        model.backends["ns/a:80"].endpoints,
        ["10.0.0.1:8080", "10.0.0.2:8080"]
    );
    // A Service that does not exist yet is a backend without endpoints (503 until it appears).
    assert!(model.backends["ns/young:80"].endpoints.is_empty());
}

#[test]
fn default_backend_tls_and_wildcards() {
    let spec = r"  defaultBackend: {service: {name: a, port: {name: http}}}
  tls: [{hosts: [h.example.com, nope.example.com], secretName: cert}]
  rules:
  - host: h.example.com
    http: {paths: [{path: /p, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}}}]}
  - host: '*.w.example.com'
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}}}]}
  - http: {paths: [{path: /any, pathType: Exact, backend: {service: {name: a, port: {number: 80}}}}]}";
    let model = build(&ingress("i", "2026-01-01T00:00:00Z", "", spec));
    let hosts: Vec<&Host> = model.servers.iter().map(|s| &s.host).collect();
    assert_eq!(
        hosts,
        [
            &Host::Any,
            &Host::Exact("h.example.com".into()),
            &Host::Wildcard("w.example.com".into())
        ]
    );
    for server in &model.servers {
        assert_eq!(server.default_target, backend("a", "http"));
    }
    assert_eq!(model.servers[1].certificate.as_deref(), Some("ns/cert"));
    assert!(model.servers[1].locations.iter().all(|l| l.ssl_redirect));
    assert!(model.servers[2].certificate.is_none());
    assert!(model.certificates.contains_key("ns/cert"));
    assert!(model.problems.iter().any(|p| {
        p.message
            .contains("TLS host \"nope.example.com\" has no rule")
    }));
}

#[test]
fn regex_stays_with_the_ingress_that_asked_for_it() {
    let rules = |path: &str, kind: &str| {
        format!(
            "  rules:\n  - host: h.example.com\n    http:\n      paths:\n      - {{path: '{path}', \
             pathType: {kind}, backend: {{service: {{name: a, port: {{number: 80}}}}}}}}"
        )
    };
    let yaml = [
        ingress(
            "regex",
            "2026-01-01T00:00:00Z",
            "nginx.ingress.kubernetes.io/use-regex: 'true'",
            &rules("/api/v[0-9]+", "ImplementationSpecific"),
        ),
        ingress("plain", "2026-02-01T00:00:00Z", "", &rules("/ba", "Prefix")),
    ]
    .concat();
    let model = build(&yaml);
    let keys: Vec<LocationKey> = locations(&model, &Host::Exact("h.example.com".into()))
        .into_iter()
        .map(|(k, _, _)| k)
        .collect();
    assert_eq!(
        keys,
        [
            LocationKey::Exact("/ba".into()),
            LocationKey::Prefix("/ba/".into()),
            LocationKey::Regex("(*LIMIT_MATCH=100000)^(?:/api/v[0-9]+)".into()),
        ]
    );
}

#[test]
fn canary_routes_only_its_rule() {
    let rules = |service: &str| {
        format!(
            "  rules:\n  - host: h.example.com\n    http:\n      paths:\n      - {{path: /, \
             pathType: Prefix, backend: {{service: {{name: {service}, port: {{number: 80}}}}}}}}"
        )
    };
    let yaml = [
        ingress("main", "2026-01-01T00:00:00Z", "", &rules("a")),
        ingress(
            "canary",
            "2026-02-01T00:00:00Z",
            "nginx.ingress.kubernetes.io/canary: 'true', \
             nginx.ingress.kubernetes.io/canary-by-header: X-Canary",
            &rules("b"),
        ),
    ]
    .concat();
    let model = build(&yaml);
    // The canary Ingress adds no location of its own: the primary's location gets a route,
    // the primary backend with the canary attached, for this rule only.
    let locations = locations(&model, &Host::Exact("h.example.com".into()));
    assert_eq!(locations.len(), 1);
    let route = "ns/a:80+canary=ns/canary";
    assert_eq!(locations[0].2, Target::Backend(route.into()));
    let (canary, rule) = model.backends[route].canary.clone().unwrap();
    assert_eq!(canary, "ns/b:80");
    assert_eq!(rule.header.as_deref(), Some("X-Canary"));
    assert_eq!(
        model.backends[route].endpoints,
        model.backends["ns/a:80"].endpoints
    );
    assert!(model.backends["ns/a:80"].canary.is_none());
}

#[test]
fn other_classes_and_invalid_objects_are_left_out_with_reasons() {
    let spec = json!({"rules": [{"host": "10.0.0.1"}, {"host": "r.example.com", "http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": {"resource": {"kind": "Bucket", "name": "b"}}}]}}]});
    let mut theirs = spec.clone();
    theirs["ingressClassName"] = json!("other");
    let model = build_unvalidated([
        unvalidated_ingress("bad", spec),
        unvalidated_ingress("theirs", theirs),
    ]);
    assert_eq!(model.ingresses, ["ns/bad"]);
    let messages: Vec<&str> = model.problems.iter().map(|p| p.message.as_str()).collect();
    assert!(
        messages.iter().any(|m| m.contains("is an IP address")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("without rules") || m.contains("IP"))
    );
}

/// Warnings quote the value itself, escaped, never the debug form of an iterator over it
/// (`EscapeDebug { inner: Chain { .. } }`, which ran to 25 KB for one host).
#[test]
fn warnings_quote_values_escaped() {
    let backend = json!({"service": {"name": "A\tb", "port": {"number": 80}}});
    let spec = json!({"rules": [
        {"host": "Bad\u{7}.example.com\n", "http": {"paths": [{"path": "/a b", "pathType": "Prefix", "backend": backend}]}},
        {"host": "ok.example.com", "http": {"paths": [{"path": "/x", "pathType": "Prefix", "backend": backend}]}}]});
    let model = build_unvalidated([unvalidated_ingress("quoted", spec)]);
    let messages: Vec<String> = model.problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        messages,
        [
            "Ingress \"ns/quoted\": host \"Bad\\u{7}.example.com\\n\" is not a lower-case DNS \
             name (a leading \"*.\" is the only wildcard)",
            "Ingress \"ns/quoted\": service \"A\\tb\" in namespace \"ns\" is not a valid name",
        ]
    );
}

/// A regex path with super-linear backtracking is refused with a message naming the Ingress,
/// the path and the construct; the Ingress's other paths are served.
#[test]
fn costly_regex_paths_are_left_out_and_reported() {
    let spec = "  rules:\n  - host: r.example.com\n    http:\n      paths:\n      - {path: \
                '/(a+)+$', pathType: ImplementationSpecific, backend: {service: {name: a, port: \
                {number: 80}}}}\n      - {path: '/ok/.*', pathType: ImplementationSpecific, \
                backend: {service: {name: a, port: {number: 80}}}}";
    let model = build(&ingress(
        "costly",
        "2026-01-01T00:00:00Z",
        "nginx.ingress.kubernetes.io/use-regex: 'true'",
        spec,
    ));
    let messages: Vec<String> = model.problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        messages,
        [
            "Ingress \"ns/costly\": regex path \"/(a+)+$\": \"(a+)+\" nests unbounded \
          quantifiers, which can backtrack exponentially; make each repetition start or end \
          with a character the rest of it cannot match"
        ]
    );
    let keys: Vec<LocationKey> = locations(&model, &Host::Exact("r.example.com".into()))
        .into_iter()
        .map(|(k, _, _)| k)
        .collect();
    assert_eq!(
        keys,
        [LocationKey::Regex(
            "(*LIMIT_MATCH=100000)^(?:/ok/.*)".into()
        )]
    );
}
