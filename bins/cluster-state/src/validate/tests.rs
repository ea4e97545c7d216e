//! Each rule of the validation, on whole objects, with the Go function it follows named.
//! Cases marked "Go:" are transcribed from the `validation_test.go` of the package named.

use serde_json::{Value, json};

use super::validate;
use crate::{Kind, Object};

/// The issue 28 port name: a line break and an iptables rule.
const PAYLOAD: &str =
    "x\n-A KUBE-SERVICES -p tcp -d 10.96.0.1 --dport 443 -j DNAT --to-destination 6.6.6.6:443\n#";

/// `value` read as the object of its `kind` (the Gateway API tests use it too).
pub(super) fn object(value: Value) -> Object {
    let kind = Kind::from_name(value["kind"].as_str().unwrap()).unwrap();
    kind.deserialize_object(value).unwrap()
}

/// The errors of `value`, displayed.
fn errors(value: Value) -> Vec<String> {
    match validate(&object(value)) {
        Ok(()) => Vec::new(),
        Err(invalid) => {
            assert!(!invalid.errors.is_empty());
            invalid.errors.iter().map(ToString::to_string).collect()
        }
    }
}

/// The fields of the errors of `value`.
pub(super) fn fields(value: Value) -> Vec<String> {
    match validate(&object(value)) {
        Ok(()) => Vec::new(),
        Err(invalid) => invalid.errors.into_iter().map(|e| e.field).collect(),
    }
}

fn service(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": "web", "namespace": "shop"}, "spec": spec})
}

fn slice(address_type: &str, endpoints: Value, ports: Value) -> Value {
    json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
           "metadata": {"name": "web-1", "namespace": "shop"},
           "addressType": address_type, "endpoints": endpoints, "ports": ports})
}

fn ingress(spec: Value) -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": {"name": "web", "namespace": "shop"}, "spec": spec})
}

fn ingress_path(path: &str, path_type: &str) -> Value {
    ingress(
        json!({"rules": [{"http": {"paths": [{"path": path, "pathType": path_type,
        "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}),
    )
}

// --- Service (pkg/apis/core/validation: ValidateService, validateServicePort) ---

#[test]
fn an_undefaulted_manifest_service_is_valid() {
    // No type, protocol, targetPort, sessionAffinity or traffic policy: all defaulted.
    assert_eq!(
        errors(service(
            json!({"selector": {"app": "web"}, "ports": [{"port": 80}]})
        )),
        Vec::<String>::new()
    );
    let full = service(json!({
        "type": "LoadBalancer", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10", "fd00::10"],
        "ipFamilies": ["IPv4", "IPv6"], "ipFamilyPolicy": "PreferDualStack",
        "ports": [{"name": "http", "port": 80, "targetPort": "http-alt", "protocol": "TCP",
                   "nodePort": 30080, "appProtocol": "kubernetes.io/h2c"},
                  {"name": "dns", "port": 53, "targetPort": 5353, "protocol": "UDP"}],
        "externalIPs": ["203.0.113.7"], "externalTrafficPolicy": "Local",
        "healthCheckNodePort": 31000, "internalTrafficPolicy": "Local",
        "sessionAffinity": "ClientIP",
        "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 86400}},
        "loadBalancerSourceRanges": [" 10.0.0.0/8 ", "2001:db8::/32"],
        "allocateLoadBalancerNodePorts": true, "loadBalancerClass": "example.com/lb"}));
    assert_eq!(errors(full), Vec::<String>::new());
    // Empty strings are defaulted as absent fields are.
    let empty = service(
        json!({"type": "", "sessionAffinity": "", "externalTrafficPolicy": "",
        "ports": [{"port": 80, "protocol": ""}, {"name": "b", "port": 80, "protocol": "UDP"}]}),
    );
    assert_eq!(fields(empty), ["spec.ports[0].name"]);
    let headless = service(json!({"clusterIP": "None"}));
    assert_eq!(errors(headless), Vec::<String>::new());
}

#[test]
fn service_names_are_dns1035_labels_as_validate_service_name() {
    // Go (core): "invalid name" / "too long name" of TestValidateServiceCreate.
    let mut bad = service(json!({"ports": [{"port": 80}]}));
    bad["metadata"]["name"] = json!("1abc");
    assert_eq!(fields(bad.clone()), ["metadata.name"]);
    bad["metadata"]["name"] = json!("a".repeat(64));
    assert_eq!(fields(bad), ["metadata.name"]);
}

#[test]
fn service_ports_are_required_unless_headless_or_external_name() {
    // Go (core): "missing ports" of TestValidateServiceCreate.
    assert_eq!(fields(service(json!({}))), ["spec.ports"]);
    let no_spec = json!({"apiVersion": "v1", "kind": "Service",
                         "metadata": {"name": "a", "namespace": "b"}});
    assert_eq!(fields(no_spec), ["spec.ports"]);
}

#[test]
fn service_port_names_as_validate_service_port() {
    // Go (core): "missing port name with >1 ports", "invalid port name", "dup port name".
    let two_unnamed = service(json!({"ports": [{"port": 80}, {"port": 81}]}));
    assert_eq!(
        fields(two_unnamed),
        ["spec.ports[0].name", "spec.ports[1].name"]
    );
    let bad = service(json!({"ports": [{"name": "INVALID", "port": 80}]}));
    assert_eq!(fields(bad), ["spec.ports[0].name"]);
    let dup = service(json!({"ports": [{"name": "p", "port": 80}, {"name": "p", "port": 81}]}));
    assert_eq!(errors(dup), ["spec.ports[1].name: Duplicate value: \"p\""]);
}

#[test]
fn the_issue_28_port_name_is_refused_in_one_escaped_line() {
    let hostile = service(json!({"ports": [{"name": PAYLOAD, "port": 443}]}));
    let found = errors(hostile);
    assert_eq!(found.len(), 2, "{found:?}"); // too long, and not a DNS-1123 label
    for message in &found {
        assert!(message.starts_with("spec.ports[0].name: Invalid value: \"x\\n-A KUBE-SERVICES"));
        assert!(!message.chars().any(char::is_control), "{message}");
        assert!(message.contains('…'), "long values are cut: {message}");
    }
    // The same payload as a target port name.
    let target = service(json!({"ports": [{"port": 443, "targetPort": PAYLOAD}]}));
    assert_eq!(fields(target)[0], "spec.ports[0].targetPort");
}

#[test]
fn service_port_numbers_protocols_and_target_ports_as_validate_service_port() {
    // Go (core): "invalid port" (65536), "missing port" (0), "invalid protocol",
    // "invalid targetPort name", "invalid targetPort number"; old required.rs: port 0.
    let zero = service(json!({"ports": [{"name": "http", "targetPort": 80}]}));
    assert_eq!(
        errors(zero),
        ["spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"]
    );
    let big = service(json!({"ports": [{"port": 65536}]}));
    assert_eq!(fields(big), ["spec.ports[0].port"]);
    let protocol = service(json!({"ports": [{"port": 80, "protocol": "INVALID"}]}));
    assert_eq!(
        errors(protocol),
        [
            "spec.ports[0].protocol: Unsupported value: \"INVALID\": supported values: \"SCTP\", \"TCP\", \"UDP\""
        ]
    );
    let target = service(json!({"ports": [{"port": 80, "targetPort": "123"}]}));
    assert_eq!(fields(target), ["spec.ports[0].targetPort"]);
    let target = service(json!({"ports": [{"port": 80, "targetPort": 65536}]}));
    assert_eq!(fields(target), ["spec.ports[0].targetPort"]);
    // Defaulted by the API server: 0 and "" mean "the port".
    let defaulted = service(
        json!({"ports": [{"port": 80, "targetPort": 0}, {"name": "b", "port": 81, "targetPort": ""}]}),
    );
    assert_eq!(fields(defaulted), ["spec.ports[0].name"]);
    let app = service(json!({"ports": [{"port": 80, "appProtocol": "a/b/c"}]}));
    assert_eq!(fields(app), ["spec.ports[0].appProtocol"]);
}

#[test]
fn service_types_as_validate_service() {
    // Go (core): "invalid type", "ExternalName with clusterIP", "invalid ExternalName".
    assert_eq!(
        fields(service(json!({"type": "Bogus", "ports": [{"port": 80}]}))),
        ["spec.type"]
    );
    let external = service(json!({"type": "ExternalName", "externalName": "db.example.com."}));
    assert!(fields(external).is_empty());
    let missing = service(json!({"type": "ExternalName"}));
    assert_eq!(fields(missing), ["spec.externalName"]);
    let bad = service(json!({"type": "ExternalName", "externalName": "-bad.example.com"}));
    assert_eq!(fields(bad), ["spec.externalName"]);
    let ip = service(
        json!({"type": "ExternalName", "externalName": "a.b", "clusterIP": "10.0.0.1", "ipFamilyPolicy": "SingleStack"}),
    );
    assert_eq!(fields(ip), ["spec.clusterIPs", "spec.ipFamilyPolicy"]);
    let headless_node_port =
        service(json!({"type": "NodePort", "clusterIP": "None", "ports": [{"port": 80}]}));
    assert_eq!(fields(headless_node_port), ["spec.clusterIPs[0]"]);
    let kubelet = service(json!({"type": "LoadBalancer", "ports": [{"port": 10250}]}));
    assert_eq!(fields(kubelet), ["spec.ports[0]"]);
}

#[test]
fn cluster_ips_as_validate_service_cluster_ips_related_fields() {
    // Go (core): TestValidateServiceCreate's "invalid cluster ip", "None and an IP",
    // "mismatched clusterIP", "two IPv4", "family mismatch", "bad family".
    let bad = service(json!({"clusterIP": "10.0.0.256", "ports": [{"port": 80}]}));
    assert_eq!(fields(bad), ["spec.clusterIPs[0]"]);
    let none_and_ip = service(json!({"clusterIPs": ["None", "10.0.0.1"], "ports": [{"port": 80}]}));
    assert_eq!(fields(none_and_ip), ["spec.clusterIPs"]);
    let mismatch = service(
        json!({"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.2"], "ports": [{"port": 80}]}),
    );
    assert_eq!(fields(mismatch), ["spec.clusterIPs"]);
    let same_family =
        service(json!({"clusterIPs": ["10.0.0.1", "10.0.0.2"], "ports": [{"port": 80}]}));
    assert_eq!(fields(same_family), ["spec.clusterIPs"]);
    let wrong_family =
        service(json!({"clusterIP": "10.0.0.1", "ipFamilies": ["IPv6"], "ports": [{"port": 80}]}));
    assert_eq!(fields(wrong_family), ["spec.clusterIPs[0]"]);
    let families =
        service(json!({"ipFamilies": ["IPv4", "IPv4", "IPv5"], "ports": [{"port": 80}]}));
    assert_eq!(
        fields(families),
        ["spec.ipFamilies[1]", "spec.ipFamilies[2]"]
    );
    let leading_zero = service(json!({"clusterIP": "010.0.0.1", "ports": [{"port": 80}]}));
    assert_eq!(fields(leading_zero), ["spec.clusterIPs[0]"]);
}

#[test]
fn external_ips_are_not_special_as_validate_non_special_ip() {
    // Go (core): "invalid publicIPs localhost", "invalid publicIPs unspecified",
    // "invalid publicIPs link-local".
    for special in [
        "127.0.0.1",
        "0.0.0.0",
        "169.254.169.254",
        "::1",
        "fe80::1",
        "224.0.0.1",
    ] {
        let value = service(json!({"externalIPs": [special], "ports": [{"port": 80}]}));
        assert_eq!(fields(value), ["spec.externalIPs[0]"], "{special}");
    }
    let bad = service(json!({"externalIPs": ["myhost.mydomain"], "ports": [{"port": 80}]}));
    assert_eq!(fields(bad), ["spec.externalIPs[0]"]);
}

#[test]
fn node_ports_and_duplicate_ports_as_validate_service() {
    // Go (core): "nodePort on ClusterIP", "duplicate nodeports", "duplicate port+protocol".
    let cluster = service(json!({"ports": [{"port": 80, "nodePort": 30000}]}));
    assert_eq!(fields(cluster), ["spec.ports[0].nodePort"]);
    let dup_node = service(json!({"type": "NodePort", "ports": [
        {"name": "a", "port": 80, "nodePort": 30000}, {"name": "b", "port": 81, "nodePort": 30000}]}));
    assert_eq!(fields(dup_node), ["spec.ports[1].nodePort"]);
    let other_protocol = service(json!({"type": "NodePort", "ports": [
        {"name": "a", "port": 53, "nodePort": 30053}, {"name": "b", "port": 53, "protocol": "UDP", "nodePort": 30053}]}));
    assert!(fields(other_protocol).is_empty());
    let dup = service(
        json!({"ports": [{"name": "a", "port": 80}, {"name": "b", "port": 80, "protocol": "TCP"}]}),
    );
    assert_eq!(errors(dup), ["spec.ports[1]: Duplicate value: \"80/TCP\""]);
    let range = service(json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 70000}]}));
    assert_eq!(fields(range), ["spec.ports[0].nodePort"]);
}

#[test]
fn session_affinity_as_validate_client_ip_affinity_config() {
    // Go (core): "invalid timeoutSeconds" (0, 86401), "sessionAffinityConfig with None".
    for seconds in [0, -1, 86401] {
        let value = service(
            json!({"sessionAffinity": "ClientIP", "ports": [{"port": 80}],
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": seconds}}}),
        );
        assert_eq!(
            fields(value),
            ["spec.sessionAffinityConfig.clientIP.timeoutSeconds"]
        );
    }
    let defaulted = service(json!({"sessionAffinity": "ClientIP", "ports": [{"port": 80}]}));
    assert!(fields(defaulted).is_empty());
    let none = service(json!({"sessionAffinity": "None", "ports": [{"port": 80}],
        "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 90}}}));
    assert_eq!(fields(none), ["spec.sessionAffinityConfig"]);
    let bad = service(json!({"sessionAffinity": "Sticky", "ports": [{"port": 80}]}));
    assert_eq!(fields(bad), ["spec.sessionAffinity"]);
}

#[test]
fn traffic_policies_as_validate_service_external_traffic_policy() {
    // Go (core): "externalTrafficPolicy on ClusterIP", "invalid policy",
    // "healthCheckNodePort without Local".
    let cluster = service(json!({"externalTrafficPolicy": "Cluster", "ports": [{"port": 80}]}));
    assert_eq!(fields(cluster), ["spec.externalTrafficPolicy"]);
    let with_external_ip = service(
        json!({"externalTrafficPolicy": "Local", "externalIPs": ["1.2.3.4"], "ports": [{"port": 80}]}),
    );
    assert!(fields(with_external_ip).is_empty());
    let bad = service(
        json!({"type": "NodePort", "externalTrafficPolicy": "Global", "ports": [{"port": 80}]}),
    );
    assert_eq!(fields(bad), ["spec.externalTrafficPolicy"]);
    let check =
        service(json!({"type": "NodePort", "healthCheckNodePort": 31000, "ports": [{"port": 80}]}));
    assert_eq!(fields(check), ["spec.healthCheckNodePort"]);
    let internal = service(json!({"internalTrafficPolicy": "Nearby", "ports": [{"port": 80}]}));
    assert_eq!(fields(internal), ["spec.internalTrafficPolicy"]);
}

#[test]
fn load_balancer_fields_as_validate_service() {
    // Go (core): "LoadBalancerSourceRanges on ClusterIP", "invalid LoadBalancerSourceRanges",
    // "allocateLoadBalancerNodePorts on ClusterIP", "loadBalancerClass on ClusterIP".
    let ranges =
        service(json!({"loadBalancerSourceRanges": ["10.0.0.0/8"], "ports": [{"port": 80}]}));
    assert_eq!(fields(ranges), ["spec.loadBalancerSourceRanges"]);
    let bad = service(
        json!({"type": "LoadBalancer", "loadBalancerSourceRanges": ["10.0.0.0/33"], "ports": [{"port": 80}]}),
    );
    assert_eq!(fields(bad), ["spec.loadBalancerSourceRanges[0]"]);
    let mut annotated = service(json!({"ports": [{"port": 80}]}));
    annotated["metadata"]["annotations"] =
        json!({"service.beta.kubernetes.io/load-balancer-source-ranges": "1.2.3.0/24, bad"});
    let annotation = "metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]";
    assert_eq!(fields(annotated), [annotation, annotation]);
    let allocate =
        service(json!({"allocateLoadBalancerNodePorts": false, "ports": [{"port": 80}]}));
    assert_eq!(fields(allocate), ["spec.allocateLoadBalancerNodePorts"]);
    let class = service(json!({"loadBalancerClass": "a/b", "ports": [{"port": 80}]}));
    assert_eq!(fields(class), ["spec.loadBalancerClass"]);
}

#[test]
fn selectors_are_labels_as_validate_labels() {
    let bad = service(json!({"selector": {"app": "we b"}, "ports": [{"port": 80}]}));
    assert_eq!(fields(bad), ["spec.selector"]);
}

// --- EndpointSlice (pkg/apis/discovery/validation: ValidateEndpointSlice) ---

#[test]
fn a_valid_slice_of_each_type_passes() {
    let ports = json!([{"name": "http", "port": 8080, "protocol": "TCP", "appProtocol": "http"}, {"port": 53}]);
    let v4 = slice(
        "IPv4",
        json!([{"addresses": ["10.1.2.3"], "hostname": "pod-a", "nodeName": "node-1.example",
        "hints": {"forZones": [{"name": "zone-a"}]}}]),
        ports,
    );
    assert_eq!(errors(v4), Vec::<String>::new());
    assert!(
        errors(slice(
            "IPv6",
            json!([{"addresses": ["2001:db8::1"]}]),
            json!([])
        ))
        .is_empty()
    );
    assert!(
        errors(slice(
            "FQDN",
            json!([{"addresses": ["db.example.com"]}]),
            json!([])
        ))
        .is_empty()
    );
}

#[test]
fn the_issue_28_endpoints_are_refused_as_validate_endpoint_ip() {
    // Go (discovery): "invalid loopback address", "invalid link-local address",
    // "invalid unspecified address", "invalid link-local multicast address".
    for (family, address) in [
        ("IPv4", "127.0.0.1"),
        ("IPv4", "169.254.169.254"),
        ("IPv4", "0.0.0.0"),
        ("IPv6", "::1"),
        ("IPv6", "fe80::1"),
        ("IPv4", "224.0.0.1"),
    ] {
        let ordinary = if family == "IPv4" {
            "10.0.0.1"
        } else {
            "2001:db8::1"
        };
        let value = slice(
            family,
            json!([{"addresses": [ordinary, address]}]),
            json!([]),
        );
        let found = errors(value);
        assert_eq!(found.len(), 1, "{address}: {found:?}");
        assert!(
            found[0].starts_with("endpoints[0].addresses[1]: Invalid value: "),
            "{found:?}"
        );
    }
}

#[test]
fn addresses_match_the_address_type_as_validate_endpoints() {
    // Go (discovery): "bad-ipv4", "bad-ipv6", "bad-fqdn", "empty-addresses",
    // "bad-address-type"; old required.rs: no addressType, an endpoint without addresses.
    assert_eq!(
        fields(slice(
            "IPv4",
            json!([{"addresses": ["2001:db8::1"]}]),
            json!([])
        )),
        ["endpoints[0].addresses[0]"]
    );
    assert_eq!(
        fields(slice(
            "IPv6",
            json!([{"addresses": ["10.0.0.1"]}]),
            json!([])
        )),
        ["endpoints[0].addresses[0]"]
    );
    assert_eq!(
        fields(slice("FQDN", json!([{"addresses": ["foo.*"]}]), json!([]))),
        ["endpoints[0].addresses[0]"]
    );
    assert_eq!(
        fields(slice(
            "FQDN",
            json!([{"addresses": ["localhost"]}]),
            json!([])
        )),
        ["endpoints[0].addresses[0]"]
    );
    assert_eq!(
        errors(slice("IPv4", json!([{"addresses": []}]), json!([]))),
        ["endpoints[0].addresses: Required value: must contain at least 1 address"]
    );
    assert_eq!(fields(slice("IP", json!([]), json!([]))), ["addressType"]);
    assert_eq!(
        errors(slice("", json!([]), json!([]))),
        ["addressType: Required value"]
    );
}

#[test]
fn counts_are_bounded_as_validate_endpoints() {
    // Go (discovery): "too-many-endpoints", "too-many-addresses".
    let many: Vec<Value> = (0..1001)
        .map(|_| json!({"addresses": ["10.0.0.1"]}))
        .collect();
    assert_eq!(
        fields(slice("IPv4", Value::Array(many), json!([]))),
        ["endpoints"]
    );
    let addresses: Vec<String> = (0..101)
        .map(|i| format!("10.0.0.{}", i % 250 + 1))
        .collect();
    assert_eq!(
        fields(slice("IPv4", json!([{"addresses": addresses}]), json!([]))),
        ["endpoints[0].addresses"]
    );
}

#[test]
fn hostnames_and_node_names_as_validate_endpoints() {
    // Go (discovery): "bad-hostname", "bad-nodename", "bad-topology-key".
    let bad = slice(
        "IPv4",
        json!([{"addresses": ["10.0.0.1"], "hostname": "a.b", "nodeName": "Node_1",
        "deprecatedTopology": {"bad key": "x"}}]),
        json!([]),
    );
    assert_eq!(
        fields(bad),
        [
            "endpoints[0].nodeName",
            "endpoints[0].deprecatedTopology",
            "endpoints[0].hostname"
        ]
    );
}

#[test]
fn slice_ports_as_validate_ports() {
    // Go (discovery): "bad-port-name-length", "bad-port-protocol", "bad-port-app-protocol",
    // "duplicate-port-name" (two unnamed ports are duplicates too).
    let ports = json!([{"name": "a".repeat(64), "port": 1}, {"name": "b", "protocol": "ICMP"},
                       {"name": "c", "appProtocol": "-x"}, {"port": 2}, {"port": 3}]);
    assert_eq!(
        fields(slice("IPv4", json!([]), ports)),
        [
            "ports[0].name",
            "ports[1].protocol",
            "ports[2].appProtocol",
            "ports[4].name"
        ]
    );
}

// --- Ingress (pkg/apis/networking/validation: ValidateIngressCreate) ---

#[test]
fn a_valid_ingress_passes() {
    let value = ingress(json!({
        "ingressClassName": "nginx",
        "defaultBackend": {"resource": {"apiGroup": "example.com", "kind": "Bucket", "name": "static"}},
        "tls": [{"hosts": ["*.example.com", "shop.example.com"], "secretName": "shop-tls"}],
        "rules": [{"host": "*.example.com", "http": {"paths": [
            {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"name": "http"}}}},
            {"pathType": "ImplementationSpecific", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}},
            {"host": "shop.example.com"}]}));
    assert_eq!(errors(value), Vec::<String>::new());
}

#[test]
fn an_ingress_needs_a_backend_or_rules_as_validate_ingress_spec() {
    // Go (networking): "no rules and no default backend".
    assert_eq!(fields(ingress(json!({}))), ["spec"]);
}

#[test]
fn path_types_and_paths_as_validate_http_ingress_path() {
    // Go (networking): TestValidateIngressCreate's pathType cases and the invalid sequences of
    // TestValidateHTTPIngressPath; old required.rs: an absent pathType.
    let missing = ingress(json!({"rules": [{"http": {"paths": [{"path": "/",
        "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}));
    assert_eq!(
        errors(missing),
        ["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"]
    );
    assert_eq!(
        fields(ingress_path("/", "Regex")),
        ["spec.rules[0].http.paths[0].pathType"]
    );
    for bad in [
        "foo",
        "/foo//bar",
        "/foo/./bar",
        "/foo/../bar",
        "/foo%2fbar",
        "/foo%2Fbar",
        "/foo/..",
        "/foo/.",
    ] {
        for path_type in ["Exact", "Prefix"] {
            assert_eq!(
                fields(ingress_path(bad, path_type)),
                ["spec.rules[0].http.paths[0].path"],
                "{bad}"
            );
        }
    }
    assert!(fields(ingress_path("/foo//bar", "ImplementationSpecific")).is_empty());
    assert_eq!(
        fields(ingress_path("foo", "ImplementationSpecific")),
        ["spec.rules[0].http.paths[0].path"]
    );
    let no_paths = ingress(json!({"rules": [{"http": {"paths": []}}]}));
    assert_eq!(fields(no_paths), ["spec.rules[0].http.paths"]);
}

#[test]
fn backends_as_validate_ingress_backend() {
    // Go (networking): "backend with both port name and number", "no port", "invalid service
    // name", "both resource and service", "resource without kind"; old required.rs cases.
    let backend = |backend: Value| ingress(json!({"defaultBackend": backend}));
    assert_eq!(
        fields(backend(
            json!({"service": {"name": "web", "port": {"name": "http", "number": 80}}})
        )),
        ["spec.defaultBackend"]
    );
    assert_eq!(
        fields(backend(json!({"service": {"name": "web"}}))),
        ["spec.defaultBackend"]
    );
    assert_eq!(
        fields(backend(
            json!({"service": {"name": "1web", "port": {"number": 80}}})
        )),
        ["spec.defaultBackend.service.name"]
    );
    assert_eq!(
        fields(backend(
            json!({"service": {"name": "", "port": {"number": 80}}})
        )),
        ["spec.defaultBackend.service.name"]
    );
    let payload = backend(json!({"service": {"name": "web", "port": {"name": PAYLOAD}}}));
    // Too long, characters, and `--`.
    assert_eq!(
        fields(payload),
        ["spec.defaultBackend.service.port.name"; 3]
    );
    assert_eq!(
        fields(backend(
            json!({"service": {"name": "web", "port": {"number": 65536}}})
        )),
        ["spec.defaultBackend.service.port.number"]
    );
    assert_eq!(fields(backend(json!({}))), ["spec.defaultBackend"]);
    let both = json!({"service": {"name": "web", "port": {"number": 80}}, "resource": {"kind": "K", "name": "n"}});
    assert_eq!(fields(backend(both)), ["spec.defaultBackend"]);
    assert_eq!(
        fields(backend(json!({"resource": {"kind": "", "name": "a/b"}}))),
        [
            "spec.defaultBackend.resource.kind",
            "spec.defaultBackend.resource.name"
        ]
    );
}

#[test]
fn hosts_tls_and_class_as_validate_ingress_rules_and_tls() {
    // Go (networking): "wildcard host in the middle", "IP host", "invalid TLS host",
    // "invalid secret name", "invalid ingressClassName", "annotation and class disagree".
    let host = |host: &str| ingress(json!({"rules": [{"host": host}]}));
    assert_eq!(fields(host("foo.*.bar.com")), ["spec.rules[0].host"]);
    assert_eq!(fields(host("1.2.3.4")), ["spec.rules[0].host"]);
    assert_eq!(fields(host("Foo.com")), ["spec.rules[0].host"]);
    let tls = ingress(
        json!({"rules": [{"host": "a.com"}], "tls": [{"hosts": ["*.*.a.com"], "secretName": "Bad_Name"}]}),
    );
    assert_eq!(
        fields(tls),
        ["spec.tls[0].hosts[0]", "spec.tls[0].secretName"]
    );
    let class = ingress(json!({"rules": [{"host": "a.com"}], "ingressClassName": "Bad"}));
    assert_eq!(fields(class), ["spec.ingressClassName"]);
    let mut both = ingress(json!({"rules": [{"host": "a.com"}], "ingressClassName": "nginx"}));
    both["metadata"]["annotations"] = json!({"kubernetes.io/ingress.class": "other"});
    assert_eq!(
        fields(both),
        ["metadata.annotations[kubernetes.io/ingress.class]"]
    );
}

#[test]
fn ingress_classes_as_validate_ingress_class() {
    // Go (networking): TestValidateIngressClass's "valid name, valid controller",
    // "invalid controller", "controller too long", parameters scope cases.
    let class = |spec: Value| {
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
                                      "metadata": {"name": "nginx"}, "spec": spec})
    };
    assert!(fields(class(json!({"controller": "k8s.io/ingress-nginx"}))).is_empty());
    assert_eq!(fields(class(json!({}))), ["spec.controller"]);
    assert_eq!(
        fields(class(json!({"controller": "foo.co"}))),
        ["spec.controller"]
    );
    let long = format!("foo.co/{}", "a".repeat(245));
    assert_eq!(
        fields(class(json!({"controller": long}))),
        ["spec.controller"]
    );
    let namespaced = json!({"controller": "a.b/c", "parameters": {"kind": "K", "name": "n", "scope": "Namespace"}});
    assert_eq!(fields(class(namespaced)), ["spec.parameters.namespace"]);
    let cluster =
        json!({"controller": "a.b/c", "parameters": {"kind": "K", "name": "n", "namespace": "x"}});
    assert_eq!(fields(class(cluster)), ["spec.parameters.namespace"]);
    let scope = json!({"controller": "a.b/c", "parameters": {"kind": "K", "name": "n", "scope": "Everywhere"}});
    assert_eq!(fields(class(scope)), ["spec.parameters.scope"]);
}

// --- Secret, ConfigMap (pkg/apis/core/validation: ValidateSecret, ValidateConfigMap) ---

#[test]
fn secrets_as_validate_secret() {
    // Go (core): TestValidateSecret's "invalid key", "too large", TLS "missing key";
    // old required.rs: a TLS Secret lacking tls.key.
    let secret = |extra: Value| {
        let mut value = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n"}});
        for (name, field) in extra.as_object().unwrap() {
            value[name] = field.clone();
        }
        value
    };
    let tls = secret(json!({"type": "kubernetes.io/tls", "stringData": {"tls.crt": "x"}}));
    assert_eq!(errors(tls), ["data[tls.key]: Required value"]);
    let merged = secret(
        json!({"type": "kubernetes.io/tls", "stringData": {"tls.crt": "x"}, "data": {"tls.key": "eA=="}}),
    );
    assert!(fields(merged).is_empty());
    assert_eq!(
        fields(secret(json!({"stringData": {"a b": "x"}}))),
        ["data[a b]"]
    );
    assert_eq!(
        fields(secret(
            json!({"stringData": {"big": "x".repeat(1024 * 1024 + 1)}})
        )),
        ["data"]
    );
    assert_eq!(
        fields(secret(
            json!({"type": "kubernetes.io/dockerconfigjson", "stringData": {".dockerconfigjson": "[]"}})
        )),
        ["data[.dockerconfigjson]"]
    );
    assert_eq!(
        fields(secret(json!({"type": "kubernetes.io/basic-auth"}))),
        ["data[username]", "data[password]"]
    );
    assert!(fields(secret(json!({"type": "example.com/custom"}))).is_empty());
}

#[test]
fn config_maps_as_validate_config_map() {
    // Go (core): TestValidateConfigMap's "invalid key", "..", "duplicate key", "too large".
    let map = |extra: Value| {
        let mut value = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}});
        for (name, field) in extra.as_object().unwrap() {
            value[name] = field.clone();
        }
        value
    };
    assert!(fields(map(json!({"data": {"Corefile": ".:53 {}", "a.b_c-d": ""}}))).is_empty());
    assert_eq!(
        fields(map(json!({"data": {"..bad": "", "a/b": ""}}))),
        ["data[..bad]", "data[a/b]"]
    );
    assert_eq!(
        fields(map(json!({"data": {"k": ""}, "binaryData": {"k": ""}}))),
        ["data[k]", "binaryData[k]"]
    );
    assert_eq!(
        errors(map(json!({"data": {"big": "x".repeat(1024 * 1024 + 1)}}))),
        ["Too long: may not be more than 1048576 bytes"]
    );
}

// --- Lease, Namespace ---

#[test]
fn leases_as_validate_lease_spec() {
    // Go (coordination): TestValidateLeaseSpec's negative duration and transitions,
    // "preferredHolder without strategy", "invalid strategy".
    let lease = |spec: Value| {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                      "metadata": {"name": "l", "namespace": "n"}, "spec": spec})
    };
    assert!(
        fields(lease(
            json!({"holderIdentity": "me", "leaseDurationSeconds": 15})
        ))
        .is_empty()
    );
    assert_eq!(
        fields(lease(
            json!({"leaseDurationSeconds": 0, "leaseTransitions": -1, "preferredHolder": "x"})
        )),
        [
            "spec.leaseDurationSeconds",
            "spec.leaseTransitions",
            "spec.preferredHolder"
        ]
    );
    assert_eq!(
        fields(lease(json!({"strategy": "Random"}))),
        ["spec.strategy"]
    );
    assert!(
        fields(lease(
            json!({"strategy": "example.com/mine", "preferredHolder": "x"})
        ))
        .is_empty()
    );
}

#[test]
fn namespaces_as_validate_namespace() {
    // Go (core): TestValidateNamespace's "invalid name" cases.
    let namespace =
        |name: &str| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    assert!(fields(namespace("kube-system")).is_empty());
    for bad in ["a.b", "Upper", "a_b", "-a"] {
        assert_eq!(fields(namespace(bad)), ["metadata.name"], "{bad}");
    }
    let finalizer = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"},
                           "spec": {"finalizers": ["kubernetes", "a/b/c"]}});
    assert_eq!(fields(finalizer), ["spec.finalizers[1]"]);
}

// --- Node (pkg/apis/core/validation: ValidateNode, validateNodeTaints) ---

fn node(metadata: Value, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": metadata, "spec": spec})
}

#[test]
fn node_names_are_dns_subdomains_as_validate_node_name() {
    // A kubelet registers its hostname, which may have dots.
    let named = |name: &str| node(json!({"name": name}), json!({}));
    assert!(fields(named("ip-10-0-0-1.eu-west-1.compute.internal")).is_empty());
    for bad in ["Upper", "a_b", "-a", "a..b", &"a".repeat(254)] {
        assert_eq!(fields(named(bad)), ["metadata.name"], "{bad}");
    }
    let namespaced = node(json!({"name": "a", "namespace": "default"}), json!({}));
    assert_eq!(fields(namespaced), ["metadata.namespace"]);
    let labelled = node(
        json!({"name": "a", "labels": {"topology.kubernetes.io/zone": "eu-west-1a",
                                       "bad key!": "x", "ok": "bad value!"}}),
        json!({}),
    );
    assert_eq!(fields(labelled), ["metadata.labels", "metadata.labels"]);
}

#[test]
fn node_pod_cidrs_as_validate_node() {
    let cidrs = |cidrs: Value| node(json!({"name": "a"}), json!({"podCIDRs": cidrs}));
    assert!(fields(cidrs(json!(["10.244.1.0/24", "fd00:10:244:1::/64"]))).is_empty());
    // The API server has long accepted bits set after the prefix length.
    assert!(fields(cidrs(json!(["10.244.1.1/24"]))).is_empty());
    assert_eq!(fields(cidrs(json!(["10.244.1.0"]))), ["spec.podCIDRs[0]"]);
    assert_eq!(
        fields(cidrs(json!(["010.244.1.0/24"]))),
        ["spec.podCIDRs[0]"]
    );
    assert_eq!(
        fields(cidrs(json!(["10.244.1.0/24", "10.244.2.0/24"]))),
        ["spec.podCIDRs"]
    );
    assert_eq!(
        fields(cidrs(json!([
            "10.244.1.0/24",
            "fd00::/64",
            "10.244.1.0/24"
        ]))),
        ["spec.podCIDRs", "spec.podCIDRs[2]"]
    );
    // `podCIDR` alone counts as the list of one it is converted to.
    let single = node(json!({"name": "a"}), json!({"podCIDR": "nope"}));
    assert_eq!(fields(single), ["spec.podCIDRs[0]"]);
}

#[test]
fn node_taints_as_validate_node_taints() {
    let tainted = |taints: Value| node(json!({"name": "a"}), json!({"taints": taints}));
    let to_be_deleted = json!({"key": "ToBeDeletedByClusterAutoscaler", "value": "1700000000",
                               "effect": "NoSchedule"});
    assert!(fields(tainted(json!([to_be_deleted]))).is_empty());
    let bad = json!([
        {"key": "a b", "effect": "NoSchedule"},
        {"key": "k", "value": "v v", "effect": "Sometimes"},
        {"key": "k", "effect": ""},
        {"key": "dup", "effect": "NoExecute"},
        {"key": "dup", "effect": "NoExecute"},
    ]);
    assert_eq!(
        fields(tainted(bad)),
        [
            "metadata.taints[0].key",
            "metadata.taints[1].value",
            "metadata.taints[1].effect",
            "metadata.taints[2].effect",
            "metadata.taints[4]",
        ]
    );
}

// --- Every message is one printable line ---

#[test]
fn every_message_is_one_printable_line() {
    let hostile = "a\nb\r\u{1b}[31m\u{0}\u{2028}\t\"\\".repeat(10);
    let h = hostile.as_str();
    let values = [
        service(
            json!({"type": h, "clusterIP": h, "externalIPs": [h], "externalName": h,
            "sessionAffinity": h, "externalTrafficPolicy": h, "internalTrafficPolicy": h,
            "ipFamilies": [h], "ipFamilyPolicy": h, "loadBalancerSourceRanges": [h],
            "loadBalancerClass": h, "selector": {h: h},
            "ports": [{"name": h, "port": 80, "protocol": h, "targetPort": h, "appProtocol": h}]}),
        ),
        slice(h, json!([]), json!([])),
        slice(
            "IPv4",
            json!([{"addresses": [h], "hostname": h, "nodeName": h}]),
            json!([{"name": h, "protocol": h, "appProtocol": h}]),
        ),
        slice("FQDN", json!([{"addresses": [h]}]), json!([])),
        ingress(
            json!({"ingressClassName": h, "tls": [{"hosts": [h], "secretName": h}],
            "rules": [{"host": h, "http": {"paths": [{"path": h, "pathType": h,
                "backend": {"service": {"name": h, "port": {"name": h}}}}]}}]}),
        ),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": h, "namespace": h, "labels": {h: h}, "annotations": {h: h}},
               "data": {h: h}}),
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
               "metadata": {"name": h}, "spec": {"controller": h}}),
    ];
    for value in values {
        let found = errors(value);
        assert!(!found.is_empty());
        for message in found {
            assert!(
                !message.chars().any(|c| c.is_control() || c == '\u{2028}'),
                "{message:?}"
            );
        }
    }
}

// --- Pod (pkg/apis/core/validation: ValidatePodCreate's metadata, validatePodIPs) ---

fn pod(name: &str, ips: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "shop"},
           "status": {"podIPs": ips}})
}

#[test]
fn pod_names_and_pod_ips_as_validate_pod() {
    assert!(fields(pod("web-0", json!([{"ip": "10.1.0.5"}, {"ip": "fd00::5"}]))).is_empty());
    assert_eq!(fields(pod("Web_0", json!([]))), ["metadata.name"]);
    assert_eq!(
        errors(pod("web-0", json!([{"ip": "10.1.0.300"}]))),
        [
            "status.podIPs[0]: Invalid value: \"10.1.0.300\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
        ]
    );
    assert_eq!(
        fields(pod(
            "web-0",
            json!([{"ip": "10.1.0.5"}, {"ip": "10.1.0.5"}])
        )),
        ["status.podIPs", "status.podIPs[1]"]
    );
}
