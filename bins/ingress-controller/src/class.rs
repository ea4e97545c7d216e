//! Which Ingresses are ours, as ingress-nginx decides it (`GetIngressClass` in
//! `internal/ingress/controller/store/store.go`): by `spec.ingressClassName` naming an
//! IngressClass of our controller, else by the deprecated `kubernetes.io/ingress.class`
//! annotation equal to `--ingress-class`, else only with `--watch-ingress-without-class`; and
//! by namespace (`--watch-namespace`, `--watch-namespace-selector`).
//!
//! Like ingress-nginx, no IngressClass marked default is consulted here: the API server's
//! DefaultIngressClass admission plugin writes the default class into new Ingresses.

use std::collections::BTreeSet;

use cluster_state::LabelSelector;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};

use crate::objects::Map;

/// The deprecated class annotation on Ingresses, still honoured.
pub const LEGACY_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// What this controller serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The `spec.controller` value of our IngressClasses (`--controller-class`).
    pub controller: String,
    /// The value of the legacy annotation we serve (`--ingress-class`).
    pub annotation: String,
    /// Whether Ingresses without any class are ours (`--watch-ingress-without-class`).
    pub without_class: bool,
    /// Whether the IngressClass named [`Selection::annotation`] is ours whatever its
    /// controller (`--ingress-class-by-name`).
    pub by_name: bool,
    /// Only Ingresses in this namespace, when set (`--watch-namespace`).
    pub namespace: Option<String>,
    /// Only Ingresses in the namespaces whose labels this selects, when set
    /// (`--watch-namespace-selector`).
    pub namespace_selector: Option<LabelSelector>,
    /// The TLS Secret (`namespace/name`) of the default server and of TLS hosts without a
    /// usable Secret of their own (`--default-ssl-certificate`).
    pub default_certificate: Option<String>,
    /// Which Gateway API objects are ours (`--gateway-controller-name`).
    pub gateway: crate::gateway::Settings,
}

/// ingress-nginx's defaults: controller `k8s.io/ingress-nginx`, annotation `nginx`, every
/// namespace.
impl Default for Selection {
    fn default() -> Self {
        Self {
            controller: "k8s.io/ingress-nginx".into(),
            annotation: "nginx".into(),
            without_class: false,
            by_name: false,
            namespace: None,
            namespace_selector: None,
            default_certificate: None,
            gateway: crate::gateway::Settings::default(),
        }
    }
}

impl Selection {
    /// The names of the namespaces [`Selection::namespace_selector`] picks out of
    /// `namespaces`, or `None` when there is no selector.
    pub fn selected_namespaces<'a>(
        &self,
        namespaces: &'a Map<Namespace>,
    ) -> Option<BTreeSet<&'a str>> {
        let selector = self.namespace_selector.as_ref()?;
        Some(
            namespaces
                .values()
                .filter(|n| selector.matches(n.metadata.labels.as_ref()))
                .filter_map(|n| n.metadata.name.as_deref())
                .collect(),
        )
    }

    /// Whether `ingress` is served by this controller, given the cluster's `classes` and the
    /// namespaces the selector picked ([`Selection::selected_namespaces`]).
    pub fn selects(
        &self,
        ingress: &Ingress,
        classes: &Map<IngressClass>,
        namespaces: Option<&BTreeSet<&str>>,
    ) -> bool {
        let namespace = ingress.metadata.namespace.as_deref().unwrap_or_default();
        if self.namespace.as_deref().is_some_and(|n| n != namespace)
            || namespaces.is_some_and(|picked| !picked.contains(namespace))
        {
            return false;
        }
        let spec_class = ingress
            .spec
            .as_ref()
            .and_then(|s| s.ingress_class_name.as_deref());
        if let Some(name) = spec_class {
            return classes.values().any(|class| {
                class.metadata.name.as_deref() == Some(name)
                    && ((self.by_name && name == self.annotation)
                        || class
                            .spec
                            .as_ref()
                            .and_then(|s| s.controller.as_deref())
                            .is_some_and(|c| c == self.controller))
            });
        }
        let legacy = ingress
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(LEGACY_CLASS_ANNOTATION));
        match legacy {
            Some(value) => *value == self.annotation,
            None => self.without_class,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::networking::v1::{IngressClassSpec, IngressSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    /// `items` keyed as a source keys them.
    fn map<T: k8s_openapi::Metadata<Ty = ObjectMeta>>(
        items: impl IntoIterator<Item = T>,
    ) -> Map<T> {
        let keyed = |item: T| {
            (
                cluster_state::ObjectRef::from_meta(item.metadata()),
                item.into(),
            )
        };
        items.into_iter().map(keyed).collect()
    }

    fn class(name: &str, controller: &str) -> IngressClass {
        IngressClass {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            spec: Some(IngressClassSpec {
                controller: Some(controller.into()),
                parameters: None,
            }),
        }
    }

    fn ingress(ns: &str, class: Option<&str>, legacy: Option<&str>) -> Ingress {
        Ingress {
            metadata: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some("i".into()),
                annotations: legacy.map(|l| [(LEGACY_CLASS_ANNOTATION.into(), l.into())].into()),
                ..ObjectMeta::default()
            },
            spec: Some(IngressSpec {
                ingress_class_name: class.map(String::from),
                ..IngressSpec::default()
            }),
            status: None,
        }
    }

    #[test]
    fn class_name_then_annotation_then_without_class() {
        let us = Selection::default();
        let classes = map([
            class("nginx", "k8s.io/ingress-nginx"),
            class("other", "example.com/other"),
        ]);
        let selects = |s: &Selection, i: &Ingress| s.selects(i, &classes, None);
        assert!(selects(&us, &ingress("a", Some("nginx"), None)));
        assert!(!selects(&us, &ingress("a", Some("other"), None)));
        assert!(!selects(&us, &ingress("a", Some("missing"), None)));
        // The annotation is compared with --ingress-class, not with IngressClass names.
        assert!(selects(&us, &ingress("a", None, Some("nginx"))));
        assert!(!selects(&us, &ingress("a", None, Some("other"))));
        let renamed = Selection {
            annotation: "internal".into(),
            ..Selection::default()
        };
        assert!(selects(&renamed, &ingress("a", None, Some("internal"))));
        assert!(!selects(&renamed, &ingress("a", None, Some("nginx"))));
        // The spec field wins over the annotation.
        assert!(!selects(&us, &ingress("a", Some("other"), Some("nginx"))));
        // Class-less: only with --watch-ingress-without-class.
        assert!(!selects(&us, &ingress("a", None, None)));
        let without = Selection {
            without_class: true,
            ..Selection::default()
        };
        assert!(selects(&without, &ingress("a", None, None)));
        // --ingress-class-by-name: the class named --ingress-class, whatever its controller.
        let by_name = Selection {
            annotation: "other".into(),
            by_name: true,
            ..Selection::default()
        };
        assert!(selects(&by_name, &ingress("a", Some("other"), None)));
        assert!(selects(&by_name, &ingress("a", Some("nginx"), None)));
        assert!(!selects(&us, &ingress("a", Some("other"), None)));
    }

    #[test]
    fn namespaces_by_name_and_by_selector() {
        let classes = map([class("nginx", "k8s.io/ingress-nginx")]);
        let scoped = Selection {
            namespace: Some("b".into()),
            ..Selection::default()
        };
        assert!(!scoped.selects(&ingress("a", Some("nginx"), None), &classes, None));
        assert!(scoped.selects(&ingress("b", Some("nginx"), None), &classes, None));

        let namespace = |name: &str, team: Option<&str>| Namespace {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: team.map(|t| [("team".to_owned(), t.to_owned())].into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        let namespaces = map([
            namespace("a", Some("web")),
            namespace("b", Some("db")),
            namespace("c", None),
        ]);
        let selected = Selection {
            namespace_selector: Some(LabelSelector::parse("team in (web)").unwrap()),
            ..Selection::default()
        };
        assert_eq!(Selection::default().selected_namespaces(&namespaces), None);
        let picked = selected.selected_namespaces(&namespaces).unwrap();
        assert_eq!(picked.iter().copied().collect::<Vec<_>>(), ["a"]);
        assert!(selected.selects(&ingress("a", Some("nginx"), None), &classes, Some(&picked)));
        assert!(!selected.selects(&ingress("b", Some("nginx"), None), &classes, Some(&picked)));
        assert!(!selected.selects(&ingress("c", Some("nginx"), None), &classes, Some(&picked)));
    }
}
