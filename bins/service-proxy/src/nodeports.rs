//! `--nodeport-addresses`: which local addresses accept NodePort connections, resolved per IP
//! family as kube-proxy does (`cmd/kube-proxy/app/server.go` for `primary`,
//! `pkg/proxy/util/nodeport_addresses.go` for the rest). Pure.

use std::net::IpAddr;
use std::str::FromStr;

use iptables_model::Cidr;

/// One value of `--nodeport-addresses`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodePortAddress {
    /// `primary`: the node's IP of each family (`--node-ip`).
    Primary,
    /// A CIDR: the interface addresses inside it.
    Cidr(Cidr),
}

impl FromStr for NodePortAddress {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text == "primary" {
            return Ok(Self::Primary);
        }
        match text.split_once('/') {
            Some((_, length)) if !length.contains('.') => text
                .parse()
                .map(Self::Cidr)
                .map_err(|e| format!("{text:?}: {e}")),
            _ => Err(format!(
                "{text:?}: expected a CIDR like 10.0.0.0/8 or fd00::/64, or \"primary\""
            )),
        }
    }
}

/// The CIDRs NodePorts are accepted on for one family; `None` accepts them on every local
/// address (the `addrtype LOCAL` rule).
///
/// As kube-proxy: `primary` alone stands for `--node-ip`'s address of each family as a host
/// CIDR (none when it is a loopback address); CIDRs of the other family are dropped; no CIDR
/// left, or a zero CIDR (`0.0.0.0/0`, `::/0`), accepts every address.
pub fn node_port_cidrs(
    flag: &[NodePortAddress],
    node_ips: &[IpAddr],
    ipv6: bool,
) -> Option<Vec<Cidr>> {
    let cidrs: Vec<Cidr> = match flag {
        [NodePortAddress::Primary] => node_ips
            .iter()
            .filter(|ip| !ip.is_loopback())
            .map(|&ip| Cidr {
                addr: ip,
                prefix: Some(Cidr::host(ip).max_prefix()),
            })
            .collect(),
        _ => flag
            .iter()
            .filter_map(|address| match address {
                NodePortAddress::Cidr(cidr) => Some(*cidr),
                NodePortAddress::Primary => None,
            })
            .collect(),
    };
    let family: Vec<Cidr> = cidrs
        .into_iter()
        .filter(|c| c.addr.is_ipv6() == ipv6)
        .collect();
    let match_all = family.is_empty() || family.iter().any(|c| c.prefix_len() == 0);
    (!match_all).then_some(family)
}

/// Whether `flag` is valid as a whole: `primary` only alone (kube-proxy's validation).
///
/// # Errors
///
/// What is wrong with it.
pub fn validate(flag: &[NodePortAddress]) -> Result<(), String> {
    if flag.len() > 1 && flag.contains(&NodePortAddress::Primary) {
        return Err("--nodeport-addresses: \"primary\" cannot be combined with CIDRs".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(values: &[&str]) -> Vec<NodePortAddress> {
        values.iter().map(|v| v.parse().unwrap()).collect()
    }

    fn cidrs(values: &[&str], ipv6: bool) -> Option<Vec<String>> {
        let node_ips = ["192.168.0.2".parse().unwrap(), "fd00::2".parse().unwrap()];
        node_port_cidrs(&flag(values), &node_ips, ipv6)
            .map(|c| c.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn values_are_cidrs_or_primary() {
        assert_eq!(flag(&["primary"]), [NodePortAddress::Primary]);
        assert!("10.0.0.1".parse::<NodePortAddress>().is_err());
        assert!("10.0.0.0/255.0.0.0".parse::<NodePortAddress>().is_err());
        assert!("10.0.0.0/33".parse::<NodePortAddress>().is_err());
        assert!(validate(&flag(&["primary", "10.0.0.0/8"])).is_err());
        assert!(validate(&flag(&["10.0.0.0/8", "fd00::/64"])).is_ok());
    }

    /// `NewNodePortAddresses`: the family's CIDRs; none, or a zero CIDR, match everything.
    #[test]
    fn cidrs_are_filtered_per_family_and_zero_cidrs_match_all() {
        assert_eq!(cidrs(&[], false), None);
        assert_eq!(
            cidrs(&["10.0.0.0/8", "fd00::/64"], false),
            Some(vec!["10.0.0.0/8".into()])
        );
        assert_eq!(
            cidrs(&["10.0.0.0/8", "fd00::/64"], true),
            Some(vec!["fd00::/64".into()])
        );
        assert_eq!(cidrs(&["10.0.0.0/8"], true), None);
        assert_eq!(cidrs(&["10.0.0.0/8", "0.0.0.0/0"], false), None);
        assert_eq!(cidrs(&["::/0"], true), None);
    }

    /// `server.go`: `primary` is each family's node IP as /32 or /128, loopback excluded.
    #[test]
    fn primary_is_the_node_ip_of_the_family() {
        assert_eq!(
            cidrs(&["primary"], false),
            Some(vec!["192.168.0.2/32".into()])
        );
        assert_eq!(cidrs(&["primary"], true), Some(vec!["fd00::2/128".into()]));
        let loopback = ["127.0.0.1".parse().unwrap()];
        assert_eq!(node_port_cidrs(&flag(&["primary"]), &loopback, false), None);
    }
}
