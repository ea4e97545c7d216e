//! The kinds of objects the binaries use, and one object of any of them.
//!
//! The list of kinds is written once, in [`with_kinds!`]; the enums here and the per-kind
//! maps of [`Snapshot`](crate::Snapshot) are generated from it.

use std::fmt;
use std::sync::Arc;

use k8s_openapi::Metadata;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::ObjectRef;

/// Calls macro `$m` with the table of kinds: variant, type, snapshot field, scope.
macro_rules! with_kinds {
    ($m:ident) => {
        $m! {
            Service(k8s_openapi::api::core::v1::Service) services, namespaced;
            EndpointSlice(k8s_openapi::api::discovery::v1::EndpointSlice) endpoint_slices, namespaced;
            Ingress(k8s_openapi::api::networking::v1::Ingress) ingresses, namespaced;
            IngressClass(k8s_openapi::api::networking::v1::IngressClass) ingress_classes, cluster;
            Secret(k8s_openapi::api::core::v1::Secret) secrets, namespaced;
            ConfigMap(k8s_openapi::api::core::v1::ConfigMap) config_maps, namespaced;
            Lease(k8s_openapi::api::coordination::v1::Lease) leases, namespaced;
            Namespace(k8s_openapi::api::core::v1::Namespace) namespaces, cluster;
            Node(k8s_openapi::api::core::v1::Node) nodes, cluster;
            Pod(k8s_openapi::api::core::v1::Pod) pods, namespaced;
            GatewayClass(crate::gateway::GatewayClass) gateway_classes, cluster;
            Gateway(crate::gateway::Gateway) gateways, namespaced;
            HttpRoute(crate::gateway::HttpRoute) http_routes, namespaced;
            GrpcRoute(crate::gateway::GrpcRoute) grpc_routes, namespaced;
            ReferenceGrant(crate::gateway::ReferenceGrant) reference_grants, namespaced;
        }
    };
}
pub(crate) use with_kinds;

macro_rules! define_kinds {
    ($($variant:ident($ty:ty) $field:ident, $scope:ident;)*) => {
        /// A kind of object a [`Snapshot`](crate::Snapshot) holds.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind {
            $(
                #[doc = concat!("`", stringify!($variant), "` (`", stringify!($ty), "`).")]
                $variant,
            )*
        }

        impl Kind {
            /// Every kind, in the order of the snapshot's fields.
            pub const ALL: &[Kind] = &[$(Kind::$variant),*];

            /// The `apiVersion` of this kind (`v1`, `networking.k8s.io/v1`, …).
            pub fn api_version(self) -> &'static str {
                match self {
                    $(Kind::$variant => <$ty as k8s_openapi::Resource>::API_VERSION,)*
                }
            }

            /// The `kind` field of this kind (`Service`, …).
            pub fn name(self) -> &'static str {
                match self {
                    $(Kind::$variant => <$ty as k8s_openapi::Resource>::KIND,)*
                }
            }

            /// The API group of this kind (`""` for the core group).
            pub fn group(self) -> &'static str {
                match self {
                    $(Kind::$variant => <$ty as k8s_openapi::Resource>::GROUP,)*
                }
            }

            /// The resource name of this kind in API paths and RBAC rules (`services`, …).
            pub fn resource(self) -> &'static str {
                match self {
                    $(Kind::$variant => <$ty as k8s_openapi::Resource>::URL_PATH_SEGMENT,)*
                }
            }

            /// Whether objects of this kind live in a namespace.
            pub fn is_namespaced(self) -> bool {
                match self {
                    $(Kind::$variant => scope_is_namespaced!($scope),)*
                }
            }

            /// The kind whose `kind` field is `name`, whatever its `apiVersion`.
            pub fn from_name(name: &str) -> Option<Kind> {
                Kind::ALL.iter().copied().find(|kind| kind.name() == name)
            }

            /// Reads an object of this kind from `deserializer`.
            pub(crate) fn deserialize_object<'de, D: serde::Deserializer<'de>>(
                self,
                deserializer: D,
            ) -> Result<Object, D::Error> {
                match self {
                    $(Kind::$variant => {
                        <$ty as serde::Deserialize>::deserialize(deserializer).map(Object::from)
                    })*
                }
            }
        }

        /// One object of any [`Kind`], shared: snapshots hand out the same `Arc` until the
        /// object changes.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Object {
            $(
                #[doc = concat!("A `", stringify!($variant), "`.")]
                $variant(Arc<$ty>),
            )*
        }

        impl Object {
            /// The object's kind.
            pub fn kind(&self) -> Kind {
                match self {
                    $(Object::$variant(_) => Kind::$variant,)*
                }
            }

            /// The object's metadata.
            pub fn metadata(&self) -> &ObjectMeta {
                match self {
                    $(Object::$variant(object) => object.metadata(),)*
                }
            }

            /// The object's metadata, to normalise it before it is shared.
            pub(crate) fn metadata_mut(&mut self) -> &mut ObjectMeta {
                match self {
                    $(Object::$variant(object) => Arc::make_mut(object).metadata_mut(),)*
                }
            }
        }

        /// Serialises as the API does: the object with its `apiVersion` and `kind`.
        impl serde::Serialize for Object {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(Object::$variant(object) => object.serialize(serializer),)*
                }
            }
        }

        $(
            impl From<$ty> for Object {
                fn from(object: $ty) -> Self {
                    Object::$variant(Arc::new(object))
                }
            }
        )*
    };
}

macro_rules! scope_is_namespaced {
    (namespaced) => {
        true
    };
    (cluster) => {
        false
    };
}

with_kinds!(define_kinds);

impl Kind {
    /// Whether this kind is served by a CRD that a cluster may not have installed (the Gateway
    /// API kinds): its absence is not an error.
    pub fn is_optional(self) -> bool {
        self.group() == crate::gateway::GROUP
    }
}

impl Object {
    /// The object's key in its kind's map.
    pub fn key(&self) -> ObjectRef {
        ObjectRef::from_meta(self.metadata())
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_know_their_api_group_and_scope() {
        assert_eq!(Kind::Ingress.api_version(), "networking.k8s.io/v1");
        assert_eq!(Kind::EndpointSlice.api_version(), "discovery.k8s.io/v1");
        assert_eq!(Kind::Lease.api_version(), "coordination.k8s.io/v1");
        assert_eq!(Kind::from_name("ConfigMap"), Some(Kind::ConfigMap));
        assert_eq!(Kind::EndpointSlice.group(), "discovery.k8s.io");
        assert_eq!(
            (Kind::Service.group(), Kind::Service.resource()),
            ("", "services")
        );
        assert_eq!(Kind::IngressClass.resource(), "ingressclasses");
        assert_eq!(Kind::from_name("Pod"), Some(Kind::Pod));
        assert_eq!(Kind::from_name("Deployment"), None);
        let cluster: Vec<_> = Kind::ALL.iter().filter(|k| !k.is_namespaced()).collect();
        assert_eq!(
            cluster,
            [
                &Kind::IngressClass,
                &Kind::Namespace,
                &Kind::Node,
                &Kind::GatewayClass
            ]
        );
        assert_eq!(
            Kind::HttpRoute.api_version(),
            "gateway.networking.k8s.io/v1"
        );
        assert_eq!(Kind::HttpRoute.name(), "HTTPRoute");
        assert_eq!(Kind::GrpcRoute.resource(), "grpcroutes");
        assert_eq!(
            Kind::from_name("ReferenceGrant"),
            Some(Kind::ReferenceGrant)
        );
        assert!(Kind::Gateway.is_optional() && !Kind::Ingress.is_optional());
        assert_eq!(
            (Kind::Node.api_version(), Kind::Node.resource()),
            ("v1", "nodes")
        );
    }
}
