//! The Kubernetes objects the controller reads, as one value.

use cluster_state::gateway::{Gateway, GatewayClass, GrpcRoute, HttpRoute, ReferenceGrant};
use cluster_state::{Filter, Kind, Object, Reporter, Source, SourceArgs, SourceError, Status};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Objects of one kind by `namespace/name`, shared with the snapshot they came from.
pub type Map<T> = cluster_state::Objects<T>;

/// One consistent view of the objects an ingress controller needs, keyed as the source keys
/// them (`namespace/name`). The maps share their objects with the snapshot they came from.
#[derive(Clone, Debug, Default)]
pub struct Objects {
    /// IngressClasses (cluster-scoped).
    pub ingress_classes: Map<IngressClass>,
    /// Ingresses.
    pub ingresses: Map<Ingress>,
    /// Services, to resolve named ports.
    pub services: Map<Service>,
    /// EndpointSlices, for the backends' addresses.
    pub endpoint_slices: Map<EndpointSlice>,
    /// Secrets of type `kubernetes.io/tls` that Ingresses and Gateways reference.
    pub secrets: Map<Secret>,
    /// Namespaces, for `--watch-namespace-selector` and Gateway `allowedRoutes` selectors.
    pub namespaces: Map<Namespace>,
    /// GatewayClasses (cluster-scoped; empty when the Gateway API CRDs are not installed).
    pub gateway_classes: Map<GatewayClass>,
    /// Gateways.
    pub gateways: Map<Gateway>,
    /// HTTPRoutes.
    pub http_routes: Map<HttpRoute>,
    /// GRPCRoutes.
    pub grpc_routes: Map<GrpcRoute>,
    /// ReferenceGrants.
    pub reference_grants: Map<ReferenceGrant>,
    /// The ConfigMap of global settings (`--configmap`; read only with it).
    pub config_map: Option<ConfigMap>,
    /// When these objects were read, in seconds since the Unix epoch: certificates expired
    /// by then are refused (`None`: not checked).
    pub now: Option<i64>,
}

impl Objects {
    /// The objects of a cluster-state snapshot, read now (the clock is read here).
    pub fn from_snapshot(snapshot: &cluster_state::Snapshot) -> Self {
        Self {
            ingress_classes: snapshot.ingress_classes.clone(),
            ingresses: snapshot.ingresses.clone(),
            services: snapshot.services.clone(),
            endpoint_slices: snapshot.endpoint_slices.clone(),
            secrets: snapshot.secrets.clone(),
            namespaces: snapshot.namespaces.clone(),
            gateway_classes: snapshot.gateway_classes.clone(),
            gateways: snapshot.gateways.clone(),
            http_routes: snapshot.http_routes.clone(),
            grpc_routes: snapshot.grpc_routes.clone(),
            reference_grants: snapshot.reference_grants.clone(),
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
    /// manifest parser; an object replaces the one of the same kind and key, and kinds the
    /// controller does not use are skipped.
    ///
    /// # Errors
    ///
    /// The parser's message, with the line.
    pub fn add_yaml(&mut self, text: &str) -> Result<(), String> {
        let parsed = cluster_state::parse_manifest(std::path::Path::new("manifest"), text)
            .map_err(|e| e.to_string())?;
        for object in parsed {
            let key = object.key();
            match object {
                Object::Ingress(o) => _ = self.ingresses.insert(key, o),
                Object::IngressClass(o) => _ = self.ingress_classes.insert(key, o),
                Object::Service(o) => _ = self.services.insert(key, o),
                Object::EndpointSlice(o) => _ = self.endpoint_slices.insert(key, o),
                Object::Secret(o) => _ = self.secrets.insert(key, o),
                Object::Namespace(o) => _ = self.namespaces.insert(key, o),
                Object::GatewayClass(o) => _ = self.gateway_classes.insert(key, o),
                Object::Gateway(o) => _ = self.gateways.insert(key, o),
                Object::HttpRoute(o) => _ = self.http_routes.insert(key, o),
                Object::GrpcRoute(o) => _ = self.grpc_routes.insert(key, o),
                Object::ReferenceGrant(o) => _ = self.reference_grants.insert(key, o),
                Object::ConfigMap(o) => self.config_map = Some(ConfigMap::clone(&o)),
                _ => {}
            }
        }
        Ok(())
    }
}

/// The kinds the controller always watches: Ingress's, the Services and Secrets they name,
/// the Namespaces (for `--watch-namespace-selector` and the Gateway API's `allowedRoutes`
/// selectors), and the Gateway API's kinds, which are optional: where their CRDs are not
/// installed, the source says so once and watches for them to appear.
pub const KINDS: [Kind; 11] = [
    Kind::IngressClass,
    Kind::Ingress,
    Kind::Service,
    Kind::EndpointSlice,
    Kind::Secret,
    Kind::Namespace,
    Kind::GatewayClass,
    Kind::Gateway,
    Kind::HttpRoute,
    Kind::GrpcRoute,
    Kind::ReferenceGrant,
];

/// The kinds whose status the controller writes (`--update-status`).
pub const STATUS_KINDS: [Kind; 5] = Status::KINDS;

/// What the controller reads besides the [`KINDS`], as its flags ask.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extra {
    /// The ConfigMap of global settings (`--configmap`), `(namespace, name)`.
    pub config_map: Option<(String, String)>,
}

impl Extra {
    /// What the `--configmap` flag needs read.
    pub fn of(configmap: Option<crate::cli::NamespacedName>) -> Self {
        Self {
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
