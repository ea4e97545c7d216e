//! Ingress `status.loadBalancer`: the addresses to publish (written through cluster-state's
//! source by the elected leader).

use std::net::IpAddr;

use k8s_openapi::api::networking::v1::{IngressLoadBalancerIngress, IngressLoadBalancerStatus};

/// The status every served Ingress gets: each address as `ip` when it is one, else as
/// `hostname`.
pub fn load_balancer(addresses: &[String]) -> IngressLoadBalancerStatus {
    let ingress = addresses
        .iter()
        .map(|address| {
            if address.parse::<IpAddr>().is_ok() {
                IngressLoadBalancerIngress {
                    ip: Some(address.clone()),
                    ..IngressLoadBalancerIngress::default()
                }
            } else {
                IngressLoadBalancerIngress {
                    hostname: Some(address.clone()),
                    ..IngressLoadBalancerIngress::default()
                }
            }
        })
        .collect();
    IngressLoadBalancerStatus {
        ingress: Some(ingress),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ips_and_host_names() {
        let status = super::load_balancer(&["10.0.0.1".into(), "lb.example.com".into()]);
        let lb = status.ingress.unwrap();
        assert_eq!(lb[0].ip.as_deref(), Some("10.0.0.1"));
        assert_eq!(lb[1].hostname.as_deref(), Some("lb.example.com"));
    }
}
