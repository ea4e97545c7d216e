//! Each rule of the Gateway API validation on whole objects: the constraint of the CRD (or
//! ours, where the module says so) that it follows, a valid value and a hostile one.

use serde_json::{Value, json};

use crate::validate::tests::{fields, object};
use crate::validate::validate;

/// A header value with a line break and an nginx directive after it.
const PAYLOAD: &str = "x\r\nproxy_pass http://evil;\n";

/// The fields of the errors of `value`, with each message after `: `.
fn errors(value: Value) -> Vec<String> {
    match validate(&object(value)) {
        Ok(()) => Vec::new(),
        Err(invalid) => invalid.errors.iter().map(ToString::to_string).collect(),
    }
}

fn route(spec: Value) -> Value {
    json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
           "metadata": {"name": "web", "namespace": "shop"}, "spec": spec})
}

/// An HTTPRoute with one rule.
fn rule(rule: Value) -> Value {
    route(json!({"parentRefs": [{"name": "gw"}], "rules": [rule]}))
}

/// An HTTPRoute whose one rule has `filters` and a backend.
fn filters(filters: Value) -> Value {
    rule(json!({"filters": filters, "backendRefs": [{"name": "web", "port": 80}]}))
}

fn gateway(spec: Value) -> Value {
    json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
           "metadata": {"name": "gw", "namespace": "shop"}, "spec": spec})
}

fn listeners(listeners: Value) -> Value {
    gateway(json!({"gatewayClassName": "nginx", "listeners": listeners}))
}

fn grpc(rule: Value) -> Value {
    json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GRPCRoute",
           "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"rules": [rule]}})
}

#[test]
fn a_plain_route_gateway_class_and_grant_are_valid() {
    let route = rule(json!({
        "matches": [{"path": {"type": "Exact", "value": "/a/b%20c"},
                     "headers": [{"name": "X-Env", "value": "canary\tone"}],
                     "queryParams": [{"name": "v", "value": "2"}], "method": "GET"}],
        "filters": [{"type": "RequestHeaderModifier",
                     "requestHeaderModifier": {"set": [{"name": "X-A", "value": "1"}],
                                               "remove": ["X-B"]}}],
        "backendRefs": [{"name": "web", "port": 80, "weight": 0}],
        "timeouts": {"request": "10s", "backendRequest": "1s500ms"}
    }));
    assert_eq!(errors(route), Vec::<String>::new());
    let class = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                       "metadata": {"name": "nginx"},
                       "spec": {"controllerName": "kube-node-net.io/gateway-controller"}});
    assert_eq!(errors(class), Vec::<String>::new());
    let grant = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "ReferenceGrant",
                       "metadata": {"name": "g", "namespace": "backends"},
                       "spec": {"from": [{"group": "gateway.networking.k8s.io",
                                          "kind": "HTTPRoute", "namespace": "shop"}],
                                "to": [{"group": "", "kind": "Service"}]}});
    assert_eq!(errors(grant), Vec::<String>::new());
}

#[test]
fn hostnames_are_dns_names_with_an_optional_leading_wildcard() {
    let ok = route(json!({"hostnames": ["*.example.com", "foo.example.com"]}));
    assert_eq!(errors(ok), Vec::<String>::new());
    let bad = route(json!({"hostnames": ["a.*.com", "Foo.com", "x;y", "host\nname", ""]}));
    assert_eq!(
        fields(bad),
        [
            "spec.hostnames[0]",
            "spec.hostnames[1]",
            "spec.hostnames[2]",
            "spec.hostnames[3]",
            "spec.hostnames[4]"
        ]
    );
    let many: Vec<String> = (0..17).map(|i| format!("h{i}.example.com")).collect();
    assert_eq!(
        fields(route(json!({"hostnames": many}))),
        ["spec.hostnames"]
    );
}

#[test]
fn exact_and_prefix_paths_are_absolute_normalised_and_of_path_characters() {
    let path = |kind: &str, value: &str| {
        fields(rule(
            json!({"matches": [{"path": {"type": kind, "value": value}}]}),
        ))
    };
    assert!(path("PathPrefix", "/a-b/c.d~e/%41").is_empty());
    let at = "spec.rules[0].matches[0].path.value";
    for bad in [
        "a", "/a//b", "/a/./b", "/a/../b", "/a%2fb", "/a%2Fb", "/a#b", "/a/..", "/a/.", "/a b",
        "/a;\n}", "/a{b}", "/%zz", "/\"",
    ] {
        assert!(path("Exact", bad).iter().all(|f| f == at), "{bad:?}");
        assert!(!path("PathPrefix", bad).is_empty(), "{bad:?}");
    }
    // A regular expression is the later check's business (the controller's PCRE subset).
    assert!(path("RegularExpression", "^/a.*b$").is_empty());
    assert_eq!(
        errors(rule(
            json!({"matches": [{"path": {"type": "Glob", "value": "/"}}]})
        )),
        [
            "spec.rules[0].matches[0].path.type: Unsupported value: \"Glob\": supported values: \
          \"Exact\", \"PathPrefix\", \"RegularExpression\""
        ]
    );
    let long = format!("/{}", "a".repeat(1024));
    assert_eq!(path("PathPrefix", &long), [at]);
}

#[test]
fn header_and_query_matches_are_tokens_and_field_values() {
    let matches = |m: Value| fields(rule(json!({"matches": [m]})));
    let at = "spec.rules[0].matches[0]";
    assert_eq!(
        matches(json!({"headers": [{"name": "X A", "value": "1"}]})),
        [format!("{at}.headers[0].name")]
    );
    assert_eq!(
        matches(json!({"headers": [{"name": "X-A", "value": PAYLOAD}]})),
        [format!("{at}.headers[0].value")]
    );
    assert_eq!(
        matches(json!({"headers": [{"name": "X-A", "value": "1"}, {"name": "X-A", "value": "2"}]})),
        [format!("{at}.headers[1].name")]
    );
    // Names differing in case only are distinct keys to the API server; the specification
    // says which one counts.
    let cased = json!({"headers": [{"name": "X-A", "value": "1"}, {"name": "x-a", "value": "2"}]});
    assert!(matches(cased).is_empty());
    assert_eq!(
        matches(json!({"headers": [{"name": "X-A", "value": "1", "type": "Prefix"}]})),
        [format!("{at}.headers[0].type")]
    );
    assert_eq!(
        matches(json!({"queryParams": [{"name": "a=b", "value": "1"}]})),
        [format!("{at}.queryParams[0].name")]
    );
    assert_eq!(
        matches(json!({"queryParams": [{"name": "a", "value": ""}]})),
        [format!("{at}.queryParams[0].value")]
    );
    assert_eq!(matches(json!({"method": "get"})), [format!("{at}.method")]);
    let many: Vec<Value> = (0..17)
        .map(|i| json!({"name": format!("h{i}"), "value": "1"}))
        .collect();
    assert_eq!(matches(json!({"headers": many})), [format!("{at}.headers")]);
}

#[test]
fn header_modifiers_set_tokens_to_field_values() {
    let modifier = |m: Value| {
        fields(filters(
            json!([{"type": "RequestHeaderModifier", "requestHeaderModifier": m}]),
        ))
    };
    let at = "spec.rules[0].filters[0].requestHeaderModifier";
    assert_eq!(
        modifier(json!({"set": [{"name": "X-A", "value": PAYLOAD}]})),
        [format!("{at}.set[0].value")]
    );
    assert_eq!(
        modifier(json!({"add": [{"name": "X-A\n", "value": "1"}]})),
        [format!("{at}.add[0].name")]
    );
    assert_eq!(
        modifier(json!({"add": [{"name": "X-A", "value": ""}]})),
        [format!("{at}.add[0].value")]
    );
    assert_eq!(
        modifier(json!({"remove": ["X-A;", "X-B", "X-B"]})),
        [format!("{at}.remove[0]"), format!("{at}.remove[2]")]
    );
    assert_eq!(
        modifier(json!({"set": [{"name": "a", "value": "1"}, {"name": "a", "value": "2"}]})),
        [format!("{at}.set[1].name")]
    );
    let long = "v".repeat(4097);
    assert_eq!(
        modifier(json!({"set": [{"name": "a", "value": long}]})),
        [format!("{at}.set[0].value")]
    );
    // The response side is held to the same rules.
    let response = filters(json!([{"type": "ResponseHeaderModifier",
        "responseHeaderModifier": {"add": [{"name": "X-A", "value": PAYLOAD}]}}]));
    assert_eq!(
        fields(response),
        ["spec.rules[0].filters[0].responseHeaderModifier.add[0].value"]
    );
}

#[test]
fn a_filter_sets_the_field_its_type_names_and_no_other() {
    let missing = filters(json!([{"type": "RequestHeaderModifier"}]));
    assert_eq!(
        errors(missing),
        [
            "spec.rules[0].filters[0].requestHeaderModifier: Required value: must be specified \
          for RequestHeaderModifier filter.type"
        ]
    );
    let other = filters(json!([{"type": "URLRewrite", "urlRewrite": {},
                                "requestHeaderModifier": {}}]));
    assert_eq!(
        fields(other),
        ["spec.rules[0].filters[0].requestHeaderModifier"]
    );
    assert_eq!(
        fields(filters(json!([{"type": "Lua"}]))),
        ["spec.rules[0].filters[0].type"]
    );
    // The experimental channel's ExternalAuth type is accepted (its field is kept unknown).
    let external = filters(json!([{"type": "ExternalAuth",
        "externalAuth": {"protocol": "HTTP", "backendRef": {"name": "auth"}}}]));
    assert_eq!(errors(external), Vec::<String>::new());
    let twice = filters(json!([
        {"type": "RequestHeaderModifier", "requestHeaderModifier": {}},
        {"type": "RequestHeaderModifier", "requestHeaderModifier": {}}
    ]));
    assert_eq!(fields(twice), ["spec.rules[0].filters"]);
    let both = rule(
        json!({"filters": [{"type": "RequestRedirect", "requestRedirect": {}},
                                       {"type": "URLRewrite", "urlRewrite": {}}]}),
    );
    assert_eq!(fields(both), ["spec.rules[0].filters"]);
}

#[test]
fn redirects_name_a_scheme_a_dns_host_a_port_a_status_and_a_clean_path() {
    let redirect = |r: Value| {
        fields(rule(
            json!({"filters": [{"type": "RequestRedirect", "requestRedirect": r}]}),
        ))
    };
    let at = "spec.rules[0].filters[0].requestRedirect";
    assert!(
        redirect(
            json!({"scheme": "https", "hostname": "example.com", "port": 8443,
                        "statusCode": 301,
                        "path": {"type": "ReplaceFullPath", "replaceFullPath": "/new"}})
        )
        .is_empty()
    );
    assert_eq!(redirect(json!({"scheme": "ftp"})), [format!("{at}.scheme")]);
    assert_eq!(
        redirect(json!({"hostname": "*.example.com"})),
        [format!("{at}.hostname")]
    );
    assert_eq!(
        redirect(json!({"hostname": "evil.com/x"})),
        [format!("{at}.hostname")]
    );
    assert_eq!(redirect(json!({"port": 0})), [format!("{at}.port")]);
    assert_eq!(redirect(json!({"port": 65536})), [format!("{at}.port")]);
    assert_eq!(
        redirect(json!({"statusCode": 200})),
        [format!("{at}.statusCode")]
    );
    assert_eq!(
        redirect(json!({"path": {"type": "ReplaceFullPath", "replaceFullPath": "/a\r\nX: y"}})),
        [format!("{at}.path.replaceFullPath")]
    );
    assert_eq!(
        redirect(json!({"path": {"type": "ReplaceFullPath"}})),
        [format!("{at}.path.replaceFullPath")]
    );
    assert_eq!(
        redirect(json!({"path": {"type": "ReplaceFullPath", "replacePrefixMatch": "/"}})),
        [
            format!("{at}.path.replaceFullPath"),
            format!("{at}.path.replacePrefixMatch")
        ]
    );
    // A redirect answers the request: it may not stand beside backends.
    let with_backend = filters(json!([{"type": "RequestRedirect", "requestRedirect": {}}]));
    assert_eq!(fields(with_backend), ["spec.rules[0].filters"]);
}

#[test]
fn a_prefix_replacement_needs_exactly_one_prefix_match() {
    let rewrite = json!([{"type": "URLRewrite", "urlRewrite": {
        "hostname": "internal.example", "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/v2"}}}]);
    let one = rule(
        json!({"matches": [{"path": {"type": "PathPrefix", "value": "/v1"}}],
                          "filters": rewrite.clone()}),
    );
    assert_eq!(errors(one), Vec::<String>::new());
    let exact = rule(
        json!({"matches": [{"path": {"type": "Exact", "value": "/v1"}}],
                            "filters": rewrite.clone()}),
    );
    assert_eq!(fields(exact), ["spec.rules[0].matches"]);
    let two = rule(
        json!({"matches": [{"path": {"value": "/a"}}, {"path": {"value": "/b"}}],
                          "filters": rewrite}),
    );
    assert_eq!(fields(two), ["spec.rules[0].matches"]);
}

#[test]
fn backends_have_ports_and_weights_in_range() {
    let backends = |b: Value| fields(rule(json!({"backendRefs": b})));
    let at = "spec.rules[0].backendRefs[0]";
    assert_eq!(backends(json!([{"name": "web"}])), [format!("{at}.port")]);
    assert!(
        backends(json!([{"name": "web", "group": "example.com", "kind": "Bucket"}])).is_empty()
    );
    assert_eq!(
        backends(json!([{"name": "web", "port": 80, "weight": -1}])),
        [format!("{at}.weight")]
    );
    assert_eq!(
        backends(json!([{"name": "web", "port": 80, "weight": 1_000_001}])),
        [format!("{at}.weight")]
    );
    assert_eq!(
        backends(json!([{"name": "web", "port": 80, "namespace": "Other_NS"}])),
        [format!("{at}.namespace")]
    );
    assert_eq!(
        backends(json!([{"name": "web", "port": 80, "kind": "Ser vice"}])),
        [format!("{at}.kind")]
    );
    assert_eq!(
        backends(json!([{"name": "", "port": 80}])),
        [format!("{at}.name")]
    );
}

#[test]
fn mirrors_take_a_percent_or_a_fraction_in_range() {
    let mirror = |m: Value| {
        let mut m = m;
        m["backendRef"] = json!({"name": "copy", "port": 80});
        fields(filters(
            json!([{"type": "RequestMirror", "requestMirror": m}]),
        ))
    };
    let at = "spec.rules[0].filters[0].requestMirror";
    assert!(mirror(json!({"fraction": {"numerator": 1, "denominator": 3}})).is_empty());
    assert_eq!(mirror(json!({"percent": 101})), [format!("{at}.percent")]);
    assert_eq!(
        mirror(json!({"fraction": {"numerator": 5, "denominator": 4}})),
        [format!("{at}.fraction")]
    );
    assert_eq!(
        mirror(json!({"percent": 5, "fraction": {"numerator": 1}})),
        [format!("{at}.fraction")]
    );
}

#[test]
fn cors_origins_methods_and_headers_are_well_formed() {
    let cors = |c: Value| fields(filters(json!([{"type": "CORS", "cors": c}])));
    let at = "spec.rules[0].filters[0].cors";
    assert!(
        cors(
            json!({"allowOrigins": ["https://*.example.com:8443", "http://a.b"],
                    "allowMethods": ["GET", "POST"], "allowHeaders": ["X-A"], "maxAge": 60})
        )
        .is_empty()
    );
    assert_eq!(
        cors(json!({"allowOrigins": ["https://a.com/path"]})),
        [format!("{at}.allowOrigins[0]")]
    );
    assert_eq!(
        cors(json!({"allowOrigins": ["*", "https://a.com"]})),
        [format!("{at}.allowOrigins")]
    );
    assert_eq!(
        cors(json!({"allowMethods": ["GET", "BREW"]})),
        [format!("{at}.allowMethods[1]")]
    );
    assert_eq!(
        cors(json!({"exposeHeaders": ["X A"]})),
        [format!("{at}.exposeHeaders[0]")]
    );
    assert_eq!(cors(json!({"maxAge": 0})), [format!("{at}.maxAge")]);
}

#[test]
fn timeouts_are_gateway_api_durations_backend_within_request() {
    let timeouts = |t: Value| fields(rule(json!({"timeouts": t})));
    let at = "spec.rules[0].timeouts";
    assert!(timeouts(json!({"request": "1h2m3s4ms", "backendRequest": "0s"})).is_empty());
    assert!(timeouts(json!({"request": "0s", "backendRequest": "1h"})).is_empty());
    assert_eq!(
        timeouts(json!({"request": "1.5s"})),
        [format!("{at}.request")]
    );
    assert_eq!(
        timeouts(json!({"request": "1d"})),
        [format!("{at}.request")]
    );
    assert_eq!(
        timeouts(json!({"request": "123456s"})),
        [format!("{at}.request")]
    );
    assert_eq!(
        timeouts(json!({"request": "1s1s1s1s1s"})),
        [format!("{at}.request")]
    );
    assert_eq!(
        timeouts(json!({"request": "1s", "backendRequest": "2s"})),
        [format!("{at}.backendRequest")]
    );
}

#[test]
fn rules_and_matches_are_bounded_and_rule_names_are_subdomains() {
    let many_rules: Vec<Value> = (0..17).map(|_| json!({})).collect();
    let spec = json!({"rules": many_rules});
    assert_eq!(fields(route(spec)), ["spec.rules"]);
    let matches: Vec<Value> = (0..64).map(|_| json!({"method": "GET"})).collect();
    let rules: Vec<Value> = (0..2)
        .map(|_| json!({"matches": matches.clone()}))
        .collect();
    assert_eq!(fields(route(json!({"rules": rules}))), ["spec.rules"]);
    assert_eq!(fields(route(json!({"rules": []}))), ["spec.rules"]);
    assert_eq!(
        fields(rule(json!({"name": "Rule One"}))),
        ["spec.rules[0].name"]
    );
}

#[test]
fn parent_refs_are_well_formed_and_distinct() {
    let parents = |p: Value| fields(route(json!({"parentRefs": p})));
    assert!(
        parents(json!([{"name": "gw", "sectionName": "http"},
                            {"name": "gw", "sectionName": "https"}]))
        .is_empty()
    );
    assert_eq!(
        parents(json!([{"name": "gw"}, {"name": "gw", "sectionName": "http"}])),
        ["spec.parentRefs[1]"]
    );
    assert_eq!(
        parents(json!([{"name": "gw", "sectionName": "http"},
                       {"name": "gw", "sectionName": "http", "group": "gateway.networking.k8s.io"}])),
        ["spec.parentRefs[1]"]
    );
    assert_eq!(
        parents(json!([{"name": "gw", "sectionName": "Bad Name", "port": 0}])),
        ["spec.parentRefs[0].sectionName", "spec.parentRefs[0].port"]
    );
}

#[test]
fn listeners_are_named_bound_once_and_carry_tls_as_their_protocol_allows() {
    let http = json!({"name": "http", "port": 80, "protocol": "HTTP"});
    assert!(fields(listeners(json!([http.clone()]))).is_empty());
    assert_eq!(fields(listeners(json!([]))), ["spec.listeners"]);
    assert_eq!(
        fields(listeners(json!([http.clone(), http.clone()]))),
        ["spec.listeners[1].name", "spec.listeners[1]"]
    );
    let bad = json!({"name": "Web!", "port": 70000, "protocol": "HTTP 2",
                     "hostname": "*.a\n.com"});
    assert_eq!(
        fields(listeners(json!([bad]))),
        [
            "spec.listeners[0].name",
            "spec.listeners[0].hostname",
            "spec.listeners[0].port",
            "spec.listeners[0].protocol"
        ]
    );
    let tls_on_http = json!({"name": "h", "port": 80, "protocol": "HTTP",
                             "tls": {"certificateRefs": [{"name": "cert"}]}});
    assert_eq!(
        fields(listeners(json!([tls_on_http]))),
        ["spec.listeners[0].tls"]
    );
    let passthrough = json!({"name": "h", "port": 443, "protocol": "HTTPS",
                             "tls": {"mode": "Passthrough", "certificateRefs": [{"name": "c"}]}});
    assert_eq!(
        fields(listeners(json!([passthrough]))),
        ["spec.listeners[0].tls.mode"]
    );
    let no_cert = json!({"name": "h", "port": 443, "protocol": "HTTPS", "tls": {}});
    assert_eq!(
        fields(listeners(json!([no_cert]))),
        ["spec.listeners[0].tls"]
    );
    let bad_ref = json!({"name": "h", "port": 443, "protocol": "HTTPS",
                         "tls": {"certificateRefs": [{"name": "c", "namespace": "A B"}]}});
    assert_eq!(
        fields(listeners(json!([bad_ref]))),
        ["spec.listeners[0].tls.certificateRefs[0].namespace"]
    );
    let from = json!({"name": "h", "port": 80, "protocol": "HTTP",
                      "allowedRoutes": {"namespaces": {"from": "Everywhere"},
                                        "kinds": [{"kind": "HTTPRoute"}, {"kind": "9Route"}]}});
    assert_eq!(
        fields(listeners(json!([from]))),
        [
            "spec.listeners[0].allowedRoutes.namespaces.from",
            "spec.listeners[0].allowedRoutes.kinds[1].kind"
        ]
    );
    let sets = gateway(json!({"gatewayClassName": "nginx",
        "listeners": [{"name": "h", "port": 80, "protocol": "HTTP"}],
        "allowedListeners": {"namespaces": {"from": "Any"}}}));
    assert_eq!(fields(sets), ["spec.allowedListeners.namespaces.from"]);
    // An implementation's own protocol is a domain-prefixed name.
    let custom = json!({"name": "h", "port": 80, "protocol": "example.com/Quic"});
    assert!(fields(listeners(json!([custom]))).is_empty());
}

#[test]
fn gateway_addresses_are_typed_and_distinct() {
    let addresses = |a: Value| {
        fields(gateway(json!({"gatewayClassName": "nginx",
            "listeners": [{"name": "h", "port": 80, "protocol": "HTTP"}], "addresses": a})))
    };
    assert!(
        addresses(json!([{"value": "10.0.0.1"}, {"type": "Hostname", "value": "a.b"}])).is_empty()
    );
    assert_eq!(
        addresses(json!([{"value": "10.0.0.1"}, {"type": "IPAddress", "value": "10.0.0.1"}])),
        ["spec.addresses[1].value"]
    );
    assert_eq!(
        addresses(json!([{"type": "Hostname", "value": "a b"}])),
        ["spec.addresses[0].value"]
    );
    assert_eq!(
        addresses(json!([{"type": "Bogus Type"}])),
        ["spec.addresses[0].type"]
    );
}

#[test]
fn gateway_classes_name_a_domain_prefixed_controller() {
    let class = |controller: &str| {
        fields(
            json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                      "metadata": {"name": "nginx"}, "spec": {"controllerName": controller}}),
        )
    };
    assert_eq!(class("nginx"), ["spec.controllerName"]);
    assert_eq!(class("example.com/a b"), ["spec.controllerName"]);
    assert_eq!(class(""), ["spec.controllerName"]);
    assert!(class("example.com/gateway-controller").is_empty());
}

#[test]
fn reference_grants_name_kinds_and_namespaces() {
    let grant = |spec: Value| {
        fields(
            json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "ReferenceGrant",
                      "metadata": {"name": "g", "namespace": "backends"}, "spec": spec}),
        )
    };
    assert_eq!(
        grant(json!({"from": [], "to": [{"group": "", "kind": "Service"}]})),
        ["spec.from"]
    );
    assert_eq!(
        grant(
            json!({"from": [{"group": "Gateway.Networking", "kind": "HTTPRoute", "namespace": "x_y"}],
                     "to": [{"group": "", "kind": "Service", "name": ""}]})
        ),
        [
            "spec.from[0].group",
            "spec.from[0].namespace",
            "spec.to[0].name"
        ]
    );
}

#[test]
fn grpc_methods_are_protobuf_names_when_exact() {
    let method = |m: Value| fields(grpc(json!({"matches": [{"method": m}]})));
    let at = "spec.rules[0].matches[0].method";
    assert!(method(json!({"service": "com.example.User", "method": "Login"})).is_empty());
    assert!(method(json!({"type": "RegularExpression", "service": "com\\..*"})).is_empty());
    assert_eq!(
        method(json!({"service": "com/example"})),
        [format!("{at}.service")]
    );
    assert_eq!(
        method(json!({"method": "Log in"})),
        [format!("{at}.method")]
    );
    assert_eq!(method(json!({"type": "Exact"})), [at.to_owned()]);
    let filter = grpc(json!({"filters": [{"type": "RequestRedirect"}]}));
    assert_eq!(fields(filter), ["spec.rules[0].filters[0].type"]);
    let header = grpc(json!({"matches": [{"headers": [{"name": "x", "value": PAYLOAD}]}]}));
    assert_eq!(
        fields(header),
        ["spec.rules[0].matches[0].headers[0].value"]
    );
}

#[test]
fn gateway_objects_have_valid_metadata() {
    let mut route = rule(json!({}));
    route["metadata"]["name"] = json!("Web Route");
    assert_eq!(fields(route), ["metadata.name"]);
    let class = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                       "metadata": {"name": "nginx", "namespace": "shop"},
                       "spec": {"controllerName": "example.com/c"}});
    assert_eq!(fields(class), ["metadata.namespace"]);
}
