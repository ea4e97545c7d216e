//! Narrower reads than whole kinds: a source can keep only the Secrets of one `type`, only
//! the Node of one name (the node a binary runs on), and only one ConfigMap (a binary's
//! settings).

use crate::{Kind, Snapshot};

/// Which objects of the watched kinds a source keeps. The API source asks the server for
/// these alone (a field selector), so it reads nothing else; the manifest source drops the
/// others. [`Filter::default`] keeps everything.
///
/// The narrowing values are `&'static str` so that a filter stays `Copy`: a node name known at
/// run time is leaked once at start-up ([`Filter::only_node`]), which costs its bytes once per
/// process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Filter {
    secret_type: Option<&'static str>,
    node_name: Option<&'static str>,
    config_map: Option<(&'static str, &'static str)>,
}

impl Filter {
    /// Only Secrets of type `kubernetes.io/tls` (what an ingress controller serves).
    pub const TLS_SECRETS: Filter = Filter::secrets_of_type("kubernetes.io/tls");

    /// Only Secrets whose `type` is `secret_type`; the other kinds are not narrowed.
    pub const fn secrets_of_type(secret_type: &'static str) -> Filter {
        Filter {
            secret_type: Some(secret_type),
            node_name: None,
            config_map: None,
        }
    }

    /// This filter, keeping besides only the Node called `name` (the other kinds are not
    /// narrowed further). A name known only at run time is leaked to get its `&'static str`
    /// (`Box::leak`), once per process.
    #[must_use]
    pub const fn only_node(self, name: &'static str) -> Filter {
        Filter {
            node_name: Some(name),
            ..self
        }
    }

    /// This filter, keeping besides only the ConfigMap `namespace/name` (the other kinds are
    /// not narrowed further). Names known only at run time are leaked, as for
    /// [`Filter::only_node`].
    #[must_use]
    pub const fn only_config_map(self, namespace: &'static str, name: &'static str) -> Filter {
        Filter {
            config_map: Some((namespace, name)),
            ..self
        }
    }

    /// The field selector of a list or watch of `kind` (`type=kubernetes.io/tls` for Secrets,
    /// `metadata.name=NAME` for Nodes), if this filter narrows that kind.
    pub fn field_selector(&self, kind: Kind) -> Option<String> {
        match (kind, self.secret_type, self.node_name, self.config_map) {
            (Kind::Secret, Some(secret_type), _, _) => Some(format!("type={secret_type}")),
            (Kind::Node, _, Some(name), _) => Some(format!("metadata.name={name}")),
            (Kind::ConfigMap, _, _, Some((namespace, name))) => Some(format!(
                "metadata.namespace={namespace},metadata.name={name}"
            )),
            _ => None,
        }
    }

    /// Removes from `snapshot` the objects this filter does not keep.
    pub(crate) fn retain(&self, snapshot: &mut Snapshot) {
        if let Some(secret_type) = self.secret_type {
            // A Secret without `type` is `Opaque`, as the API server defaults it.
            let type_of = |secret: &k8s_openapi::api::core::v1::Secret| {
                secret.type_.clone().unwrap_or_else(|| "Opaque".to_owned())
            };
            snapshot
                .secrets
                .retain(|_, secret| type_of(secret) == secret_type);
        }
        if let Some(name) = self.node_name {
            snapshot.nodes.retain(|key, _| key.name == name);
        }
        if let Some((namespace, name)) = self.config_map {
            snapshot
                .config_maps
                .retain(|key, _| key.namespace == namespace && key.name == name);
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Node, Secret};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn secret(name: &str, secret_type: Option<&str>) -> Secret {
        Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("shop".into()),
                ..ObjectMeta::default()
            },
            type_: secret_type.map(Into::into),
            ..Secret::default()
        }
    }

    #[test]
    fn tls_secrets_only_narrow_secrets() {
        let filter = Filter::TLS_SECRETS;
        assert_eq!(
            filter.field_selector(Kind::Secret).as_deref(),
            Some("type=kubernetes.io/tls")
        );
        assert_eq!(filter.field_selector(Kind::Service), None);
        assert_eq!(Filter::default().field_selector(Kind::Secret), None);

        let mut snapshot = Snapshot::default();
        snapshot.insert(secret("cert", Some("kubernetes.io/tls")).into());
        snapshot.insert(secret("token", Some("Opaque")).into());
        snapshot.insert(secret("untyped", None).into());
        let mut everything = snapshot.clone();
        filter.retain(&mut snapshot);
        let kept: Vec<_> = snapshot.secrets.keys().map(|k| k.name.as_str()).collect();
        assert_eq!(kept, ["cert"]);
        Filter::default().retain(&mut everything);
        assert_eq!(everything.secrets.len(), 3);
    }

    fn node(name: &str) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            ..Node::default()
        }
    }

    #[test]
    fn only_config_map_narrows_config_maps_to_one() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let filter = Filter::default().only_config_map("ingress-nginx", "controller");
        assert_eq!(
            filter.field_selector(Kind::ConfigMap).as_deref(),
            Some("metadata.namespace=ingress-nginx,metadata.name=controller")
        );
        assert_eq!(Filter::default().field_selector(Kind::ConfigMap), None);
        let map = |namespace: &str, name: &str| ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(namespace.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let mut snapshot = Snapshot::default();
        snapshot.insert(map("ingress-nginx", "controller").into());
        snapshot.insert(map("other", "controller").into());
        snapshot.insert(map("ingress-nginx", "other").into());
        filter.retain(&mut snapshot);
        let kept: Vec<_> = snapshot
            .config_maps
            .keys()
            .map(ToString::to_string)
            .collect();
        assert_eq!(kept, ["ingress-nginx/controller"]);
    }

    #[test]
    fn only_node_narrows_nodes_to_one_name() {
        let filter = Filter::TLS_SECRETS.only_node("node-a");
        assert_eq!(
            filter.field_selector(Kind::Node).as_deref(),
            Some("metadata.name=node-a")
        );
        assert_eq!(
            filter.field_selector(Kind::Secret).as_deref(),
            Some("type=kubernetes.io/tls")
        );
        assert_eq!(Filter::default().field_selector(Kind::Node), None);
        assert_eq!(Filter::TLS_SECRETS.field_selector(Kind::Node), None);

        let mut snapshot = Snapshot::default();
        snapshot.insert(node("node-a").into());
        snapshot.insert(node("node-b").into());
        filter.retain(&mut snapshot);
        let kept: Vec<_> = snapshot.nodes.keys().map(|k| k.name.as_str()).collect();
        assert_eq!(kept, ["node-a"]);
    }
}
