//! The key of an object in a snapshot.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Namespace and name of an object; the namespace is empty for cluster-scoped kinds
/// (`IngressClass`, `Namespace`).
///
/// Ordered by namespace, then name, so a snapshot lists objects as `kubectl get -A` does.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ObjectRef {
    /// The namespace, or empty for a cluster-scoped object.
    pub namespace: String,
    /// The object's name.
    pub name: String,
}

impl ObjectRef {
    /// The key of a namespaced object.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The key of a cluster-scoped object.
    pub fn cluster(name: impl Into<String>) -> Self {
        Self::new("", name)
    }

    /// The key of an object from its metadata (missing fields read as empty).
    pub fn from_meta(meta: &ObjectMeta) -> Self {
        Self::new(
            meta.namespace.clone().unwrap_or_default(),
            meta.name.clone().unwrap_or_default(),
        )
    }
}

impl fmt::Display for ObjectRef {
    /// `namespace/name`, or `name` alone for a cluster-scoped object.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_like_kubectl() {
        assert_eq!(
            ObjectRef::new("kube-system", "dns").to_string(),
            "kube-system/dns"
        );
        assert_eq!(ObjectRef::cluster("nginx").to_string(), "nginx");
    }

    #[test]
    fn orders_by_namespace_then_name() {
        let mut keys = [
            ObjectRef::new("b", "a"),
            ObjectRef::new("a", "z"),
            ObjectRef::cluster("m"),
        ];
        keys.sort();
        assert_eq!(keys.map(|k| k.to_string()), ["m", "a/z", "b/a"]);
    }
}
