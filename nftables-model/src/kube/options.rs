//! The nftables proxier's options: the iptables proxier's ([`ProxyOptions`]: node, family,
//! local-traffic detector, masquerade mark, NodePort addresses) and what only this mode uses.

use alloc::vec::Vec;

use iptables_model::Cidr;
use iptables_model::kube::ProxyOptions;

use crate::object::Family;

/// Options of [`super::Proxier`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NftOptions {
    /// The options both modes share (`ipv6` selects the table's family).
    pub proxy: ProxyOptions,
    /// The cluster's ServiceCIDRs of the proxier's family: traffic to an unallocated address
    /// in them is dropped (`OnServiceCIDRsChanged`). Empty writes no such rule.
    pub service_cidrs: Vec<Cidr>,
    /// Hex digits of the masquerade mark: kube-proxy formats it with Go's `%#08x` (6 digits,
    /// `0x004000`); its unit tests' fake proxier sets `0x4000` (4).
    pub mark_digits: usize,
}

impl NftOptions {
    /// kube-proxy's defaults over `proxy`: no ServiceCIDRs, the mark as `%#08x` writes it.
    pub const fn new(proxy: ProxyOptions) -> Self {
        Self {
            proxy,
            service_cidrs: Vec::new(),
            mark_digits: 6,
        }
    }

    /// The table's family.
    pub const fn family(&self) -> Family {
        if self.proxy.ipv6 {
            Family::Ip6
        } else {
            Family::Ip
        }
    }

    /// The `--nodeport-addresses` of the family, or `None` when NodePorts are accepted on
    /// every local address (no list, none of the family, or a `/0` among them).
    pub(crate) fn node_port_cidrs(&self) -> Option<Vec<Cidr>> {
        let cidrs: Vec<Cidr> = self
            .proxy
            .node_port_addresses
            .as_ref()?
            .iter()
            .filter(|c| c.addr.is_ipv6() == self.proxy.ipv6)
            .copied()
            .collect();
        (!cidrs.is_empty() && cidrs.iter().all(|c| c.prefix_len() != 0)).then_some(cidrs)
    }
}
