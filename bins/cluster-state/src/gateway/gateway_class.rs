//! GatewayClass: a class of Gateways and the controller that serves them.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};

use super::impl_kind;

/// A class of Gateways (cluster-scoped): Gateways name it in `gatewayClassName`, and the
/// controller whose name is its `controllerName` serves them.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct GatewayClass {
    /// The object's metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What the class is.
    pub spec: GatewayClassSpec,
    /// What its controller says about it.
    #[serde(default)]
    pub status: Option<GatewayClassStatus>,
}

impl_kind!(
    GatewayClass,
    "GatewayClass",
    "gatewayclasses",
    ClusterResourceScope,
    [status]
);

impl GatewayClass {
    /// The paths of fields the types do not know (none: the experimental channel adds none).
    pub fn unknown_fields(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The class's controller and parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayClassSpec {
    /// The controller that serves the class's Gateways: a domain-prefixed path
    /// (`example.com/gateway-controller`).
    pub controller_name: String,
    /// Controller-specific parameters for the class's Gateways.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters_ref: Option<GatewayClassParametersReference>,
    /// A human-readable description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A reference to the object that holds a class's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GatewayClassParametersReference {
    /// The object's API group.
    pub group: String,
    /// The object's kind.
    pub kind: String,
    /// The object's name.
    pub name: String,
    /// The object's namespace, for a namespaced kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// What the class's controller says about it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayClassStatus {
    /// `Accepted`, … of the class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// The Gateway API features the controller supports for this class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supported_features: Option<Vec<SupportedFeature>>,
}

/// One feature a class's controller supports.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SupportedFeature {
    /// The feature's name, as the conformance profiles name it (`HTTPRouteQueryParamMatching`).
    pub name: String,
}
