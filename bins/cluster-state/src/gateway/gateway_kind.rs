//! Gateway: the listeners (port, protocol, hostname, TLS) a class's controller serves, and
//! which routes may attach to each.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};

use super::shared::unknown_paths;
use super::{GROUP, SecretObjectReference, UnknownFields, impl_kind};

/// A Gateway: where traffic enters (its listeners) and which routes it carries.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct Gateway {
    /// The object's metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The listeners and what they accept.
    pub spec: GatewaySpec,
    /// What the controller says about the Gateway and each listener.
    #[serde(default)]
    pub status: Option<GatewayStatus>,
}

impl_kind!(
    Gateway,
    "Gateway",
    "gateways",
    NamespaceResourceScope,
    [status]
);

impl Gateway {
    /// The paths of fields the types do not know (`spec.defaultScope`, …), to report as
    /// unsupported.
    pub fn unknown_fields(&self) -> Vec<String> {
        let mut paths = Vec::new();
        unknown_paths(&self.spec.unknown, "spec", &mut paths);
        paths
    }
}

/// What a Gateway is: its class, listeners and addresses.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySpec {
    /// The GatewayClass whose controller serves this Gateway.
    pub gateway_class_name: String,
    /// The listeners: each a port, protocol and optional hostname routes attach to.
    pub listeners: Vec<Listener>,
    /// The addresses asked for; absent or empty lets the controller choose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<GatewaySpecAddress>>,
    /// Labels, annotations and parameters for the resources the controller creates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure: Option<GatewayInfrastructure>,
    /// Which namespaces' ListenerSets may add listeners (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_listeners: Option<AllowedListeners>,
    /// TLS settings for the whole Gateway: client certificate validation per port, and the
    /// client certificate shown to backends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<GatewayTlsConfig>,
    /// The fields the types do not know (experimental channel).
    #[serde(flatten)]
    pub unknown: UnknownFields,
}

/// An address asked for in a Gateway's spec.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GatewaySpecAddress {
    /// `IPAddress` (absent means this, see [`Self::address_type`]), `Hostname`,
    /// `NamedAddress` or a domain-prefixed implementation-specific type.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The address; absent or empty lets the controller choose one of the type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl GatewaySpecAddress {
    /// The address type, defaulted as the CRD does (`IPAddress`).
    pub fn address_type(&self) -> &str {
        self.type_.as_deref().unwrap_or("IPAddress")
    }
}

/// What the resources a controller creates for a Gateway carry.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayInfrastructure {
    /// Labels to put on them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations to put on them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// Controller-specific parameters, in the Gateway's namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters_ref: Option<ParametersReference>,
}

/// A reference to an object of parameters in the referrer's namespace.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ParametersReference {
    /// The object's API group.
    pub group: String,
    /// The object's kind.
    pub kind: String,
    /// The object's name.
    pub name: String,
}

/// Which ListenerSets may attach listeners to a Gateway.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AllowedListeners {
    /// The namespaces whose ListenerSets may; absent means none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<ListenerNamespaces>,
}

impl AllowedListeners {
    /// Which namespaces' ListenerSets may attach listeners, defaulted as the CRD does (`None`:
    /// no ListenerSet; unlike a listener's `allowedRoutes`, whose default is `Same`).
    pub fn from(&self) -> &str {
        let from = self.namespaces.as_ref().and_then(|n| n.from.as_deref());
        from.unwrap_or("None")
    }
}

/// One listener: where the Gateway accepts connections, and for which routes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listener {
    /// The listener's name, unique in the Gateway; routes name it in `sectionName`.
    pub name: String,
    /// The host name requests must be for (`*.example.com`: one or more labels in front of
    /// `example.com`); absent means any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// The port it listens on.
    pub port: i32,
    /// `HTTP`, `HTTPS`, `TLS`, `TCP`, `UDP` or a domain-prefixed implementation protocol.
    pub protocol: String,
    /// TLS settings, for `HTTPS` and `TLS`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<ListenerTlsConfig>,
    /// Which routes may attach; absent means routes of the Gateway's namespace, of the kinds
    /// the protocol carries (see [`Self::allowed_routes`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_routes: Option<AllowedRoutes>,
}

impl Listener {
    /// Which routes may attach, defaulted as the CRD does (`namespaces.from: Same`).
    pub fn allowed_routes(&self) -> AllowedRoutes {
        self.allowed_routes.clone().unwrap_or_default()
    }
}

/// The TLS settings of a listener.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenerTlsConfig {
    /// `Terminate` (the default, see [`Self::mode`]): the Gateway ends TLS; or `Passthrough`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The certificates (Secrets of type `kubernetes.io/tls` by default) it presents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate_refs: Option<Vec<SecretObjectReference>>,
    /// Implementation-specific TLS options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<BTreeMap<String, String>>,
}

impl ListenerTlsConfig {
    /// The TLS mode, defaulted as the CRD does (`Terminate`).
    pub fn mode(&self) -> &str {
        self.mode.as_deref().unwrap_or("Terminate")
    }

    /// The certificate references (none when absent).
    pub fn certificate_refs(&self) -> &[SecretObjectReference] {
        self.certificate_refs.as_deref().unwrap_or_default()
    }
}

/// Which routes may attach to a listener: from which namespaces, of which kinds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AllowedRoutes {
    /// The namespaces; absent means the Gateway's own (see [`Self::namespaces`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<ListenerNamespaces>,
    /// The route kinds; absent or empty means those the listener's protocol carries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<RouteGroupKind>>,
}

impl AllowedRoutes {
    /// The namespaces routes may come from, defaulted as the CRD does (`from: Same`).
    pub fn namespaces(&self) -> ListenerNamespaces {
        self.namespaces.clone().unwrap_or_default()
    }
}

/// A choice of namespaces: `All`, `Same` (the Gateway's), `Selector` (those whose labels
/// `selector` selects) or, for ListenerSets, `None`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListenerNamespaces {
    /// Which namespaces; absent means `Same` for routes (see [`Self::from`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The namespaces' labels, with `from: Selector`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

impl ListenerNamespaces {
    /// Which namespaces routes may come from, defaulted as the CRD does for a listener's
    /// `allowedRoutes` (`Same`); for `allowedListeners`, read [`AllowedListeners::from`].
    pub fn from(&self) -> &str {
        self.from.as_deref().unwrap_or("Same")
    }
}

/// A route kind, by API group and kind.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RouteGroupKind {
    /// The API group; absent means `gateway.networking.k8s.io` (see [`Self::group`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The kind (`HTTPRoute`, `GRPCRoute`, …).
    pub kind: String,
}

impl RouteGroupKind {
    /// The API group, defaulted as the CRD does (`gateway.networking.k8s.io`).
    pub fn group(&self) -> &str {
        self.group.as_deref().unwrap_or(GROUP)
    }
}

/// The Gateway-wide TLS settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GatewayTlsConfig {
    /// Towards backends: the client certificate the Gateway shows them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<GatewayBackendTlsConfig>,
    /// Towards clients: how their certificates are validated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frontend: Option<FrontendTlsConfig>,
}

/// The client certificate a Gateway shows backends that ask for one.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayBackendTlsConfig {
    /// The certificate (a Secret by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_certificate_ref: Option<SecretObjectReference>,
}

/// How a Gateway validates client certificates: by default, and per port.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrontendTlsConfig {
    /// The settings for every HTTPS port without its own.
    pub default: TlsConfig,
    /// The settings of particular ports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_port: Option<Vec<GatewayTlsPerPort>>,
}

/// The client-certificate settings of one port.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GatewayTlsPerPort {
    /// The port.
    pub port: i32,
    /// Its settings.
    pub tls: TlsConfig,
}

/// Client-certificate settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TlsConfig {
    /// How client certificates are validated; absent means they are not asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<FrontendTlsValidation>,
}

/// How client certificates are validated.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrontendTlsValidation {
    /// The CA certificates (ConfigMaps, typically) client certificates must chain to.
    pub ca_certificate_refs: Vec<CaCertificateReference>,
    /// `AllowValidOnly` (the default, see [`Self::mode`]) or `AllowInsecureFallback`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

impl FrontendTlsValidation {
    /// The validation mode, defaulted as the CRD does (`AllowValidOnly`).
    pub fn mode(&self) -> &str {
        self.mode.as_deref().unwrap_or("AllowValidOnly")
    }
}

/// A reference to a CA certificate: group and kind are required, the namespace defaults to
/// the referrer's.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CaCertificateReference {
    /// The object's API group (`""` for a ConfigMap).
    pub group: String,
    /// The object's kind (`ConfigMap`, …).
    pub kind: String,
    /// The object's name.
    pub name: String,
    /// The object's namespace; absent means the referrer's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// What the controller says about a Gateway.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayStatus {
    /// The addresses the Gateway is reachable at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<GatewayStatusAddress>>,
    /// `Accepted`, `Programmed`, … of the Gateway.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Each listener's status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listeners: Option<Vec<ListenerStatus>>,
    /// How many ListenerSets attached listeners.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attached_listener_sets: Option<i32>,
}

/// An address a Gateway is reachable at.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GatewayStatusAddress {
    /// `IPAddress` (absent means this), `Hostname`, `NamedAddress` or a domain-prefixed type.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The address.
    pub value: String,
}

/// What the controller says about one listener.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenerStatus {
    /// The listener's name.
    pub name: String,
    /// The route kinds the listener accepts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supported_kinds: Option<Vec<RouteGroupKind>>,
    /// How many routes are attached to it.
    pub attached_routes: i32,
    /// `Accepted`, `Programmed`, `ResolvedRefs`, `Conflicted`, … of the listener.
    pub conditions: Vec<Condition>,
}
