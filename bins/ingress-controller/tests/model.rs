//! The model's Ingress v1 semantics: merging Ingresses per host (oldest wins), Exact over
//! Prefix, default backends, TLS, wildcards, class selection, regex scoping and canaries.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

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
  # tests/fixtures/tls.crt and tls.key: a certificate and its key, as TLS Secrets must hold.
  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURXekNDQWtPZ0F3SUJBZ0lVS0RycWRhSEVTcTZEQmVBTkFuRGRTNGpadk1Bd0RRWUpLb1pJaHZjTkFRRUwKQlFBd0dqRVlNQllHQTFVRUF3d1BkR3h6TG1WNFlXMXdiR1V1WTI5dE1DQVhEVEkyTVRFek1EQTROREUwTmxvWQpEekl4TWpZeE1UQTJNRGcwTVRRMldqQWFNUmd3RmdZRFZRUUREQTkwYkhNdVpYaGhiWEJzWlM1amIyMHdnZ0VpCk1BMEdDU3FHU0liM0RRRUJBUVVBQTRJQkR3QXdnZ0VLQW9JQkFRQ3BteFFUSzE3UXlEMngxczhxMWxPM1JHRUQKc2FaUy9IMTVwd0M5UTVnaFBGSVc2TXAzK0prZDJJbGFseHdaVThxZUZyVVhNYzV1UjY5eURFeXRWN2c0L1cwNQpybXdscnhBc1IzZ3dnMUpwTnE4QW9TNkRXNDZYa2JtcGtMS2lPTzZzNjFyYWhFYzRVY3o1Rzc0d3ZKY2kxRW02ClNFYXNINStpbzR1c2p1ZndiMnk3NTFDbGJRZnlIVWtSNDZ0Z2E4SndOdjlXeEhwVlMzVUdUaFhoM2ZsSFJlaHcKbGs0T3Fjemg3UTJaT1FhbWttUDJtNzgvNm9xdXM0RVc2KzJVVlhBaTA5WnZjejdncW56WXJwSy9zek9zY3hNLwo4SCt3eUJvSEMzWmRQMDJoNHBDK0trRTkwb093cnM4TVhLN2VHbHVCWDJ1Z2o3aktYQmo2VHh5ZDdsYzVBZ01CCkFBR2pnWll3Z1pNd0hRWURWUjBPQkJZRUZCRWxHL0VsUUs2S0ZPblg3cVFhdG5LUXhHVWhNQjhHQTFVZEl3UVkKTUJhQUZCRWxHL0VsUUs2S0ZPblg3cVFhdG5LUXhHVWhNQThHQTFVZEV3RUIvd1FGTUFNQkFmOHdRQVlEVlIwUgpCRGt3TjRJUGRHeHpMbVY0WVcxd2JHVXVZMjl0Z2hFcUxuUnNjeTVsZUdGdGNHeGxMbU52YllJUmJtOTBiSE11ClpYaGhiWEJzWlM1amIyMHdEUVlKS29aSWh2Y05BUUVMQlFBRGdnRUJBQ0Nmbytla2V6cUZTbHBFTTNSWENHY3cKOEx0SzFtNy9zdy9PNi9ndTNleWozYkVnWHMxSHFXbklQUU8xd1FBbEdhVHNiOWVMQ2I3YWdOZmZTVHhkTVRnTAp4MGw3a0xsU21yVWpUaFJ1eU01VW1NVjBjYTdnTGthb1hrcERnQitMS1VHL3VxaFpvdFJudWVza215R3BTSHU3CmtFcGdYMFhPR3doMjZ5V2lhYzhpZG02azI0Wk9HemhaU21ZSTcralNPcFdGQ2FEWUV1T3g5VXl5bjJIdThMV1AKVHd6blROalRtVEZmcTgrOXpUT2tTQTlyaUdGQ2xSTGQwTGtUWE9mYjNldGZSSnNjN1FMeUZGSEVFTDNqQmJuOQpPV2wvZXVLd1g3KzBwTFA5YmpaWmprRllpcjhOaUkyUGI2ZnEwbUFpaGdPUWh3bUg2Y2EwcGduTVFOZkxDdFk9Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K
  tls.key: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2QUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVNDQktZd2dnU2lBZ0VBQW9JQkFRQ3BteFFUSzE3UXlEMngKMXM4cTFsTzNSR0VEc2FaUy9IMTVwd0M5UTVnaFBGSVc2TXAzK0prZDJJbGFseHdaVThxZUZyVVhNYzV1UjY5eQpERXl0VjdnNC9XMDVybXdscnhBc1IzZ3dnMUpwTnE4QW9TNkRXNDZYa2JtcGtMS2lPTzZzNjFyYWhFYzRVY3o1Ckc3NHd2SmNpMUVtNlNFYXNINStpbzR1c2p1ZndiMnk3NTFDbGJRZnlIVWtSNDZ0Z2E4SndOdjlXeEhwVlMzVUcKVGhYaDNmbEhSZWh3bGs0T3Fjemg3UTJaT1FhbWttUDJtNzgvNm9xdXM0RVc2KzJVVlhBaTA5WnZjejdncW56WQpycEsvc3pPc2N4TS84SCt3eUJvSEMzWmRQMDJoNHBDK0trRTkwb093cnM4TVhLN2VHbHVCWDJ1Z2o3aktYQmo2ClR4eWQ3bGM1QWdNQkFBRUNnZ0VBSTJTRkwrcmhBbGlHNTFHWU1heEFGQUprN0V4cUZPOHpqK3RWc0NrbTJlaW8KaUxkVGFPMnJwaHJGcnUzUm8wZGxCTkJnUWRMVzdSUndmREFzNEE5cUZocHNiSmtGWUdmRHpEbXR6eEhZWkxSUQptS1VKKzhkalhpVyt4Sys1VnpqaU5adDNmaG9VY3FBL1VjeUVSODlUQ3FXYUxSRmdEaE1iVU9rb0FINWgwRDVZCndyVG05MDR5RVJTQlEvVFlTL0Z4NXY3eDg4VzdabzdrVUNtTGNwZWxkcm52SVZramVjNFlPYmw1eEloOTE2QlcKZGVHL2pKTndhMDJjRHduczdsSHNaVjljczIrdzd0T1ZuTnNrV2xUcXFCNnlqUUErMjk4T2kzNnNXbmxoS2FhdQp2WTRrd2NnMXpKREc3bkpuelhnRTlsNHUxdC9HQWN4cU5CWllnRDM1d1FLQmdRRHBJSnhvYUlJbjRUcUtTSFEyClIrWHd6c2NzbzR1WU43ZmpWOG1hRTBjTElnYlZjMVIwdjZ3dUh5MXhvMG1hdmFJMmVoa3JkNlZhaFBCSXNIdTgKZXRSK1hiMGdJYWxWbFpraUpIbjFaNE1ZeDNHYkhRdVcycFVrdWh1V0ZKZDgyNHB6YmZ1M1JYUlY0OE9qZnNIVQpoc2QzNHZTWmMyd3hrR0dsd3lvcE51NjhIUUtCZ1FDNlB3TytkQlJCZmlmMkhJSUZsMVJkeWlkQU1UNXdoZzljCkZxS0VIWm16R1ZvNEpCellSN0xJQlVmM3BWT2l0M3E3eUpSeUhwN3lDak95RDU3RDJmU213ZkxPejRwOEU4ekMKakZ1SEFRSkRPNis2MnkrUUxvUTZYUEFIV1BJc2hBSFpzaTF5aVJXaDErQ01GUnJaSlR3N0xiN1BGaTJMaWpNaApoRUdLMDlKRXpRS0JnQkdPQWhrZW5ZWnhRRjQvWEhqbDZ4dTZCbWVISFREbUtUTzJYWmo3a0tMMitmckN4MzVQCkhLRVFlZlNQcmpBM3pXbzZ3WUJ6YndFazk0OFJzdytiVkRyN3hnMFFXOWIwLytZQlJ5bkNsSzJkL3lFR0MrUmQKSzFQcnE3NGVhTlhmRmtyZzRrNkhyVjMyVzdvSkJvR0JjSzNIYWxIUHpqcmhPMmtuREJxMFp6L0ZBb0dBZWpHWgp6VHp2aFVDMkN6ME0rWW9kNmlNVnVZSVZpMUlKaGN1NytKNUxGenlNK3NTR3dFZmFQbTFvbUV3NklVbnNGb1ExCkVPS1NPZzhEZDlIVHduK2Zpa0U1Z3dLYncyaGlNVXBSU3JRWXZlL05EZlY4c1VZenJ1OEc5R3NoQ0ovYmJ1NzkKN21XT2NjN25Ia0ZDaWpGcDRSSFVYSjRhWjdEV2R5a0VyNGJtTUFrQ2dZQXdmSW5vbDZ1am1pWHZVSmRKSTF4TgpiRWRlWGduQm44UFFnSWdKUHVvYlFkdnNlMUxWRXRRVDhNL2dtY04xSzVXb1E2aEhjS3NiaU9QaFd3bk9zN2RoCm5CajNQeUNIMUZ4S0hkZWdsbjJwRWZzcHhRalVQS2pmVUgzUVVCazZxSS91WG1HTjlLcWY0WWZLSVpSK0JKOWMKVkRpeGhWb2QzWkMzZnRXUWNkZFZjZz09Ci0tLS0tRU5EIFBSSVZBVEUgS0VZLS0tLS0K
"#;

fn build(ingresses: &str) -> Model {
    let mut objects = Objects::default();
    objects.add_yaml(CLASS_AND_SERVICES).unwrap();
    objects.add_yaml(ingresses).unwrap();
    model::build(&objects, &Selection::default())
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
    for ingress in ingresses {
        let key = cluster_state::ObjectRef::from_meta(&ingress.metadata);
        objects.ingresses.insert(key, std::sync::Arc::new(ingress));
    }
    model::build(&objects, &Selection::default())
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

#[test]
fn a_refused_tls_secret_is_a_problem_of_each_ingress_using_it_only() {
    // PEM markers around bytes that are no certificate, beside the good Secret `cert`.
    let junk = "---\napiVersion: v1\nkind: Secret\nmetadata: {name: junk, namespace: ns}\n\
                type: kubernetes.io/tls\nstringData:\n  tls.crt: \"-----BEGIN CERTIFICATE-----\\n\
                aGVsbG8=\\n-----END CERTIFICATE-----\\n\"\n  tls.key: \"-----BEGIN PRIVATE KEY-----\\n\
                aGVsbG8=\\n-----END PRIVATE KEY-----\\n\"\n";
    let tls = |host: &str, secret: &str| {
        format!(
            "  tls: [{{hosts: [{host}], secretName: {secret}}}]\n  rules:\n  - host: {host}\n    \
             http: {{paths: [{{path: /, pathType: Prefix, backend: {{service: {{name: a, port: \
             {{number: 80}}}}}}}}]}}"
        )
    };
    let yaml = [
        junk.to_owned(),
        ingress(
            "a1",
            "2026-01-01T00:00:00Z",
            "",
            &tls("a.example.com", "junk"),
        ),
        ingress(
            "a2",
            "2026-01-02T00:00:00Z",
            "",
            &tls("a2.example.com", "junk"),
        ),
        ingress(
            "b",
            "2026-01-03T00:00:00Z",
            "",
            &tls("b.example.com", "cert"),
        ),
    ]
    .concat();
    let model = build(&yaml);
    let refused: Vec<&str> = model
        .problems
        .iter()
        .filter(|p| p.message.contains("TLS Secret ns/junk refused"))
        .map(|p| p.ingress.name.as_str())
        .collect();
    assert_eq!(refused, ["a1", "a2"], "{:#?}", model.problems);
    assert_eq!(model.problems.len(), 2, "{:#?}", model.problems);
    let certificate = |host: &str| {
        let host = Host::Exact(host.into());
        let server = model.servers.iter().find(|s| s.host == host).unwrap();
        (server.certificate.clone(), server.default_tls)
    };
    // Its hosts present the default certificate; the other Secret's host keeps its own.
    assert_eq!(certificate("a.example.com"), (None, true));
    assert_eq!(certificate("a2.example.com"), (None, true));
    assert_eq!(
        certificate("b.example.com"),
        (Some("ns/cert".to_owned()), false)
    );
    assert!(!model.certificates.contains_key("ns/junk"));
}

/// `--default-ssl-certificate`: the Secret is loaded as any other; missing or refused, the
/// model says why (the generated certificate serves then).
#[test]
fn the_default_certificate_secret() {
    use ingress_controller::model::DefaultCertificate;
    let mut objects = Objects::default();
    objects.add_yaml(CLASS_AND_SERVICES).unwrap();
    let with = |name: &str| Selection {
        default_certificate: Some(name.to_owned()),
        ..Selection::default()
    };
    let model = model::build(&objects, &with("ns/cert"));
    assert_eq!(
        model.default_certificate,
        DefaultCertificate::Secret("ns/cert".into())
    );
    assert!(model.certificates.contains_key("ns/cert"));
    let missing = model::build(&objects, &with("ns/nope"));
    assert!(
        matches!(&missing.default_certificate, DefaultCertificate::Refused(why) if why.contains("not found")),
        "{:?}",
        missing.default_certificate
    );
    let none = model::build(&objects, &Selection::default());
    assert_eq!(none.default_certificate, DefaultCertificate::Generated);
}

/// A TLS Secret whose certificate has expired by the time of the objects is refused on its own
/// (before nginx sees it), as a problem of the Ingress using it; its hosts present the default
/// certificate.
#[test]
fn an_expired_certificate_is_a_problem_of_its_ingress() {
    let spec = r"  tls: [{hosts: [h.example.com], secretName: cert}]
  rules:
  - host: h.example.com
    http: {paths: [{path: /p, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}}}]}";
    let mut objects = Objects::default();
    objects.add_yaml(CLASS_AND_SERVICES).unwrap();
    objects
        .add_yaml(&ingress("i", "2026-01-01T00:00:00Z", "", spec))
        .unwrap();
    // tests/fixtures/tls.crt is valid until 2126-11-06T08:41:46Z.
    objects.now = Some(4_949_628_106);
    let valid = model::build(&objects, &Selection::default());
    assert!(valid.problems.is_empty(), "{:?}", valid.problems);
    objects.now = Some(4_949_628_107);
    let expired = model::build(&objects, &Selection::default());
    let messages: Vec<&str> = expired
        .problems
        .iter()
        .map(|p| p.message.as_str())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("ns/cert refused") && m.contains("expired on")),
        "{messages:?}"
    );
    assert!(expired.certificates.is_empty());
    assert!(expired.servers.iter().all(|s| s.certificate.is_none()));
    assert!(expired.servers.iter().any(|s| s.default_tls));
}
