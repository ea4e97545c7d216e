//! The Gateway API (issue #32) as pure functions: from the typed Gateway API objects of a
//! snapshot to the status each object should have and the route rules each listener serves, in
//! precedence order. No I/O: time comes in as a parameter, and nothing here renders nginx or
//! writes status (later parts do, from the [`Evaluation`]).
//!
//! The rules are those of the design notes' semantics, named by their `S-` ids in the docs and
//! tests of each file:
//!
//! - [`hostname`]: exact and wildcard host names, intersection, specificity (S-HN, S-PR.1);
//! - [`class`]: which classes and Gateways are ours, the class's verdicts (S-GC);
//! - [`listeners`]: listener checks and the Gateway's `Accepted` (S-GW.1 to S-GW.9);
//! - [`grants`]: ReferenceGrant permissions (S-RG);
//! - [`namespaces`]: `allowedRoutes.namespaces` (S-GW.15);
//! - [`attach`]: parentRefs to listener attachments (S-AT);
//! - [`backend_refs`]: backendRef resolution and the route's `ResolvedRefs` (S-BR.1, S-BR.2);
//! - [`precedence`]: the order of the candidates of one listener (S-PR);
//! - [`grpc`]: GRPCRoutes as HTTPRoutes, their precedence, and where they meet HTTP routes
//!   (S-GR, S-AT.9);
//! - [`filters`], [`mirror`], [`backend_filters`], [`cors`], [`timeouts`], [`rules`]: what a
//!   rule does besides forwarding, and which rules are invalid (S-F, S-TO, S-IR);
//! - [`status`]: the desired statuses (S-ST, S-0.3);
//! - [`plan`]: what nginx serves for the served listeners, and [`addresses`] where;
//! - `render`: the Gateways' nginx servers, and `misdirected` their 421 to a request whose
//!   SNI selected another listener (crate-private).
//!
//! Defaults are read through the types' accessor methods, never through their `Option`s
//! (S-0.2).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use cluster_state::ObjectRef;
use cluster_state::gateway::{
    Gateway, GatewayClass, GatewayClassStatus, GatewayStatus, GrpcRoute, HttpRoute, ReferenceGrant,
    RouteStatus,
};
use cluster_state::k8s::api::core::v1::{Namespace, Secret, Service};
use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::Time;

use crate::objects::{Map, Objects};

pub mod addresses;
pub mod attach;
pub mod backend_filters;
pub mod backend_refs;
pub mod class;
pub mod collisions;
pub mod cors;
pub mod filters;
pub mod grants;
pub mod grpc;
pub mod hostname;
pub mod listeners;
pub mod matches;
pub mod mirror;
pub(crate) mod misdirected;
pub mod namespaces;
pub mod plan;
pub mod precedence;
pub(crate) mod render;
pub mod rules;
pub mod status;
pub mod timeouts;

#[cfg(test)]
mod conformance;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod grpc_conformance;

use attach::{GatewayView, Parent, RouteView};
use hostname::{Hostname, Hostnames};
use listeners::{ListenerCheck, TlsContext};
use precedence::{Age, Candidate, Key, RouteKind};

/// The controller name a GatewayClass names when it is ours, unless configured otherwise.
pub const DEFAULT_CONTROLLER_NAME: &str = "kube-node-net.io/gateway-controller";

/// What the evaluation needs besides the objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The `controllerName` of the classes that are ours (S-GC.1).
    pub controller_name: String,
    /// The Gateway API CRDs' bundle version, when the source read it; `None` with manifests,
    /// where the types' own version (v1.6.1) applies (S-GC.3).
    pub bundle_version: Option<String>,
    /// The feature names the classes claim (S-GC.4); written sorted.
    pub supported_features: Vec<String>,
    /// Whether each Gateway is served on an address of its own (`--gateway-addresses`), so
    /// that `spec.addresses` can be honoured (S-GW.7); otherwise the Gateways share the
    /// Ingresses' address, and a listener on port 80 the Ingresses' HTTP port (S-GR.5).
    pub own_addresses: bool,
    /// The Ingresses' HTTP port (`--http-port`): where a listener on port 80 is served, and
    /// one on that port too, when the Gateways share the Ingresses' address (S-GR.5).
    pub http_port: i32,
}

impl Default for Settings {
    /// The default controller name, no bundle version, no features claimed, no pool.
    fn default() -> Self {
        Self {
            controller_name: DEFAULT_CONTROLLER_NAME.to_owned(),
            bundle_version: None,
            supported_features: Vec::new(),
            own_addresses: false,
            http_port: 80,
        }
    }
}

/// Why a check failed: the condition reason and a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The condition's reason (`RefNotPermitted`, …).
    pub reason: &'static str,
    /// What is wrong, for the condition's message.
    pub message: String,
}

impl Fault {
    /// A fault with `reason` and `message`.
    pub fn new(reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
        }
    }
}

/// The objects the evaluation reads, and what nginx has loaded.
#[derive(Debug, Clone, Copy)]
pub struct GatewayInputs<'a> {
    /// Every GatewayClass.
    pub gateway_classes: &'a Map<GatewayClass>,
    /// Every Gateway.
    pub gateways: &'a Map<Gateway>,
    /// Every HTTPRoute.
    pub http_routes: &'a Map<HttpRoute>,
    /// Every GRPCRoute.
    pub grpc_routes: &'a Map<GrpcRoute>,
    /// Every ReferenceGrant.
    pub reference_grants: &'a Map<ReferenceGrant>,
    /// Every Service.
    pub services: &'a Map<Service>,
    /// Every (TLS) Secret.
    pub secrets: &'a Map<Secret>,
    /// Every Namespace (for `allowedRoutes` selectors).
    pub namespaces: &'a Map<Namespace>,
    /// The Gateways the running nginx configuration holds (`Programmed`, S-GW.10).
    pub loaded: &'a BTreeSet<ObjectRef>,
    /// Whether HTTPS offers HTTP/2 (the ConfigMap's `use-http2`): GRPCRoutes on HTTPS
    /// listeners need it (S-GR.5).
    pub http2: bool,
}

impl<'a> GatewayInputs<'a> {
    /// The Gateway API objects of `objects`, with `loaded` the Gateways nginx serves.
    pub fn new(objects: &'a Objects, loaded: &'a BTreeSet<ObjectRef>) -> Self {
        Self {
            gateway_classes: &objects.gateway_classes,
            gateways: &objects.gateways,
            http_routes: &objects.http_routes,
            grpc_routes: &objects.grpc_routes,
            reference_grants: &objects.reference_grants,
            services: &objects.services,
            secrets: &objects.secrets,
            namespaces: &objects.namespaces,
            loaded,
            http2: crate::configmap::Global::of(objects).http2,
        }
    }
}

/// What the evaluation found: the desired status of every object of ours, and what each
/// servable listener serves.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Evaluation {
    /// The desired status of each GatewayClass that is ours.
    pub gateway_classes: BTreeMap<ObjectRef, GatewayClassStatus>,
    /// The desired status of each Gateway that is ours.
    pub gateways: BTreeMap<ObjectRef, GatewayStatus>,
    /// The desired status of each HTTPRoute with a parentRef to a Gateway of ours, or with an
    /// entry of ours to remove; other controllers' entries kept.
    pub http_routes: BTreeMap<ObjectRef, RouteStatus>,
    /// The desired status of each GRPCRoute, as for HTTPRoutes.
    pub grpc_routes: BTreeMap<ObjectRef, RouteStatus>,
    /// The listeners to serve (Gateway Accepted; listener Accepted, with a usable certificate
    /// when HTTPS; S-AT.8, S-GW.10b), by Gateway then spec order.
    pub listeners: Vec<ServedListener>,
}

/// A listener to serve and the candidates of the routes attached to it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedListener {
    /// The Gateway.
    pub gateway: ObjectRef,
    /// The listener's name.
    pub name: String,
    /// Its port, as the Gateway writes it.
    pub port: i32,
    /// `HTTP` or `HTTPS`.
    pub protocol: String,
    /// Its host name; `None` for any.
    pub hostname: Option<Hostname>,
    /// The certificate Secrets to present (HTTPS).
    pub certificates: Vec<ObjectRef>,
    /// Every (route, rule, match, host name) attached, in precedence order (S-PR): the first
    /// whose conditions hold serves a request.
    pub candidates: Vec<Candidate>,
}

/// The evaluation of `inputs` under `settings` at time `now` (condition transition times,
/// certificate expiry).
pub fn evaluate(inputs: GatewayInputs<'_>, settings: &Settings, now: &Time) -> Evaluation {
    let mut evaluation = Evaluation::default();
    for (key, class) in inputs.gateway_classes {
        if class::is_ours(class, settings) {
            let status = status::class_status(class, settings, now);
            evaluation.gateway_classes.insert(key.clone(), status);
        }
    }

    let tls = TlsContext {
        secrets: inputs.secrets,
        grants: inputs.reference_grants,
        now: now.0.as_second(),
    };
    // Each Gateway of ours: its class's acceptance and its listeners' checks.
    let checked: BTreeMap<ObjectRef, (&Gateway, bool, Vec<ListenerCheck>)> = inputs
        .gateways
        .iter()
        .filter_map(|(key, gateway)| {
            let class = class::class_of(gateway, inputs.gateway_classes, settings)?;
            let class_accepted = class::accepted(class).is_ok();
            Some((
                key.clone(),
                (
                    gateway.as_ref(),
                    class_accepted,
                    listeners::check(gateway, tls),
                ),
            ))
        })
        .collect();
    let views: BTreeMap<ObjectRef, GatewayView<'_>> = checked
        .iter()
        .map(|(key, (gateway, _, checks))| {
            (
                key.clone(),
                GatewayView {
                    gateway,
                    listeners: checks,
                },
            )
        })
        .collect();

    let backend_context = backend_refs::Context {
        services: inputs.services,
        grants: inputs.reference_grants,
    };
    let http = inputs
        .http_routes
        .iter()
        .map(|(key, route)| (RouteKind::Http, key, Cow::Borrowed(route.as_ref()), None));
    let grpc = inputs.grpc_routes.iter().map(|(key, route)| {
        let served = Cow::Owned(grpc::as_http_route(route));
        (RouteKind::Grpc, key, served, Some(route.as_ref()))
    });
    let mut routes: Vec<Attached<'_>> = Vec::new();
    for (kind, key, route, original) in http.chain(grpc) {
        let view = RouteView {
            kind: kind.name(),
            namespace: &key.namespace,
            parent_refs: route.spec.parent_refs(),
            hostnames: route.spec.hostnames(),
        };
        let parents = attach::parents(view, &views, inputs.namespaces);
        let had_ours = route.status.as_ref().is_some_and(|s| {
            s.parents
                .iter()
                .any(|p| p.controller_name == settings.controller_name)
        });
        if parents.is_empty() && !had_ours {
            continue;
        }
        routes.push(Attached {
            kind,
            key,
            route,
            grpc: original,
            parents,
        });
    }
    let serving = grpc::Serving {
        shared_http: (!settings.own_addresses).then_some(settings.http_port),
        http2: inputs.http2,
    };
    grpc::separate(&mut routes, &views, serving);
    for attached in &routes {
        let route = attached.route.as_ref();
        let findings = status::RouteFindings {
            resolved: backend_refs::route_refs(route, attached.kind.name(), backend_context),
            rules: rules::verdict(route),
        };
        let status = status::route_status(
            &route.metadata,
            route.status.as_ref(),
            &attached.parents,
            &findings,
            settings,
            now,
        );
        let statuses = match attached.kind {
            RouteKind::Http => &mut evaluation.http_routes,
            RouteKind::Grpc => &mut evaluation.grpc_routes,
        };
        statuses.insert(attached.key.clone(), status);
    }

    for (key, (gateway, class_accepted, checks)) in &checked {
        let pool = settings.own_addresses;
        let accepted = listeners::gateway_accepted(gateway, *class_accepted, pool, checks);
        let attached: Vec<i32> = (0..checks.len())
            .map(|index| {
                let count = routes
                    .iter()
                    .filter(|r| !attachments(&r.parents, key, index).is_empty())
                    .count();
                i32::try_from(count).unwrap_or(i32::MAX)
            })
            .collect();
        // A Gateway that is not accepted is not rendered (S-GW.10b), whatever nginx holds.
        let loaded = accepted.status && inputs.loaded.contains(key);
        let status = status::gateway_status(gateway, &accepted, checks, &attached, loaded, now);
        evaluation.gateways.insert(key.clone(), status);
        if !accepted.status {
            continue;
        }
        for (index, check) in checks.iter().enumerate() {
            if check.servable() {
                let candidates = candidates(&routes, key, index);
                evaluation.listeners.push(ServedListener {
                    gateway: key.clone(),
                    name: check.name.clone(),
                    port: check.port,
                    protocol: check.protocol.clone(),
                    hostname: check.hostname.clone(),
                    certificates: check.certificates.clone(),
                    candidates,
                });
            }
        }
    }
    evaluation
}

/// A route with a parentRef to a Gateway of ours (or an entry of ours in its status): an
/// HTTPRoute, or a GRPCRoute as the HTTPRoute it is served as (S-GR.1).
struct Attached<'a> {
    /// Its kind.
    kind: RouteKind,
    /// The route.
    key: &'a ObjectRef,
    /// The route, or the HTTPRoute a GRPCRoute is served as.
    route: Cow<'a, HttpRoute>,
    /// The GRPCRoute, for its precedence (S-GR.2).
    grpc: Option<&'a GrpcRoute>,
    /// Its parentRefs of ours and their verdicts.
    parents: Vec<Parent>,
}

/// The effective host names with which the accepted `parents` attach a route to listener
/// `index` of Gateway `gateway` (several parentRefs may select one listener).
fn attachments<'p>(parents: &'p [Parent], gateway: &ObjectRef, index: usize) -> Vec<&'p Hostnames> {
    parents
        .iter()
        .filter(|p| p.gateway == *gateway)
        .filter_map(|p| p.accepted.as_ref().ok())
        .flatten()
        .filter(|a| a.listener == index)
        .map(|a| &a.hostnames)
        .collect()
}

/// The candidates of listener `index` of `gateway`, sorted by precedence (S-PR).
fn candidates(routes: &[Attached<'_>], gateway: &ObjectRef, index: usize) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for attached in routes {
        let (key, route, parents) = (attached.key, &attached.route, &attached.parents);
        // S-PR.1: a route without host names matches through the listener alone and sorts
        // after every route that names its host.
        let named = !route.spec.hostnames().is_empty();
        let mut names: Vec<Option<Hostname>> = Vec::new();
        for hostnames in attachments(parents, gateway, index) {
            let these: Vec<Option<Hostname>> = match hostnames {
                Hostnames::Any => vec![None],
                Hostnames::Only(list) => list.iter().cloned().map(Some).collect(),
            };
            for name in these {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        for name in &names {
            for (rule_index, rule) in route.spec.rules().iter().enumerate() {
                for (match_index, m) in rule.matches().iter().enumerate() {
                    let age = Age::of(&route.metadata);
                    let hostname = name.as_ref().filter(|_| named);
                    let key_of = match attached.grpc {
                        Some(original) => {
                            let rules = original.spec.rules();
                            let matches = rules.get(rule_index).map(|r| r.matches());
                            let m = matches.and_then(|list| list.get(match_index));
                            grpc::key(hostname, m, age, rule_index, match_index)
                        }
                        None => Key::new(hostname, m, age, rule_index, match_index),
                    };
                    out.push(Candidate {
                        kind: attached.kind,
                        route: key.clone(),
                        rule: rule_index,
                        match_index,
                        hostname: name.clone(),
                        key: key_of,
                    });
                }
            }
        }
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cluster_state::gateway::{GatewayClassParametersReference, RouteParentStatus};

    use super::conformance::{INFRA, load, run};
    use super::*;

    fn gateway(name: &str) -> ObjectRef {
        ObjectRef::new(INFRA, name)
    }

    fn condition<'a>(
        conditions: &'a [cluster_state::k8s::apimachinery::pkg::apis::meta::v1::Condition],
        type_: &str,
    ) -> (&'a str, &'a str) {
        let found = conditions.iter().find(|c| c.type_ == type_).unwrap();
        (found.status.as_str(), found.reason.as_str())
    }

    /// S-GC.5: a class of ours that is not accepted makes its Gateways `Accepted=False/Invalid`,
    /// not served; a Gateway of a foreign class gets nothing.
    #[test]
    fn s_gc_5_gateways_follow_their_class() {
        let mut snapshot = load("httproute-simple-same-namespace.yaml");
        let class_key = ObjectRef::cluster("gateway-conformance");
        let class = snapshot.gateway_classes.get_mut(&class_key).unwrap();
        Arc::make_mut(class).spec.parameters_ref = Some(GatewayClassParametersReference {
            group: "example.com".into(),
            kind: "Params".into(),
            name: "p".into(),
            namespace: None,
        });
        let evaluation = run(&snapshot);
        let conditions = evaluation.gateway_classes[&class_key]
            .conditions
            .clone()
            .unwrap();
        assert_eq!(
            condition(&conditions, "Accepted"),
            ("False", "InvalidParameters")
        );
        let status = &evaluation.gateways[&gateway("same-namespace")];
        let conditions = status.conditions.clone().unwrap();
        assert_eq!(condition(&conditions, "Accepted"), ("False", "Invalid"));
        assert_eq!(condition(&conditions, "Programmed"), ("False", "Invalid"));
        assert!(evaluation.listeners.is_empty());

        let class = snapshot.gateway_classes.get_mut(&class_key).unwrap();
        Arc::make_mut(class).spec.controller_name = "example.com/other".into();
        let evaluation = run(&snapshot);
        assert!(evaluation.gateway_classes.is_empty());
        assert!(evaluation.gateways.is_empty());
        assert!(evaluation.http_routes.is_empty());
    }

    /// S-GW.10 and S-GW.5: before nginx has loaded a Gateway, it is `Programmed=Unknown/Pending`
    /// and its valid listeners `Programmed=False/Pending`.
    #[test]
    fn s_gw_10_pending_until_loaded() {
        let snapshot = load("httproute-simple-same-namespace.yaml");
        let loaded = BTreeSet::new();
        let objects = Objects::from_snapshot(&snapshot);
        let inputs = GatewayInputs::new(&objects, &loaded);
        let now = Time(cluster_state::k8s::jiff::Timestamp::UNIX_EPOCH);
        let evaluation = evaluate(inputs, &Settings::default(), &now);
        let status = &evaluation.gateways[&gateway("same-namespace")];
        let conditions = status.conditions.clone().unwrap();
        assert_eq!(condition(&conditions, "Programmed"), ("Unknown", "Pending"));
        let listener = &status.listeners.as_ref().unwrap()[0];
        assert_eq!(
            condition(&listener.conditions, "Programmed"),
            ("False", "Pending")
        );
    }

    /// S-ST.1: an entry of ours whose parentRef is gone is removed; other controllers' stay.
    #[test]
    fn s_st_1_stale_entries_of_ours_are_removed() {
        let mut snapshot = load("httproute-simple-same-namespace.yaml");
        let key = ObjectRef::new(INFRA, "gateway-conformance-infra-test");
        let route = Arc::make_mut(snapshot.http_routes.get_mut(&key).unwrap());
        let theirs = RouteParentStatus {
            parent_ref: route.spec.parent_refs()[0].clone(),
            controller_name: "example.com/other".into(),
            conditions: Vec::new(),
        };
        let ours = RouteParentStatus {
            controller_name: DEFAULT_CONTROLLER_NAME.into(),
            ..theirs.clone()
        };
        route.status = Some(RouteStatus {
            parents: vec![theirs.clone(), ours],
        });
        route.spec.parent_refs = Some(Vec::new());
        let evaluation = run(&snapshot);
        assert_eq!(evaluation.http_routes[&key].parents, [theirs]);
    }

    /// S-GW.14: a route counts once on a listener however many of its parentRefs select it.
    #[test]
    fn s_gw_14_a_route_counts_once() {
        let mut snapshot = load("httproute-simple-same-namespace.yaml");
        let key = ObjectRef::new(INFRA, "gateway-conformance-infra-test");
        let route = Arc::make_mut(snapshot.http_routes.get_mut(&key).unwrap());
        let mut refs = route.spec.parent_refs().to_vec();
        let mut by_section = refs[0].clone();
        by_section.section_name = Some("http".into());
        refs.push(by_section);
        route.spec.parent_refs = Some(refs);
        let evaluation = run(&snapshot);
        let status = &evaluation.gateways[&gateway("same-namespace")];
        assert_eq!(status.listeners.as_ref().unwrap()[0].attached_routes, 1);
        assert_eq!(evaluation.http_routes[&key].parents.len(), 2);
        let listener = evaluation
            .listeners
            .iter()
            .find(|l| l.gateway == gateway("same-namespace"))
            .unwrap();
        assert_eq!(listener.candidates.len(), 1, "{listener:#?}");
    }

    /// S-PR.1: a route that names the host sorts before one that matches through the listener
    /// alone, even when that one is older.
    #[test]
    fn s_pr_1_named_routes_first() {
        let mut snapshot = load("httproute-simple-same-namespace.yaml");
        let key = ObjectRef::new(INFRA, "gateway-conformance-infra-test");
        let mut named = snapshot.http_routes[&key].as_ref().clone();
        named.metadata.name = Some("named".into());
        named.metadata.creation_timestamp = Some(Time(
            cluster_state::k8s::jiff::Timestamp::from_second(9).unwrap(),
        ));
        named.spec.hostnames = Some(vec!["example.com".into()]);
        let named_key = ObjectRef::new(INFRA, "named");
        snapshot
            .http_routes
            .insert(named_key.clone(), Arc::new(named));
        let evaluation = run(&snapshot);
        let listener = evaluation
            .listeners
            .iter()
            .find(|l| l.gateway == gateway("same-namespace"))
            .unwrap();
        let order: Vec<(&ObjectRef, Option<String>)> = listener
            .candidates
            .iter()
            .map(|c| (&c.route, c.hostname.as_ref().map(ToString::to_string)))
            .collect();
        assert_eq!(
            order,
            [(&named_key, Some("example.com".into())), (&key, None)]
        );
    }

    /// S-0.3 and S-0.5: once the desired statuses are written back, evaluating again later
    /// gives the same statuses, transition times included, so nothing is written twice.
    #[test]
    fn s_0_3_written_statuses_are_a_fixed_point() {
        let mut snapshot = load("gateway-with-attached-routes.yaml");
        let first = run(&snapshot);
        for (key, status) in &first.gateway_classes {
            let class = snapshot.gateway_classes.get_mut(key).unwrap();
            Arc::make_mut(class).status = Some(status.clone());
        }
        for (key, status) in &first.gateways {
            let gateway = snapshot.gateways.get_mut(key).unwrap();
            Arc::make_mut(gateway).status = Some(status.clone());
        }
        for (key, status) in &first.http_routes {
            let route = snapshot.http_routes.get_mut(key).unwrap();
            Arc::make_mut(route).status = Some(status.clone());
        }
        let loaded: BTreeSet<ObjectRef> = snapshot.gateways.keys().cloned().collect();
        let objects = Objects::from_snapshot(&snapshot);
        let inputs = GatewayInputs::new(&objects, &loaded);
        let later = Time(cluster_state::k8s::jiff::Timestamp::from_second(1_900_000_000).unwrap());
        let second = evaluate(inputs, &Settings::default(), &later);
        assert_eq!(first.gateway_classes, second.gateway_classes);
        for (key, status) in &first.gateways {
            assert_eq!(Some(status), second.gateways.get(key), "{key}");
        }
        assert_eq!(first.http_routes, second.http_routes);
        assert_eq!(first.listeners, second.listeners);
    }

    /// S-GW.4b: OverlappingTLSConfig is written only while true, and goes once the overlap
    /// does (the base HTTPS Gateway has `*.wildcard.org` beside `fourth-example.wildcard.org`).
    #[test]
    fn s_gw_4b_overlapping_tls_comes_and_goes() {
        let mut snapshot = load("httproute-simple-same-namespace.yaml");
        let key = gateway("same-namespace-with-https-listener");
        let overlapping = |evaluation: &Evaluation| -> Vec<String> {
            let listeners = evaluation.gateways[&key].listeners.clone().unwrap();
            listeners
                .into_iter()
                .filter(|l| {
                    l.conditions
                        .iter()
                        .any(|c| c.type_ == "OverlappingTLSConfig")
                })
                .map(|l| l.name)
                .collect()
        };
        let first = run(&snapshot);
        let both = [
            "https-with-wildcard-hostname",
            "https-with-hostname-matching-wildcard",
        ];
        assert_eq!(overlapping(&first), both);
        let object = Arc::make_mut(snapshot.gateways.get_mut(&key).unwrap());
        object.status = first.gateways.get(&key).cloned();
        object.spec.listeners[3].hostname = Some("fourth-example.org".into());
        assert!(overlapping(&run(&snapshot)).is_empty());
    }
}
