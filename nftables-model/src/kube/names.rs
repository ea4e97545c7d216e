//! The names of kube-proxy's table, chains, sets and maps, and how the per-service ones are
//! made: a prefix, eight base32 characters of `sha256(name)`, `-`, and the name itself
//! (`namespace/service/protocol/port`, plus `__ip/port` for an endpoint, an IPv6 address with
//! `.` for `:`), cut to 240 bytes with `...` (`hashAndTruncate`).

use alloc::string::String;
use core::fmt::Write;
use core::net::IpAddr;

use iptables_model::kube::Protocol;
use iptables_model::text::{push_ip, push_u32};
use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::name::{Name, is_name_byte};

/// The table: `kube-proxy`.
pub const TABLE: &str = "kube-proxy";
/// The base chains' `ct state new` jump target for NodePorts without endpoints.
pub const NODEPORT_ENDPOINTS_CHECK: &str = "nodeport-endpoints-check";
/// The jump target that rejects or drops traffic to services without endpoints.
pub const SERVICE_ENDPOINTS_CHECK: &str = "service-endpoints-check";
/// The chain that rejects traffic to unused ports of ClusterIPs and drops traffic to
/// unallocated ones.
pub const CLUSTER_IPS_CHECK: &str = "cluster-ips-check";
/// The `loadBalancerSourceRanges` dispatch chain.
pub const FIREWALL_CHECK: &str = "firewall-check";
/// The service dispatch chain.
pub const SERVICES: &str = "services";
/// The chain that marks packets for masquerading.
pub const MARK_FOR_MASQUERADE: &str = "mark-for-masquerade";
/// The chain that masquerades marked packets.
pub const MASQUERADING: &str = "masquerading";
/// The chain that rejects.
pub const REJECT_CHAIN: &str = "reject-chain";
/// The set of active ClusterIPs.
pub const CLUSTER_IPS: &str = "cluster-ips";
/// The set of addresses that accept NodePorts.
pub const NODEPORT_IPS: &str = "nodeport-ips";
/// ClusterIP, external IP and LoadBalancer IP dispatch.
pub const SERVICE_IPS: &str = "service-ips";
/// NodePort dispatch.
pub const SERVICE_NODEPORTS: &str = "service-nodeports";
/// Drop or reject for service IPs without endpoints.
pub const NO_ENDPOINT_SERVICES: &str = "no-endpoint-services";
/// Drop or reject for NodePorts without endpoints.
pub const NO_ENDPOINT_NODEPORTS: &str = "no-endpoint-nodeports";
/// LoadBalancer IPs subject to source ranges.
pub const FIREWALL_IPS: &str = "firewall-ips";

/// The sets and maps a sync fills element by element: those whose elements
/// [`Proxier::note_elements`](super::Proxier::note_elements) takes from a listing of the
/// kernel's table (kube-proxy's `readOrReset`).
pub const ELEMENT_CONTAINERS: [&str; 6] = [
    CLUSTER_IPS,
    SERVICE_IPS,
    FIREWALL_IPS,
    NO_ENDPOINT_SERVICES,
    NO_ENDPOINT_NODEPORTS,
    SERVICE_NODEPORTS,
];

/// The prefix of affinity sets.
pub const AFFINITY_PREFIX: &str = "affinity-";
/// The prefix of a port's chain of its cluster-wide endpoints.
pub(crate) const SERVICE_PREFIX: &str = "service-";
/// The prefix of a port's chain of its node-local endpoints.
pub(crate) const LOCAL_PREFIX: &str = "local-";
/// The prefix of a port's chain for external destinations.
pub(crate) const EXTERNAL_PREFIX: &str = "external-";
/// The prefix of a port's chain of source ranges.
pub(crate) const FIREWALL_PREFIX: &str = "firewall-";
/// The prefix of an endpoint's chain.
pub(crate) const ENDPOINT_PREFIX: &str = "endpoint-";

/// The longest name base (knftables' `NameLengthMax` 256 less a 16-byte prefix).
const BASE_MAX: usize = 240;

/// `name` as a [`Name`]; only for this crate's own constant names (checked by a test).
pub(crate) fn fixed(name: &'static str) -> Name {
    Name::trusted(name)
}

/// The table name.
pub fn table() -> Name {
    fixed(TABLE)
}

/// The base of a per-service name (`hashAndTruncate`): eight base32 characters of
/// `sha256(text)`, `-`, and `text`, cut to [`BASE_MAX`] bytes with `...`.
struct Base<'a> {
    hash: [u8; 8],
    text: &'a str,
    /// Whether every byte of `text` may be in a name: then so may every name made of it
    /// (a prefix of this module, the hash, `-` and the text, cut with dots), and it is not
    /// checked again for each prefix.
    valid: bool,
}

impl<'a> Base<'a> {
    /// The base of `text`; `valid` says whether it is all name bytes.
    fn new(text: &'a str, valid: bool) -> Self {
        const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        let digest = Sha256::digest(text.as_bytes());
        // Eight base32 characters are the first 40 bits.
        let bits = digest
            .iter()
            .take(5)
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        let mut hash = [b'A'; 8];
        for (i, out) in hash.iter_mut().enumerate() {
            let index = usize::try_from((bits >> ((7 - i) * 5)) & 31).unwrap_or(0);
            *out = ALPHABET.get(index).copied().unwrap_or(b'A');
        }
        Self { hash, text, valid }
    }

    /// `prefix` (one of this module's, which start with a letter) and the base as a name,
    /// written in `scratch` first (so only the name allocates).
    fn name(&self, prefix: &str, scratch: &mut String) -> Result<Name, Error> {
        scratch.clear();
        scratch.push_str(prefix);
        let start = scratch.len();
        // The hash is base32: ASCII, pushed at once rather than character by character.
        scratch.push_str(core::str::from_utf8(&self.hash).unwrap_or_default());
        scratch.push('-');
        scratch.push_str(self.text);
        if scratch.len() - start > BASE_MAX {
            // A non-ASCII text is refused by Name::new below; the cut only has to stay on a
            // character boundary until then.
            let mut cut = start + BASE_MAX - 3;
            while !scratch.is_char_boundary(cut) {
                cut -= 1;
            }
            scratch.truncate(cut);
            scratch.push_str("...");
        }
        if self.valid {
            Ok(Name::checked(scratch))
        } else {
            Name::new(scratch)
        }
    }
}

/// The buffers names are written in before they become names, kept from one Service to the
/// next by a sync.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    text: String,
    name: String,
    /// How much of `text` is the base text of the port last written ([`service_chain`]),
    /// and whether it is all name bytes.
    port: usize,
    port_valid: bool,
}

/// Writes what it is given with each `:` as `.` (IPv6 colons are not allowed in names).
struct Dotted<'a>(&'a mut String);

impl Write for Dotted<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.0
            .extend(s.chars().map(|c| if c == ':' { '.' } else { c }));
        Ok(())
    }
}

/// The names of one service port's chains, which share a base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortChains {
    /// `service-…`: the endpoints of Cluster policy.
    pub cluster: Name,
    /// `local-…`: the endpoints of Local policy.
    pub local: Name,
    /// `external-…`: external destinations.
    pub external: Name,
    /// `firewall-…`: `loadBalancerSourceRanges`.
    pub firewall: Name,
}

impl PortChains {
    /// The chains of port `port_name` of Service `namespace/name` with `protocol`.
    ///
    /// # Errors
    ///
    /// [`Error::Name`] when a part has a byte nft names cannot hold.
    pub fn new(
        namespace: &str,
        name: &str,
        protocol: Protocol,
        port_name: &str,
    ) -> Result<Self, Error> {
        let scratch = &mut Scratch::default();
        let cluster = service_chain(namespace, name, protocol, port_name, scratch)?;
        Ok(Self {
            local: rebase(&cluster, SERVICE_PREFIX, LOCAL_PREFIX),
            external: rebase(&cluster, SERVICE_PREFIX, EXTERNAL_PREFIX),
            firewall: rebase(&cluster, SERVICE_PREFIX, FIREWALL_PREFIX),
            cluster,
        })
    }
}

/// The names of one endpoint's chain and affinity set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointNames {
    /// `endpoint-…`.
    pub chain: Name,
    /// `affinity-…`.
    pub affinity: Name,
}

impl EndpointNames {
    /// The names of endpoint `ip:port` of the port of [`PortChains::new`].
    ///
    /// # Errors
    ///
    /// [`Error::Name`] as for [`PortChains::new`].
    pub fn new(
        namespace: &str,
        name: &str,
        protocol: Protocol,
        port_name: &str,
        ip: IpAddr,
        port: u16,
    ) -> Result<Self, Error> {
        let endpoint = (port_name, ip, port);
        let chain = endpoint_chain(namespace, name, protocol, endpoint, &mut Scratch::default())?;
        Ok(Self {
            affinity: rebase(&chain, ENDPOINT_PREFIX, AFFINITY_PREFIX),
            chain,
        })
    }
}

/// Writes `namespace/name/protocol/port_name` in `scratch`, the base text of a port's names,
/// and notes whether it is all name bytes.
fn port_text(
    scratch: &mut Scratch,
    namespace: &str,
    name: &str,
    protocol: Protocol,
    port_name: &str,
) {
    let text = &mut scratch.text;
    text.clear();
    for part in [namespace, "/", name, "/", protocol.lower(), "/", port_name] {
        text.push_str(part);
    }
    scratch.port = text.len();
    scratch.port_valid = text.bytes().all(is_name_byte);
}

/// The `service-` chain of a port (as [`PortChains::new`]), its texts written in `scratch`.
pub(crate) fn service_chain(
    namespace: &str,
    name: &str,
    protocol: Protocol,
    port_name: &str,
    scratch: &mut Scratch,
) -> Result<Name, Error> {
    port_text(scratch, namespace, name, protocol, port_name);
    Base::new(&scratch.text, scratch.port_valid).name(SERVICE_PREFIX, &mut scratch.name)
}

/// The `endpoint-` chain of endpoint `ip:port` of a port (as [`EndpointNames::new`]), given
/// as (port name, address, port), its texts written in `scratch`.
pub(crate) fn endpoint_chain(
    namespace: &str,
    name: &str,
    protocol: Protocol,
    (port_name, ip, port): (&str, IpAddr, u16),
    scratch: &mut Scratch,
) -> Result<Name, Error> {
    port_text(scratch, namespace, name, protocol, port_name);
    endpoint_of_port(scratch, ip, port)
}

/// The `endpoint-` chain of endpoint `ip:port` of the port [`service_chain`] last wrote in
/// `scratch` (its base text is kept: only the endpoint's part is written).
pub(crate) fn endpoint_of_port(
    scratch: &mut Scratch,
    ip: IpAddr,
    port: u16,
) -> Result<Name, Error> {
    let text = &mut scratch.text;
    text.truncate(scratch.port);
    text.push_str("__");
    // IPv6 colons are not allowed in names: they become dots (the rest has no colon, or
    // is refused below).
    if ip.is_ipv6() {
        let _ = write!(Dotted(&mut *text), "{ip}");
    } else {
        push_ip(text, ip);
    }
    text.push('/');
    push_u32(text, u32::from(port));
    // What the endpoint adds is digits, dots, `_` and `/`: the text is as valid as its port's.
    Base::new(text, scratch.port_valid).name(ENDPOINT_PREFIX, &mut scratch.name)
}

/// The name of the same base as `name`, made with prefix `from`, with prefix `to`: the
/// names of one base differ only in their prefix (the hash, the text and where it is cut do
/// not depend on it), so the ones a port may not use are made from the one it always uses,
/// when needed.
pub(crate) fn rebase(name: &Name, from: &str, to: &str) -> Name {
    let base = name.as_str().strip_prefix(from);
    debug_assert!(base.is_some(), "{name} does not start with {from}");
    let base = base.unwrap_or_default();
    let mut text = String::with_capacity(to.len() + base.len());
    text.push_str(to);
    text.push_str(base);
    Name::checked(&text)
}

/// Whether `chain` is a per-service chain (their names, and only theirs, have a `/`).
pub fn is_service_chain(chain: &Name) -> bool {
    chain.as_str().contains('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_test_overall_nftables_rules() {
        let c = PortChains::new("ns1", "svc1", Protocol::Tcp, "p80").unwrap();
        assert_eq!(c.cluster.as_str(), "service-ULMVA6XW-ns1/svc1/tcp/p80");
        let e = EndpointNames::new(
            "ns1",
            "svc1",
            Protocol::Tcp,
            "p80",
            "10.180.0.1".parse().unwrap(),
            80,
        )
        .unwrap();
        assert_eq!(
            e.chain.as_str(),
            "endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80"
        );
        assert_eq!(
            e.affinity.as_str(),
            "affinity-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80"
        );
    }

    const LONG_NS: &str = "very-long-namespace-name-abcdefghijklmnopqrstuvwxyz0123456789xx";
    const LONG_NAME: &str = "very-long-service-name-why-would-you-even-do-this-i-mean-really";
    const LONG_PORT: &str = "port-443-providing-the-hypertext-transmission-protocol-with-tls";

    /// `Test_servicePortChainNameBase` (kubernetes/kubernetes pkg/proxy/nftables/
    /// proxier_test.go, commit 030880a5dc54).
    #[test]
    fn service_port_chain_name_base() {
        let cases = [
            (
                "testing",
                "service",
                "http",
                Protocol::Tcp,
                "P4ZYZVCF-testing/service/tcp/http",
            ),
            (
                "testing",
                "service",
                "https",
                Protocol::Tcp,
                "LZBRENCP-testing/service/tcp/https",
            ),
        ];
        for (ns, name, port, proto, base) in cases {
            let c = PortChains::new(ns, name, proto, port).unwrap();
            assert_eq!(c.cluster.as_str().strip_prefix("service-"), Some(base));
        }
        let c = PortChains::new(LONG_NS, LONG_NAME, Protocol::Sctp, LONG_PORT).unwrap();
        assert_eq!(
            c.firewall.as_str(),
            alloc::format!("firewall-KR6NACJP-{LONG_NS}/{LONG_NAME}/sctp/{LONG_PORT}")
        );
    }

    /// `Test_servicePortEndpointChainNameBase` (same file and commit), with the truncated
    /// cases.
    #[test]
    fn service_port_endpoint_chain_name_base() {
        let short = |endpoint: &str, port: u16| {
            EndpointNames::new(
                "testing",
                "service",
                Protocol::Tcp,
                "http",
                endpoint.parse().unwrap(),
                port,
            )
            .unwrap()
            .chain
        };
        assert_eq!(
            short("10.180.0.1", 80).as_str(),
            "endpoint-JO2XBXZR-testing/service/tcp/http__10.180.0.1/80"
        );
        assert_eq!(
            short("10.180.0.2", 80).as_str(),
            "endpoint-5S6H3H22-testing/service/tcp/http__10.180.0.2/80"
        );
        // Their "ipv6" case writes `fd80:abcd:12::a1b2:…`, "::" for one zero group, which is not
        // the canonical text (RFC 5952, and Go's net.IP.String, write `12:0:a1b2`); names are
        // made from the parsed address, so only canonical texts are compared.
        assert_eq!(
            short("fd80:abcd:12:0:a1b2:c3d4:e5f6:9999", 80).as_str(),
            "endpoint-GIZ4YX43-testing/service/tcp/http__fd80.abcd.12.0.a1b2.c3d4.e5f6.9999/80"
        );
        let long = |endpoint: &str| {
            EndpointNames::new(
                LONG_NS,
                LONG_NAME,
                Protocol::Sctp,
                LONG_PORT,
                endpoint.parse().unwrap(),
                443,
            )
            .unwrap()
            .chain
        };
        let prefix = alloc::format!("{LONG_NS}/{LONG_NAME}/sctp/{LONG_PORT}");
        assert_eq!(
            long("1234:5678:9abc:def0::abc:1234").as_str(),
            alloc::format!("endpoint-5YS7AFEA-{prefix}__1234.5678.9abc.def0..abc.1234/443")
        );
        // Their "truncated" cases write one zero group as "::" too; with the canonical text the
        // name is cut the same way: 237 bytes and "...", the hash telling the two apart.
        let (one, two) = (
            long("1234:5678:9abc:def0:0:abcd:1234:5678"),
            long("1234:5678:9abc:def0:0:abcd:1234:8765"),
        );
        assert_eq!(one.as_str().len(), "endpoint-".len() + 240);
        assert!(
            one.as_str()
                .ends_with("__1234.5678.9abc.def0.0.abcd.123...")
        );
        assert_eq!(one.as_str().get(18..), two.as_str().get(18..));
        assert_ne!(one, two);
    }

    #[test]
    fn constant_names_are_valid() {
        for n in [
            TABLE,
            NODEPORT_ENDPOINTS_CHECK,
            SERVICE_ENDPOINTS_CHECK,
            CLUSTER_IPS_CHECK,
            FIREWALL_CHECK,
            SERVICES,
            MARK_FOR_MASQUERADE,
            MASQUERADING,
            REJECT_CHAIN,
            CLUSTER_IPS,
            NODEPORT_IPS,
            SERVICE_IPS,
            SERVICE_NODEPORTS,
            NO_ENDPOINT_SERVICES,
            NO_ENDPOINT_NODEPORTS,
            FIREWALL_IPS,
        ] {
            assert_eq!(Name::new(n).as_ref(), Ok(&fixed(n)));
        }
    }

    #[test]
    fn hostile_names_are_refused() {
        assert!(PortChains::new("ns1", "svc1 }; flush ruleset", Protocol::Tcp, "p").is_err());
        assert!(PortChains::new("ns1", "svc1", Protocol::Tcp, "p\nadd").is_err());
    }

    #[test]
    fn long_names_are_cut_with_dots() {
        let long = "a".repeat(63);
        let e = EndpointNames::new(
            &long,
            &long,
            Protocol::Sctp,
            &long,
            "fd00:1234:5678:9abc:def0:1234:5678:9abc".parse().unwrap(),
            65535,
        )
        .unwrap();
        assert!(e.chain.as_str().ends_with("..."));
        assert_eq!(e.chain.as_str().len(), "endpoint-".len() + 240);
    }
}
