//! The parts the Gateway API kinds share: references to parents, backends, Secrets and
//! extensions; header matches and header filters; request mirrors; route status.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

use super::GROUP;

/// The fields of an object that its type does not know (experimental-channel fields, for
/// example), by name, kept so that the object serialises back whole and a controller can report
/// them as unsupported.
pub type UnknownFields = BTreeMap<String, serde_json::Value>;

/// The paths of `unknown` under `path`, appended to `paths` (`spec.rules[0].retry`, …).
pub(super) fn unknown_paths(unknown: &UnknownFields, path: &str, paths: &mut Vec<String>) {
    paths.extend(unknown.keys().map(|key| format!("{path}.{key}")));
}

/// A route's reference to the object it attaches to: a Gateway (the default), a listener of it
/// (`sectionName`, `port`), or another parent kind.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParentReference {
    /// The parent's API group; absent means `gateway.networking.k8s.io` (see [`Self::group`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The parent's kind; absent means `Gateway` (see [`Self::kind`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The parent's namespace; absent means the route's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The parent's name.
    pub name: String,
    /// The listener of the Gateway the route attaches to, by name; absent means every listener
    /// that accepts it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_name: Option<String>,
    /// The port of the listeners the route attaches to; absent means any port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

impl ParentReference {
    /// The parent's API group, defaulted as the CRD does (`gateway.networking.k8s.io`).
    pub fn group(&self) -> &str {
        self.group.as_deref().unwrap_or(GROUP)
    }

    /// The parent's kind, defaulted as the CRD does (`Gateway`).
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("Gateway")
    }
}

/// A reference to the backend that serves requests: a Service port by default.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackendObjectReference {
    /// The backend's API group; absent means the core group `""` (see [`Self::group`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The backend's kind; absent means `Service` (see [`Self::kind`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The backend's name.
    pub name: String,
    /// The backend's namespace; absent means the route's own (another one needs a
    /// ReferenceGrant there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The port of the backend to send to; required for a Service.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

impl BackendObjectReference {
    /// The backend's API group, defaulted as the CRD does (the core group, `""`).
    pub fn group(&self) -> &str {
        self.group.as_deref().unwrap_or("")
    }

    /// The backend's kind, defaulted as the CRD does (`Service`).
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("Service")
    }
}

/// A weighted backend of a route rule, with filters applied only to the requests sent to it;
/// `F` is the route kind's filter type.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackendRef<F> {
    /// The backend's API group; absent means the core group `""` (see [`Self::group`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The backend's kind; absent means `Service` (see [`Self::kind`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The backend's name.
    pub name: String,
    /// The backend's namespace; absent means the route's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The port of the backend to send to; required for a Service.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    /// The share of the rule's requests this backend gets, relative to the other backends'
    /// weights; absent means 1 (see [`Self::weight`]), 0 means none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
    /// Filters applied to the requests sent to this backend only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<F>>,
}

impl<F> BackendRef<F> {
    /// The backend's API group, defaulted as the CRD does (the core group, `""`).
    pub fn group(&self) -> &str {
        self.group.as_deref().unwrap_or("")
    }

    /// The backend's kind, defaulted as the CRD does (`Service`).
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("Service")
    }

    /// The backend's weight, defaulted as the CRD does (1).
    pub fn weight(&self) -> i32 {
        self.weight.unwrap_or(1)
    }

    /// The backend's filters (none when absent).
    pub fn filters(&self) -> &[F] {
        self.filters.as_deref().unwrap_or_default()
    }
}

/// A reference to an object in the same namespace by group, kind and name: the target of an
/// `ExtensionRef` filter.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalObjectReference {
    /// The object's API group (`""` for the core group).
    pub group: String,
    /// The object's kind.
    pub kind: String,
    /// The object's name.
    pub name: String,
}

/// A reference to a certificate: a Secret by default, in the referrer's namespace unless
/// `namespace` says otherwise (which needs a ReferenceGrant there).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretObjectReference {
    /// The object's API group; absent means the core group `""` (see [`Self::group`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The object's kind; absent means `Secret` (see [`Self::kind`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The object's name.
    pub name: String,
    /// The object's namespace; absent means the referrer's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl SecretObjectReference {
    /// The object's API group, defaulted as the CRD does (the core group, `""`).
    pub fn group(&self) -> &str {
        self.group.as_deref().unwrap_or("")
    }

    /// The object's kind, defaulted as the CRD does (`Secret`).
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("Secret")
    }
}

/// A request header a match requires: by exact value (the default) or regular expression.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeaderMatch {
    /// `Exact` or `RegularExpression`; absent means `Exact` (see [`Self::match_type`]).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The header's name, compared case-insensitively.
    pub name: String,
    /// The value (or pattern) the header must have.
    pub value: String,
}

impl HeaderMatch {
    /// How the value is compared, defaulted as the CRD does (`Exact`).
    pub fn match_type(&self) -> &str {
        self.type_.as_deref().unwrap_or("Exact")
    }
}

/// A header name and value, as a header filter sets or adds it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Header {
    /// The header's name (case-insensitive).
    pub name: String,
    /// The header's value.
    pub value: String,
}

/// The changes a header filter makes to the request's or the response's headers.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HeaderModifier {
    /// Headers to set, replacing any value they had.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set: Option<Vec<Header>>,
    /// Headers to add beside any value they have.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add: Option<Vec<Header>>,
    /// Names of headers to remove.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remove: Option<Vec<String>>,
}

/// A copy of the requests sent to another backend, whose responses are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestMirror {
    /// Where the copies go.
    pub backend_ref: BackendObjectReference,
    /// The percentage of requests copied (0 to 100); with neither this nor `fraction`, all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent: Option<i32>,
    /// The fraction of requests copied, as numerator and denominator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fraction: Option<Fraction>,
}

/// A fraction of requests: `numerator / denominator`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Fraction {
    /// The numerator, at most the denominator.
    pub numerator: i32,
    /// The denominator; absent means 100 (see [`Self::denominator`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub denominator: Option<i32>,
}

impl Fraction {
    /// The denominator, defaulted as the CRD does (100).
    pub fn denominator(&self) -> i32 {
        self.denominator.unwrap_or(100)
    }
}

/// What the controllers of a route's parents say about it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RouteStatus {
    /// One entry per parent (and controller) that has looked at the route.
    pub parents: Vec<RouteParentStatus>,
}

/// What one controller says about a route under one of its parents.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteParentStatus {
    /// The parent, as the route's `parentRefs` name it.
    pub parent_ref: ParentReference,
    /// The controller that wrote this entry (a GatewayClass's `controllerName`).
    pub controller_name: String,
    /// `Accepted`, `ResolvedRefs`, … of the route under this parent.
    pub conditions: Vec<Condition>,
}
