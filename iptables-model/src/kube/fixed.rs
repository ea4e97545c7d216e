//! The rules that do not depend on any Service (`docs/iptables.md` §2): the top-level chains every
//! full sync rewrites, and the jumps from the built-in chains installed outside the restore.

use alloc::string::String;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::input::ProxyOptions;
use super::port::Output;
use super::rules::{RuleText, declare};
use crate::addr::Cidr;
use crate::model::{CtState, OwnedRestoreFile, RestoreFile};

/// filter chains a full sync declares, in kube-proxy's order.
pub(crate) const FILTER_CHAINS: [&str; 5] = [
    "KUBE-SERVICES",
    "KUBE-EXTERNAL-SERVICES",
    "KUBE-FORWARD",
    "KUBE-NODEPORTS",
    "KUBE-PROXY-FIREWALL",
];
/// nat chains a full sync declares, in kube-proxy's order.
pub(crate) const NAT_CHAINS: [&str; 4] = [
    "KUBE-SERVICES",
    "KUBE-NODEPORTS",
    "KUBE-POSTROUTING",
    "KUBE-MARK-MASQ",
];
/// Every chain a sync writes that is not a per-service chain (both tables; `KUBE-FIREWALL`
/// only for IPv4 with localhost NodePorts).
pub const TOP_LEVEL_CHAINS: [&str; 8] = [
    "KUBE-SERVICES",
    "KUBE-EXTERNAL-SERVICES",
    "KUBE-FORWARD",
    "KUBE-NODEPORTS",
    "KUBE-PROXY-FIREWALL",
    "KUBE-FIREWALL",
    "KUBE-POSTROUTING",
    "KUBE-MARK-MASQ",
];
const LAST_RULE: &str =
    "kubernetes service nodeports; NOTE: this must be the last rule in this chain";
const LOOPBACK_V4: Cidr = Cidr {
    addr: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)),
    prefix: Some(8),
};

/// Chains and rules that come before the services.
pub(crate) fn head(options: &ProxyOptions, out: &mut Output) {
    FILTER_CHAINS
        .iter()
        .for_each(|c| declare(&mut out.filter_chains, c));
    NAT_CHAINS
        .iter()
        .for_each(|c| declare(&mut out.nat_chains, c));
    let mark = options.masquerade_mark;
    let nat = &mut out.nat_rules;
    RuleText::append(nat, "KUBE-POSTROUTING")
        .has_mark(true, mark)
        .jump("RETURN");
    RuleText::append(nat, "KUBE-POSTROUTING").mark(false, mark);
    RuleText::append(nat, "KUBE-POSTROUTING")
        .comment(&["kubernetes service traffic requiring SNAT"])
        .jump(if options.random_fully {
            "MASQUERADE --random-fully"
        } else {
            "MASQUERADE"
        });
    RuleText::append(nat, "KUBE-MARK-MASQ").mark(true, mark);
    if !options.ipv6 && options.localhost_node_ports {
        declare(&mut out.filter_chains, "KUBE-FIREWALL");
        RuleText::append(&mut out.filter_rules, "KUBE-FIREWALL")
            .comment(&["block incoming localnet connections"])
            .destination(false, LOOPBACK_V4)
            .source(true, LOOPBACK_V4)
            .ctstate(
                true,
                &[CtState::Related, CtState::Established, CtState::Dnat],
            )
            .jump("DROP");
    }
}

/// Rules that come after the services: the NodePort dispatch and KUBE-FORWARD.
pub(crate) fn tail(options: &ProxyOptions, out: &mut Output) {
    let nat = &mut out.nat_rules;
    match &options.node_port_addresses {
        None => {
            let rule = RuleText::append(nat, "KUBE-SERVICES")
                .comment(&[LAST_RULE])
                .addrtype_local(false);
            let rule = if options.ipv6 {
                rule.destination(
                    true,
                    Cidr {
                        addr: IpAddr::V6(Ipv6Addr::LOCALHOST),
                        prefix: Some(128),
                    },
                )
            } else if !options.localhost_node_ports {
                rule.destination(true, LOOPBACK_V4)
            } else {
                rule
            };
            rule.jump("KUBE-NODEPORTS");
        }
        Some(cidrs) => {
            for ip in node_port_ips(options, cidrs) {
                RuleText::append(nat, "KUBE-SERVICES")
                    .comment(&[LAST_RULE])
                    .destination(false, Cidr::host(ip))
                    .jump("KUBE-NODEPORTS");
            }
        }
    }
    let filter = &mut out.filter_rules;
    if !options.conntrack_tcp_liberal {
        let rule = RuleText::append(filter, "KUBE-FORWARD").ctstate(false, &[CtState::Invalid]);
        let rule = if options.nfacct {
            rule.nfacct("ct_state_invalid_dropped_pkts")
        } else {
            rule
        };
        rule.jump("DROP");
    }
    RuleText::append(filter, "KUBE-FORWARD")
        .comment(&["kubernetes forwarding rules"])
        .has_mark(false, options.masquerade_mark)
        .jump("ACCEPT");
    RuleText::append(filter, "KUBE-FORWARD")
        .comment(&["kubernetes forwarding conntrack rule"])
        .ctstate(false, &[CtState::Related, CtState::Established])
        .jump("ACCEPT");
}

/// The node addresses NodePorts listen on with `--nodeport-addresses`: interface addresses of
/// the proxier's family inside one of the CIDRs; loopback only for IPv4 with localhost NodePorts.
fn node_port_ips<'a>(
    options: &'a ProxyOptions,
    cidrs: &'a [Cidr],
) -> impl Iterator<Item = IpAddr> + 'a {
    options
        .interface_addresses
        .iter()
        .copied()
        .filter(move |ip| {
            ip.is_ipv6() == options.ipv6
                && cidrs.iter().any(|c| c.contains(*ip))
                && !(ip.is_loopback() && (options.ipv6 || !options.localhost_node_ports))
        })
}

/// The jumps from the built-in chains that kube-proxy installs outside the restore
/// (`docs/iptables.md` §2.1), as restore text for an empty namespace: the target chains are
/// declared and the jumps appended (filter, then nat).
pub fn jump_rules_text() -> String {
    let mut out = Output::default();
    for chain in [
        "KUBE-EXTERNAL-SERVICES",
        "KUBE-NODEPORTS",
        "KUBE-SERVICES",
        "KUBE-FORWARD",
        "KUBE-PROXY-FIREWALL",
        "KUBE-FIREWALL",
    ] {
        declare(&mut out.filter_chains, chain);
    }
    let external = Some("kubernetes externally-visible service portals");
    let portals = Some("kubernetes service portals");
    let firewall = Some("kubernetes load balancer firewall");
    let filter: [(&str, bool, Option<&str>, &str); 11] = [
        ("INPUT", true, external, "KUBE-EXTERNAL-SERVICES"),
        (
            "INPUT",
            false,
            Some("kubernetes health check service ports"),
            "KUBE-NODEPORTS",
        ),
        ("INPUT", true, firewall, "KUBE-PROXY-FIREWALL"),
        ("INPUT", false, None, "KUBE-FIREWALL"),
        ("FORWARD", true, external, "KUBE-EXTERNAL-SERVICES"),
        ("FORWARD", true, portals, "KUBE-SERVICES"),
        (
            "FORWARD",
            false,
            Some("kubernetes forwarding rules"),
            "KUBE-FORWARD",
        ),
        ("FORWARD", true, firewall, "KUBE-PROXY-FIREWALL"),
        ("OUTPUT", true, portals, "KUBE-SERVICES"),
        ("OUTPUT", true, firewall, "KUBE-PROXY-FIREWALL"),
        ("OUTPUT", false, None, "KUBE-FIREWALL"),
    ];
    declare(&mut out.nat_chains, "KUBE-SERVICES");
    declare(&mut out.nat_chains, "KUBE-POSTROUTING");
    let nat: [(&str, bool, Option<&str>, &str); 3] = [
        ("PREROUTING", false, portals, "KUBE-SERVICES"),
        ("OUTPUT", false, portals, "KUBE-SERVICES"),
        (
            "POSTROUTING",
            false,
            Some("kubernetes postrouting rules"),
            "KUBE-POSTROUTING",
        ),
    ];
    for (lines, jumps) in [
        (&mut out.filter_rules, &filter[..]),
        (&mut out.nat_rules, &nat[..]),
    ] {
        for (builtin, new_only, comment, chain) in jumps {
            let rule = RuleText::append(lines, builtin);
            let rule = if *new_only {
                rule.ctstate(false, &[CtState::New])
            } else {
                rule
            };
            let rule = match comment {
                Some(comment) => rule.comment(&[comment]),
                None => rule,
            };
            rule.jump(chain);
        }
    }
    out.finish()
}

/// [`jump_rules_text`] as a document. Restore it before the first sync so that packets reach
/// kube-proxy's chains.
pub fn jump_rules() -> OwnedRestoreFile {
    // The text is fixed and parses (tested); an empty document is the unreachable fallback.
    crate::parse(&jump_rules_text())
        .map(RestoreFile::into_owned)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use super::*;

    #[test]
    fn jump_rules_parse_and_write_back_unchanged() {
        let text = jump_rules_text();
        let parsed = crate::parse(&text).unwrap();
        assert_eq!(parsed.to_string(), text);
        assert_eq!(jump_rules(), parsed);
        assert_eq!(parsed.tables.len(), 2);
    }
}
