//! GRPCRoute on the HTTPRoute machinery (semantics §7, S-GR.1 to S-GR.5, and S-AT.9).
//!
//! A gRPC call is an HTTP/2 `POST /SERVICE/METHOD`, so a GRPCRoute is evaluated, planned and
//! rendered as the HTTPRoute [`as_http_route`] makes of it: its method matches become path
//! matches, its header matches and header filters stay as they are, and every other filter
//! is refused (its rule is invalid). What differs is the order of its candidates ([`key`],
//! S-GR.2), and where a GRPCRoute meets HTTP traffic on a listener (`separate`): HTTP and
//! gRPC routes are never merged on one host name (S-AT.9), and nginx 1.22 cannot serve
//! HTTP/1.1 and h2c on one plaintext port (S-GR.5).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use cluster_state::ObjectRef;
use cluster_state::gateway::{
    BackendRef, GrpcMethodMatch, GrpcRoute, GrpcRouteFilter, GrpcRouteMatch, HttpPathMatch,
    HttpRoute, HttpRouteFilter, HttpRouteMatch, HttpRouteRule, HttpRouteSpec,
};

use super::attach::GatewayView;
use super::hostname::{Hostname, Hostnames};
use super::precedence::{Age, Key, RouteKind};
use super::{Attached, Fault};

/// The path regex of any one element (a service or a method written as neither).
const ANY_ELEMENT: &str = "[^/]+";

/// The HTTPRoute `route` is served as (S-GR.1): the same metadata, status, parents and host
/// names; each rule with its matches as path and header matches (a rule without matches gets
/// one that matches every call), its header filters, and its backendRefs.
pub fn as_http_route(route: &GrpcRoute) -> HttpRoute {
    let rules = route.spec.rules().iter().map(|rule| {
        let matches = match rule.matches() {
            [] => vec![HttpRouteMatch::default()],
            matches => matches.iter().map(http_match).collect(),
        };
        let backend_refs = rule.backend_refs().iter().map(|backend| BackendRef {
            group: backend.group.clone(),
            kind: backend.kind.clone(),
            name: backend.name.clone(),
            namespace: backend.namespace.clone(),
            port: backend.port,
            weight: backend.weight,
            filters: backend
                .filters
                .as_ref()
                .map(|filters| filters.iter().map(http_filter).collect()),
        });
        HttpRouteRule {
            name: rule.name.clone(),
            matches: Some(matches),
            filters: Some(rule.filters().iter().map(http_filter).collect()),
            backend_refs: Some(backend_refs.collect()),
            ..HttpRouteRule::default()
        }
    });
    HttpRoute {
        metadata: route.metadata.clone(),
        spec: HttpRouteSpec {
            parent_refs: route.spec.parent_refs.clone(),
            hostnames: route.spec.hostnames.clone(),
            rules: Some(rules.collect()),
            ..HttpRouteSpec::default()
        },
        status: route.status.clone(),
    }
}

/// The HTTPRoute match of gRPC match `m`: its method as a path (S-GR.1), its headers as they
/// are.
fn http_match(m: &GrpcRouteMatch) -> HttpRouteMatch {
    HttpRouteMatch {
        path: m.method.as_ref().map(method_path),
        headers: m.headers.clone(),
        ..HttpRouteMatch::default()
    }
}

/// The path match of a method match (S-GR.1): service and method `Exact` → Exact `/S/M`;
/// the service alone → PathPrefix `/S` (element-wise, so `/S/…` only); the method alone →
/// RegularExpression `/[^/]+/M`; neither → every path. With `RegularExpression`, the regex
/// `/(S)/(M)` (groups, not `(?:…)`, which the checked regex subset does not take), an absent
/// one any element. Another type is passed on as the path type,
/// which the planner refuses.
fn method_path(m: &GrpcMethodMatch) -> HttpPathMatch {
    let service = m.service.as_deref();
    let method = m.method.as_deref();
    let (type_, value) = match (m.match_type(), service, method) {
        ("Exact", Some(service), Some(method)) => ("Exact", format!("/{service}/{method}")),
        ("Exact", Some(service), None) => ("PathPrefix", format!("/{service}")),
        ("Exact", None, Some(method)) => (
            "RegularExpression",
            format!("/{ANY_ELEMENT}/{}", crate::render::regex_escape(method)),
        ),
        ("Exact", None, None) => ("PathPrefix", "/".to_owned()),
        ("RegularExpression", service, method) => (
            "RegularExpression",
            format!(
                "/({})/({})",
                service.unwrap_or(ANY_ELEMENT),
                method.unwrap_or(ANY_ELEMENT)
            ),
        ),
        (other, _, _) => (other, String::new()),
    };
    HttpPathMatch {
        type_: Some(type_.to_owned()),
        value: Some(value),
    }
}

/// The HTTPRoute filter of gRPC filter `f` (S-GR.4): the header modifiers as they are; any
/// other type under a name no HTTPRoute filter has, so that its rule is refused as not
/// supported (RequestMirror is not implemented for gRPC calls, ExtensionRef not at all).
fn http_filter(f: &GrpcRouteFilter) -> HttpRouteFilter {
    match f.type_.as_str() {
        "RequestHeaderModifier" | "ResponseHeaderModifier" => HttpRouteFilter {
            type_: f.type_.clone(),
            request_header_modifier: f.request_header_modifier.clone(),
            response_header_modifier: f.response_header_modifier.clone(),
            ..HttpRouteFilter::default()
        },
        other => HttpRouteFilter {
            type_: format!("{other} (on a GRPCRoute)"),
            ..HttpRouteFilter::default()
        },
    }
}

/// The S-GR.2 key of match `match_index` (`m`; `None` for the match-everything one of a rule
/// without matches) of rule `rule` of a GRPCRoute of age `age`, under host name `hostname`
/// (`None` when the route names none).
pub fn key(
    hostname: Option<&Hostname>,
    m: Option<&GrpcRouteMatch>,
    age: Age,
    rule: usize,
    match_index: usize,
) -> Key {
    let method = m.and_then(|m| m.method.as_ref());
    let chars = |text: Option<&String>| text.map_or(0, |t| t.chars().count());
    let service = chars(method.and_then(|m| m.service.as_ref()));
    let name = chars(method.and_then(|m| m.method.as_ref()));
    let headers: BTreeSet<String> = m
        .map(GrpcRouteMatch::headers)
        .unwrap_or_default()
        .iter()
        .map(|h| h.name.to_ascii_lowercase())
        .collect();
    Key::grpc(
        hostname,
        (service, name),
        headers.len(),
        age,
        rule,
        match_index,
    )
}

/// Whether two sets of effective host names share a name.
fn intersect(a: &Hostnames, b: &Hostnames) -> bool {
    match (a, b) {
        (Hostnames::Only(a), Hostnames::Only(b)) => {
            a.iter().any(|x| b.iter().any(|y| x.intersect(y).is_some()))
        }
        (Hostnames::Any, other) | (other, Hostnames::Any) => !other.is_empty(),
    }
}

/// How nginx serves the Gateways, as far as S-GR.5 needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Serving {
    /// `Some(--http-port)` when the Gateways share the Ingresses' listen address: a listener
    /// on port 80 or on that port is served on the Ingresses' HTTP/1 port, and the Gateways'
    /// listeners of one port share a socket. `None` when each Gateway has an address of its
    /// own.
    pub(super) shared_http: Option<i32>,
    /// Whether HTTPS offers HTTP/2 by ALPN (the ConfigMap's `use-http2`).
    pub(super) http2: bool,
}

/// An attachment S-AT.9 kept on a listener: the route's kind, its host names there, and the
/// route (`namespace/name`).
type Kept = (RouteKind, Hostnames, String);

/// The routes' attachments after the two rules that keep HTTP and gRPC apart, applied in
/// place (a parentRef left with no attachment is not accepted, with the reason):
///
/// - S-AT.9: of an HTTPRoute and a GRPCRoute attached to one listener with host names in
///   common, the older (S-0.4) keeps the listener; the other loses it
///   (`NotAllowedByListeners`, naming the older);
/// - S-GR.5: a GRPCRoute loses a listener where nginx would not speak HTTP/2 to its clients
///   (`UnsupportedProtocol`): a plaintext (`HTTP`) listener whose socket also serves HTTP/1
///   (an HTTPRoute attached on that port, to the same Gateway or, when the Gateways share
///   the Ingresses' address, to any; or the Ingresses' HTTP port), and an `HTTPS` listener
///   when HTTPS offers no HTTP/2.
pub(super) fn separate(
    routes: &mut [Attached<'_>],
    views: &BTreeMap<ObjectRef, GatewayView<'_>>,
    serving: Serving,
) {
    if !routes.iter().any(|r| r.kind == RouteKind::Grpc) {
        return;
    }
    let listener = |gateway: &ObjectRef, index: usize| {
        views
            .get(gateway)
            .and_then(|v| v.listeners.get(index))
            .map(|l| (l.name.as_str(), l.port, l.protocol.as_str()))
    };
    let mut order: Vec<usize> = (0..routes.len()).collect();
    order.sort_by_key(|i| routes.get(*i).map(|r| Age::of(&r.route.metadata)));
    // S-AT.9, oldest first: each listener's kept attachments, with their route.
    let mut kept: HashMap<(ObjectRef, usize), Vec<Kept>> = HashMap::new();
    for index in order {
        let Some(route) = routes.get_mut(index) else {
            continue;
        };
        let kind = route.kind;
        let this = route.key.to_string();
        for parent in &mut route.parents {
            let gateway = &parent.gateway;
            let Ok(attachments) = &mut parent.accepted else {
                continue;
            };
            let mut lost = Vec::new();
            attachments.retain(|a| {
                let slot = kept.get(&(gateway.clone(), a.listener));
                let older = slot
                    .into_iter()
                    .flatten()
                    .find(|(other, names, _)| *other != kind && intersect(names, &a.hostnames));
                let Some((other, _, name)) = older else {
                    return true;
                };
                let (listener, _, _) = listener(gateway, a.listener).unwrap_or_default();
                lost.push(format!(
                    "listener {listener:?}: the older {} {name} serves host names this route \
                     shares there, and HTTP and gRPC routes are not merged",
                    other.name()
                ));
                false
            });
            for a in attachments.iter() {
                let slot = kept.entry((gateway.clone(), a.listener)).or_default();
                slot.push((kind, a.hostnames.clone(), this.clone()));
            }
            if attachments.is_empty() && !lost.is_empty() {
                parent.accepted = Err(Fault::new("NotAllowedByListeners", lost.join("; ")));
            }
        }
    }
    // S-GR.5: the plaintext sockets HTTPRoutes use: by Gateway and port, or by port alone
    // when the Gateways share one address.
    let socket = |gateway: &ObjectRef, port: i32| {
        let gateway = serving.shared_http.is_none().then(|| gateway.clone());
        (gateway, port)
    };
    let mut http_ports: BTreeSet<(Option<ObjectRef>, i32)> = BTreeSet::new();
    for route in routes.iter().filter(|r| r.kind == RouteKind::Http) {
        for parent in &route.parents {
            for a in parent.accepted.iter().flatten() {
                if let Some((_, port, "HTTP")) = listener(&parent.gateway, a.listener) {
                    http_ports.insert(socket(&parent.gateway, port));
                }
            }
        }
    }
    for route in routes.iter_mut().filter(|r| r.kind == RouteKind::Grpc) {
        for parent in &mut route.parents {
            let gateway = &parent.gateway;
            let Ok(attachments) = &mut parent.accepted else {
                continue;
            };
            let mut lost = Vec::new();
            attachments.retain(|a| {
                let Some((name, port, protocol)) = listener(gateway, a.listener) else {
                    return true;
                };
                match protocol {
                    "HTTP" => {
                        let why = if http_ports.contains(&socket(gateway, port)) {
                            "HTTPRoutes use it"
                        } else if serving.shared_http.is_some_and(|p| port == 80 || port == p) {
                            "it is the Ingresses' HTTP port"
                        } else {
                            return true;
                        };
                        lost.push(format!(
                            "listener {name:?}: plaintext port {port} serves HTTP/1 ({why}), and \
                             nginx 1.22 cannot serve HTTP/1.1 and gRPC (h2c) on one plaintext port"
                        ));
                    }
                    "HTTPS" if !serving.http2 => lost.push(format!(
                        "listener {name:?}: HTTPS offers no HTTP/2 (the ConfigMap's use-http2 is \
                         false), which gRPC needs"
                    )),
                    _ => return true,
                }
                false
            });
            if attachments.is_empty() && !lost.is_empty() {
                parent.accepted = Err(Fault::new("UnsupportedProtocol", lost.join("; ")));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use cluster_state::gateway::HeaderMatch;

    use super::*;

    fn method(type_: Option<&str>, service: Option<&str>, method: Option<&str>) -> HttpPathMatch {
        method_path(&GrpcMethodMatch {
            type_: type_.map(str::to_owned),
            service: service.map(str::to_owned),
            method: method.map(str::to_owned),
        })
    }

    fn path(type_: &str, value: &str) -> HttpPathMatch {
        HttpPathMatch {
            type_: Some(type_.into()),
            value: Some(value.into()),
        }
    }

    /// S-GR.1: each form of method match as a path match.
    #[test]
    fn s_gr_1_methods_become_paths() {
        let service = Some("pkg.Svc");
        assert_eq!(
            method(None, service, Some("Echo")),
            path("Exact", "/pkg.Svc/Echo")
        );
        assert_eq!(method(None, service, None), path("PathPrefix", "/pkg.Svc"));
        assert_eq!(
            method(Some("Exact"), None, Some("Echo")),
            path("RegularExpression", "/[^/]+/Echo")
        );
        assert_eq!(
            method(Some("RegularExpression"), Some("pkg\\..*"), None),
            path("RegularExpression", "/(pkg\\..*)/([^/]+)")
        );
        assert_eq!(method(Some("Prefix"), service, None), path("Prefix", ""));
        // Each is served (or, the unknown type, refused) by the HTTPRoute checks.
        for (m, servable) in [
            (method(None, service, Some("Echo")), true),
            (method(None, service, None), true),
            (method(None, None, Some("Echo")), true),
            (
                method(Some("RegularExpression"), Some("pkg\\..*"), None),
                true,
            ),
            (method(Some("Prefix"), service, None), false),
        ] {
            let m = HttpRouteMatch {
                path: Some(m),
                ..HttpRouteMatch::default()
            };
            assert_eq!(
                super::super::matches::servable(&m).is_ok(),
                servable,
                "{m:?}"
            );
        }
    }

    /// S-GR.4: header modifiers carry over; a mirror or an extension makes the rule invalid.
    #[test]
    fn s_gr_4_only_header_filters() {
        let route: GrpcRoute = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "r", "namespace": "ns"},
            "spec": {"rules": [
                {"filters": [{"type": "RequestHeaderModifier",
                              "requestHeaderModifier": {"set": [{"name": "x", "value": "1"}]}}]},
                {"filters": [{"type": "RequestMirror",
                              "requestMirror": {"backendRef": {"name": "m", "port": 1}}}]},
            ]}
        }))
        .unwrap();
        let http = as_http_route(&route);
        let rules = http.spec.rules();
        assert!(super::super::rules::rule_actions(&rules[0]).is_ok());
        let fault = super::super::rules::rule_actions(&rules[1]).unwrap_err();
        assert_eq!(
            fault.message,
            "filter RequestMirror (on a GRPCRoute) is not supported"
        );
        // A rule without matches matches every call.
        assert_eq!(rules[0].matches().len(), 1);
        let slash = super::super::matches::servable(&rules[0].matches()[0]).unwrap();
        let slash = slash.0.unwrap();
        assert_eq!(
            (slash.kind, slash.path.as_str()),
            (crate::paths::Kind::Prefix, "/")
        );
    }

    /// S-GR.2: service characters, then method characters, then header count; unlike
    /// S-PR.2, a service-only match sorts before a method-only one.
    #[test]
    fn s_gr_2_precedence() {
        let age = || Age::of(&Default::default());
        let with = |service: Option<&str>, method: Option<&str>, headers: &[&str]| {
            let m = GrpcRouteMatch {
                method: Some(GrpcMethodMatch {
                    type_: None,
                    service: service.map(str::to_owned),
                    method: method.map(str::to_owned),
                }),
                headers: Some(
                    headers
                        .iter()
                        .map(|n| HeaderMatch {
                            name: (*n).into(),
                            value: "v".into(),
                            type_: None,
                        })
                        .collect(),
                ),
            };
            key(None, Some(&m), age(), 0, 0)
        };
        let both = with(Some("a.S"), Some("M"), &[]);
        let service = with(Some("a.S"), None, &["x", "y"]);
        let method = with(None, Some("Method"), &["x"]);
        let longer = with(Some("a.Svc"), None, &[]);
        assert!(longer < both && both < service && service < method);
        assert!(with(None, Some("M"), &["x", "X"]) == with(None, Some("M"), &["x"]));
        assert!(method < key(None, None, age(), 0, 0));
    }
}
