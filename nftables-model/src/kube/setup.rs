//! The part of a full sync that does not depend on Services (`setupNFTables`): the table,
//! its base chains and their jumps, masquerading, the checks for unused ClusterIP ports,
//! services without endpoints and source ranges, the dispatch maps, and a flush of every set
//! and map the sync refills.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;
use core::net::IpAddr;

use super::names::{
    CLUSTER_IPS, CLUSTER_IPS_CHECK, FIREWALL_CHECK, FIREWALL_IPS, MARK_FOR_MASQUERADE,
    MASQUERADING, NO_ENDPOINT_NODEPORTS, NO_ENDPOINT_SERVICES, NODEPORT_ENDPOINTS_CHECK,
    NODEPORT_IPS, REJECT_CHAIN, SERVICE_ENDPOINTS_CHECK, SERVICE_IPS, SERVICE_NODEPORTS, SERVICES,
    fixed,
};
use super::options::NftOptions;
use super::store::Stores;
use crate::element::{Atom, Element, Key};
use crate::name::{Comment, Name};
use crate::object::{BaseChain, Chain, ChainType, Container, Hook, KeyType, Table};
use crate::rule::{Rule, RuleText};
use crate::transaction::{Op, Sink};
use hashbrown::HashSet;

/// kube-proxy's base chains: filtering before DNAT (priority dstnat-10), filtering at the
/// filter priority, and NAT.
const BASE_CHAINS: [(&str, ChainType, Hook, i32); 8] = [
    (
        "filter-prerouting-pre-dnat",
        ChainType::Filter,
        Hook::Prerouting,
        -110,
    ),
    (
        "filter-output-pre-dnat",
        ChainType::Filter,
        Hook::Output,
        -110,
    ),
    ("filter-input", ChainType::Filter, Hook::Input, 0),
    ("filter-forward", ChainType::Filter, Hook::Forward, 0),
    ("filter-output", ChainType::Filter, Hook::Output, 0),
    ("nat-prerouting", ChainType::Nat, Hook::Prerouting, -100),
    ("nat-output", ChainType::Nat, Hook::Output, -100),
    ("nat-postrouting", ChainType::Nat, Hook::Postrouting, 100),
];

/// The jumps from base chains: (to, from, only for new connections).
const JUMPS: [(&str, &str, bool); 11] = [
    (NODEPORT_ENDPOINTS_CHECK, "filter-input", true),
    (SERVICE_ENDPOINTS_CHECK, "filter-input", true),
    (SERVICE_ENDPOINTS_CHECK, "filter-forward", true),
    (SERVICE_ENDPOINTS_CHECK, "filter-output", true),
    (FIREWALL_CHECK, "filter-prerouting-pre-dnat", true),
    (FIREWALL_CHECK, "filter-output-pre-dnat", true),
    (SERVICES, "nat-output", false),
    (SERVICES, "nat-prerouting", false),
    (MASQUERADING, "nat-postrouting", false),
    (CLUSTER_IPS_CHECK, "filter-forward", true),
    (CLUSTER_IPS_CHECK, "filter-output", true),
];

/// Adds `chain` and flushes it, once per transaction (`ensureChain`).
pub(crate) fn ensure_chain(tx: &mut impl Sink, created: &mut HashSet<Name>, chain: &Name) {
    if created.insert(chain.clone()) {
        tx.add_and_flush_chain(chain);
    }
}

fn comment(text: &'static str) -> Option<Comment> {
    Some(Comment::trusted(text))
}

fn map(name: &'static str, key: Vec<KeyType>, text: &'static str) -> Op {
    Op::AddContainer(Box::new(Container {
        name: fixed(name),
        key,
        value: Some(KeyType::Verdict),
        flags: Vec::new(),
        timeout: None,
        comment: comment(text),
    }))
}

fn set(name: &'static str, key: KeyType, text: &'static str) -> Op {
    Op::AddContainer(Box::new(Container {
        name: fixed(name),
        key: vec![key],
        value: None,
        flags: Vec::new(),
        timeout: None,
        comment: comment(text),
    }))
}

fn rule(chain: &'static str, text: RuleText) -> Op {
    Op::AddRule(Rule::new(fixed(chain), text))
}

/// Writes the setup of a full sync; `first` adds and deletes each base chain before, so a
/// base chain left with other properties by an older kube-proxy is recreated.
#[allow(clippy::too_many_lines)] // one step of setupNFTables per block, in order
pub(crate) fn setup(tx: &mut impl Sink, options: &NftOptions, first: bool, stores: &mut Stores) {
    let family = options.family();
    let fam = family.keyword();
    let addr = family.addr_type();
    tx.push(Op::AddTable(Table {
        comment: comment("rules for kube-proxy"),
    }));
    if first {
        for (name, ..) in BASE_CHAINS {
            tx.push(Op::AddChain(Chain::regular(fixed(name))));
            tx.push(Op::DeleteChain(fixed(name)));
        }
    }
    for (name, chain_type, hook, priority) in BASE_CHAINS {
        tx.push(Op::AddChain(Chain {
            name: fixed(name),
            base: Some(BaseChain {
                chain_type,
                hook,
                priority,
            }),
            comment: None,
        }));
        tx.push(Op::FlushChain(fixed(name)));
    }
    let mut created = HashSet::new();
    for (to, from, new_only) in JUMPS {
        ensure_chain(tx, &mut created, &fixed(to));
        let text = if new_only {
            RuleText::new().word("ct").word("state").word("new")
        } else {
            RuleText::new()
        };
        tx.push(rule(from, text.word("jump").name(&fixed(to))));
    }
    for chain in [
        SERVICES,
        CLUSTER_IPS_CHECK,
        MASQUERADING,
        MARK_FOR_MASQUERADE,
    ] {
        ensure_chain(tx, &mut created, &fixed(chain));
    }

    let (mark, digits) = (options.proxy.masquerade_mark, options.mark_digits);
    let mark_words = RuleText::new().word("mark").word("set").word("mark");
    tx.push(rule(
        MARK_FOR_MASQUERADE,
        mark_words.clone().word("or").hex(mark, digits),
    ));
    tx.push(rule(
        MASQUERADING,
        RuleText::new()
            .word("mark")
            .word("and")
            .hex(mark, digits)
            .word("==")
            .word("0")
            .word("return"),
    ));
    tx.push(rule(MASQUERADING, mark_words.word("xor").hex(mark, digits)));
    tx.push(rule(
        MASQUERADING,
        RuleText::new().word("masquerade").word("fully-random"),
    ));

    tx.push(set(CLUSTER_IPS, addr, "Active ClusterIPs"));
    let mut reject = Rule::new(
        fixed(CLUSTER_IPS_CHECK),
        RuleText::new()
            .word(fam)
            .word("daddr")
            .set(&fixed(CLUSTER_IPS))
            .word("reject"),
    );
    reject.comment = comment("Reject traffic to invalid ports of ClusterIPs");
    tx.push(Op::AddRule(reject));
    if !options.service_cidrs.is_empty() {
        let mut text = RuleText::new().word(fam).word("daddr").word("{");
        let mut cidrs = RuleText::new();
        for cidr in &options.service_cidrs {
            cidrs = cidrs.cidr(*cidr);
        }
        // kube-proxy joins the CIDRs with bare commas.
        text = text.checked(&cidrs.as_str().replace(' ', ","));
        let mut drop = Rule::new(fixed(CLUSTER_IPS_CHECK), text.word("}").word("drop"));
        drop.comment = comment("Drop traffic to unallocated ClusterIPs");
        tx.push(Op::AddRule(drop));
    }

    let node_port_cidrs = options.node_port_cidrs();
    tx.push(set(NODEPORT_IPS, addr, "IPs that accept NodePort traffic"));
    match &node_port_cidrs {
        None => tx.push(Op::DeleteContainer(fixed(NODEPORT_IPS), false)),
        Some(cidrs) => {
            tx.push(Op::FlushContainer(fixed(NODEPORT_IPS), false));
            let mut seen: Vec<IpAddr> = Vec::new();
            for cidr in cidrs {
                for ip in &options.proxy.interface_addresses {
                    if cidr.contains(*ip) && !ip.is_loopback() && !seen.contains(ip) {
                        seen.push(*ip);
                        tx.push(Op::AddElement(Box::new(Element {
                            container: fixed(NODEPORT_IPS),
                            key: Key::from(Atom::Ip(*ip)),
                            value: None,
                            comment: None,
                        })));
                    }
                }
            }
        }
    }

    let dest = vec![addr, KeyType::InetProto, KeyType::InetService];
    let port = vec![KeyType::InetProto, KeyType::InetService];
    tx.push(map(
        NO_ENDPOINT_SERVICES,
        dest.clone(),
        "vmap to drop or reject packets to services with no endpoints",
    ));
    tx.push(map(
        NO_ENDPOINT_NODEPORTS,
        port.clone(),
        "vmap to drop or reject packets to service nodeports with no endpoints",
    ));
    tx.push(Op::AddChain(Chain {
        name: fixed(REJECT_CHAIN),
        base: None,
        comment: comment("helper for @no-endpoint-services / @no-endpoint-nodeports"),
    }));
    tx.push(Op::FlushChain(fixed(REJECT_CHAIN)));
    tx.push(rule(REJECT_CHAIN, RuleText::new().word("reject")));

    let dispatch = |map_name: &'static str| {
        RuleText::new()
            .word(fam)
            .word("daddr")
            .word(".")
            .word("meta")
            .word("l4proto")
            .word(".")
            .word("th")
            .word("dport")
            .word("vmap")
            .set(&fixed(map_name))
    };
    let port_dispatch = |prefix: RuleText, map_name: &'static str| {
        prefix
            .word("meta")
            .word("l4proto")
            .word(".")
            .word("th")
            .word("dport")
            .word("vmap")
            .set(&fixed(map_name))
    };
    let local_addresses = |fib: bool| match &node_port_cidrs {
        None => {
            let text = if fib {
                RuleText::new()
                    .word("fib")
                    .word("daddr")
                    .word("type")
                    .word("local")
            } else {
                RuleText::new()
            };
            match family {
                crate::object::Family::Ip => {
                    text.word("ip").word("daddr").word("!=").word("127.0.0.0/8")
                }
                crate::object::Family::Ip6 => text.word("ip6").word("daddr").word("!=").word("::1"),
            }
        }
        Some(_) => RuleText::new()
            .word(fam)
            .word("daddr")
            .set(&fixed(NODEPORT_IPS)),
    };
    tx.push(rule(
        SERVICE_ENDPOINTS_CHECK,
        dispatch(NO_ENDPOINT_SERVICES),
    ));
    tx.push(rule(
        NODEPORT_ENDPOINTS_CHECK,
        port_dispatch(local_addresses(false), NO_ENDPOINT_NODEPORTS),
    ));

    tx.push(map(
        FIREWALL_IPS,
        dest.clone(),
        "destinations that are subject to LoadBalancerSourceRanges",
    ));
    ensure_chain(tx, &mut created, &fixed(FIREWALL_CHECK));
    tx.push(rule(FIREWALL_CHECK, dispatch(FIREWALL_IPS)));

    tx.push(map(
        SERVICE_IPS,
        dest,
        "ClusterIP, ExternalIP and LoadBalancer IP traffic",
    ));
    tx.push(map(SERVICE_NODEPORTS, port, "NodePort traffic"));
    tx.push(rule(SERVICES, dispatch(SERVICE_IPS)));
    tx.push(rule(
        SERVICES,
        port_dispatch(local_addresses(true), SERVICE_NODEPORTS),
    ));

    for store in stores.all() {
        store.read_or_reset(tx);
    }
}
