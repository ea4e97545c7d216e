//! ReferenceGrants (semantics S-RG): whether an object may refer to one in another namespace.
//! Only backendRefs (route to Service) and certificateRefs (Gateway to Secret) are governed by
//! grants; a route's attachment to a Gateway is governed by the listener's `allowedRoutes`
//! (S-RG.3, `namespaces.rs`).

use cluster_state::Objects;
use cluster_state::gateway::ReferenceGrant;

/// The referring side of a reference: the referrer's group, kind and namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct From<'a> {
    /// The referrer's API group (`gateway.networking.k8s.io`).
    pub group: &'a str,
    /// The referrer's kind (`HTTPRoute`, `Gateway`).
    pub kind: &'a str,
    /// The referrer's namespace.
    pub namespace: &'a str,
}

/// The referred-to side of a reference: the referent's group, kind, namespace and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct To<'a> {
    /// The referent's API group (`""` for Services and Secrets).
    pub group: &'a str,
    /// The referent's kind (`Service`, `Secret`).
    pub kind: &'a str,
    /// The referent's namespace.
    pub namespace: &'a str,
    /// The referent's name.
    pub name: &'a str,
}

/// Whether `from` may refer to `to` (S-RG.1): always within one namespace; across namespaces
/// when a grant in `to`'s namespace lists `from`'s (group, kind, namespace) and `to`'s (group,
/// kind) with no name or `to`'s name. Groups and kinds compare exactly. Evaluated on every
/// call, so a deleted grant revokes at once (S-RG.2).
pub fn permits(grants: &Objects<ReferenceGrant>, from: From<'_>, to: To<'_>) -> bool {
    if from.namespace == to.namespace {
        return true;
    }
    grants
        .iter()
        .filter(|(key, _)| key.namespace == to.namespace)
        .any(|(_, grant)| {
            let spec = &grant.spec;
            let from_listed = spec.from.iter().any(|f| {
                f.group == from.group && f.kind == from.kind && f.namespace == from.namespace
            });
            let to_listed = spec.to.iter().any(|t| {
                t.group == to.group
                    && t.kind == to.kind
                    && t.name.as_deref().is_none_or(|name| name == to.name)
            });
            from_listed && to_listed
        })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cluster_state::ObjectRef;
    use cluster_state::gateway::{ReferenceGrantFrom, ReferenceGrantSpec, ReferenceGrantTo};

    use super::*;

    const ROUTE: From<'static> = From {
        group: "gateway.networking.k8s.io",
        kind: "HTTPRoute",
        namespace: "infra",
    };

    fn service(namespace: &'static str, name: &'static str) -> To<'static> {
        To {
            group: "",
            kind: "Service",
            namespace,
            name,
        }
    }

    fn grants(namespace: &str, to_name: Option<&str>) -> Objects<ReferenceGrant> {
        let grant = ReferenceGrant {
            metadata: Default::default(),
            spec: ReferenceGrantSpec {
                from: vec![ReferenceGrantFrom {
                    group: "gateway.networking.k8s.io".into(),
                    kind: "HTTPRoute".into(),
                    namespace: "infra".into(),
                }],
                to: vec![ReferenceGrantTo {
                    group: String::new(),
                    kind: "Service".into(),
                    name: to_name.map(Into::into),
                }],
            },
        };
        Objects::from([(ObjectRef::new(namespace, "grant"), Arc::new(grant))])
    }

    #[test]
    fn s_rg_1_same_namespace_needs_no_grant() {
        assert!(permits(&Objects::new(), ROUTE, service("infra", "web")));
    }

    #[test]
    fn s_rg_1_cross_namespace_needs_a_grant_in_the_target_namespace() {
        let target = service("backend", "web");
        assert!(!permits(&Objects::new(), ROUTE, target));
        assert!(permits(&grants("backend", None), ROUTE, target));
        assert!(permits(&grants("backend", Some("web")), ROUTE, target));
        assert!(!permits(&grants("backend", Some("other")), ROUTE, target));
        // A grant in the referrer's namespace (or anywhere else) permits nothing.
        assert!(!permits(&grants("infra", None), ROUTE, target));
        // The grant names HTTPRoute and Service exactly.
        let gateway = From {
            kind: "Gateway",
            ..ROUTE
        };
        assert!(!permits(&grants("backend", None), gateway, target));
        let secret = To {
            kind: "Secret",
            ..target
        };
        assert!(!permits(&grants("backend", None), ROUTE, secret));
        let elsewhere = From {
            namespace: "other",
            ..ROUTE
        };
        assert!(!permits(&grants("backend", None), elsewhere, target));
    }
}
