//! The address each Gateway is served on (rendering notes §3.2). Without `--gateway-addresses`
//! every Gateway shares the controller's `--listen-address` with the Ingresses. With it, each
//! Gateway gets an address of its own from the pool, sticky: an address of the pool already in
//! the Gateway's `status.addresses` stays its own, so assignments survive restarts and the
//! deletion of other Gateways. A Gateway may name its address in `spec.addresses` (S-GW.7).

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use cluster_state::ObjectRef;

use super::Fault;

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

/// What one Gateway asks of the pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The Gateway.
    pub gateway: ObjectRef,
    /// The values of its `spec.addresses`, all of type `IPAddress` (any other type keeps the
    /// Gateway from being accepted, S-GW.7); an empty value asks for any address.
    pub requested: Vec<String>,
    /// The addresses its status holds.
    pub held: Vec<String>,
}

/// The address of each of `requests` (in the order given, oldest first), or why it has none
/// (S-GW.7): the reason is `AddressNotUsable` for a requested address that is not a usable
/// address of `pool`, is already another Gateway's, or comes with a second one (a Gateway is
/// served on one address), and `AddressNotAssigned` when the pool has no address left.
///
/// A Gateway that names its address gets it; one that does not keeps the first pool address
/// its status holds (sticky, so that assignments survive restarts and the deletion of other
/// Gateways). An address two Gateways want goes to the first of them. Those left then take the
/// lowest free addresses.
pub fn assign(pool: &Pool, requests: &[Request]) -> BTreeMap<ObjectRef, Result<IpAddr, Fault>> {
    let mut out = BTreeMap::new();
    let mut taken: BTreeMap<IpAddr, &ObjectRef> = BTreeMap::new();
    let mut waiting = Vec::new();
    for request in requests {
        let named = match request.requested.as_slice() {
            [] => None,
            [value] if value.is_empty() => None,
            [value] => Some(value),
            more => {
                let message = format!(
                    "spec.addresses has {} entries: a Gateway is served on one address",
                    more.len()
                );
                out.insert(request.gateway.clone(), Err(not_usable(message)));
                continue;
            }
        };
        let Some(value) = named else {
            let kept = request
                .held
                .iter()
                .filter_map(|a| a.parse::<IpAddr>().ok())
                .find(|a| pool.contains(*a) && !taken.contains_key(a));
            match kept {
                Some(address) => {
                    taken.insert(address, &request.gateway);
                    out.insert(request.gateway.clone(), Ok(address));
                }
                None => waiting.push(&request.gateway),
            }
            continue;
        };
        let verdict = match value.parse::<IpAddr>() {
            Err(_) => Err(not_usable(format!("{value:?} is not an IP address"))),
            Ok(address) if !pool.contains(address) => Err(not_usable(format!(
                "{address} is not a usable address of the pool {pool} (--gateway-addresses)"
            ))),
            Ok(address) => match taken.get(&address) {
                Some(other) => Err(not_usable(format!(
                    "{address} is in use by Gateway {other}"
                ))),
                None => {
                    taken.insert(address, &request.gateway);
                    Ok(address)
                }
            },
        };
        out.insert(request.gateway.clone(), verdict);
    }
    let (first, last) = pool.usable();
    let mut next = first;
    for gateway in waiting {
        while next <= last && taken.contains_key(&pool.at(next)) {
            next += 1;
        }
        let verdict = if next > last {
            let message = format!("the pool {pool} (--gateway-addresses) has no free address");
            Err(Fault::new("AddressNotAssigned", message))
        } else {
            let address = pool.at(next);
            taken.insert(address, gateway);
            next += 1;
            Ok(address)
        };
        out.insert(gateway.clone(), verdict);
    }
    out
}

/// `Programmed=False/AddressNotUsable` with `message`.
fn not_usable(message: String) -> Fault {
    Fault::new("AddressNotUsable", message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gateway(name: &str, held: &[&str]) -> Request {
        claim(name, &[], held)
    }

    fn claim(name: &str, requested: &[&str], held: &[&str]) -> Request {
        let strings = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect();
        Request {
            gateway: ObjectRef::new("ns", name),
            requested: strings(requested),
            held: strings(held),
        }
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    /// The address or the reason of each Gateway, by name.
    fn verdicts(pool: &str, requests: &[Request]) -> Vec<(String, Result<IpAddr, &'static str>)> {
        let pool: Pool = pool.parse().unwrap();
        assign(&pool, requests)
            .into_iter()
            .map(|(g, v)| (g.name, v.map_err(|f| f.reason)))
            .collect()
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
        let got = verdicts(
            "127.0.1.0/30",
            &[
                gateway("a", &[]),
                gateway("b", &["127.0.1.1"]),
                gateway("c", &["10.0.0.1"]),
            ],
        );
        // Two usable addresses in a /30: the third Gateway gets none.
        assert_eq!(
            got,
            [
                ("a".to_owned(), Ok(ip("127.0.1.2"))),
                ("b".to_owned(), Ok(ip("127.0.1.1"))),
                ("c".to_owned(), Err("AddressNotAssigned")),
            ]
        );
        // Two Gateways claiming one address: the first keeps it.
        let got = verdicts(
            "127.0.1.0/30",
            &[gateway("a", &["127.0.1.2"]), gateway("b", &["127.0.1.2"])],
        );
        assert_eq!(
            got,
            [
                ("a".to_owned(), Ok(ip("127.0.1.2"))),
                ("b".to_owned(), Ok(ip("127.0.1.1"))),
            ]
        );
    }

    /// S-GW.7, the checks of GatewayStaticAddresses and GatewayOptionalAddressValue (v1.6.1
    /// `conformance/tests/gateway-static-addresses.go`, `gateway-optional-address-value.go`): a
    /// requested address of the pool is the Gateway's; one outside it, taken, or beside a second
    /// one is `AddressNotUsable`; an empty value takes one from the pool, `AddressNotAssigned`
    /// once none is left.
    #[test]
    fn s_gw_7_requested_addresses() {
        let pool = "127.0.1.0/29";
        // The suite's last step: the usable address alone.
        let got = verdicts(pool, &[claim("static", &["127.0.1.5"], &[])]);
        assert_eq!(got, [("static".to_owned(), Ok(ip("127.0.1.5")))]);
        // Its second step: an unusable address beside the usable one.
        let got = verdicts(pool, &[claim("static", &["10.9.9.9", "127.0.1.5"], &[])]);
        assert_eq!(got, [("static".to_owned(), Err("AddressNotUsable"))]);
        for unusable in ["10.9.9.9", "127.0.1.0", "127.0.1.7", "fd00::1", "not-an-ip"] {
            let got = verdicts(pool, &[claim("static", &[unusable], &[])]);
            assert_eq!(got, [("static".to_owned(), Err("AddressNotUsable"))]);
        }
        // A requested address beats what the status holds, and is kept from the Gateways that
        // ask for any address; a newer Gateway asking for a taken one cannot have it.
        let got = verdicts(
            pool,
            &[
                claim("old", &["127.0.1.1"], &["127.0.1.3"]),
                gateway("any", &[]),
                claim("empty", &[""], &[]),
                claim("new", &["127.0.1.1"], &[]),
                gateway("sticky", &["127.0.1.6"]),
                claim("also", &["127.0.1.6"], &[]),
            ],
        );
        assert_eq!(
            got,
            [
                ("also".to_owned(), Err("AddressNotUsable")),
                ("any".to_owned(), Ok(ip("127.0.1.2"))),
                ("empty".to_owned(), Ok(ip("127.0.1.3"))),
                ("new".to_owned(), Err("AddressNotUsable")),
                ("old".to_owned(), Ok(ip("127.0.1.1"))),
                ("sticky".to_owned(), Ok(ip("127.0.1.6"))),
            ]
        );
        // An empty value with the pool used up.
        let got = verdicts(
            "127.0.1.0/31",
            &[gateway("a", &[]), gateway("b", &[]), claim("c", &[""], &[])],
        );
        assert_eq!(
            got,
            [
                ("a".to_owned(), Ok(ip("127.0.1.0"))),
                ("b".to_owned(), Ok(ip("127.0.1.1"))),
                ("c".to_owned(), Err("AddressNotAssigned")),
            ]
        );
    }
}
