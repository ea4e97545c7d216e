//! ReferenceGrant: the permission, given in a namespace, for objects of other namespaces to
//! refer to objects in it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// Lets objects of the kinds and namespaces in `from` refer to the objects of the kinds (and
/// names) in `to`, in the grant's own namespace. Without one, a route or Gateway may refer only
/// to objects of its own namespace.
///
/// `v1beta1` has the same schema; manifests and the API source use `v1`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct ReferenceGrant {
    /// The object's metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Who may refer to what.
    pub spec: ReferenceGrantSpec,
}

super::impl_kind!(
    ReferenceGrant,
    "ReferenceGrant",
    "referencegrants",
    NamespaceResourceScope,
    []
);

impl ReferenceGrant {
    /// The paths of fields the types do not know (none: the experimental channel adds none).
    pub fn unknown_fields(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The referrers and the referents of a grant.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReferenceGrantSpec {
    /// The referrers allowed: any of these may refer to any of `to`.
    pub from: Vec<ReferenceGrantFrom>,
    /// The objects, in the grant's namespace, they may refer to.
    pub to: Vec<ReferenceGrantTo>,
}

/// Referrers allowed by a grant: the objects of one kind in one namespace.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReferenceGrantFrom {
    /// The referrers' API group (`gateway.networking.k8s.io` for routes and Gateways).
    pub group: String,
    /// The referrers' kind (`HTTPRoute`, `Gateway`, …).
    pub kind: String,
    /// The referrers' namespace.
    pub namespace: String,
}

/// Referents allowed by a grant: the objects of one kind in the grant's namespace, or the one
/// named.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReferenceGrantTo {
    /// The referents' API group (`""` for Services and Secrets).
    pub group: String,
    /// The referents' kind (`Service`, `Secret`, …).
    pub kind: String,
    /// The one referent allowed; absent means every object of the kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}
