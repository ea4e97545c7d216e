//! Narrower reads than whole kinds: a source can keep only the Secrets of one `type`.

use crate::{Kind, Snapshot};

/// Which objects of the watched kinds a source keeps. The API source asks the server for
/// these alone (a field selector), so it reads nothing else; the manifest source drops the
/// others. [`Filter::default`] keeps everything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Filter {
    secret_type: Option<&'static str>,
}

impl Filter {
    /// Only Secrets of type `kubernetes.io/tls` (what an ingress controller serves).
    pub const TLS_SECRETS: Filter = Filter::secrets_of_type("kubernetes.io/tls");

    /// Only Secrets whose `type` is `secret_type`; the other kinds are not narrowed.
    pub const fn secrets_of_type(secret_type: &'static str) -> Filter {
        Filter {
            secret_type: Some(secret_type),
        }
    }

    /// The field selector of a list or watch of `kind` (`type=kubernetes.io/tls` for Secrets),
    /// if this filter narrows that kind.
    pub fn field_selector(&self, kind: Kind) -> Option<String> {
        match (kind, self.secret_type) {
            (Kind::Secret, Some(secret_type)) => Some(format!("type={secret_type}")),
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
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Secret;
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
}
