//! The Kubernetes objects the controller reads, as one value.

use cluster_state::{Filter, Kind, Object, Reporter, Source, SourceArgs, SourceError};
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

impl Objects {
    /// The objects of a cluster-state snapshot.
    pub fn from_snapshot(snapshot: &cluster_state::Snapshot) -> Self {
        fn values<T: Clone>(map: &cluster_state::Objects<T>) -> Vec<T> {
            map.values().map(|object| T::clone(object)).collect()
        }
        Self {
            ingress_classes: values(&snapshot.ingress_classes),
            ingresses: values(&snapshot.ingresses),
            services: values(&snapshot.services),
            endpoint_slices: values(&snapshot.endpoint_slices),
            secrets: values(&snapshot.secrets),
        }
    }

    /// Adds the objects of a YAML manifest (several documents), read by cluster-state's
    /// manifest parser; kinds the controller does not use are skipped.
    ///
    /// # Errors
    ///
    /// The parser's message, with the line.
    pub fn add_yaml(&mut self, text: &str) -> Result<(), String> {
        let parsed = cluster_state::parse_manifest(std::path::Path::new("manifest"), text)
            .map_err(|e| e.to_string())?;
        for object in parsed {
            match object {
                Object::Ingress(o) => self.ingresses.push(Ingress::clone(&o)),
                Object::IngressClass(o) => self.ingress_classes.push(IngressClass::clone(&o)),
                Object::Service(o) => self.services.push(Service::clone(&o)),
                Object::EndpointSlice(o) => self.endpoint_slices.push(EndpointSlice::clone(&o)),
                Object::Secret(o) => self.secrets.push(Secret::clone(&o)),
                _ => {}
            }
        }
        Ok(())
    }
}

/// The kinds the controller watches.
pub const KINDS: [Kind; 5] = [
    Kind::IngressClass,
    Kind::Ingress,
    Kind::Service,
    Kind::EndpointSlice,
    Kind::Secret,
];

/// Starts the object source of `args` for what the controller reads: the [`KINDS`], and of the
/// Secrets only those of type `kubernetes.io/tls` (the API source lists and watches them with
/// the field selector `type=kubernetes.io/tls`). With a `reporter`, the objects it leaves out
/// as invalid are also recorded as events.
///
/// # Errors
///
/// The source's, when it cannot start.
pub async fn start(args: &SourceArgs, reporter: Option<Reporter>) -> Result<Source, SourceError> {
    args.start_reporting(&KINDS, Filter::TLS_SECRETS, reporter)
        .await
}

/// `namespace/name` of an object (just `name` when cluster-scoped).
pub fn key(meta: &ObjectMeta) -> String {
    let name = meta.name.as_deref().unwrap_or_default();
    match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}
