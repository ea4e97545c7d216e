//! Kubernetes objects (k8s-openapi) to `iptables-model`'s inputs. An invalid Service is an
//! error value naming what is wrong, for the caller to log and skip; an EndpointSlice address
//! the API server would refuse is dropped here, with a warning naming the slice and the address.

use iptables_model::kube::{
    Endpoint, EndpointPort, EndpointSlice, Protocol, Service, ServicePort, ServiceType,
    TrafficPolicy,
};
use std::net::IpAddr;
use std::time::SystemTime;

use iptables_model::addr::parse_ip_lenient;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::discovery::v1 as discovery;

/// The label tying an EndpointSlice to its Service.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// The EndpointSlice annotation saying when the change it reflects happened (RFC 3339).
pub const TRIGGER_TIME_ANNOTATION: &str = "endpoints.kubernetes.io/last-change-trigger-time";

/// kube-proxy's default ClientIP affinity timeout (3 hours).
const DEFAULT_AFFINITY_SECONDS: u32 = 10_800;

/// Why an object was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    /// `metadata.name` or `metadata.namespace` is missing.
    #[error("has no name or namespace")]
    Unnamed,
    /// A Service field holds a value kube-proxy would reject.
    #[error("{field}: {value:?} is not valid ({expected})")]
    Field {
        /// The field's path.
        field: String,
        /// The value found.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// An EndpointSlice has no `kubernetes.io/service-name` label.
    #[error("has no {SERVICE_NAME_LABEL} label")]
    NoServiceLabel,
}

fn field(field: impl Into<String>, value: impl ToString, expected: &'static str) -> Invalid {
    Invalid::Field {
        field: field.into(),
        value: value.to_string(),
        expected,
    }
}

fn protocol(text: Option<&str>, path: &str) -> Result<Protocol, Invalid> {
    match text.unwrap_or("TCP") {
        "TCP" => Ok(Protocol::Tcp),
        "UDP" => Ok(Protocol::Udp),
        "SCTP" => Ok(Protocol::Sctp),
        other => Err(field(path, other, "TCP, UDP or SCTP")),
    }
}

fn port(value: i32, path: &str, allow_zero: bool) -> Result<u16, Invalid> {
    match u16::try_from(value) {
        Ok(0) if allow_zero => Ok(0),
        Ok(p) if p > 0 => Ok(p),
        _ => Err(field(path, value, "a port between 1 and 65535")),
    }
}

fn traffic_policy(text: Option<&str>, path: &str) -> Result<TrafficPolicy, Invalid> {
    match text.unwrap_or("Cluster") {
        "Cluster" => Ok(TrafficPolicy::Cluster),
        "Local" => Ok(TrafficPolicy::Local),
        other => Err(field(path, other, "Cluster or Local")),
    }
}

/// The Service as the generator sees it, for a proxier of the IPv6 family when `ipv6`.
///
/// # Errors
///
/// [`Invalid`] when a field holds a value the API server would not have accepted.
pub fn service(object: &core::Service, ipv6: bool) -> Result<Service, Invalid> {
    let meta = &object.metadata;
    let (Some(namespace), Some(name)) = (&meta.namespace, &meta.name) else {
        return Err(Invalid::Unnamed);
    };
    let spec = object.spec.clone().unwrap_or_default();
    let service_type = match spec.type_.as_deref().unwrap_or("ClusterIP") {
        "ClusterIP" => ServiceType::ClusterIp,
        "NodePort" => ServiceType::NodePort,
        "LoadBalancer" => ServiceType::LoadBalancer,
        "ExternalName" => ServiceType::ExternalName,
        other => {
            return Err(field(
                "spec.type",
                other,
                "ClusterIP, NodePort, LoadBalancer or ExternalName",
            ));
        }
    };
    // Dual stack: the ClusterIP of this proxier's family, if the Service has one.
    let family = |ip: &&String| ip.contains(':') == ipv6;
    let cluster_ip = spec
        .cluster_ips
        .iter()
        .flatten()
        .find(family)
        .or(spec.cluster_ip.as_ref())
        .cloned()
        .unwrap_or_default();
    let ports = spec
        .ports
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, p)| {
            let path = |f: &str| format!("spec.ports[{i}].{f}");
            Ok(ServicePort {
                name: p.name.clone().unwrap_or_default(),
                port: port(p.port, &path("port"), false)?,
                protocol: protocol(p.protocol.as_deref(), &path("protocol"))?,
                node_port: port(p.node_port.unwrap_or(0), &path("nodePort"), true)?,
            })
        })
        .collect::<Result<Vec<_>, Invalid>>()?;
    let health_check_node_port = port(
        spec.health_check_node_port.unwrap_or(0),
        "spec.healthCheckNodePort",
        true,
    )?;
    let client_ip_affinity = match spec.session_affinity.as_deref().unwrap_or("None") {
        "None" => None,
        "ClientIP" => {
            let seconds = spec
                .session_affinity_config
                .and_then(|c| c.client_ip)
                .and_then(|c| c.timeout_seconds);
            Some(match seconds {
                None => DEFAULT_AFFINITY_SECONDS,
                Some(s) => u32::try_from(s)
                    .ok()
                    .filter(|s| (1..=86_400).contains(s))
                    .ok_or_else(|| {
                        field(
                            "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                            s,
                            "1 to 86400",
                        )
                    })?,
            })
        }
        other => return Err(field("spec.sessionAffinity", other, "None or ClientIP")),
    };
    let load_balancer_ips = object
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|ingress| ingress.ip.clone())
        .collect();
    Ok(Service {
        namespace: namespace.clone(),
        name: name.clone(),
        service_type,
        cluster_ip,
        ports,
        external_ips: spec.external_ips.unwrap_or_default(),
        load_balancer_ips,
        load_balancer_source_ranges: spec.load_balancer_source_ranges.unwrap_or_default(),
        external_traffic_policy: traffic_policy(
            spec.external_traffic_policy.as_deref(),
            "spec.externalTrafficPolicy",
        )?,
        internal_traffic_policy: traffic_policy(
            spec.internal_traffic_policy.as_deref(),
            "spec.internalTrafficPolicy",
        )?,
        health_check_node_port,
        client_ip_affinity,
    })
}

/// Why `text`, an address of an EndpointSlice of `address_type` (`IPv4` or `IPv6`), cannot be a
/// DNAT destination, or `None` when it can.
///
/// The API server's `ValidateEndpointIP` (`pkg/apis/core/validation`, used for EndpointSlice
/// addresses by `pkg/apis/discovery/validation`) refuses an address that does not parse (leading
/// zeros are accepted, as `ParseIPSloppy` does), the unspecified address, loopback
/// (127.0.0.0/8, ::1), link-local unicast (169.254.0.0/16, fe80::/10: the metadata service at
/// 169.254.169.254 among them) and link-local multicast; discovery validation also wants the
/// slice's family. Any multicast address is refused here, which the API server lets through
/// outside the link-local range: traffic cannot be forwarded to a group.
fn endpoint_address_problem(address_type: &str, text: &str) -> Option<&'static str> {
    let Some(ip) = parse_ip_lenient(text) else {
        return Some("not an IP address");
    };
    let family = match address_type {
        "IPv4" => ip.is_ipv4(),
        "IPv6" => ip.is_ipv6(),
        _ => true,
    };
    let link_local = match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.is_unicast_link_local(),
    };
    if !family {
        Some("not of the slice's addressType")
    } else if ip.is_unspecified() {
        Some("unspecified")
    } else if ip.is_loopback() {
        Some("loopback (127.0.0.0/8, ::1)")
    } else if link_local {
        Some("link-local (169.254.0.0/16, fe80::/10)")
    } else if ip.is_multicast() {
        Some("multicast")
    } else {
        None
    }
}

/// The EndpointSlice as the generator sees it. Ports with an invalid number or protocol are
/// dropped (kube-proxy ignores them too); so are addresses the API server would refuse
/// (`endpoint_address_problem`), each with a warning, and endpoints left with no address.
///
/// # Errors
///
/// [`Invalid`] when it has no namespace or no Service label.
pub fn endpoint_slice(object: &discovery::EndpointSlice) -> Result<EndpointSlice, Invalid> {
    let namespace = object.metadata.namespace.clone().ok_or(Invalid::Unnamed)?;
    let service = object
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(SERVICE_NAME_LABEL))
        .cloned()
        .ok_or(Invalid::NoServiceLabel)?;
    let ports = object
        .ports
        .iter()
        .flatten()
        .filter_map(|p| {
            Some(EndpointPort {
                name: p.name.clone().unwrap_or_default(),
                port: port(p.port?, "", false).ok()?,
                protocol: protocol(p.protocol.as_deref(), "").ok()?,
            })
        })
        .collect();
    let endpoints = if object.address_type == "FQDN" {
        Vec::new()
    } else {
        let slice = object.metadata.name.as_deref().unwrap_or("");
        object
            .endpoints
            .iter()
            .filter_map(|e| {
                let addresses: Vec<String> = e
                    .addresses
                    .iter()
                    .filter(|address| {
                        let problem = endpoint_address_problem(&object.address_type, address);
                        if let Some(problem) = problem {
                            tracing::warn!(
                                namespace = %namespace,
                                slice,
                                address = ?address,
                                problem,
                                "EndpointSlice address dropped"
                            );
                        }
                        problem.is_none()
                    })
                    .cloned()
                    .collect();
                if addresses.is_empty() {
                    return None;
                }
                let conditions = e.conditions.clone().unwrap_or_default();
                let hints = e.hints.as_ref();
                let zones = hints
                    .and_then(|h| h.for_zones.as_deref())
                    .unwrap_or_default();
                let nodes = hints
                    .and_then(|h| h.for_nodes.as_deref())
                    .unwrap_or_default();
                Some(Endpoint {
                    addresses,
                    node_name: e.node_name.clone(),
                    ready: conditions.ready,
                    serving: conditions.serving,
                    terminating: conditions.terminating,
                    zone_hints: zones.iter().map(|zone| zone.name.clone()).collect(),
                    node_hints: nodes.iter().map(|node| node.name.clone()).collect(),
                })
            })
            .collect()
    };
    Ok(EndpointSlice {
        namespace,
        service,
        ports,
        endpoints,
    })
}

/// When the change an EndpointSlice reflects was triggered (its
/// [`TRIGGER_TIME_ANNOTATION`]); `None` when absent or not RFC 3339, as kube-proxy skips it.
pub fn trigger_time(object: &discovery::EndpointSlice) -> Option<SystemTime> {
    let text = object
        .metadata
        .annotations
        .as_ref()?
        .get(TRIGGER_TIME_ANNOTATION)?;
    let timestamp: jiff::Timestamp = text.parse().ok()?;
    Some(timestamp.into())
}

/// The endpoints of `slices` on node `hostname` that are ready: what a health-check node port
/// reports as `localEndpoints` (counted once per address).
pub fn local_endpoints(slices: &[EndpointSlice], hostname: &str) -> usize {
    let mut addresses: Vec<&str> = slices
        .iter()
        .flat_map(|s| &s.endpoints)
        .filter(|e| e.node_name.as_deref() == Some(hostname) && e.ready.unwrap_or(true))
        .filter_map(|e| e.addresses.first().map(String::as_str))
        .collect();
    addresses.sort_unstable();
    addresses.dedup();
    addresses.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml<T: serde::de::DeserializeOwned>(text: &str) -> T {
        serde_saphyr::from_str(text).unwrap()
    }

    #[test]
    fn a_load_balancer_service_keeps_every_field_the_generator_reads() {
        let object: core::Service = yaml(
            "metadata: {namespace: ns, name: web}
spec:
  type: LoadBalancer
  clusterIP: 172.30.0.10
  clusterIPs: [172.30.0.10, 'fd00::10']
  externalIPs: [192.168.99.1]
  loadBalancerSourceRanges: [203.0.113.0/25]
  externalTrafficPolicy: Local
  healthCheckNodePort: 30999
  sessionAffinity: ClientIP
  ports: [{name: http, port: 80, protocol: TCP, nodePort: 30080}, {port: 53, protocol: UDP}]
status: {loadBalancer: {ingress: [{ip: 1.2.3.4}, {hostname: lb.example}]}}
",
        );
        let v4 = service(&object, false).unwrap();
        assert_eq!(v4.service_type, ServiceType::LoadBalancer);
        assert_eq!(v4.cluster_ip, "172.30.0.10");
        assert_eq!(v4.ports.len(), 2);
        assert_eq!(v4.ports[0].node_port, 30080);
        assert_eq!(v4.ports[1].protocol, Protocol::Udp);
        assert_eq!(v4.load_balancer_ips, ["1.2.3.4"]);
        assert_eq!(v4.external_traffic_policy, TrafficPolicy::Local);
        assert_eq!(v4.health_check_node_port, 30999);
        assert_eq!(v4.client_ip_affinity, Some(10_800));
        assert_eq!(service(&object, true).unwrap().cluster_ip, "fd00::10");
    }

    #[test]
    fn invalid_services_say_which_field_is_wrong() {
        let bad_port: core::Service =
            yaml("metadata: {namespace: ns, name: s}\nspec: {ports: [{port: 70000}]}\n");
        assert_eq!(
            service(&bad_port, false).unwrap_err().to_string(),
            "spec.ports[0].port: \"70000\" is not valid (a port between 1 and 65535)"
        );
        let bad_protocol: core::Service = yaml(
            "metadata: {namespace: ns, name: s}\nspec: {ports: [{port: 80, protocol: ICMP}]}\n",
        );
        assert!(
            service(&bad_protocol, false)
                .unwrap_err()
                .to_string()
                .contains("spec.ports[0].protocol")
        );
        let unnamed: core::Service = yaml("spec: {}\n");
        assert_eq!(service(&unnamed, false), Err(Invalid::Unnamed));
    }

    #[test]
    fn slices_need_their_service_label_and_count_local_ready_endpoints() {
        let slice: discovery::EndpointSlice = yaml(
            "metadata: {namespace: ns, name: web-1, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
- {addresses: [10.0.0.1], nodeName: node-a}
- {addresses: [10.0.0.2], nodeName: node-a, conditions: {ready: false}}
- {addresses: [10.0.0.3], nodeName: node-b}
",
        );
        let model = endpoint_slice(&slice).unwrap();
        assert_eq!(model.service, "web");
        assert_eq!(model.ports[0].port, 8080);
        assert_eq!(local_endpoints(std::slice::from_ref(&model), "node-a"), 1);
        assert_eq!(local_endpoints(&[model], "node-c"), 0);
        let unlabelled: discovery::EndpointSlice =
            yaml("metadata: {namespace: ns, name: x}\naddressType: IPv4\nendpoints: []\n");
        assert_eq!(endpoint_slice(&unlabelled), Err(Invalid::NoServiceLabel));
    }

    #[test]
    fn topology_hints_reach_the_model() {
        let slice: discovery::EndpointSlice = yaml(
            "metadata: {namespace: ns, name: web-1, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints:
- addresses: [10.0.0.1]
  hints: {forZones: [{name: zone-a}, {name: zone-b}], forNodes: [{name: node-a}]}
- {addresses: [10.0.0.2]}
",
        );
        let model = endpoint_slice(&slice).unwrap();
        assert_eq!(model.endpoints[0].zone_hints, ["zone-a", "zone-b"]);
        assert_eq!(model.endpoints[0].node_hints, ["node-a"]);
        assert!(model.endpoints[1].zone_hints.is_empty());
        assert!(model.endpoints[1].node_hints.is_empty());
    }

    /// The warnings logged while `run` runs, as text.
    fn warnings(run: impl FnOnce()) -> String {
        #[derive(Clone, Default)]
        struct Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl std::io::Write for Buffer {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, run);
        String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn addresses_the_api_server_refuses_are_dropped_with_a_warning() {
        let refused = [
            ("not-an-ip", "not an IP address"),
            ("0.0.0.0", "unspecified"),
            ("127.0.0.1", "loopback"),
            ("169.254.169.254", "link-local"),
            ("224.0.0.1", "multicast"),
            ("239.1.2.3", "multicast"),
            ("fd00::1", "addressType"),
        ];
        for (address, problem) in refused {
            let slice: discovery::EndpointSlice = yaml(&format!(
                "metadata: {{namespace: ns, name: web-1, labels: {{kubernetes.io/service-name: web}}}}
addressType: IPv4
endpoints:
- {{addresses: ['{address}']}}
- {{addresses: [10.0.0.1]}}
"
            ));
            let mut model = None;
            let logged = warnings(|| model = Some(endpoint_slice(&slice).unwrap()));
            let model = model.unwrap();
            // The endpoint with no address left is gone; the valid one stays.
            assert_eq!(model.endpoints.len(), 1, "{address}");
            assert_eq!(model.endpoints[0].addresses, ["10.0.0.1"]);
            assert!(logged.contains("EndpointSlice address dropped"), "{logged}");
            assert!(logged.contains("web-1"), "{logged}");
            assert!(logged.contains(&format!("{address:?}")), "{logged}");
            assert!(logged.contains(problem), "{address}: {logged}");
        }
        let v6: discovery::EndpointSlice = yaml(
            "metadata: {namespace: ns, name: web-6, labels: {kubernetes.io/service-name: web}}
addressType: IPv6
endpoints:
- {addresses: ['::', '::1', 'fe80::1', 'ff02::1', 'fd00::5']}
",
        );
        let logged = warnings(|| {
            let model = endpoint_slice(&v6).unwrap();
            assert_eq!(model.endpoints[0].addresses, ["fd00::5"]);
        });
        for problem in ["unspecified", "loopback", "link-local", "multicast"] {
            assert!(logged.contains(problem), "{problem}: {logged}");
        }
        // Valid addresses, leading zeros included (as ParseIPSloppy reads them), log nothing.
        let fine: discovery::EndpointSlice = yaml(
            "metadata: {namespace: ns, name: web-2, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints:
- {addresses: [10.0.0.7, 192.168.001.2]}
",
        );
        assert_eq!(warnings(|| drop(endpoint_slice(&fine).unwrap())), "");
    }

    #[test]
    fn trigger_times_are_rfc3339_annotations() {
        let slice: discovery::EndpointSlice = yaml(
            "metadata: {namespace: ns, name: web-1, annotations: {endpoints.kubernetes.io/last-change-trigger-time: '2026-11-30T11:00:00.5+01:00'}}\naddressType: IPv4\nendpoints: []\n",
        );
        let expected = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_796_032_800_500);
        assert_eq!(trigger_time(&slice), Some(expected));
        let bad: discovery::EndpointSlice = yaml(
            "metadata: {namespace: ns, name: web-1, annotations: {endpoints.kubernetes.io/last-change-trigger-time: yesterday}}\naddressType: IPv4\nendpoints: []\n",
        );
        assert_eq!(trigger_time(&bad), None);
    }
}
