//! Chain names: `KUBE-SVC-`/`SVL-`/`EXT-`/`FW-` + 16 base32 characters of
//! `sha256(spn + protocol)`, and `KUBE-SEP-` of `sha256(spn + protocol + ip:port)`
//! (`docs/iptables.md` §1.1).

use alloc::string::String;
use core::net::IpAddr;

use sha2::{Digest, Sha256};

use super::input::Protocol;
use crate::text::{push_ip, push_u32};

/// The service port name, `namespace/name:port` (or `namespace/name` for an unnamed port).
pub fn service_port_name(namespace: &str, name: &str, port_name: &str) -> String {
    let mut spn = String::with_capacity(namespace.len() + name.len() + port_name.len() + 2);
    spn.push_str(namespace);
    spn.push('/');
    spn.push_str(name);
    if !port_name.is_empty() {
        spn.push(':');
        spn.push_str(port_name);
    }
    spn
}

/// Go's `net.JoinHostPort`: `10.0.0.1:80`, `[fd00::1]:80`.
pub fn join_host_port(ip: IpAddr, port: u16) -> String {
    let mut out = String::with_capacity(24);
    if ip.is_ipv6() {
        out.push('[');
        push_ip(&mut out, ip);
        out.push(']');
    } else {
        push_ip(&mut out, ip);
    }
    out.push(':');
    push_u32(&mut out, u32::from(port));
    out
}

/// The first 16 characters of the standard base32 encoding of `sha256(parts...)`.
fn hash16(parts: &[&str]) -> [u8; 16] {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
    }
    let digest = hasher.finalize();
    // 16 characters of 5 bits are exactly the first 10 bytes.
    let mut bits = digest
        .iter()
        .take(10)
        .fold(0u128, |acc, b| (acc << 8) | u128::from(*b));
    let mut out = [b'A'; 16];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET.get((bits & 31) as usize).copied().unwrap_or(b'A');
        bits >>= 5;
    }
    out
}

fn chain(prefix: &str, hash: [u8; 16]) -> String {
    let mut name = String::with_capacity(prefix.len() + 16);
    name.push_str(prefix);
    // The hash is base32: ASCII.
    name.push_str(core::str::from_utf8(&hash).unwrap_or_default());
    name
}

/// The four per-service-port chains, which share one hash.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ServiceChains {
    /// `KUBE-SVC-…`: cluster-wide endpoint dispatch.
    pub svc: String,
    /// `KUBE-SVL-…`: node-local endpoint dispatch.
    pub svl: String,
    /// `KUBE-EXT-…`: external destinations.
    pub ext: String,
    /// `KUBE-FW-…`: the source-range firewall.
    pub fw: String,
}

impl ServiceChains {
    /// The chains of service port `spn` with `protocol`.
    pub fn new(spn: &str, protocol: Protocol) -> Self {
        let hash = hash16(&[spn, protocol.lower()]);
        Self {
            svc: chain("KUBE-SVC-", hash),
            svl: chain("KUBE-SVL-", hash),
            ext: chain("KUBE-EXT-", hash),
            fw: chain("KUBE-FW-", hash),
        }
    }
}

/// `KUBE-SEP-…` of the endpoint `ip:port` (as [`join_host_port`] writes it) of `spn`.
pub fn endpoint_chain(spn: &str, protocol: Protocol, endpoint: &str) -> String {
    chain("KUBE-SEP-", hash16(&[spn, protocol.lower(), endpoint]))
}

/// Whether `chain` is one of the per-service chains (`KUBE-SVC-`, `-SVL-`, `-SEP-`, `-FW-`,
/// `-EXT-`) a sync may delete as stale.
pub fn is_service_chain(chain: &str) -> bool {
    [
        "KUBE-SVC-",
        "KUBE-SVL-",
        "KUBE-SEP-",
        "KUBE-FW-",
        "KUBE-EXT-",
    ]
    .iter()
    .any(|p| chain.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_examples_of_spec_1_1() {
        assert_eq!(
            ServiceChains::new("ns1/svc1:p80", Protocol::Tcp).svc,
            "KUBE-SVC-XPGD46QRK7WJZT7O"
        );
        assert_eq!(
            endpoint_chain("ns1/svc1:p80", Protocol::Tcp, "10.180.0.1:80"),
            "KUBE-SEP-SXIVWICOYRO3J4NJ"
        );
        assert_eq!(
            ServiceChains::new("ns5/svc5:p80", Protocol::Tcp).fw,
            "KUBE-FW-NUKIZ6OKUXPJNT4C"
        );
        assert_eq!(
            ServiceChains::new(&service_port_name("ns1", "svc1", ""), Protocol::Tcp).svc,
            "KUBE-SVC-AQI2S6QIMU7PVVRP"
        );
    }

    #[test]
    fn join_host_port_brackets_ipv6() {
        assert_eq!(
            join_host_port("fd00::1".parse().unwrap(), 80),
            "[fd00::1]:80"
        );
        assert_eq!(
            join_host_port("10.0.0.1".parse().unwrap(), 53),
            "10.0.0.1:53"
        );
    }
}
