//! Ingress `status.loadBalancer`: the addresses to publish, as ingress-nginx computes them
//! (`runningAddresses` and `statusAddressFromService` in `internal/ingress/status/status.go`),
//! written through cluster-state's source by the elected leader.

use std::net::IpAddr;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{IngressLoadBalancerIngress, IngressLoadBalancerStatus};

use cluster_state::ObjectRef;

use crate::cli::NamespacedName;
use crate::objects::Map;

/// Where the published addresses come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Publish {
    /// `--publish-status-address`: these addresses (IPs or host names).
    Addresses(Vec<String>),
    /// `--publish-service`: the addresses of this Service.
    Service(NamespacedName),
    /// Neither flag: nothing is published (ingress-nginx would publish the addresses of the
    /// nodes its pods run on; not implemented, said at start-up).
    Nothing,
}

impl Publish {
    /// The status to publish, given the cluster's `services`, sorted as ingress-nginx sorts
    /// it (by host name, then IP); `None` when there is nothing to publish yet (no flag, or the
    /// Service is missing or has no address).
    pub fn status(&self, services: &Map<Service>) -> Option<IngressLoadBalancerStatus> {
        let mut ingress = match self {
            Publish::Addresses(addresses) => addresses.iter().map(|a| entry(a)).collect(),
            Publish::Service(name) => services
                .get(&ObjectRef::new(&name.namespace, &name.name))
                .map(|s| service_addresses(s))
                .unwrap_or_default(),
            Publish::Nothing => Vec::new(),
        };
        if ingress.is_empty() {
            return None;
        }
        sort(&mut ingress);
        Some(IngressLoadBalancerStatus {
            ingress: Some(ingress),
        })
    }
}

/// An address as `ip` when it is one, else as `hostname`.
fn entry(address: &str) -> IngressLoadBalancerIngress {
    if address.parse::<IpAddr>().is_ok() {
        IngressLoadBalancerIngress {
            ip: Some(address.to_owned()),
            ..IngressLoadBalancerIngress::default()
        }
    } else {
        IngressLoadBalancerIngress {
            hostname: Some(address.to_owned()),
            ..IngressLoadBalancerIngress::default()
        }
    }
}

/// ingress-nginx's `statusAddressFromService`: an ExternalName Service's name; a ClusterIP
/// Service's cluster IP; a NodePort Service's external IPs, else its cluster IP; a
/// LoadBalancer Service's load-balancer ingress, then its external IPs not already there.
fn service_addresses(service: &Service) -> Vec<IngressLoadBalancerIngress> {
    let Some(spec) = &service.spec else {
        return Vec::new();
    };
    let cluster_ip = || {
        spec.cluster_ip
            .iter()
            .filter(|ip| !ip.is_empty())
            .map(|ip| entry(ip))
            .collect()
    };
    let external_ips = spec.external_ips.as_deref().unwrap_or_default();
    match spec.type_.as_deref().unwrap_or("ClusterIP") {
        "ExternalName" => spec
            .external_name
            .iter()
            .map(|name| IngressLoadBalancerIngress {
                hostname: Some(name.clone()),
                ..IngressLoadBalancerIngress::default()
            })
            .collect(),
        "NodePort" if !external_ips.is_empty() => external_ips.iter().map(|ip| entry(ip)).collect(),
        "ClusterIP" | "NodePort" => cluster_ip(),
        "LoadBalancer" => {
            let mut out: Vec<IngressLoadBalancerIngress> = service
                .status
                .as_ref()
                .and_then(|s| s.load_balancer.as_ref())
                .and_then(|lb| lb.ingress.as_ref())
                .into_iter()
                .flatten()
                .map(|lb| IngressLoadBalancerIngress {
                    ip: lb.ip.clone().filter(|ip| !ip.is_empty()),
                    hostname: lb.hostname.clone().filter(|h| !h.is_empty()),
                    ..IngressLoadBalancerIngress::default()
                })
                .collect();
            for ip in external_ips {
                let known = out.iter().any(|e| {
                    e.ip.as_deref() == Some(ip.as_str())
                        || e.hostname.as_deref() == Some(ip.as_str())
                });
                if !known {
                    out.push(entry(ip));
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// ingress-nginx's order: by host name, then by IP.
fn sort(ingress: &mut [IngressLoadBalancerIngress]) {
    ingress.sort_by(|a, b| {
        (
            a.hostname.as_deref().unwrap_or_default(),
            a.ip.as_deref().unwrap_or_default(),
        )
            .cmp(&(
                b.hostname.as_deref().unwrap_or_default(),
                b.ip.as_deref().unwrap_or_default(),
            ))
    });
}

/// Whether the status an Ingress holds is `wanted`, as ingress-nginx compares them: the
/// same host names and IPs in its order (ports and errors are not compared).
pub fn holds(held: Option<&IngressLoadBalancerStatus>, wanted: &IngressLoadBalancerStatus) -> bool {
    let pairs = |status: Option<&IngressLoadBalancerStatus>| {
        let mut list: Vec<IngressLoadBalancerIngress> =
            status.and_then(|s| s.ingress.clone()).unwrap_or_default();
        sort(&mut list);
        list.into_iter()
            .map(|e| (e.hostname.unwrap_or_default(), e.ip.unwrap_or_default()))
            .collect::<Vec<_>>()
    };
    pairs(held) == pairs(Some(wanted))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{
        LoadBalancerIngress, LoadBalancerStatus, ServiceSpec, ServiceStatus,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn service(
        type_: &str,
        cluster_ip: &str,
        external_ips: &[&str],
        lb: &[(&str, &str)],
    ) -> Service {
        Service {
            metadata: ObjectMeta {
                namespace: Some("ingress-nginx".into()),
                name: Some("ingress-nginx-controller".into()),
                ..ObjectMeta::default()
            },
            spec: Some(ServiceSpec {
                type_: Some(type_.into()),
                cluster_ip: Some(cluster_ip.into()),
                external_ips: Some(external_ips.iter().map(|s| (*s).to_owned()).collect()),
                external_name: (type_ == "ExternalName").then(|| "lb.example.com".into()),
                ..ServiceSpec::default()
            }),
            status: Some(ServiceStatus {
                load_balancer: Some(LoadBalancerStatus {
                    ingress: Some(
                        lb.iter()
                            .map(|(ip, host)| LoadBalancerIngress {
                                ip: Some((*ip).to_owned()),
                                hostname: Some((*host).to_owned()),
                                ..LoadBalancerIngress::default()
                            })
                            .collect(),
                    ),
                }),
                conditions: None,
            }),
        }
    }

    fn published(publish: &Publish, services: &[Service]) -> Vec<(String, String)> {
        let keyed = |s: &Service| (ObjectRef::from_meta(&s.metadata), s.clone().into());
        publish
            .status(&services.iter().map(keyed).collect())
            .and_then(|s| s.ingress)
            .unwrap_or_default()
            .into_iter()
            .map(|e| (e.hostname.unwrap_or_default(), e.ip.unwrap_or_default()))
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(h, i)| ((*h).to_owned(), (*i).to_owned()))
            .collect()
    }

    #[test]
    fn fixed_addresses_are_ips_or_host_names_in_order() {
        let publish = Publish::Addresses(vec![
            "10.0.0.2".into(),
            "lb.example.com".into(),
            "10.0.0.1".into(),
        ]);
        assert_eq!(
            published(&publish, &[]),
            pairs(&[("", "10.0.0.1"), ("", "10.0.0.2"), ("lb.example.com", "")])
        );
        assert_eq!(Publish::Nothing.status(&Map::new()), None);
    }

    #[test]
    fn service_addresses_by_type() {
        let publish = Publish::Service("ingress-nginx/ingress-nginx-controller".parse().unwrap());
        assert_eq!(publish.status(&Map::new()), None, "no Service yet");
        let cases: [(Service, &[(&str, &str)]); 6] = [
            (
                service("ClusterIP", "10.96.0.10", &[], &[]),
                &[("", "10.96.0.10")],
            ),
            (
                service("NodePort", "10.96.0.10", &[], &[]),
                &[("", "10.96.0.10")],
            ),
            (
                service("NodePort", "10.96.0.10", &["192.0.2.1"], &[]),
                &[("", "192.0.2.1")],
            ),
            (
                service("ExternalName", "", &[], &[]),
                &[("lb.example.com", "")],
            ),
            (
                service(
                    "LoadBalancer",
                    "10.96.0.10",
                    &["192.0.2.1", "203.0.113.7"],
                    &[("203.0.113.7", "")],
                ),
                &[("", "192.0.2.1"), ("", "203.0.113.7")],
            ),
            (service("LoadBalancer", "10.96.0.10", &[], &[]), &[]),
        ];
        for (svc, want) in cases {
            assert_eq!(
                published(&publish, std::slice::from_ref(&svc)),
                pairs(want),
                "{:?}",
                svc.spec
            );
        }
    }

    #[test]
    fn held_status_compares_as_ingress_nginx() {
        let wanted = Publish::Addresses(vec!["10.0.0.1".into(), "10.0.0.2".into()])
            .status(&Map::new())
            .unwrap();
        let mut reversed = wanted.clone();
        if let Some(list) = reversed.ingress.as_mut() {
            list.reverse();
        }
        assert!(holds(Some(&reversed), &wanted));
        assert!(!holds(None, &wanted));
        let one = Publish::Addresses(vec!["10.0.0.1".into()])
            .status(&Map::new())
            .unwrap();
        assert!(!holds(Some(&one), &wanted));
    }
}
