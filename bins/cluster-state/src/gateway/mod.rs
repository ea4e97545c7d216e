//! The Gateway API objects (`gateway.networking.k8s.io/v1`): GatewayClass, Gateway,
//! HTTPRoute, GRPCRoute and ReferenceGrant, typed from the standard-channel CRDs of Gateway
//! API v1.6.1 (`config/crd/standard/*.yaml` of kubernetes-sigs/gateway-api).
//!
//! The types follow the CRD schemas field for field, with the CRDs' camelCase names. A field
//! the schema may leave out is an `Option`; a required one is not.
//!
//! **Defaults.** The API server fills in the CRDs' defaults when it stores an object, but a
//! manifest read from a folder has no API server in front of it. The types keep what the
//! object says, so that it serialises back unchanged, and the defaults are applied by accessor
//! methods (`ParentReference::group()`, `HttpRouteRule::matches()`, `BackendRef::weight()`,
//! …): read a defaulted field through its method, never through the `Option`.
//!
//! **Experimental fields.** Fields only the experimental channel defines (HTTPRoute
//! `rules[].retry`, `rules[].sessionPersistence`, the `ExternalAuth` filter, Gateway
//! `spec.defaultScope`, …) are not typed. At the levels where the experimental channel adds
//! fields, a flattened [`UnknownFields`] map keeps whatever keys the types do not know, so the
//! object round-trips, and each kind's `unknown_fields()` lists their paths for a controller to
//! report as unsupported.

mod gateway_class;
mod gateway_kind;
mod grpc_route;
mod http_route;
mod reference_grant;
mod shared;

pub use gateway_class::{
    GatewayClass, GatewayClassParametersReference, GatewayClassSpec, GatewayClassStatus,
    SupportedFeature,
};
pub use gateway_kind::{
    AllowedListeners, AllowedRoutes, CaCertificateReference, FrontendTlsConfig,
    FrontendTlsValidation, Gateway, GatewayBackendTlsConfig, GatewayInfrastructure, GatewaySpec,
    GatewaySpecAddress, GatewayStatus, GatewayStatusAddress, GatewayTlsConfig, GatewayTlsPerPort,
    Listener, ListenerNamespaces, ListenerStatus, ListenerTlsConfig, ParametersReference,
    RouteGroupKind, TlsConfig,
};
pub use grpc_route::{
    GrpcBackendRef, GrpcMethodMatch, GrpcRoute, GrpcRouteFilter, GrpcRouteMatch, GrpcRouteRule,
    GrpcRouteSpec,
};
pub use http_route::{
    CorsFilter, HttpBackendRef, HttpPathMatch, HttpPathModifier, HttpQueryParamMatch,
    HttpRequestRedirectFilter, HttpRoute, HttpRouteFilter, HttpRouteMatch, HttpRouteRule,
    HttpRouteSpec, HttpRouteTimeouts, HttpUrlRewriteFilter,
};
pub use reference_grant::{
    ReferenceGrant, ReferenceGrantFrom, ReferenceGrantSpec, ReferenceGrantTo,
};
pub use shared::{
    BackendObjectReference, BackendRef, Fraction, Header, HeaderMatch, HeaderModifier,
    LocalObjectReference, ParentReference, RequestMirror, RouteParentStatus, RouteStatus,
    SecretObjectReference, UnknownFields,
};

/// The API group of every Gateway API kind.
pub const GROUP: &str = "gateway.networking.k8s.io";

/// Implements the k8s-openapi traits (`Resource`, `ListableResource`, `Metadata`) for the
/// Gateway API kind `$ty`, and its serialisation as the API writes it: `apiVersion`, `kind`,
/// `metadata`, `spec`, then each field of `$optional` (`status`) that is not `None`.
macro_rules! impl_kind {
    ($ty:ident, $kind:literal, $plural:literal, $scope:ident, [$($optional:ident),*]) => {
        impl k8s_openapi::Resource for $ty {
            const API_VERSION: &'static str = "gateway.networking.k8s.io/v1";
            const GROUP: &'static str = $crate::gateway::GROUP;
            const KIND: &'static str = $kind;
            const VERSION: &'static str = "v1";
            const URL_PATH_SEGMENT: &'static str = $plural;
            type Scope = k8s_openapi::$scope;
        }

        impl k8s_openapi::ListableResource for $ty {
            const LIST_KIND: &'static str = concat!($kind, "List");
        }

        impl k8s_openapi::Metadata for $ty {
            type Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

            fn metadata(&self) -> &Self::Ty {
                &self.metadata
            }

            fn metadata_mut(&mut self) -> &mut Self::Ty {
                &mut self.metadata
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeStruct;
                let fields = 4 $(+ usize::from(self.$optional.is_some()))*;
                let mut state = serializer.serialize_struct($kind, fields)?;
                let api_version = <$ty as k8s_openapi::Resource>::API_VERSION;
                state.serialize_field("apiVersion", api_version)?;
                state.serialize_field("kind", $kind)?;
                state.serialize_field("metadata", &self.metadata)?;
                state.serialize_field("spec", &self.spec)?;
                $(
                    if let Some(value) = &self.$optional {
                        state.serialize_field(stringify!($optional), value)?;
                    }
                )*
                state.end()
            }
        }
    };
}
use impl_kind;
