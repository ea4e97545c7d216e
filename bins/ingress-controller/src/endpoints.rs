//! Backends: a Service port of an Ingress, named `namespace/service:port`, and its ready
//! endpoint addresses from the Service's EndpointSlices.

use std::collections::BTreeMap;
use std::net::IpAddr;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::IngressServiceBackend;

use crate::hosts::is_dns_name;
use crate::objects::Map;

/// The label that ties an EndpointSlice to its Service.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// Looks Services and EndpointSlices up by `(namespace, name)`.
#[derive(Debug, Default)]
pub struct Index<'a> {
    services: BTreeMap<(&'a str, &'a str), &'a Service>,
    slices: BTreeMap<(&'a str, &'a str), Vec<&'a EndpointSlice>>,
}

impl<'a> Index<'a> {
    /// Indexes `services` and `slices`.
    pub fn new(services: &'a Map<Service>, slices: &'a Map<EndpointSlice>) -> Self {
        let mut index = Self::default();
        for service in services.values() {
            let meta = &service.metadata;
            if let (Some(ns), Some(name)) = (meta.namespace.as_deref(), meta.name.as_deref()) {
                index.services.insert((ns, name), service);
            }
        }
        for slice in slices.values() {
            let meta = &slice.metadata;
            let service = meta.labels.as_ref().and_then(|l| l.get(SERVICE_NAME_LABEL));
            if let (Some(ns), Some(service)) = (meta.namespace.as_deref(), service) {
                index
                    .slices
                    .entry((ns, service.as_str()))
                    .or_default()
                    .push(slice);
            }
        }
        index
    }

    /// The backend for `backend` in `namespace`: its name and ready endpoints (empty when the
    /// Service or its endpoints are missing; requests then get 503 until they appear).
    ///
    /// # Errors
    ///
    /// A message when the reference cannot name a backend (invalid names, no port).
    pub fn resolve(
        &self,
        namespace: &str,
        backend: &IngressServiceBackend,
    ) -> Result<(String, Vec<String>), String> {
        let service = backend.name.as_str();
        if !is_dns_name(namespace) || !is_dns_name(service) || service.contains('.') {
            return Err(format!(
                "service {service:?} in namespace {namespace:?} is not a valid name"
            ));
        }
        let port = backend.port.as_ref();
        let (number, port_name) = (
            port.and_then(|p| p.number),
            port.and_then(|p| p.name.as_deref()),
        );
        let port_spelling = match (number, port_name) {
            (Some(n), None) if (1..=65535).contains(&n) => n.to_string(),
            (None, Some(name)) if is_dns_name(name) && !name.contains('.') && name.len() <= 15 => {
                name.to_owned()
            }
            _ => {
                return Err(format!(
                    "service {namespace}/{service} needs exactly one valid port number or name"
                ));
            }
        };
        let name = format!("{namespace}/{service}:{port_spelling}");
        let Some(spec) = self
            .services
            .get(&(namespace, service))
            .and_then(|s| s.spec.as_ref())
        else {
            return Ok((name, Vec::new()));
        };
        // The Service port the Ingress names, and the name EndpointSlices know it by.
        let service_port = spec
            .ports
            .iter()
            .flatten()
            .find(|p| match (number, port_name) {
                (Some(n), _) => p.port == n,
                (_, Some(wanted)) => p.name.as_deref() == Some(wanted),
                _ => false,
            });
        let Some(service_port) = service_port else {
            return Ok((name, Vec::new()));
        };
        let slice_port_name = service_port.name.as_deref().unwrap_or_default();
        let mut endpoints = Vec::new();
        for slice in self.slices.get(&(namespace, service)).into_iter().flatten() {
            let target = slice.ports.iter().flatten().find_map(|p| {
                (p.name.as_deref().unwrap_or_default() == slice_port_name)
                    .then_some(p.port)
                    .flatten()
            });
            let Some(target) = target.filter(|p| (1..=65535).contains(p)) else {
                continue;
            };
            for endpoint in &slice.endpoints {
                let ready = endpoint.conditions.as_ref().and_then(|c| c.ready);
                if ready == Some(false) {
                    continue;
                }
                for address in &endpoint.addresses {
                    match address.parse::<IpAddr>() {
                        Ok(IpAddr::V4(ip)) => endpoints.push(format!("{ip}:{target}")),
                        Ok(IpAddr::V6(ip)) => endpoints.push(format!("[{ip}]:{target}")),
                        Err(_) => {}
                    }
                }
            }
        }
        endpoints.sort();
        endpoints.dedup();
        Ok((name, endpoints))
    }
}
