//! The address each Gateway is served on (rendering notes §3.2). Without `--gateway-addresses`
//! every Gateway shares the controller's `--listen-address` with the Ingresses. With it, each
//! Gateway gets an address of its own from the pool, sticky: an address of the pool already in
//! the Gateway's `status.addresses` stays its own, so assignments survive restarts and the
//! deletion of other Gateways.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use cluster_state::ObjectRef;

/// A pool of addresses: an IPv4 or IPv6 network in CIDR notation (`127.0.1.0/24`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool {
    /// The network's first address, host bits zero.
    network: IpAddr,
    /// The prefix length.
    prefix: u8,
}

impl FromStr for Pool {
    type Err = String;

    /// `ADDRESS/PREFIX`; host bits set in the address are refused, as they usually mean a typo.
    fn from_str(text: &str) -> Result<Self, String> {
        let (address, prefix) = text
            .split_once('/')
            .ok_or_else(|| format!("{text:?} is not ADDRESS/PREFIX"))?;
        let network: IpAddr = address
            .parse()
            .map_err(|_| format!("{address:?} is not an IP address"))?;
        let bits = match network {
            IpAddr::V4(_) => 32,
            IpAddr::V6(_) => 128,
        };
        let prefix: u8 = prefix
            .parse()
            .ok()
            .filter(|p| *p <= bits)
            .ok_or_else(|| format!("{prefix:?} is not a prefix length of 0 to {bits}"))?;
        let pool = Self { network, prefix };
        if pool.offset(network) != Some(0) {
            return Err(format!("{text:?} has host bits set"));
        }
        Ok(pool)
    }
}

impl std::fmt::Display for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

impl Pool {
    /// The number of host bits.
    fn host_bits(&self) -> u32 {
        let bits = match self.network {
            IpAddr::V4(_) => 32,
            IpAddr::V6(_) => 128,
        };
        bits - u32::from(self.prefix)
    }

    /// `address`'s offset in the network, `None` when it is outside.
    fn offset(&self, address: IpAddr) -> Option<u128> {
        let (base, value) = match (self.network, address) {
            (IpAddr::V4(n), IpAddr::V4(a)) => (u128::from(n.to_bits()), u128::from(a.to_bits())),
            (IpAddr::V6(n), IpAddr::V6(a)) => (n.to_bits(), a.to_bits()),
            _ => return None,
        };
        let host_mask = u128::MAX.checked_shr(128 - self.host_bits()).unwrap_or(0);
        ((base & !host_mask) == (value & !host_mask)).then_some(value & host_mask)
    }

    /// The offsets of the usable addresses: every one but the network's own and, for IPv4
    /// networks of more than two addresses, its broadcast address.
    fn usable(&self) -> (u128, u128) {
        let bits = self.host_bits();
        let last = u128::MAX.checked_shr(128 - bits).unwrap_or(0);
        match (self.network, bits) {
            (_, 0) => (0, 0),
            (IpAddr::V4(_), 1) => (0, last),
            (IpAddr::V4(_), _) => (1, last - 1),
            (IpAddr::V6(_), _) => (1, last),
        }
    }

    /// The address at `offset`.
    fn at(&self, offset: u128) -> IpAddr {
        match self.network {
            IpAddr::V4(n) => {
                let bits = u128::from(n.to_bits()) | offset;
                IpAddr::V4(Ipv4Addr::from_bits(u32::try_from(bits).unwrap_or(u32::MAX)))
            }
            IpAddr::V6(n) => IpAddr::V6(Ipv6Addr::from_bits(n.to_bits() | offset)),
        }
    }

    /// Whether `address` is a usable address of the pool.
    pub fn contains(&self, address: IpAddr) -> bool {
        let (first, last) = self.usable();
        self.offset(address)
            .is_some_and(|o| (first..=last).contains(&o))
    }
}

/// The addresses of `gateways` (in the order given, each with the addresses its status holds):
/// each keeps the first address of its status that is in `pool` and not yet taken, then those
/// left take the lowest free addresses. Gateways the pool has no address left for are not in
/// the map.
pub fn assign(pool: &Pool, gateways: &[(ObjectRef, Vec<String>)]) -> BTreeMap<ObjectRef, IpAddr> {
    let mut out = BTreeMap::new();
    let mut taken = BTreeSet::new();
    for (gateway, current) in gateways {
        let kept = current
            .iter()
            .filter_map(|a| a.parse::<IpAddr>().ok())
            .find(|a| pool.contains(*a) && !taken.contains(a));
        if let Some(address) = kept {
            taken.insert(address);
            out.insert(gateway.clone(), address);
        }
    }
    let (first, last) = pool.usable();
    let mut next = first;
    for (gateway, _) in gateways {
        if out.contains_key(gateway) {
            continue;
        }
        while next <= last && taken.contains(&pool.at(next)) {
            next += 1;
        }
        if next > last {
            break;
        }
        let address = pool.at(next);
        taken.insert(address);
        out.insert(gateway.clone(), address);
        next += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gateway(name: &str, current: &[&str]) -> (ObjectRef, Vec<String>) {
        (
            ObjectRef::new("ns", name),
            current.iter().map(|s| (*s).to_owned()).collect(),
        )
    }

    #[test]
    fn pools_parse_and_refuse_host_bits() {
        let pool: Pool = "127.0.1.0/24".parse().unwrap();
        assert_eq!(pool.to_string(), "127.0.1.0/24");
        assert!(pool.contains("127.0.1.1".parse().unwrap()));
        assert!(pool.contains("127.0.1.254".parse().unwrap()));
        assert!(!pool.contains("127.0.1.0".parse().unwrap()));
        assert!(!pool.contains("127.0.1.255".parse().unwrap()));
        assert!(!pool.contains("127.0.2.1".parse().unwrap()));
        assert!(!pool.contains("::1".parse().unwrap()));
        assert!("127.0.1.1/24".parse::<Pool>().is_err());
        assert!("127.0.1.0/33".parse::<Pool>().is_err());
        assert!("127.0.1.0".parse::<Pool>().is_err());
        let six: Pool = "fd00::/120".parse().unwrap();
        assert!(six.contains("fd00::ff".parse().unwrap()));
        assert!(!six.contains("fd00::1:0".parse().unwrap()));
        let one: Pool = "10.0.0.7/32".parse().unwrap();
        assert!(one.contains("10.0.0.7".parse().unwrap()));
    }

    #[test]
    fn addresses_are_sticky_then_lowest_free() {
        let pool: Pool = "127.0.1.0/30".parse().unwrap();
        let got = assign(
            &pool,
            &[
                gateway("a", &[]),
                gateway("b", &["127.0.1.1"]),
                gateway("c", &["10.0.0.1"]),
            ],
        );
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(got[&ObjectRef::new("ns", "b")], ip("127.0.1.1"));
        assert_eq!(got[&ObjectRef::new("ns", "a")], ip("127.0.1.2"));
        // Two usable addresses in a /30: the third Gateway gets none.
        assert!(!got.contains_key(&ObjectRef::new("ns", "c")));
        // Two Gateways claiming one address: the first keeps it.
        let got = assign(
            &pool,
            &[gateway("a", &["127.0.1.2"]), gateway("b", &["127.0.1.2"])],
        );
        assert_eq!(got[&ObjectRef::new("ns", "a")], ip("127.0.1.2"));
        assert_eq!(got[&ObjectRef::new("ns", "b")], ip("127.0.1.1"));
    }
}
