//! GRPCRoute: rules that match gRPC calls (service, method, headers) and send them to
//! weighted backends.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::shared::unknown_paths;
use super::{
    BackendRef, HeaderMatch, HeaderModifier, LocalObjectReference, ParentReference, RequestMirror,
    RouteStatus, UnknownFields, impl_kind,
};

/// A GRPCRoute: gRPC routing rules attached to Gateway listeners.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct GrpcRoute {
    /// The object's metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The parents, host names and rules.
    pub spec: GrpcRouteSpec,
    /// What the parents' controllers say about the route.
    #[serde(default)]
    pub status: Option<RouteStatus>,
}

impl_kind!(
    GrpcRoute,
    "GRPCRoute",
    "grpcroutes",
    NamespaceResourceScope,
    [status]
);

impl GrpcRoute {
    /// The paths of fields the types do not know (`spec.rules[0].sessionPersistence`, …), to
    /// report as unsupported.
    pub fn unknown_fields(&self) -> Vec<String> {
        let mut paths = Vec::new();
        unknown_paths(&self.spec.unknown, "spec", &mut paths);
        for (index, rule) in self.spec.rules().iter().enumerate() {
            unknown_paths(&rule.unknown, &format!("spec.rules[{index}]"), &mut paths);
        }
        paths
    }
}

/// What a GRPCRoute is: where it attaches, for which host names, and its rules.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrpcRouteSpec {
    /// The Gateways (or listeners) the route attaches to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_refs: Option<Vec<ParentReference>>,
    /// The host names the route serves, intersected with the listeners'; absent or empty
    /// means the listeners'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostnames: Option<Vec<String>>,
    /// The rules; absent or empty matches no call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<GrpcRouteRule>>,
    /// The fields the types do not know (experimental channel).
    #[serde(flatten)]
    pub unknown: UnknownFields,
}

impl GrpcRouteSpec {
    /// The parent references (none when absent).
    pub fn parent_refs(&self) -> &[ParentReference] {
        self.parent_refs.as_deref().unwrap_or_default()
    }

    /// The host names (none when absent).
    pub fn hostnames(&self) -> &[String] {
        self.hostnames.as_deref().unwrap_or_default()
    }

    /// The rules (none when absent).
    pub fn rules(&self) -> &[GrpcRouteRule] {
        self.rules.as_deref().unwrap_or_default()
    }
}

/// One rule: calls that satisfy any of its matches (every call, when there are none) go
/// through its filters to its backends.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrpcRouteRule {
    /// The rule's name, unique in the route.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The conditions a call must meet, any one of them; absent or empty matches every call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<GrpcRouteMatch>>,
    /// The changes made to matching calls and their responses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<GrpcRouteFilter>>,
    /// Where matching calls go, by weight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend_refs: Option<Vec<GrpcBackendRef>>,
    /// The fields the types do not know (experimental channel: `sessionPersistence`).
    #[serde(flatten)]
    pub unknown: UnknownFields,
}

impl GrpcRouteRule {
    /// The matches (none when absent: every call matches).
    pub fn matches(&self) -> &[GrpcRouteMatch] {
        self.matches.as_deref().unwrap_or_default()
    }

    /// The filters (none when absent).
    pub fn filters(&self) -> &[GrpcRouteFilter] {
        self.filters.as_deref().unwrap_or_default()
    }

    /// The backends (none when absent).
    pub fn backend_refs(&self) -> &[GrpcBackendRef] {
        self.backend_refs.as_deref().unwrap_or_default()
    }
}

/// A backend of a GRPCRoute rule, with its own filters.
pub type GrpcBackendRef = BackendRef<GrpcRouteFilter>;

/// Conditions on a call, all of which it must meet.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GrpcRouteMatch {
    /// The service and method called; absent means any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<GrpcMethodMatch>,
    /// Headers (metadata) the call must carry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers: Option<Vec<HeaderMatch>>,
}

impl GrpcRouteMatch {
    /// The header conditions (none when absent).
    pub fn headers(&self) -> &[HeaderMatch] {
        self.headers.as_deref().unwrap_or_default()
    }
}

/// A condition on the gRPC service and method called (`/SERVICE/METHOD`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GrpcMethodMatch {
    /// `Exact` (absent means this, see [`Self::match_type`]) or `RegularExpression`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The fully qualified service (`package.Service`); absent means any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// The method; absent means any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}

impl GrpcMethodMatch {
    /// How service and method are compared, defaulted as the CRD does (`Exact`).
    pub fn match_type(&self) -> &str {
        self.type_.as_deref().unwrap_or("Exact")
    }
}

/// A change made to matching calls or their responses; `type_` says which field is set.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrpcRouteFilter {
    /// `RequestHeaderModifier`, `ResponseHeaderModifier`, `RequestMirror` or `ExtensionRef`.
    #[serde(rename = "type")]
    pub type_: String,
    /// With `RequestHeaderModifier`: the request headers to change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_header_modifier: Option<HeaderModifier>,
    /// With `ResponseHeaderModifier`: the response headers to change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_header_modifier: Option<HeaderModifier>,
    /// With `RequestMirror`: where copies of the calls go.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_mirror: Option<RequestMirror>,
    /// With `ExtensionRef`: the implementation-specific filter object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extension_ref: Option<LocalObjectReference>,
}
