//! The Gateway API conformance suite's status checks, evaluated without nginx: each test's
//! manifests (`testdata/gateway-api/`, with the base manifests the suite always applies) go
//! through [`evaluate`], and the computed conditions are compared with the test's
//! `statusChecks` (transcribed in the design notes, `tests/<Test>.yaml`). As the suite's helpers
//! do, an expected reason of `""` is not compared.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use cluster_state::gateway::{GatewayClass, GatewayClassSpec, ListenerStatus};
use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use cluster_state::k8s::jiff::Timestamp;
use cluster_state::{Object, ObjectRef, Snapshot, parse_manifest};

use super::listeners::tests::{certificate, tls_secret};
use super::*;

/// The class name the suite runs under (as cluster-state's conformance manifest test).
const CLASS: &str = "gateway-conformance";
/// The suite's namespaces.
pub(super) const INFRA: &str = "gateway-conformance-infra";
const WEB: &str = "gateway-conformance-web-backend";

/// The base manifests and `tests/<file>`, as the suite applies them, plus what the suite
/// creates at run time: the GatewayClass and the self-signed certificate Secrets.
pub(super) fn load(file: &str) -> Snapshot {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/gateway-api");
    let mut snapshot = Snapshot::default();
    for relative in ["base/manifests.yaml".to_owned(), format!("tests/{file}")] {
        let path = root.join(relative);
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("{GATEWAY_CLASS_NAME}", CLASS)
            .replace("{GATEWAY_CONTROLLER_NAME}", DEFAULT_CONTROLLER_NAME);
        for object in parse_manifest(&path, &text).unwrap() {
            snapshot.insert(object);
        }
    }
    let class = GatewayClass {
        metadata: ObjectMeta {
            name: Some(CLASS.into()),
            ..Default::default()
        },
        spec: GatewayClassSpec {
            controller_name: DEFAULT_CONTROLLER_NAME.into(),
            ..Default::default()
        },
        status: None,
    };
    snapshot.insert(Object::GatewayClass(Arc::new(class)));
    let (cert, key) = certificate();
    for (namespace, name) in [
        (INFRA, "tls-validity-checks-certificate"),
        (WEB, "certificate"),
    ] {
        let (key_ref, secret) = tls_secret(namespace, name, &cert, &key);
        snapshot.secrets.insert(key_ref, secret);
    }
    snapshot
}

/// The evaluation of `snapshot` with every Gateway loaded into nginx.
pub(super) fn run(snapshot: &Snapshot) -> Evaluation {
    let loaded: BTreeSet<ObjectRef> = snapshot.gateways.keys().cloned().collect();
    let objects = crate::objects::Objects::from_snapshot(snapshot);
    let inputs = GatewayInputs::new(&objects, &loaded);
    let now = Time(Timestamp::from_second(1_800_000_000).unwrap());
    evaluate(inputs, &Settings::default(), &now)
}

/// Whether `conditions` has one of `type_` with `status` and, unless `reason` is empty,
/// `reason`.
fn has(conditions: &[Condition], (type_, status, reason): (&str, &str, &str)) -> bool {
    conditions.iter().any(|c| {
        c.type_ == type_ && c.status == status && (reason.is_empty() || c.reason == reason)
    })
}

/// Asserts each expected condition is in `conditions`.
fn assert_conditions(what: &str, conditions: &[Condition], expected: &[(&str, &str, &str)]) {
    for want in expected {
        assert!(
            has(conditions, *want),
            "{what}: {want:?} not in {conditions:#?}"
        );
    }
}

/// The listener statuses of Gateway `name` in the infra namespace.
fn listeners(evaluation: &Evaluation, name: &str) -> Vec<ListenerStatus> {
    let status = &evaluation.gateways[&ObjectRef::new(INFRA, name)];
    status.listeners.clone().unwrap()
}

/// Asserts what `GatewayStatusMustHaveListeners` checks of one listener: name, supported
/// kinds, attached routes, conditions.
fn assert_listener(
    listener: &ListenerStatus,
    name: &str,
    kinds: &[&str],
    attached: i32,
    conditions: &[(&str, &str, &str)],
) {
    assert_eq!(listener.name, name);
    let found: Vec<&str> = listener
        .supported_kinds
        .iter()
        .flatten()
        .map(|k| k.kind.as_str())
        .collect();
    // As the suite compares them: every expected kind present (an implementation may carry
    // more, GRPCRoute here), and none when none is expected.
    assert_eq!(found.is_empty(), kinds.is_empty(), "{name}: supportedKinds");
    for kind in kinds {
        assert!(found.contains(kind), "{name}: supportedKinds {found:?}");
    }
    assert!(
        listener
            .supported_kinds
            .iter()
            .flatten()
            .all(|k| k.group() == cluster_state::gateway::GROUP)
    );
    assert_eq!(listener.attached_routes, attached, "{name}: attachedRoutes");
    assert_conditions(name, &listener.conditions, conditions);
}

/// The conditions of our parent entry for Gateway `gateway` (infra namespace) on route
/// `namespace/name`.
fn route_parent(
    evaluation: &Evaluation,
    namespace: &str,
    name: &str,
    gateway: &str,
) -> Vec<Condition> {
    let status = &evaluation.http_routes[&ObjectRef::new(namespace, name)];
    let entries: Vec<_> = status
        .parents
        .iter()
        .filter(|p| p.parent_ref.name == gateway && p.controller_name == DEFAULT_CONTROLLER_NAME)
        .collect();
    assert_eq!(
        entries.len(),
        1,
        "{namespace}/{name} under {gateway}: {status:#?}"
    );
    entries[0].conditions.clone()
}

/// The attachedRoutes of every listener of Gateway `name`.
fn attached(evaluation: &Evaluation, name: &str) -> Vec<i32> {
    listeners(evaluation, name)
        .iter()
        .map(|l| l.attached_routes)
        .collect()
}

#[test]
fn base_gateways_are_accepted_and_programmed() {
    let evaluation = run(&load("httproute-simple-same-namespace.yaml"));
    for (key, status) in &evaluation.gateways {
        let conditions = status.conditions.clone().unwrap();
        let want = [
            ("Accepted", "True", ""),
            ("Programmed", "True", "Programmed"),
        ];
        assert_conditions(&key.to_string(), &conditions, &want);
    }
    let class = &evaluation.gateway_classes[&ObjectRef::cluster(CLASS)];
    let want = [
        ("Accepted", "True", "Accepted"),
        ("SupportedVersion", "True", "SupportedVersion"),
    ];
    assert_conditions(CLASS, class.conditions.as_deref().unwrap(), &want);
}

/// GatewayClassObservedGenerationBump: Accepted follows the generation.
#[test]
fn gateway_class_observed_generation_bump() {
    let mut snapshot = load("gatewayclass-observed-generation-bump.yaml");
    let key = ObjectRef::cluster("gatewayclass-observed-generation-bump");
    for generation in [1, 2] {
        let class = snapshot.gateway_classes.get_mut(&key).unwrap();
        Arc::make_mut(class).metadata.generation = Some(generation);
        let evaluation = run(&snapshot);
        let conditions = evaluation.gateway_classes[&key].conditions.clone().unwrap();
        assert_conditions("class", &conditions, &[("Accepted", "True", "Accepted")]);
        assert!(
            conditions
                .iter()
                .all(|c| c.observed_generation == Some(generation))
        );
    }
}

/// GatewayInvalidRouteKind.
#[test]
fn gateway_invalid_route_kind() {
    let evaluation = run(&load("gateway-invalid-route-kind.yaml"));
    let unresolved = [("ResolvedRefs", "False", "InvalidRouteKinds")];
    let only = listeners(&evaluation, "gateway-only-invalid-route-kind");
    assert_listener(&only[0], "http", &[], 0, &unresolved);
    let both = listeners(&evaluation, "gateway-supported-and-invalid-route-kind");
    assert_listener(&both[0], "http", &["HTTPRoute"], 0, &unresolved);
}

/// GatewayInvalidTLSConfiguration: nonexistent, unsupported group and kind, malformed.
#[test]
fn gateway_invalid_tls_configuration() {
    let evaluation = run(&load("gateway-invalid-tls-configuration.yaml"));
    for name in [
        "gateway-certificate-nonexistent-secret",
        "gateway-certificate-unsupported-group",
        "gateway-certificate-unsupported-kind",
        "gateway-certificate-malformed-secret",
    ] {
        let found = listeners(&evaluation, name);
        let want = [("ResolvedRefs", "False", "InvalidCertificateRef")];
        assert_listener(&found[0], "https", &["HTTPRoute"], 0, &want);
    }
}

/// GatewaySecretMissingReferenceGrant, GatewaySecretInvalidReferenceGrant,
/// GatewaySecretReferenceGrantAllInNamespace, GatewaySecretReferenceGrantSpecific.
#[test]
fn gateway_secret_reference_grants() {
    let refused = [("ResolvedRefs", "False", "RefNotPermitted")];
    for (file, name) in [
        (
            "gateway-secret-missing-reference-grant.yaml",
            "gateway-secret-missing-reference-grant",
        ),
        (
            "gateway-secret-invalid-reference-grant.yaml",
            "gateway-secret-invalid-reference-grant",
        ),
    ] {
        let evaluation = run(&load(file));
        assert_listener(
            &listeners(&evaluation, name)[0],
            "https",
            &["HTTPRoute"],
            0,
            &refused,
        );
    }
    let permitted = [
        ("Programmed", "True", "Programmed"),
        ("ResolvedRefs", "True", ""),
    ];
    for name in [
        "gateway-secret-reference-grant-all-in-namespace",
        "gateway-secret-reference-grant-specific",
    ] {
        let evaluation = run(&load(&format!("{name}.yaml")));
        assert_listener(
            &listeners(&evaluation, name)[0],
            "https",
            &["HTTPRoute"],
            0,
            &permitted,
        );
    }
}

/// GatewayListenerUnsupportedProtocol.
#[test]
fn gateway_listener_unsupported_protocol() {
    let evaluation = run(&load("gateway-invalid-listeners-unsupported-protocol.yaml"));
    let unsupported = [("Accepted", "False", "UnsupportedProtocol")];
    let gateway = |name: &str| {
        evaluation.gateways[&ObjectRef::new(INFRA, name)]
            .conditions
            .clone()
            .unwrap()
    };
    let only = "gateway-only-unsupported-protocols";
    assert_conditions(
        only,
        &gateway(only),
        &[("Accepted", "False", "ListenersNotValid")],
    );
    assert_listener(
        &listeners(&evaluation, only)[0],
        "invalid",
        &[],
        0,
        &unsupported,
    );
    let mixed = "gateway-supported-and-unsupported-protocols";
    assert_conditions(
        mixed,
        &gateway(mixed),
        &[("Accepted", "True", "ListenersNotValid")],
    );
    let found = listeners(&evaluation, mixed);
    assert_listener(
        &found[0],
        "http",
        &["HTTPRoute"],
        0,
        &[("Accepted", "True", "Accepted")],
    );
    assert_listener(&found[1], "invalid", &[], 0, &unsupported);
}

/// GatewayInvalidParametersRef (S-GW.6).
#[test]
fn gateway_invalid_parameters_ref() {
    let evaluation = run(&load("gateway-invalid-parameters-ref.yaml"));
    let status = &evaluation.gateways[&ObjectRef::new(INFRA, "gateway-invalid-parameters-ref")];
    let want = [("Accepted", "False", "InvalidParameters")];
    assert_conditions("gateway", status.conditions.as_deref().unwrap(), &want);
}

/// GatewayStaticAddresses and GatewayOptionalAddressValue (S-GW.7) with the pool
/// `127.0.1.0/24`, the suite's usable address `127.0.1.77` and unusable `10.9.9.9` written
/// over its placeholders: the statuses each step asks for, the evaluation's `Accepted` and
/// the pool's `Programmed` reason or address.
#[test]
fn gateway_static_addresses() {
    use super::addresses::Pool;
    use super::plan::Served;

    let pool: Pool = "127.0.1.0/24".parse().unwrap();
    let mut selection = crate::class::Selection::default();
    selection.gateway.own_addresses = true;
    let evaluate_with_pool = |snapshot: &Snapshot| {
        let loaded: BTreeSet<ObjectRef> = snapshot.gateways.keys().cloned().collect();
        let objects = crate::objects::Objects::from_snapshot(snapshot);
        let inputs = GatewayInputs::new(&objects, &loaded);
        let now = Time(Timestamp::from_second(1_800_000_000).unwrap());
        let evaluation = evaluate(inputs, &selection.gateway, &now);
        let plan = crate::model::build(&objects, &selection).gateway;
        (evaluation, plan)
    };
    let key = ObjectRef::new(INFRA, "gateway-static-addresses");
    let mut snapshot = load("gateway-static-addresses.yaml");
    let gateway = Arc::make_mut(snapshot.gateways.get_mut(&key).unwrap());
    let addresses = gateway.spec.addresses.as_mut().unwrap();
    addresses[1].value = Some("10.9.9.9".into());
    addresses[2].value = Some("127.0.1.77".into());

    // The unsupported type: not accepted, not served.
    let (evaluation, plan) = evaluate_with_pool(&snapshot);
    let conditions = evaluation.gateways[&key].conditions.clone().unwrap();
    assert_conditions(
        "all three",
        &conditions,
        &[("Accepted", "False", "UnsupportedAddress")],
    );
    assert!(!plan.addresses(Some(&pool)).contains_key(&key));

    // Without it: accepted, the unusable address keeps it from being programmed.
    let gateway = Arc::make_mut(snapshot.gateways.get_mut(&key).unwrap());
    gateway.spec.addresses.as_mut().unwrap().remove(0);
    let (evaluation, plan) = evaluate_with_pool(&snapshot);
    let conditions = evaluation.gateways[&key].conditions.clone().unwrap();
    assert_conditions("two", &conditions, &[("Accepted", "True", "Accepted")]);
    assert_eq!(
        plan.address_faults(Some(&pool))[&key].reason,
        "AddressNotUsable"
    );
    assert!(!plan.addresses(Some(&pool)).contains_key(&key));

    // The usable one alone: served there, its listener accepted and resolved.
    let gateway = Arc::make_mut(snapshot.gateways.get_mut(&key).unwrap());
    gateway.spec.addresses.as_mut().unwrap().remove(0);
    let (evaluation, plan) = evaluate_with_pool(&snapshot);
    let status = &evaluation.gateways[&key];
    let conditions = status.conditions.clone().unwrap();
    assert_conditions(
        "usable",
        &conditions,
        &[("Programmed", "True", "Programmed")],
    );
    let listener = &status.listeners.as_ref().unwrap()[0];
    let want = [("Accepted", "True", ""), ("ResolvedRefs", "True", "")];
    assert_listener(listener, "http", &["HTTPRoute"], 0, &want);
    assert_eq!(
        plan.addresses(Some(&pool))[&key],
        Served::Own("127.0.1.77".parse().unwrap())
    );
    assert!(plan.address_faults(Some(&pool)).is_empty());

    // GatewayOptionalAddressValue: a type without value gets an address of the pool.
    let key = ObjectRef::new(INFRA, "gateway-without-address-value");
    let (evaluation, plan) = evaluate_with_pool(&load("gateway-optional-address-value.yaml"));
    let conditions = evaluation.gateways[&key].conditions.clone().unwrap();
    assert_conditions(
        "empty value",
        &conditions,
        &[("Accepted", "True", "Accepted")],
    );
    assert!(matches!(plan.addresses(Some(&pool))[&key], Served::Own(_)));
}

/// GatewayWithAttachedRoutes.
#[test]
fn gateway_with_attached_routes() {
    let evaluation = run(&load("gateway-with-attached-routes.yaml"));
    let fine = [("Accepted", "True", ""), ("ResolvedRefs", "True", "")];
    let one = listeners(&evaluation, "gateway-with-one-attached-route");
    assert_listener(&one[0], "http", &["HTTPRoute"], 1, &fine);
    let two = listeners(&evaluation, "gateway-with-two-attached-routes");
    assert_listener(&two[0], "http", &["HTTPRoute"], 2, &fine);
    let not_accepted = route_parent(
        &evaluation,
        INFRA,
        "http-route-not-accepted",
        "gateway-with-two-attached-routes",
    );
    assert_conditions(
        "http-route-not-accepted",
        &not_accepted,
        &[("Accepted", "False", "NoMatchingListenerHostname")],
    );
    let unresolved = listeners(
        &evaluation,
        "unresolved-gateway-with-one-attached-unresolved-route",
    );
    let want = [("Programmed", "False", ""), ("ResolvedRefs", "False", "")];
    assert_listener(&unresolved[0], "tls", &["HTTPRoute"], 1, &want);
    let route = route_parent(
        &evaluation,
        INFRA,
        "http-route-4",
        "unresolved-gateway-with-one-attached-unresolved-route",
    );
    assert_conditions("http-route-4", &route, &[("ResolvedRefs", "False", "")]);
}

/// GatewayWithAttachedRoutes, the Gateway of its second manifest: a listener no route names
/// counts none.
#[test]
fn gateway_with_attached_routes_with_port_8080() {
    let evaluation = run(&load("gateway-with-attached-routes-with-port-8080.yaml"));
    let fine = [("Accepted", "True", ""), ("ResolvedRefs", "True", "")];
    let pair = listeners(
        &evaluation,
        "gateway-with-two-listeners-and-one-attached-route",
    );
    assert_listener(&pair[0], "http-unattached", &["HTTPRoute"], 0, &fine);
    assert_listener(&pair[1], "http", &["HTTPRoute"], 1, &fine);
}

/// GatewayObservedGenerationBump and HTTPRouteObservedGenerationBump: after a change, every
/// condition carries the new generation (S-0.3); the status written before is the object's.
#[test]
fn observed_generation_bump() {
    let mut snapshot = load("gateway-observed-generation-bump.yaml");
    snapshot.insert(
        load("httproute-observed-generation-bump.yaml")
            .get(
                cluster_state::Kind::HttpRoute,
                &ObjectRef::new(INFRA, "observed-generation-bump"),
            )
            .unwrap(),
    );
    let gateway = ObjectRef::new(INFRA, "gateway-observed-generation-bump");
    let route = ObjectRef::new(INFRA, "observed-generation-bump");
    for generation in [1, 2] {
        let object = Arc::make_mut(snapshot.gateways.get_mut(&gateway).unwrap());
        object.metadata.generation = Some(generation);
        object.spec.listeners[0].hostname = Some(format!("bar{generation}.com"));
        Arc::make_mut(snapshot.http_routes.get_mut(&route).unwrap())
            .metadata
            .generation = Some(generation);
        let evaluation = run(&snapshot);
        let status = evaluation.gateways[&gateway].clone();
        let listener_conditions = status
            .listeners
            .iter()
            .flatten()
            .flat_map(|l| l.conditions.iter());
        let mut all: Vec<&Condition> = status
            .conditions
            .iter()
            .flatten()
            .chain(listener_conditions)
            .collect();
        let route_status = evaluation.http_routes[&route].clone();
        all.extend(
            route_status
                .parents
                .iter()
                .flat_map(|p| p.conditions.iter()),
        );
        assert!(
            all.iter()
                .all(|c| c.observed_generation == Some(generation)),
            "{all:#?}"
        );
        Arc::make_mut(snapshot.gateways.get_mut(&gateway).unwrap()).status = Some(status);
        Arc::make_mut(snapshot.http_routes.get_mut(&route).unwrap()).status = Some(route_status);
    }
}

/// GatewayModifyListeners: a listener added shows up, with its routes counted; a listener
/// removed disappears from the status (S-GW.13).
#[test]
fn gateway_modify_listeners() {
    let mut snapshot = load("gateway-modify-listeners.yaml");
    let fine = [("Accepted", "True", ""), ("ResolvedRefs", "True", "")];
    let add = ObjectRef::new(INFRA, "gateway-add-listener");
    let gateway = Arc::make_mut(snapshot.gateways.get_mut(&add).unwrap());
    let mut http = gateway.spec.listeners[0].clone();
    http.name = "http".into();
    http.port = 80;
    http.protocol = "HTTP".into();
    http.hostname = None;
    http.tls = None;
    gateway.spec.listeners.push(http);
    let remove = ObjectRef::new(INFRA, "gateway-remove-listener");
    let gateway = Arc::make_mut(snapshot.gateways.get_mut(&remove).unwrap());
    gateway.spec.listeners.remove(0);
    let evaluation = run(&snapshot);
    let added = listeners(&evaluation, "gateway-add-listener");
    assert_eq!(added.len(), 2);
    assert_listener(&added[0], "https", &["HTTPRoute"], 1, &fine);
    assert_listener(&added[1], "http", &["HTTPRoute"], 1, &fine);
    let removed = listeners(&evaluation, "gateway-remove-listener");
    assert_eq!(removed.len(), 1);
    assert_listener(&removed[0], "http", &["HTTPRoute"], 1, &fine);
}

/// HTTPRouteInvalidCrossNamespaceParentRef: not allowed, references still resolved, no
/// route counted.
#[test]
fn httproute_invalid_cross_namespace_parent_ref() {
    let evaluation = run(&load("httproute-invalid-cross-namespace-parent-ref.yaml"));
    let conditions = route_parent(
        &evaluation,
        WEB,
        "invalid-cross-namespace-parent-ref",
        "same-namespace",
    );
    let want = [
        ("Accepted", "False", "NotAllowedByListeners"),
        ("ResolvedRefs", "True", "ResolvedRefs"),
    ];
    assert_conditions("route", &conditions, &want);
    assert!(
        attached(&evaluation, "same-namespace")
            .iter()
            .all(|&n| n == 0)
    );
}

/// HTTPRouteDisallowedKind.
#[test]
fn httproute_disallowed_kind() {
    let evaluation = run(&load("httproute-disallowed-kind.yaml"));
    let conditions = route_parent(&evaluation, INFRA, "disallowed-kind", "tlsroutes-only");
    let want = [
        ("Accepted", "False", "NotAllowedByListeners"),
        ("ResolvedRefs", "True", ""),
    ];
    assert_conditions("route", &conditions, &want);
    assert!(
        attached(&evaluation, "tlsroutes-only")
            .iter()
            .all(|&n| n == 0)
    );
}

/// HTTPRouteInvalidParentRefNotMatchingSectionName, …NotMatchingListenerPort and
/// HTTPRouteInvalidParentRefSectionNameNotMatchingPort (a `sectionName` that names a listener
/// on another port than the parentRef's `port`): `NoMatchingParent`, no route attached.
#[test]
fn httproute_invalid_parent_ref_not_matching() {
    for (file, route, gateway) in [
        (
            "httproute-invalid-parentref-not-matching-section-name.yaml",
            "httproute-listener-not-matching-section-name",
            "same-namespace",
        ),
        (
            "httproute-invalid-parentref-not-matching-listener-port.yaml",
            "httproute-listener-not-matching-route-port",
            "same-namespace",
        ),
        (
            "httproute-invalid-parentref-section-name-not-matching-port.yaml",
            "httproute-listener-section-name-not-matching-port",
            "gateway-with-one-not-matching-port-and-section-name-route",
        ),
    ] {
        let evaluation = run(&load(file));
        let conditions = route_parent(&evaluation, INFRA, route, gateway);
        assert_conditions(
            route,
            &conditions,
            &[("Accepted", "False", "NoMatchingParent")],
        );
        let key = ObjectRef::new(INFRA, route);
        assert_eq!(evaluation.http_routes[&key].parents.len(), 1, "{route}");
        assert!(attached(&evaluation, gateway).iter().all(|&n| n == 0));
    }
}

/// HTTPRouteInvalidNonExistentBackendRef, HTTPRouteInvalidCrossNamespaceBackendRef,
/// HTTPRouteInvalidBackendRefUnknownKind, HTTPRouteInvalidReferenceGrant: accepted, with
/// unresolved references.
#[test]
fn httproute_unresolved_backend_refs() {
    for (file, route, reason) in [
        (
            "httproute-invalid-nonexistent-backendref.yaml",
            "invalid-nonexistent-backend-ref",
            "BackendNotFound",
        ),
        (
            "httproute-invalid-cross-namespace-backend-ref.yaml",
            "invalid-cross-namespace-backend-ref",
            "RefNotPermitted",
        ),
        (
            "httproute-invalid-backendref-unknown-kind.yaml",
            "invalid-backend-ref-unknown-kind",
            "InvalidKind",
        ),
        (
            "httproute-invalid-reference-grant.yaml",
            "reference-grant",
            "RefNotPermitted",
        ),
    ] {
        let evaluation = run(&load(file));
        let conditions = route_parent(&evaluation, INFRA, route, "same-namespace");
        let want = [
            ("Accepted", "True", "Accepted"),
            ("ResolvedRefs", "False", reason),
        ];
        assert_conditions(route, &conditions, &want);
    }
}

/// HTTPRouteNoBackendRefs: no backendRefs is no unresolved reference.
#[test]
fn httproute_no_backend_refs() {
    let evaluation = run(&load("httproute-omitted-backendrefs.yaml"));
    let conditions = route_parent(&evaluation, INFRA, "omitted-backendrefs", "same-namespace");
    let want = [
        ("Accepted", "True", "Accepted"),
        ("ResolvedRefs", "True", "ResolvedRefs"),
    ];
    assert_conditions("route", &conditions, &want);
}

/// HTTPRouteHostnameIntersection's statuses.
#[test]
fn httproute_hostname_intersection() {
    let evaluation = run(&load("httproute-hostname-intersection.yaml"));
    let gateway = "httproute-hostname-intersection";
    let conditions = route_parent(&evaluation, INFRA, "no-intersecting-hosts", gateway);
    assert_conditions(
        "no-intersecting-hosts",
        &conditions,
        &[("Accepted", "False", "NoMatchingListenerHostname")],
    );
    let found = listeners(&evaluation, gateway);
    let fine = [("Accepted", "True", ""), ("ResolvedRefs", "True", "")];
    assert_listener(&found[0], "listener-1", &["HTTPRoute"], 2, &fine);
    assert_listener(&found[1], "listener-2", &["HTTPRoute"], 1, &fine);
    assert_listener(&found[2], "listener-3", &["HTTPRoute"], 1, &fine);
}

/// The routes of the extended filters' tests (S-F.6, S-F.7, S-F.9: RequestMirror,
/// RequestMultipleMirrors, RequestPercentageMirror, CORS, BackendRequestHeaderModifier,
/// RequestHeaderModifierBackendWeights) are accepted with every rule and reference: no
/// `PartiallyInvalid`, `ResolvedRefs` true.
#[test]
fn extended_filter_routes_are_accepted_whole() {
    let routes: [(&str, &[&str]); 6] = [
        ("httproute-request-mirror.yaml", &["request-mirror"]),
        (
            "httproute-request-multiple-mirrors.yaml",
            &["request-multiple-mirrors"],
        ),
        (
            "httproute-request-percentage-mirror.yaml",
            &["request-percentage-mirror"],
        ),
        (
            "httproute-cors.yaml",
            &[
                "cors-multiple-origins-methods-headers",
                "cors-wildcard-methods",
                "cors-wildcard-origin",
                "cors-wildcard-methods-headers",
            ],
        ),
        (
            "httproute-request-header-modifier-backend.yaml",
            &["request-header-modifier"],
        ),
        (
            "httproute-request-header-modifier-backend-weights.yaml",
            &["request-header-modifier-backend-weights"],
        ),
    ];
    for (file, names) in routes {
        let evaluation = run(&load(file));
        for name in names {
            let conditions = route_parent(&evaluation, INFRA, name, "same-namespace");
            let want = [
                ("Accepted", "True", "Accepted"),
                ("ResolvedRefs", "True", "ResolvedRefs"),
            ];
            assert_conditions(name, &conditions, &want);
            let partial = conditions.iter().find(|c| c.type_ == "PartiallyInvalid");
            assert!(partial.is_none(), "{file} {name}: {partial:?}");
        }
    }
}

#[path = "../../tests/support/gateway_tables.rs"]
mod tables;

use tables::Case;

/// The backend the first candidate of `listener` whose conditions hold sends the request to,
/// by a plain reading of the matches (Exact and PathPrefix paths, exact headers, query
/// parameters and method: what these tables use); `None` when no candidate holds (404).
fn serve(snapshot: &Snapshot, listener: &ServedListener, case: &Case) -> Option<String> {
    let (host, method, target, headers, _) = *case;
    // S-HN.2: the port of the `Host` header is ignored.
    let host = host.split(':').next().unwrap_or(host);
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let params: Vec<(&str, &str)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect();
    let holds = |m: &cluster_state::gateway::HttpRouteMatch| {
        let wanted = m.path();
        let value = wanted.value();
        let path_ok = match wanted.match_type() {
            "Exact" => path == value,
            "PathPrefix" => {
                let prefix = value.trim_end_matches('/');
                prefix.is_empty() || path == prefix || path.starts_with(&format!("{prefix}/"))
            }
            other => panic!("path type {other} not in these tables"),
        };
        let mut seen = Vec::new();
        let headers_ok = m.headers().iter().all(|h| {
            let name = h.name.to_ascii_lowercase();
            if seen.contains(&name) {
                return true;
            }
            seen.push(name);
            assert_eq!(h.match_type(), "Exact");
            let found = headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(&h.name));
            found.is_some_and(|(_, v)| *v == h.value)
        });
        let query_ok = m.query_params().iter().all(|q| {
            assert_eq!(q.match_type(), "Exact");
            let found = params.iter().find(|(n, _)| *n == q.name);
            found.is_some_and(|(_, v)| *v == q.value)
        });
        let method_ok = m.method.as_deref().is_none_or(|wanted| wanted == method);
        path_ok && headers_ok && query_ok && method_ok
    };
    listener.candidates.iter().find_map(|candidate| {
        if !candidate.hostname.as_ref().is_none_or(|h| h.matches(host)) {
            return None;
        }
        let route = &snapshot.http_routes[&candidate.route];
        let rules = route.spec.rules();
        let rule = &rules[candidate.rule];
        let matches = rule.matches();
        holds(&matches[candidate.match_index]).then(|| rule.backend_refs()[0].name.clone())
    })
}

/// The request tables of the matching tests ([`tables::PRECEDENCE`]), replayed on the candidate
/// order of the `same-namespace`
/// Gateway's listener: the precedence rules S-PR.1 to S-PR.7 as the suite checks them.
#[test]
fn s_pr_candidate_order_serves_the_conformance_request_tables() {
    for (file, cases) in tables::PRECEDENCE {
        let snapshot = load(file);
        let evaluation = run(&snapshot);
        let gateway = ObjectRef::new(INFRA, "same-namespace");
        let listener = evaluation
            .listeners
            .iter()
            .find(|l| l.gateway == gateway && l.name == "http")
            .unwrap();
        for case in cases {
            let served = serve(&snapshot, listener, case);
            assert_eq!(served.as_deref(), case.4, "{file}: {case:?}");
        }
    }
}

/// The request tables of GatewayHTTPListenerIsolation, HTTPRouteHostnameIntersection and
/// HTTPRouteListenerHostnameMatching ([`tables::LISTENERS`]): the listener is chosen by S-LI.1 among the Gateway's served listeners, then
/// its candidates in order (S-HN.1, S-HN.2, S-PR.1). The `Host` header's port is ignored.
#[test]
fn s_li_1_and_s_hn_listener_choice_serves_the_conformance_request_tables() {
    for (files, gateways, cases) in tables::LISTENERS {
        let snapshot = load(files[0]);
        let evaluation = run(&snapshot);
        for case in cases {
            let host = case.0.split(':').next().unwrap_or(case.0);
            // The table's Gateway is the one that serves the request's path at all; each
            // case names one (the `_sentTo` of the notes), found here by trying each.
            let served: Vec<Option<String>> = gateways
                .iter()
                .map(|name| {
                    let gateway = ObjectRef::new(INFRA, *name);
                    let listeners: Vec<&ServedListener> = evaluation
                        .listeners
                        .iter()
                        .filter(|l| l.gateway == gateway && l.port == 80)
                        .collect();
                    let index = hostname::listener_for(
                        host,
                        listeners.iter().map(|l| l.hostname.as_ref()),
                    )?;
                    serve(&snapshot, listeners[index], case)
                })
                .collect();
            let answer = served.iter().flatten().next().map(String::as_str);
            assert_eq!(answer, case.4, "{files:?}: {case:?}");
        }
    }
}
