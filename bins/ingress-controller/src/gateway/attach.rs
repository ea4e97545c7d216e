//! A route's parentRefs turned into attachments to Gateway listeners, with the `Accepted`
//! verdict of each parentRef that is ours (semantics S-AT.1 to S-AT.5, S-AT.7).
//!
//! S-AT.6 (every rule of the route invalid) is decided from the rules alone, by
//! [`super::rules::verdict`], and applied where the route's status is written.

use std::collections::BTreeMap;

use cluster_state::gateway::{GROUP, Gateway, ParentReference};
use cluster_state::k8s::api::core::v1::Namespace;
use cluster_state::{ObjectRef, Objects};

use super::Fault;
use super::hostname::{self, Hostname, Hostnames};
use super::listeners::ListenerCheck;
use super::namespaces;

/// A Gateway of ours, with the checks of its listeners (in spec order).
#[derive(Debug, Clone, Copy)]
pub struct GatewayView<'a> {
    /// The Gateway.
    pub gateway: &'a Gateway,
    /// Its listeners' checks, index for index with `spec.listeners`.
    pub listeners: &'a [ListenerCheck],
}

/// The route being attached: its kind, namespace, parentRefs and host names.
#[derive(Debug, Clone, Copy)]
pub struct RouteView<'a> {
    /// `HTTPRoute` (or, later, `GRPCRoute`).
    pub kind: &'a str,
    /// The route's namespace.
    pub namespace: &'a str,
    /// Its `spec.parentRefs`.
    pub parent_refs: &'a [ParentReference],
    /// Its `spec.hostnames`.
    pub hostnames: &'a [String],
}

/// One listener a parentRef attaches the route to, with the host names it serves there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// The listener's index in the Gateway's `spec.listeners`.
    pub listener: usize,
    /// The route's effective host names on it (S-HN.1), never empty.
    pub hostnames: Hostnames,
}

/// What one parentRef that is ours comes to (S-AT.2: one per parentRef, even two to one
/// Gateway).
#[derive(Debug, Clone, PartialEq)]
pub struct Parent {
    /// The parentRef as the status writes it back: as in the spec, with `group`, `kind` and
    /// `namespace` written out (S-ST.1).
    pub parent_ref: ParentReference,
    /// The Gateway it names.
    pub gateway: ObjectRef,
    /// The attachments (at least one), or why the route is not accepted there:
    /// `NoMatchingParent`, `NotAllowedByListeners`, `NoMatchingListenerHostname`.
    pub accepted: Result<Vec<Attachment>, Fault>,
}

/// The parentRefs of `route` that are ours (S-AT.1: group and kind those of a Gateway, naming a
/// Gateway in `gateways`, which holds only ours), each with its verdict; other parentRefs are
/// left out.
pub fn parents(
    route: RouteView<'_>,
    gateways: &BTreeMap<ObjectRef, GatewayView<'_>>,
    namespaces: &Objects<Namespace>,
) -> Vec<Parent> {
    let hostnames: Vec<Hostname> = route
        .hostnames
        .iter()
        .filter_map(|h| Hostname::new(h))
        .collect();
    route
        .parent_refs
        .iter()
        .filter(|p| p.group() == GROUP && p.kind() == "Gateway")
        .filter_map(|parent_ref| {
            let namespace = parent_ref.namespace.as_deref().unwrap_or(route.namespace);
            let key = ObjectRef::new(namespace, parent_ref.name.as_str());
            let view = gateways.get(&key)?;
            let written = ParentReference {
                group: Some(GROUP.to_owned()),
                kind: Some("Gateway".to_owned()),
                namespace: Some(namespace.to_owned()),
                ..parent_ref.clone()
            };
            let accepted = attach(route, parent_ref, *view, &hostnames, namespaces);
            Some(Parent {
                parent_ref: written,
                gateway: key,
                accepted,
            })
        })
        .collect()
}

/// S-AT.3 to S-AT.5 for one parentRef.
fn attach(
    route: RouteView<'_>,
    parent_ref: &ParentReference,
    view: GatewayView<'_>,
    hostnames: &[Hostname],
    namespaces: &Objects<Namespace>,
) -> Result<Vec<Attachment>, Fault> {
    let gateway_namespace = view
        .gateway
        .metadata
        .namespace
        .as_deref()
        .unwrap_or_default();
    let candidates: Vec<usize> = view
        .listeners
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            parent_ref
                .section_name
                .as_deref()
                .is_none_or(|s| s == l.name)
        })
        .filter(|(_, l)| parent_ref.port.is_none_or(|p| p == l.port))
        .map(|(index, _)| index)
        .collect();
    if candidates.is_empty() {
        return Err(Fault::new(
            "NoMatchingParent",
            "no listener matches the parentRef's sectionName and port",
        ));
    }
    let allowed: Vec<usize> = candidates
        .into_iter()
        .filter(|&index| {
            let check = view.listeners.get(index);
            let spec = view.gateway.spec.listeners.get(index);
            let admits = |spec: &cluster_state::gateway::Listener| {
                let allowed = spec.allowed_routes().namespaces();
                namespaces::admits(&allowed, gateway_namespace, route.namespace, namespaces)
            };
            check.is_some_and(|c| c.carries(route.kind)) && spec.is_some_and(admits)
        })
        .collect();
    if allowed.is_empty() {
        return Err(Fault::new(
            "NotAllowedByListeners",
            format!(
                "no listener allows a {} from namespace {}",
                route.kind, route.namespace
            ),
        ));
    }
    let attachments: Vec<Attachment> = allowed
        .into_iter()
        .filter_map(|index| {
            let listener = view.listeners.get(index)?;
            let effective = hostname::effective(listener.hostname.as_ref(), hostnames);
            (!effective.is_empty()).then_some(Attachment {
                listener: index,
                hostnames: effective,
            })
        })
        .collect();
    if attachments.is_empty() {
        return Err(Fault::new(
            "NoMatchingListenerHostname",
            "no route hostname intersects a listener's hostname",
        ));
    }
    Ok(attachments)
}

#[cfg(test)]
mod tests {
    use crate::gateway::fixtures::gateway;
    use cluster_state::gateway::{AllowedRoutes, Listener, ListenerNamespaces, RouteGroupKind};

    use super::*;
    use crate::gateway::listeners::{self, TlsContext};

    fn listener(name: &str, port: i32, hostname: Option<&str>, from: &str) -> Listener {
        Listener {
            name: name.into(),
            port,
            protocol: "HTTP".into(),
            hostname: hostname.map(Into::into),
            tls: None,
            allowed_routes: Some(AllowedRoutes {
                namespaces: Some(ListenerNamespaces {
                    from: Some(from.into()),
                    selector: None,
                }),
                kinds: None,
            }),
        }
    }

    fn parent(name: &str, section: Option<&str>, port: Option<i32>) -> ParentReference {
        ParentReference {
            name: name.into(),
            section_name: section.map(Into::into),
            port,
            ..Default::default()
        }
    }

    /// The verdict reasons of the parentRefs of a route in `namespace` with `hostnames`.
    fn outcome(
        gw: &Gateway,
        namespace: &str,
        refs: &[ParentReference],
        hostnames: &[&str],
    ) -> Vec<Result<Vec<usize>, &'static str>> {
        let secrets = Objects::new();
        let grants = Objects::new();
        let context = TlsContext {
            secrets: &secrets,
            grants: &grants,
            now: 0,
        };
        let checks = listeners::check(gw, context);
        let view = GatewayView {
            gateway: gw,
            listeners: &checks,
        };
        let gateways = BTreeMap::from([(ObjectRef::new("infra", "gw"), view)]);
        let hostnames: Vec<String> = hostnames.iter().map(|h| (*h).into()).collect();
        let route = RouteView {
            kind: "HTTPRoute",
            namespace,
            parent_refs: refs,
            hostnames: &hostnames,
        };
        parents(route, &gateways, &Objects::new())
            .into_iter()
            .map(|p| {
                p.accepted
                    .map(|a| a.iter().map(|a| a.listener).collect())
                    .map_err(|f| f.reason)
            })
            .collect()
    }

    #[test]
    fn s_at_1_only_parent_refs_to_our_gateways_get_an_entry() {
        let gw = gateway(vec![listener("http", 80, None, "Same")]);
        let mut service = parent("gw", None, None);
        service.kind = Some("Service".into());
        service.group = Some(String::new());
        let refs = [
            parent("gw", None, None),
            parent("ghost", None, None),
            service,
        ];
        assert_eq!(outcome(&gw, "infra", &refs, &[]), [Ok(vec![0])]);
        let elsewhere = ParentReference {
            namespace: Some("other".into()),
            ..parent("gw", None, None)
        };
        assert!(outcome(&gw, "infra", &[elsewhere], &[]).is_empty());
    }

    #[test]
    fn s_at_2_parent_ref_is_written_out() {
        let gw = gateway(vec![listener("http", 80, None, "Same")]);
        let checks = listeners::check(
            &gw,
            TlsContext {
                secrets: &Objects::new(),
                grants: &Objects::new(),
                now: 0,
            },
        );
        let view = GatewayView {
            gateway: &gw,
            listeners: &checks,
        };
        let gateways = BTreeMap::from([(ObjectRef::new("infra", "gw"), view)]);
        let refs = [parent("gw", Some("http"), None), parent("gw", None, None)];
        let route = RouteView {
            kind: "HTTPRoute",
            namespace: "infra",
            parent_refs: &refs,
            hostnames: &[],
        };
        let found = parents(route, &gateways, &Objects::new());
        assert_eq!(found.len(), 2);
        let written = &found[0].parent_ref;
        assert_eq!(written.group.as_deref(), Some(GROUP));
        assert_eq!(written.kind.as_deref(), Some("Gateway"));
        assert_eq!(written.namespace.as_deref(), Some("infra"));
        assert_eq!(written.section_name.as_deref(), Some("http"));
    }

    /// HTTPRouteInvalidParentRefNotMatchingSectionName, …NotMatchingListenerPort,
    /// …SectionNameNotMatchingPort.
    #[test]
    fn s_at_3_section_name_and_port() {
        let gw = gateway(vec![
            listener("http", 80, None, "Same"),
            listener("alt", 8080, None, "Same"),
        ]);
        let cases = [
            (parent("gw", Some("http"), None), Ok(vec![0])),
            (parent("gw", Some("nope"), None), Err("NoMatchingParent")),
            (parent("gw", None, Some(8080)), Ok(vec![1])),
            (parent("gw", None, Some(81)), Err("NoMatchingParent")),
            (
                parent("gw", Some("http"), Some(8080)),
                Err("NoMatchingParent"),
            ),
            (parent("gw", None, None), Ok(vec![0, 1])),
        ];
        for (reference, want) in cases {
            assert_eq!(
                outcome(&gw, "infra", std::slice::from_ref(&reference), &[]),
                [want],
                "{reference:?}"
            );
        }
    }

    /// HTTPRouteInvalidCrossNamespaceParentRef and HTTPRouteDisallowedKind.
    #[test]
    fn s_at_4_namespace_and_kind_allowed() {
        let gw = gateway(vec![listener("http", 80, None, "Same")]);
        let refs = [ParentReference {
            namespace: Some("infra".into()),
            ..parent("gw", None, None)
        }];
        assert_eq!(
            outcome(&gw, "web", &refs, &[]),
            [Err("NotAllowedByListeners")]
        );
        let all = gateway(vec![listener("http", 80, None, "All")]);
        assert_eq!(outcome(&all, "web", &refs, &[]), [Ok(vec![0])]);
        let mut grpc_only = listener("grpc", 80, None, "All");
        if let Some(allowed) = grpc_only.allowed_routes.as_mut() {
            allowed.kinds = Some(vec![RouteGroupKind {
                group: None,
                kind: "GRPCRoute".into(),
            }]);
        }
        let disallowed = gateway(vec![grpc_only]);
        assert_eq!(
            outcome(&disallowed, "web", &refs, &[]),
            [Err("NotAllowedByListeners")]
        );
    }

    /// GatewayWithAttachedRoutes `http-route-not-accepted` and HTTPRouteHostnameIntersection.
    #[test]
    fn s_at_5_hostnames_must_intersect() {
        let gw = gateway(vec![
            listener("specific", 80, Some("very.specific.com"), "Same"),
            listener("wildcard", 80, Some("*.wildcard.io"), "Same"),
        ]);
        let refs = [parent("gw", None, None)];
        let none = outcome(
            &gw,
            "infra",
            &refs,
            &["specific.but.wrong.com", "wildcard.io"],
        );
        assert_eq!(none, [Err("NoMatchingListenerHostname")]);
        let one = outcome(&gw, "infra", &refs, &["foo.wildcard.io"]);
        assert_eq!(one, [Ok(vec![1])]);
        // S-AT.7: accepted when one of the listeners accepts it.
        let both = outcome(&gw, "infra", &refs, &[]);
        assert_eq!(both, [Ok(vec![0, 1])]);
    }

    #[test]
    fn s_at_8_listener_state_does_not_affect_attachment() {
        let mut https = listener("https", 443, None, "Same");
        https.protocol = "HTTPS".into();
        let gw = gateway(vec![https]);
        // No certificate: ResolvedRefs=False, still attached.
        assert_eq!(
            outcome(&gw, "infra", &[parent("gw", None, None)], &[]),
            [Ok(vec![0])]
        );
    }
}
