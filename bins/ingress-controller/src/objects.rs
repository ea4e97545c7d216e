//! The Kubernetes objects the controller reads, as one value.

use k8s_openapi::api::core::v1::{Secret, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// One consistent view of the objects an ingress controller needs.
#[derive(Clone, Debug, Default)]
pub struct Objects {
    /// IngressClasses (cluster-scoped).
    pub ingress_classes: Vec<IngressClass>,
    /// Ingresses.
    pub ingresses: Vec<Ingress>,
    /// Services, to resolve named ports.
    pub services: Vec<Service>,
    /// EndpointSlices, for the backends' addresses.
    pub endpoint_slices: Vec<EndpointSlice>,
    /// Secrets of type `kubernetes.io/tls` that Ingresses reference.
    pub secrets: Vec<Secret>,
}

/// `namespace/name` of an object (just `name` when cluster-scoped).
pub fn key(meta: &ObjectMeta) -> String {
    let name = meta.name.as_deref().unwrap_or_default();
    match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}
