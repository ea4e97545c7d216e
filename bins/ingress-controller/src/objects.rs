//! The Kubernetes objects the controller reads, as one value.

use cluster_state::{Filter, Kind, Object, Reporter, Source, SourceArgs, SourceError};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, Service};
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
    /// Namespaces, for `--watch-namespace-selector` (read only with it).
    pub namespaces: Vec<Namespace>,
    /// The ConfigMap of global settings (`--configmap`; read only with it).
    pub config_map: Option<ConfigMap>,
    /// When these objects were read, in seconds since the Unix epoch: certificates expired
    /// by then are refused (`None`: not checked).
    pub now: Option<i64>,
}

impl Objects {
    /// The objects of a cluster-state snapshot, read now (the clock is read here).
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
            namespaces: values(&snapshot.namespaces),
            // The source keeps the one ConfigMap named (Filter::only_config_map).
            config_map: snapshot
                .config_maps
                .values()
                .next()
                .map(|c| ConfigMap::clone(c)),
            now: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .and_then(|d| i64::try_from(d.as_secs()).ok()),
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
                Object::Namespace(o) => self.namespaces.push(Namespace::clone(&o)),
                Object::ConfigMap(o) => self.config_map = Some(ConfigMap::clone(&o)),
                _ => {}
            }
        }
        Ok(())
    }
}

/// The kinds the controller always watches.
pub const KINDS: [Kind; 5] = [
    Kind::IngressClass,
    Kind::Ingress,
    Kind::Service,
    Kind::EndpointSlice,
    Kind::Secret,
];

/// What the controller reads besides the [`KINDS`], as its flags ask.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extra {
    /// Namespaces (`--watch-namespace-selector`).
    pub namespaces: bool,
    /// The ConfigMap of global settings (`--configmap`), `(namespace, name)`.
    pub config_map: Option<(String, String)>,
}

impl Extra {
    /// What `selection` and the `--configmap` flag need read.
    pub fn of(
        selection: &crate::class::Selection,
        configmap: Option<crate::cli::NamespacedName>,
    ) -> Self {
        Self {
            namespaces: selection.namespace_selector.is_some(),
            config_map: configmap.map(|c| (c.namespace, c.name)),
        }
    }
}

/// Starts the object source of `args` for what the controller reads: the [`KINDS`] and the
/// `extra` ones; of the Secrets only those of type `kubernetes.io/tls`, and of the
/// ConfigMaps only the one named (the API source lists and watches them with field
/// selectors). With a `reporter`, the objects it leaves out as invalid are also recorded as
/// events.
///
/// # Errors
///
/// The source's, when it cannot start.
pub async fn start(
    args: &SourceArgs,
    extra: &Extra,
    reporter: Option<Reporter>,
) -> Result<Source, SourceError> {
    let mut kinds = KINDS.to_vec();
    let mut filter = Filter::TLS_SECRETS;
    if extra.namespaces {
        kinds.push(Kind::Namespace);
    }
    if let Some((namespace, name)) = &extra.config_map {
        kinds.push(Kind::ConfigMap);
        // Leaked once per process, as cluster-state's Filter asks of names known at run time.
        let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
        filter = filter.only_config_map(leak(namespace), leak(name));
    }
    args.start_reporting(&kinds, filter, reporter).await
}

/// `namespace/name` of an object (just `name` when cluster-scoped).
pub fn key(meta: &ObjectMeta) -> String {
    let name = meta.name.as_deref().unwrap_or_default();
    match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}
