//! The Gateway API conformance suite's manifests (`testdata/gateway-api/`, v1.6.1) through the
//! typed path: every file read by the manifest reader, every object valid, every Gateway API
//! object serialised back to the JSON it was read from, and the experimental-channel fields
//! reported as unknown.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use cluster_state::{Kind, Object, parse_manifest};
use serde_json::Value;

/// Every manifest file: the base manifests, then the tests', by name.
fn manifest_files() -> Vec<PathBuf> {
    let mut files = testdata::files("gateway-api/base", "yaml");
    files.extend(testdata::files("gateway-api/tests", "yaml"));
    assert_eq!(files.len(), 84, "the base manifests and 83 tests' files");
    files
}

/// `text` as the conformance suite applies it: the class and controller under test in place of
/// the manifests' placeholders (the suite sets `spec.gatewayClassName` of every Gateway and
/// `spec.controllerName` of every GatewayClass, `conformance/utils/kubernetes/apply.go`).
fn as_applied(text: &str) -> String {
    text.replace("{GATEWAY_CLASS_NAME}", "gateway-conformance")
        .replace(
            "{GATEWAY_CONTROLLER_NAME}",
            "kube-node-net.io/gateway-controller",
        )
}

/// The documents of `text` as JSON, split at `---` lines as kubectl splits them; empty ones
/// left out.
fn documents(text: &str) -> Vec<Value> {
    let mut documents = vec![String::new()];
    for line in text.lines() {
        if line.trim_end() == "---" {
            documents.push(String::new());
        } else if let Some(last) = documents.last_mut() {
            last.push_str(line);
            last.push('\n');
        }
    }
    documents
        .iter()
        .filter_map(|document| serde_saphyr::from_str::<Option<Value>>(document).unwrap())
        .collect()
}

/// The modelled kind of a document, if any.
fn kind_of(document: &Value) -> Option<Kind> {
    let kind = Kind::from_name(document["kind"].as_str()?)?;
    (document["apiVersion"] == kind.api_version()).then_some(kind)
}

/// `document` as the manifest reader normalises it: a namespaced object without namespace is
/// in `default`.
fn normalised(mut document: Value, kind: Kind) -> Value {
    let metadata = &mut document["metadata"];
    if kind.is_namespaced() && metadata.get("namespace").is_none() {
        metadata["namespace"] = Value::from("default");
    }
    document
}

/// The paths of fields the types do not know, for a Gateway API object.
fn unknown_fields(object: &Object) -> Vec<String> {
    match object {
        Object::GatewayClass(class) => class.unknown_fields(),
        Object::Gateway(gateway) => gateway.unknown_fields(),
        Object::HttpRoute(route) => route.unknown_fields(),
        Object::GrpcRoute(route) => route.unknown_fields(),
        Object::ReferenceGrant(grant) => grant.unknown_fields(),
        other => panic!("not a Gateway API object: {other:?}"),
    }
}

#[test]
fn every_conformance_object_reads_validates_and_serialises_back() {
    let mut gateway_objects = 0;
    let mut other_objects = 0;
    let mut unknown = Vec::new();
    for path in manifest_files() {
        let text = as_applied(&std::fs::read_to_string(&path).unwrap());
        let objects = parse_manifest(&path, &text).unwrap_or_else(|error| panic!("{error}"));
        let modelled: Vec<(Kind, Value)> = documents(&text)
            .into_iter()
            .filter_map(|document| Some((kind_of(&document)?, document)))
            .collect();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(
            objects.len(),
            modelled.len(),
            "{name}: one object per document"
        );
        for (object, (kind, document)) in objects.iter().zip(modelled) {
            assert_eq!(object.kind(), kind, "{name}");
            if !kind.is_optional() {
                other_objects += 1;
                continue;
            }
            gateway_objects += 1;
            let written = serde_json::to_value(object).unwrap();
            assert_eq!(
                written,
                normalised(document, kind),
                "{name}: {}",
                object.key()
            );
            for field in unknown_fields(object) {
                unknown.push(format!("{name}: {} {field}", object.key()));
            }
        }
    }
    assert_eq!((gateway_objects, other_objects), (171, 28));
    assert_eq!(
        unknown,
        [
            "httproute-retry.yaml: gateway-conformance-infra/retries spec.rules[0].retry",
            "httproute-retry.yaml: gateway-conformance-infra/retries spec.rules[1].retry",
        ]
    );
}

#[test]
fn defaults_are_read_through_the_accessors() {
    let name = "httproute-simple-same-namespace.yaml";
    let text = testdata::read_to_string("gateway-api/tests", name);
    let objects = parse_manifest(Path::new(name), &text).unwrap();
    let Some(Object::HttpRoute(route)) = objects.first() else {
        panic!("{objects:?}")
    };
    let parent = &route.spec.parent_refs()[0];
    assert_eq!(parent.group(), "gateway.networking.k8s.io");
    assert_eq!(parent.kind(), "Gateway");
    let rule = &route.spec.rules()[0];
    let path_match = rule.matches()[0].path();
    assert_eq!(
        (path_match.match_type(), path_match.value()),
        ("PathPrefix", "/")
    );
    let backend = &rule.backend_refs()[0];
    assert_eq!(
        (backend.group(), backend.kind(), backend.weight()),
        ("", "Service", 1)
    );
    // The object itself keeps what the manifest says: no default is written into it.
    assert!(route.spec.parent_refs()[0].group.is_none());
}

#[test]
fn a_hostile_route_in_a_manifest_is_refused_with_its_line_and_field() {
    // A header value that, written unescaped into nginx.conf, would end the directive and add
    // one; and a redirect path with a line break.
    let text = r#"apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: fine, namespace: shop}
spec:
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: evil, namespace: shop}
spec:
  rules:
  - filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set: [{name: X-A, value: "a\";\n proxy_pass http://evil; #"}]
    - type: URLRewrite
      urlRewrite: {path: {type: ReplaceFullPath, replaceFullPath: "/a\r\nX: y"}}
"#;
    let error = parse_manifest(Path::new("routes.yaml"), text).unwrap_err();
    let shown = error.to_string();
    assert!(
        shown.starts_with(
            "routes.yaml:7:1: spec.rules[0].filters[0].requestHeaderModifier.set[0].value: \
             Invalid value: \"a\\\";\\n proxy_pass"
        ),
        "{shown}"
    );
    assert!(
        shown.ends_with("(HTTPRoute shop/evil is invalid)"),
        "{shown}"
    );
    assert!(!shown.contains('\n'), "one printable line: {shown}");
}
