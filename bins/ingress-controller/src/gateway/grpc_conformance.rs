//! The Gateway API conformance suite's GRPCRoute tests (profile GATEWAY-GRPC) without nginx:
//! each test's manifests through [`evaluate`], its routes' statuses compared with what the
//! suite waits for (`GatewayAndRoutesMustBeAccepted`), and its request table
//! (`tests/support/gateway_grpc_tables.rs`) replayed on the candidate order of the Gateway's
//! listeners (S-LI.1, S-GR.2), reading the GRPCRoutes' matches as the specification writes them.

use cluster_state::gateway::GrpcRouteMatch;

use super::conformance::{INFRA, load};
use super::*;

#[path = "../../tests/support/gateway_grpc_tables.rs"]
mod tables;

use tables::GrpcCase;

/// The evaluation of `snapshot` as the e2e test serves it: every Gateway loaded, each on an
/// address of its own (`--gateway-addresses`), so that port 80 is not the Ingresses'.
fn run(snapshot: &cluster_state::Snapshot) -> Evaluation {
    let loaded: BTreeSet<ObjectRef> = snapshot.gateways.keys().cloned().collect();
    let objects = crate::objects::Objects::from_snapshot(snapshot);
    let inputs = GatewayInputs::new(&objects, &loaded);
    let now = Time(cluster_state::k8s::jiff::Timestamp::from_second(1_800_000_000).unwrap());
    let settings = Settings {
        own_addresses: true,
        ..Settings::default()
    };
    evaluate(inputs, &settings, &now)
}

/// Whether call `case` satisfies `m` (`None`: a rule without matches): the service and
/// method compared exactly (the tables use no other type), the metadata by name ignoring case.
fn holds(m: Option<&GrpcRouteMatch>, case: &GrpcCase) -> bool {
    let Some(m) = m else {
        return true;
    };
    let (_, path, metadata, _) = *case;
    let (service, method) = path
        .strip_prefix('/')
        .and_then(|p| p.split_once('/'))
        .unwrap();
    let method_ok = m.method.as_ref().is_none_or(|wanted| {
        assert_eq!(wanted.match_type(), "Exact");
        wanted.service.as_deref().is_none_or(|s| s == service)
            && wanted.method.as_deref().is_none_or(|n| n == method)
    });
    let headers_ok = m.headers().iter().all(|h| {
        let found = metadata
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(&h.name));
        found.is_some_and(|(_, value)| *value == h.value)
    });
    method_ok && headers_ok
}

/// The backend of the first candidate of `listener` that `case` satisfies (`None`:
/// `UNIMPLEMENTED`).
fn serve(
    snapshot: &cluster_state::Snapshot,
    listener: &ServedListener,
    case: &GrpcCase,
) -> Option<String> {
    let host = case.0;
    listener.candidates.iter().find_map(|candidate| {
        assert_eq!(candidate.kind, RouteKind::Grpc);
        if !candidate.hostname.as_ref().is_none_or(|h| h.matches(host)) {
            return None;
        }
        let route = &snapshot.grpc_routes[&candidate.route];
        let rule = &route.spec.rules()[candidate.rule];
        let m = rule.matches().get(candidate.match_index);
        holds(m, case).then(|| rule.backend_refs()[0].name.clone())
    })
}

/// Every GRPCRoute of each test accepted with its references resolved, and each call of its
/// table answered by the backend (or the status) the suite expects.
#[test]
fn s_gr_conformance_request_tables() {
    for (test, file, gateway, cases) in tables::GRPC {
        let snapshot = load(file);
        let evaluation = run(&snapshot);
        assert!(!snapshot.grpc_routes.is_empty(), "{test}");
        for key in snapshot.grpc_routes.keys() {
            let status = &evaluation.grpc_routes[key];
            for parent in &status.parents {
                for (type_, want) in [("Accepted", "True"), ("ResolvedRefs", "True")] {
                    let found = parent.conditions.iter().find(|c| c.type_ == type_);
                    assert_eq!(
                        found.map(|c| c.status.as_str()),
                        Some(want),
                        "{test}: {key}"
                    );
                }
            }
        }
        let gateway = ObjectRef::new(INFRA, gateway);
        let listeners: Vec<&ServedListener> = evaluation
            .listeners
            .iter()
            .filter(|l| l.gateway == gateway && l.port == 80)
            .collect();
        for case in cases {
            let host = if case.0.is_empty() {
                "192.0.2.1"
            } else {
                case.0
            };
            let index = hostname::listener_for(host, listeners.iter().map(|l| l.hostname.as_ref()));
            let served = index.and_then(|i| {
                let case = (host, case.1, case.2, case.3);
                serve(&snapshot, listeners[i], &case)
            });
            assert_eq!(served.as_deref(), case.3, "{test}: {case:?}");
        }
    }
}

/// GRPCRoute counts in `attachedRoutes`, and the suite's listeners list it in
/// `supportedKinds` (GRPCRouteListenerHostnameMatching's Gateway).
#[test]
fn s_gw_2_listeners_carry_grpc_routes() {
    let evaluation = run(&load("grpcroute-listener-hostname-matching.yaml"));
    let key = ObjectRef::new(INFRA, "grpcroute-listener-hostname-matching");
    let listeners = evaluation.gateways[&key].listeners.clone().unwrap();
    let attached: Vec<(&str, i32)> = listeners
        .iter()
        .map(|l| (l.name.as_str(), l.attached_routes))
        .collect();
    assert_eq!(
        attached,
        [
            ("listener-1", 1),
            ("listener-2", 1),
            ("listener-3", 1),
            ("listener-4", 1)
        ]
    );
    for listener in &listeners {
        let kinds = listener.supported_kinds.iter().flatten();
        assert!(kinds.clone().any(|k| k.kind == "GRPCRoute"), "{listener:?}");
    }
}

/// The parent condition `type_` of route `name` (infra namespace) from `evaluation`.
fn parent_condition(evaluation: &Evaluation, name: &str, type_: &str) -> (String, String, String) {
    let status = &evaluation.grpc_routes[&ObjectRef::new(INFRA, name)];
    let found = status.parents[0]
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
        .unwrap();
    (
        found.status.clone(),
        found.reason.clone(),
        found.message.clone(),
    )
}

/// S-GR.5: on the Ingresses' address, port 80 is their HTTP/1 port: a GRPCRoute is not
/// accepted there, and says why.
#[test]
fn s_gr_5_not_on_the_ingress_http_port() {
    let snapshot = load("grpcroute-exact-method-matching.yaml");
    let evaluation = super::conformance::run(&snapshot);
    let (status, reason, message) = parent_condition(&evaluation, "exact-matching", "Accepted");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "UnsupportedProtocol")
    );
    assert!(
        message.contains("nginx 1.22 cannot serve HTTP/1.1 and gRPC"),
        "{message}"
    );
}

/// S-GR.5 and S-AT.9: a GRPCRoute and an older HTTPRoute on one listener with host names in
/// common: the HTTPRoute keeps it; on a plaintext port an HTTPRoute uses, the GRPCRoute is not
/// served either. Made newer than the GRPCRoute, the HTTPRoute loses the listener.
#[test]
fn s_at_9_the_older_kind_keeps_the_listener() {
    use cluster_state::k8s::jiff::Timestamp;
    let mut snapshot = load("grpcroute-exact-method-matching.yaml");
    let http = load("httproute-simple-same-namespace.yaml");
    let key = ObjectRef::new(INFRA, "gateway-conformance-infra-test");
    let at = |s: i64| Some(Time(Timestamp::from_second(s).unwrap()));
    let mut route = http.http_routes[&key].as_ref().clone();
    route.metadata.creation_timestamp = at(1);
    snapshot
        .http_routes
        .insert(key.clone(), std::sync::Arc::new(route.clone()));
    let grpc_key = ObjectRef::new(INFRA, "exact-matching");
    let grpc = std::sync::Arc::make_mut(snapshot.grpc_routes.get_mut(&grpc_key).unwrap());
    grpc.metadata.creation_timestamp = at(2);
    let evaluation = run(&snapshot);
    let (status, reason, message) = parent_condition(&evaluation, "exact-matching", "Accepted");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "NotAllowedByListeners")
    );
    assert!(
        message.contains(
            "the older HTTPRoute gateway-conformance-infra/gateway-conformance-infra-test"
        ),
        "{message}"
    );

    route.metadata.creation_timestamp = at(3);
    snapshot
        .http_routes
        .insert(key.clone(), std::sync::Arc::new(route));
    let evaluation = run(&snapshot);
    let http_status = &evaluation.http_routes[&key].parents[0];
    let accepted = http_status
        .conditions
        .iter()
        .find(|c| c.type_ == "Accepted")
        .unwrap();
    assert_eq!(
        (accepted.status.as_str(), accepted.reason.as_str()),
        ("False", "NotAllowedByListeners")
    );
    let (status, _, _) = parent_condition(&evaluation, "exact-matching", "Accepted");
    assert_eq!(status, "True");
    let listener = evaluation
        .listeners
        .iter()
        .find(|l| l.gateway == ObjectRef::new(INFRA, "same-namespace"))
        .unwrap();
    assert!(
        listener
            .candidates
            .iter()
            .all(|c| c.kind == RouteKind::Grpc)
    );
}

/// `snapshot`'s Gateway `name` (infra namespace) with its listeners moved to `port`.
fn move_listeners(snapshot: &mut cluster_state::Snapshot, name: &str, port: i32) {
    let key = ObjectRef::new(INFRA, name);
    let gateway = std::sync::Arc::make_mut(snapshot.gateways.get_mut(&key).unwrap());
    for listener in &mut gateway.spec.listeners {
        listener.port = port;
    }
}

/// `snapshot`'s evaluation on the Ingresses' address (`--http-port` `http_port`), or on
/// addresses of their own, with HTTPS offering HTTP/2 or not.
fn run_with(
    snapshot: &cluster_state::Snapshot,
    own_addresses: bool,
    http_port: i32,
    http2: bool,
) -> Evaluation {
    let loaded: BTreeSet<ObjectRef> = snapshot.gateways.keys().cloned().collect();
    let objects = crate::objects::Objects::from_snapshot(snapshot);
    let mut inputs = GatewayInputs::new(&objects, &loaded);
    inputs.http2 = http2;
    let now = Time(cluster_state::k8s::jiff::Timestamp::from_second(1_800_000_000).unwrap());
    let settings = Settings {
        own_addresses,
        http_port,
        ..Settings::default()
    };
    evaluate(inputs, &settings, &now)
}

/// S-GR.5: on the Ingresses' address, a listener on the port `--http-port` names is served on
/// the Ingresses' HTTP/1 socket too: not accepted there; on another port it is.
#[test]
fn s_gr_5_not_on_a_listener_port_equal_to_the_http_port() {
    let mut snapshot = load("grpcroute-exact-method-matching.yaml");
    move_listeners(&mut snapshot, "same-namespace", 8080);
    let accepted = |http_port| {
        let evaluation = run_with(&snapshot, false, http_port, true);
        parent_condition(&evaluation, "exact-matching", "Accepted")
    };
    let (status, reason, message) = accepted(8080);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "UnsupportedProtocol")
    );
    assert!(message.contains("the Ingresses' HTTP port"), "{message}");
    assert_eq!(accepted(80).0, "True");
}

/// S-GR.5: a GRPCRoute on an HTTPS listener needs HTTP/2 there (`use-http2`), else it is not
/// accepted, and says why.
#[test]
fn s_gr_5_https_needs_http2() {
    let mut snapshot = load("grpcroute-exact-method-matching.yaml");
    let key = ObjectRef::new(INFRA, "exact-matching");
    let route = std::sync::Arc::make_mut(snapshot.grpc_routes.get_mut(&key).unwrap());
    for parent in route.spec.parent_refs.iter_mut().flatten() {
        parent.name = "same-namespace-with-https-listener".into();
    }
    let accepted = |http2| {
        let evaluation = run_with(&snapshot, true, 80, http2);
        parent_condition(&evaluation, "exact-matching", "Accepted")
    };
    let (status, reason, message) = accepted(false);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "UnsupportedProtocol")
    );
    assert!(message.contains("use-http2"), "{message}");
    assert_eq!(accepted(true).0, "True");
}

/// S-GR.5: Gateways on one shared address share a socket per port: an HTTPRoute of another
/// Gateway on the same plaintext port keeps the GRPCRoute out; on addresses of their own it
/// does not.
#[test]
fn s_gr_5_one_socket_across_gateways_on_the_shared_address() {
    let mut snapshot = load("grpcroute-exact-method-matching.yaml");
    let http = load("httproute-simple-same-namespace.yaml");
    let key = ObjectRef::new(INFRA, "gateway-conformance-infra-test");
    let mut route = http.http_routes[&key].as_ref().clone();
    for parent in route.spec.parent_refs.iter_mut().flatten() {
        parent.name = "all-namespaces".into();
    }
    snapshot.http_routes.insert(key, std::sync::Arc::new(route));
    move_listeners(&mut snapshot, "same-namespace", 8081);
    move_listeners(&mut snapshot, "all-namespaces", 8081);
    let evaluation = run_with(&snapshot, false, 80, true);
    let (status, reason, message) = parent_condition(&evaluation, "exact-matching", "Accepted");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "UnsupportedProtocol")
    );
    assert!(message.contains("HTTPRoutes use it"), "{message}");
    let evaluation = run_with(&snapshot, true, 80, true);
    assert_eq!(
        parent_condition(&evaluation, "exact-matching", "Accepted").0,
        "True"
    );
}
