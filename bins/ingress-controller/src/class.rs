//! Which Ingresses are ours: by `spec.ingressClassName`, the deprecated
//! `kubernetes.io/ingress.class` annotation, or the default IngressClass; and by namespace.

use k8s_openapi::api::networking::v1::{Ingress, IngressClass};

/// The annotation that marks the default IngressClass.
pub const DEFAULT_CLASS_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";
/// The deprecated class annotation on Ingresses, still accepted as a fallback.
pub const LEGACY_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// What this controller serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The `spec.controller` value of our IngressClasses.
    pub controller: String,
    /// Only Ingresses in this namespace, when set.
    pub namespace: Option<String>,
}

impl Selection {
    /// Whether `ingress` is served by this controller, given the cluster's `classes`.
    pub fn selects(&self, ingress: &Ingress, classes: &[IngressClass]) -> bool {
        if let Some(namespace) = &self.namespace
            && ingress.metadata.namespace.as_deref().unwrap_or_default() != namespace
        {
            return false;
        }
        let ours = |class: &IngressClass| {
            class
                .spec
                .as_ref()
                .and_then(|s| s.controller.as_deref())
                .is_some_and(|c| c == self.controller)
        };
        let named = |name: &str| {
            classes
                .iter()
                .any(|c| c.metadata.name.as_deref() == Some(name) && ours(c))
        };
        let spec_class = ingress
            .spec
            .as_ref()
            .and_then(|s| s.ingress_class_name.as_deref());
        let legacy = ingress
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(LEGACY_CLASS_ANNOTATION))
            .map(String::as_str);
        match spec_class.or(legacy) {
            Some(name) => named(name),
            None => classes.iter().any(|c| {
                ours(c)
                    && c.metadata
                        .annotations
                        .as_ref()
                        .and_then(|a| a.get(DEFAULT_CLASS_ANNOTATION))
                        .is_some_and(|v| v == "true")
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::networking::v1::{IngressClassSpec, IngressSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn class(name: &str, controller: &str, default: bool) -> IngressClass {
        IngressClass {
            metadata: ObjectMeta {
                name: Some(name.into()),
                annotations: default
                    .then(|| [(DEFAULT_CLASS_ANNOTATION.into(), "true".into())].into()),
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
    fn class_name_annotation_default_and_namespace() {
        let us = Selection {
            controller: "k8s.io/ingress-nginx".into(),
            namespace: None,
        };
        let classes = [
            class("nginx", "k8s.io/ingress-nginx", false),
            class("other", "example.com/other", true),
        ];
        assert!(us.selects(&ingress("a", Some("nginx"), None), &classes));
        assert!(!us.selects(&ingress("a", Some("other"), None), &classes));
        assert!(!us.selects(&ingress("a", Some("missing"), None), &classes));
        assert!(us.selects(&ingress("a", None, Some("nginx")), &classes));
        // The spec field wins over the annotation.
        assert!(!us.selects(&ingress("a", Some("other"), Some("nginx")), &classes));
        // Class-less: only when the default class is ours.
        assert!(!us.selects(&ingress("a", None, None), &classes));
        let ours_default = [class("nginx", "k8s.io/ingress-nginx", true)];
        assert!(us.selects(&ingress("a", None, None), &ours_default));
        let scoped = Selection {
            namespace: Some("b".into()),
            ..us
        };
        assert!(!scoped.selects(&ingress("a", Some("nginx"), None), &classes));
        assert!(scoped.selects(&ingress("b", Some("nginx"), None), &classes));
    }
}
