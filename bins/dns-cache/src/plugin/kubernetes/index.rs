//! The objects the plugin answers from, reduced to what names need and indexed the ways
//! CoreDNS's controller indexes them (`plugin/kubernetes/controller.go` and `object/`):
//! Services by `name.namespace`, the ready addresses of EndpointSlices by the Service they
//! belong to (`kubernetes.io/service-name`), both by IP address for PTR names, and (for
//! `pods verified`) the namespaces of the pods by address. Built whole from each snapshot,
//! then shared read-only by every query.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use cluster_state::{LabelSelector, Snapshot};
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;

/// The label naming an EndpointSlice's Service.
const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// How a Service is answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ServiceKind {
    /// Its cluster IPs (both families of a dual-stack Service).
    ClusterIp(Vec<IpAddr>),
    /// `clusterIP: None`: its ready endpoints.
    Headless,
    /// `type: ExternalName`: a CNAME to this name.
    ExternalName(String),
}

/// A port of a Service or an EndpointSlice; `-1` when the object has none (CoreDNS's
/// sentinel: such an entry answers A and AAAA but makes no SRV record).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Port {
    /// The port's name.
    pub name: String,
    /// `TCP`, `UDP` or `SCTP`.
    pub protocol: String,
    /// The number.
    pub port: i32,
}

/// A Service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ServiceEntry {
    /// Its name.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// How it is answered.
    pub kind: ServiceKind,
    /// Its ports (at least the sentinel).
    pub ports: Vec<Port>,
}

/// A ready address of an EndpointSlice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Address {
    /// The address.
    pub ip: IpAddr,
    /// Its label in `LABEL.service.namespace.svc.ZONE`: the endpoint's hostname, else (with
    /// `endpoint_pod_names`) its pod's name, else the dashed address.
    pub label: String,
}

/// The ready addresses and the ports of one EndpointSlice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Slice {
    /// Ready addresses.
    pub addresses: Vec<Address>,
    /// Ports (at least the sentinel).
    pub ports: Vec<Port>,
}

/// What the index keeps of the configuration.
#[derive(Clone, Debug, Default)]
pub(super) struct Selection {
    /// `labels`.
    pub labels: Option<LabelSelector>,
    /// `namespace_labels`.
    pub namespace_labels: Option<LabelSelector>,
    /// Not `noendpoints`.
    pub endpoints: bool,
    /// `endpoint_pod_names`.
    pub endpoint_pod_names: bool,
    /// `pods verified`: Pods are read.
    pub pods: bool,
}

/// Every object the plugin answers from.
#[derive(Debug, Default)]
pub(super) struct Index {
    /// Services by `name.namespace`.
    services: HashMap<String, ServiceEntry>,
    /// Slices by their Service's `name.namespace`.
    endpoints: HashMap<String, Vec<Slice>>,
    /// The namespaces that exist (and match `namespace_labels`).
    namespaces: HashSet<String>,
    /// Services by cluster IP, as `name.namespace`.
    by_cluster_ip: HashMap<IpAddr, Vec<String>>,
    /// Ready endpoints by address: the address's label, the Service's `name.namespace`
    /// and its namespace.
    by_endpoint_ip: HashMap<IpAddr, Vec<(String, String, String)>>,
    /// The namespaces of the running pods with each `status.podIP`.
    pods: HashMap<IpAddr, Vec<String>>,
    /// When the objects last changed, in seconds since 1970 (the SOA serial).
    pub serial: u32,
}

/// `name.namespace`, the key CoreDNS's indexes use.
pub(super) fn key(name: &str, namespace: &str) -> String {
    format!("{name}.{namespace}")
}

impl Index {
    /// The index of `snapshot`'s objects that `selection` keeps.
    pub(super) fn build(snapshot: &Snapshot, selection: &Selection) -> Self {
        let mut index = Index {
            serial: unix_now(),
            ..Index::default()
        };
        for (key, namespace) in &snapshot.namespaces {
            let labels = namespace.metadata.labels.as_ref();
            if selection
                .namespace_labels
                .as_ref()
                .is_none_or(|s| s.matches(labels))
            {
                index.namespaces.insert(key.name.clone());
            }
        }
        let selected = |labels| {
            selection
                .labels
                .as_ref()
                .is_none_or(|s: &LabelSelector| s.matches(labels))
        };
        for (key, service) in &snapshot.services {
            if !selected(service.metadata.labels.as_ref()) {
                continue;
            }
            let entry = service_entry(&key.name, &key.namespace, service);
            let service_key = self::key(&key.name, &key.namespace);
            if let ServiceKind::ClusterIp(ips) = &entry.kind {
                for ip in ips {
                    let owners = index.by_cluster_ip.entry(*ip).or_default();
                    owners.push(service_key.clone());
                }
            }
            index.services.insert(service_key, entry);
        }
        if selection.pods {
            for (key, pod) in &snapshot.pods {
                if !selected(pod.metadata.labels.as_ref()) {
                    continue;
                }
                if let Some(ip) = running_pod_ip(pod) {
                    index
                        .pods
                        .entry(ip)
                        .or_default()
                        .push(key.namespace.clone());
                }
            }
        }
        if selection.endpoints {
            for (key, slice) in &snapshot.endpoint_slices {
                if !selected(slice.metadata.labels.as_ref()) {
                    continue;
                }
                let labels = slice.metadata.labels.as_ref();
                let Some(service) = labels.and_then(|l| l.get(SERVICE_NAME_LABEL)) else {
                    continue;
                };
                let service_key = self::key(service, &key.namespace);
                let slice = ready_slice(slice, selection.endpoint_pod_names);
                for address in &slice.addresses {
                    let owners = index.by_endpoint_ip.entry(address.ip).or_default();
                    owners.push((
                        address.label.clone(),
                        service_key.clone(),
                        key.namespace.clone(),
                    ));
                }
                index.endpoints.entry(service_key).or_default().push(slice);
            }
        }
        index
    }

    /// The Service `name.namespace`.
    pub(super) fn service(&self, key: &str) -> Option<&ServiceEntry> {
        self.services.get(key)
    }

    /// The slices of the Service `name.namespace`.
    pub(super) fn slices(&self, key: &str) -> &[Slice] {
        self.endpoints.get(key).map_or(&[], Vec::as_slice)
    }

    /// Whether the namespace exists (and matches `namespace_labels`).
    pub(super) fn has_namespace(&self, name: &str) -> bool {
        self.namespaces.contains(name)
    }

    /// The Services (`name.namespace`) with this cluster IP.
    pub(super) fn services_with_ip(&self, ip: IpAddr) -> &[String] {
        self.by_cluster_ip.get(&ip).map_or(&[], Vec::as_slice)
    }

    /// The ready endpoints with this address: label, Service key, namespace.
    pub(super) fn endpoints_with_ip(&self, ip: IpAddr) -> &[(String, String, String)] {
        self.by_endpoint_ip.get(&ip).map_or(&[], Vec::as_slice)
    }

    /// Whether a pod of `namespace` has the address `ip`.
    pub(super) fn has_pod(&self, ip: IpAddr, namespace: &str) -> bool {
        self.pods
            .get(&ip)
            .is_some_and(|namespaces| namespaces.iter().any(|n| n == namespace))
    }

    /// How many Services, slices and ready addresses the index holds.
    pub(super) fn counts(&self) -> (usize, usize, usize) {
        let slices = self.endpoints.values().map(Vec::len).sum();
        let addresses = self.by_endpoint_ip.values().map(Vec::len).sum();
        (self.services.len(), slices, addresses)
    }
}

/// The address of a pod CoreDNS keeps: `status.podIP`, for pods not terminating (no
/// `deletionTimestamp`) and not `Succeeded`, `Failed` or `Unknown` (the field selector of
/// its pod watch).
fn running_pod_ip(pod: &Pod) -> Option<IpAddr> {
    if pod.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let status = pod.status.as_ref()?;
    let phase = status.phase.as_deref().unwrap_or_default();
    if matches!(phase, "Succeeded" | "Failed" | "Unknown") {
        return None;
    }
    status.pod_ip.as_deref()?.parse().ok()
}

fn unix_now() -> u32 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    u32::try_from(secs).unwrap_or(u32::MAX)
}

/// A Service as CoreDNS's `object.ToService` reduces it.
fn service_entry(name: &str, namespace: &str, service: &Service) -> ServiceEntry {
    let spec = service.spec.as_ref();
    let kind = match spec {
        Some(spec) if spec.type_.as_deref() == Some("ExternalName") => {
            ServiceKind::ExternalName(spec.external_name.clone().unwrap_or_default())
        }
        Some(spec) => {
            let ips: Vec<&String> = match &spec.cluster_ips {
                Some(ips) if !ips.is_empty() => ips.iter().collect(),
                _ => spec.cluster_ip.iter().collect(),
            };
            if ips.first().is_some_and(|ip| *ip == "None") {
                ServiceKind::Headless
            } else {
                ServiceKind::ClusterIp(ips.iter().filter_map(|ip| ip.parse().ok()).collect())
            }
        }
        None => ServiceKind::ClusterIp(Vec::new()),
    };
    let ports = spec
        .and_then(|s| s.ports.as_ref())
        .map_or_else(Vec::new, |ports| {
            ports
                .iter()
                .map(|p| Port {
                    name: p.name.clone().unwrap_or_default(),
                    protocol: p.protocol.clone().unwrap_or_else(|| "TCP".to_owned()),
                    port: p.port,
                })
                .collect()
        });
    ServiceEntry {
        name: name.to_owned(),
        namespace: namespace.to_owned(),
        kind,
        ports: with_sentinel(ports),
    }
}

fn with_sentinel(ports: Vec<Port>) -> Vec<Port> {
    if ports.is_empty() {
        vec![Port {
            name: String::new(),
            protocol: String::new(),
            port: -1,
        }]
    } else {
        ports
    }
}

/// The ready addresses of a slice (`conditions.ready` absent or true, as CoreDNS's
/// `endpointSliceToEndpoints`) and its ports.
fn ready_slice(slice: &EndpointSlice, pod_names: bool) -> Slice {
    let ports = slice.ports.as_ref().map_or_else(Vec::new, |ports| {
        ports
            .iter()
            .map(|p| Port {
                name: p.name.clone().unwrap_or_default(),
                protocol: p.protocol.clone().unwrap_or_default(),
                port: p.port.unwrap_or(-1),
            })
            .collect()
    });
    let mut addresses = Vec::new();
    for endpoint in &slice.endpoints {
        let ready = endpoint.conditions.as_ref().and_then(|c| c.ready);
        if ready == Some(false) {
            continue;
        }
        let pod = endpoint
            .target_ref
            .as_ref()
            .and_then(|t| t.name.as_deref())
            .filter(|name| name.len() < 64);
        for text in &endpoint.addresses {
            let Ok(ip) = text.parse::<IpAddr>() else {
                continue;
            };
            let label = match (&endpoint.hostname, pod) {
                (Some(hostname), _) if !hostname.is_empty() => hostname.clone(),
                (_, Some(pod)) if pod_names => pod.to_owned(),
                _ => dashed(text),
            };
            addresses.push(Address { ip, label });
        }
    }
    Slice {
        addresses,
        ports: with_sentinel(ports),
    }
}

/// The dashed form of an address (`10-0-0-1`, `fd00--1`; a trailing `-` gets a `0`).
pub(super) fn dashed(ip: &str) -> String {
    if ip.contains('.') {
        return ip.replace('.', "-");
    }
    let mut label = ip.replace(':', "-");
    if label.ends_with('-') {
        label.push('0');
    }
    label
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashed_addresses_as_coredns() {
        assert_eq!(dashed("172.0.0.2"), "172-0-0-2");
        assert_eq!(dashed("5678:abcd::1"), "5678-abcd--1");
        assert_eq!(dashed("fd00::"), "fd00--0");
    }
}
