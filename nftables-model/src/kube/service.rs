//! The chains, rules, sets and elements of one service port (the loop body of
//! `syncProxyRules` and `writeServiceToEndpointRules`).

use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::vec;
use alloc::vec::Vec;
use core::cell::OnceCell;
use core::net::IpAddr;

use iptables_model::kube::{EndpointAddr, ResolvedPort, service_port_name};

use super::chains::Chains;
use super::names::{
    AFFINITY_PREFIX, CLUSTER_IPS, ENDPOINT_PREFIX, EXTERNAL_PREFIX, FIREWALL_IPS, FIREWALL_PREFIX,
    LOCAL_PREFIX, MARK_FOR_MASQUERADE, NO_ENDPOINT_NODEPORTS, NO_ENDPOINT_SERVICES, REJECT_CHAIN,
    SERVICE_IPS, SERVICE_NODEPORTS, SERVICE_PREFIX, Scratch, endpoint_of_port, fixed, rebase,
    service_chain,
};
use super::proxier::Owners;
use super::store::Slot;
use crate::element::{Atom, Element, Key, Verdict};
use crate::error::Error;
use crate::name::{Comment, Name};
use crate::object::{Container, Family, SetFlag};
use crate::rule::RuleText;
use crate::transaction::{Op, Sink};

/// The names a port's objects use, checked before anything of its Service is written. The
/// chain of its cluster-wide endpoints and those of its endpoints are made at once; its
/// other chains and the endpoints' affinity sets, which most ports do not use, are made from
/// them when first asked for (only their prefix differs: [`rebase`]).
#[derive(Clone, Debug)]
pub(crate) struct PortNames {
    cluster: Name,
    local: OnceCell<Name>,
    external: OnceCell<Name>,
    firewall: OnceCell<Name>,
    endpoints: Vec<(EndpointAddr, EndpointChain)>,
    comment: Comment,
}

/// An endpoint's chain, and the name of its affinity set when first asked for.
#[derive(Clone, Debug)]
pub(crate) struct EndpointChain {
    chain: Name,
    affinity: OnceCell<Name>,
}

impl EndpointChain {
    fn affinity(&self) -> &Name {
        self.affinity
            .get_or_init(|| rebase(&self.chain, ENDPOINT_PREFIX, AFFINITY_PREFIX))
    }
}

impl PortNames {
    /// The names of `port`'s objects, written in `scratch` first.
    ///
    /// # Errors
    ///
    /// [`Error`] when the Service's namespace, name or port name cannot be written.
    pub(crate) fn of(port: &ResolvedPort<'_>, scratch: &mut Scratch) -> Result<Self, Error> {
        let svc = port.service;
        let proto = port.port.protocol;
        let (ns, name, port_name) = (&svc.namespace, &svc.name, &port.port.name);
        let cluster = service_chain(ns, name, proto, port_name, scratch)?;
        let endpoints = port
            .all
            .iter()
            .map(|ep| {
                let chain = endpoint_of_port(scratch, ep.ip, ep.port)?;
                let affinity = OnceCell::new();
                Ok((*ep, EndpointChain { chain, affinity }))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let comment = Comment::new(&service_port_name(
            &svc.namespace,
            &svc.name,
            &port.port.name,
        ))?;
        Ok(Self {
            cluster,
            local: OnceCell::new(),
            external: OnceCell::new(),
            firewall: OnceCell::new(),
            endpoints,
            comment,
        })
    }

    fn local(&self) -> &Name {
        self.local
            .get_or_init(|| rebase(&self.cluster, SERVICE_PREFIX, LOCAL_PREFIX))
    }

    fn external(&self) -> &Name {
        self.external
            .get_or_init(|| rebase(&self.cluster, SERVICE_PREFIX, EXTERNAL_PREFIX))
    }

    fn firewall(&self) -> &Name {
        self.firewall
            .get_or_init(|| rebase(&self.cluster, SERVICE_PREFIX, FIREWALL_PREFIX))
    }

    fn endpoint(&self, ep: &EndpointAddr) -> Option<&EndpointChain> {
        self.endpoints
            .iter()
            .find(|(e, _)| e == ep)
            .map(|(_, names)| names)
    }
}

/// What writing a Service wanted, to want it again in a later sync without writing the Service
/// again while it does not change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// An element of a set or map (boxed: the other kinds are a name, and a Service's list
    /// is kept until it changes).
    Element(Slot, Box<Element>),
    /// A chain.
    Chain(Name),
    /// An affinity set.
    Affinity(Name),
}

/// What a sync shares across ports.
pub(crate) struct Context<'a, W> {
    pub(crate) family: Family,
    pub(crate) masquerade_all: bool,
    pub(crate) node_ip: IpAddr,
    /// The local-traffic matches: (from a local pod, from elsewhere).
    pub(crate) local: Option<&'a (RuleText, RuleText)>,
    pub(crate) tx: &'a mut W,
    /// What the written Services want, counted; the chains as they are written.
    pub(crate) owners: &'a mut Owners,
    /// This sync's number ([`Owners::want_chain`]).
    pub(crate) sync: u64,
    /// The chains this transaction adds, listed in a partial sync (a full sync's are in
    /// the counts).
    pub(crate) created: Option<&'a mut Vec<Name>>,
    /// What the Service being written wants.
    pub(crate) wanted: Vec<Wanted>,
    /// On a proxier's first sync, what an earlier run left in the kernel: an endpoint chain
    /// found there is kept as it is.
    pub(crate) found: Option<Found<'a>>,
}

/// The affinity sets found in the kernel's table (its chains are in [`Chains`]).
#[derive(Clone, Copy)]
pub(crate) struct Found<'a> {
    pub(crate) affinity_sets: &'a BTreeSet<Name>,
}

impl Found<'_> {
    /// Whether an endpoint chain found in the kernel is already what this sync would write
    /// (kube-proxy's `epChainSkipUpdate`): its name holds the endpoint's address and port,
    /// so only client-IP affinity could differ, and its affinity set is there exactly when
    /// the chain updates it.
    fn keeps(&self, chains: &Chains, endpoint: &EndpointChain, affinity: bool) -> bool {
        chains.in_kernel(&endpoint.chain)
            && affinity == self.affinity_sets.contains(endpoint.affinity())
    }
}

fn element(container: &'static str, key: Key, value: Option<Verdict>) -> Element {
    Element {
        container: fixed(container),
        key,
        value,
        comment: None,
    }
}

impl<W: Sink> Context<'_, W> {
    /// Wants `chain` (counted), adding and flushing it if this transaction has not yet.
    fn ensure(&mut self, chain: &Name) {
        if self.owners.chains.want(chain, Some(self.sync)) {
            self.tx.add_and_flush_chain(chain);
            if let Some(created) = self.created.as_deref_mut() {
                created.push(chain.clone());
            }
        }
        self.wanted.push(Wanted::Chain(chain.clone()));
    }

    /// Wants `chain` (counted) as the kernel holds it, without writing it.
    fn keep(&mut self, chain: &Name) {
        self.owners.chains.want(chain, None);
        self.wanted.push(Wanted::Chain(chain.clone()));
    }

    /// Wants `element`: the proxier settles the stores once the Service is written.
    fn element(&mut self, slot: Slot, element: Element) {
        self.wanted.push(Wanted::Element(slot, Box::new(element)));
    }

    /// An empty rule text (from the sink, which may lend a buffer it keeps).
    fn text(&mut self) -> RuleText {
        self.tx.rule_text()
    }

    fn add_rule(&mut self, chain: &Name, text: RuleText, comment: Option<&'static str>) {
        self.tx.add_rule(chain, text, comment.map(Comment::trusted));
    }

    /// Writes one port, noting in [`Context::wanted`] what it wants.
    #[allow(clippy::too_many_lines)] // the steps of syncProxyRules' loop body, in order
    pub(crate) fn write_port(&mut self, port: &ResolvedPort<'_>, names: &PortNames) {
        let proto = port.port.protocol;
        let affinity = port.service.client_ip_affinity;

        let kept = |ctx: &Self, ep: &EndpointChain| {
            ctx.found
                .is_some_and(|found| found.keeps(&ctx.owners.chains, ep, affinity.is_some()))
        };
        for (_, ep) in &names.endpoints {
            if kept(self, ep) {
                self.keep(&ep.chain);
            } else {
                self.ensure(&ep.chain);
            }
            if affinity.is_some() {
                self.wanted.push(Wanted::Affinity(ep.affinity().clone()));
            }
        }
        let uses_cluster_chain = !port.cluster.is_empty() && port.uses_cluster;
        if uses_cluster_chain {
            self.ensure(&names.cluster);
        }
        let uses_local_chain = !port.local.is_empty() && port.uses_local;
        if uses_local_chain {
            self.ensure(names.local());
        }
        let has_endpoints = port.any;
        let (internal_chain, has_internal) = if port.internal_local {
            (names.local(), has_endpoints && !port.local.is_empty())
        } else {
            (&names.cluster, has_endpoints)
        };
        let (external_policy_chain, has_external) = if port.external_local {
            (names.local(), has_endpoints && !port.local.is_empty())
        } else {
            (&names.cluster, has_endpoints)
        };
        let uses_external_chain = has_endpoints && port.externally_accessible;
        if uses_external_chain {
            self.ensure(names.external());
        }
        let filter_verdict = |has: bool| {
            if has_endpoints {
                (!has).then_some(Verdict::Drop)
            } else {
                Some(Verdict::Goto(fixed(REJECT_CHAIN)))
            }
        };
        let internal_verdict = filter_verdict(has_internal);
        let external_verdict = filter_verdict(has_external);
        let dest = |ip: IpAddr| {
            Key::from([
                Atom::Ip(ip),
                Atom::Protocol(proto),
                Atom::Port(port.port.port),
            ])
        };
        let no_endpoint = |key: Key, container: &'static str, verdict: &Option<Verdict>| Element {
            container: fixed(container),
            key,
            value: verdict.clone(),
            comment: Some(names.comment.clone()),
        };

        self.element(
            Slot::ClusterIps,
            element(CLUSTER_IPS, Key::from(Atom::Ip(port.cluster_ip)), None),
        );
        if has_internal {
            self.element(
                Slot::ServiceIps,
                element(
                    SERVICE_IPS,
                    dest(port.cluster_ip),
                    Some(Verdict::Goto(internal_chain.clone())),
                ),
            );
        } else {
            self.element(
                Slot::NoEndpointServices,
                no_endpoint(
                    dest(port.cluster_ip),
                    NO_ENDPOINT_SERVICES,
                    &internal_verdict,
                ),
            );
        }
        for ip in &port.external_ips {
            if has_endpoints {
                self.element(
                    Slot::ServiceIps,
                    element(
                        SERVICE_IPS,
                        dest(*ip),
                        Some(Verdict::Goto(names.external().clone())),
                    ),
                );
            }
            if !has_external {
                self.element(
                    Slot::NoEndpointServices,
                    no_endpoint(dest(*ip), NO_ENDPOINT_SERVICES, &external_verdict),
                );
            }
        }
        let uses_firewall = !port.load_balancer_ips.is_empty() && !port.source_ranges.is_empty();
        if uses_firewall {
            self.ensure(names.firewall());
        }
        for ip in &port.load_balancer_ips {
            if has_endpoints {
                self.element(
                    Slot::ServiceIps,
                    element(
                        SERVICE_IPS,
                        dest(*ip),
                        Some(Verdict::Goto(names.external().clone())),
                    ),
                );
            }
            if uses_firewall {
                self.element(
                    Slot::FirewallIps,
                    element(
                        FIREWALL_IPS,
                        dest(*ip),
                        Some(Verdict::Goto(names.firewall().clone())),
                    ),
                );
            }
        }
        if !has_external {
            for ip in &port.load_balancer_ips {
                self.element(
                    Slot::NoEndpointServices,
                    no_endpoint(dest(*ip), NO_ENDPOINT_SERVICES, &external_verdict),
                );
            }
        }
        if port.node_port != 0 {
            let key = || Key::from([Atom::Protocol(proto), Atom::Port(port.node_port)]);
            if has_endpoints {
                self.element(
                    Slot::ServiceNodeports,
                    element(
                        SERVICE_NODEPORTS,
                        key(),
                        Some(Verdict::Goto(names.external().clone())),
                    ),
                );
            }
            if !has_external {
                self.element(
                    Slot::NoEndpointNodeports,
                    no_endpoint(key(), NO_ENDPOINT_NODEPORTS, &external_verdict),
                );
            }
        }

        let mark_masq = fixed(MARK_FOR_MASQUERADE);
        let jump_masq = |text: RuleText| text.word("jump").name(&mark_masq);
        if has_internal {
            let to_ip = self.text().word(self.family.daddr()).ip(port.cluster_ip);
            if self.masquerade_all {
                self.add_rule(internal_chain, jump_masq(to_ip), None);
            } else if let Some((_, not_local)) = self.local {
                self.add_rule(internal_chain, jump_masq(to_ip.append(not_local)), None);
            }
        }
        if uses_external_chain {
            let external = names.external();
            if port.external_local {
                if let Some((local, _)) = self.local {
                    let text = self.text().append(local).word("goto").name(&names.cluster);
                    self.add_rule(external, text, Some("short-circuit pod traffic"));
                }
                let fib = |text: RuleText| text.word("fib saddr type local");
                let text = jump_masq(fib(self.text()));
                self.add_rule(external, text, Some("masquerade local traffic"));
                let text = fib(self.text()).word("goto").name(&names.cluster);
                self.add_rule(external, text, Some("short-circuit local traffic"));
            } else {
                let text = jump_masq(self.text());
                self.add_rule(external, text, None);
            }
            if has_external {
                let text = self.text().word("goto").name(external_policy_chain);
                self.add_rule(external, text, None);
            }
        }
        if uses_firewall {
            let mut sources = self.text().word(self.family.saddr()).word("!= {");
            let mut allow_from_node = false;
            for (i, cidr) in port.source_ranges.iter().enumerate() {
                if i > 0 {
                    sources = sources.word(",");
                }
                sources = sources.cidr(*cidr);
                allow_from_node |= cidr.contains(self.node_ip);
            }
            if allow_from_node {
                for ip in &port.load_balancer_ips {
                    sources = sources.word(",").ip(*ip);
                }
            }
            self.add_rule(names.firewall(), sources.word("}").word("drop"), None);
        }
        if let Some(timeout) = affinity {
            for (_, ep) in &names.endpoints {
                self.tx.push(Op::AddContainer(Box::new(Container {
                    name: ep.affinity().clone(),
                    key: vec![self.family.addr_type()],
                    value: None,
                    flags: vec![SetFlag::Dynamic, SetFlag::Timeout],
                    timeout: Some(timeout),
                    comment: None,
                })));
            }
        }
        if uses_cluster_chain {
            self.dispatch(&names.cluster, &port.cluster, names, affinity.is_some());
        }
        if uses_local_chain {
            self.dispatch(names.local(), &port.local, names, affinity.is_some());
        }
        for (ep, ep_names) in &names.endpoints {
            if kept(self, ep_names) {
                continue;
            }
            let chain = &ep_names.chain;
            let text = jump_masq(self.text().word(self.family.saddr()).ip(ep.ip));
            self.add_rule(chain, text, None);
            if affinity.is_some() {
                let text = self
                    .text()
                    .word("update")
                    .set(ep_names.affinity())
                    .word("{")
                    .word(self.family.saddr())
                    .word("}");
                self.add_rule(chain, text, None);
            }
            let text = self
                .text()
                .word("meta l4proto")
                .word(proto.lower())
                .word("dnat to")
                .host_port(ep.ip, ep.port);
            self.add_rule(chain, text, None);
        }
    }

    /// The affinity rules and the `numgen random mod N vmap` of a policy chain.
    fn dispatch(&mut self, chain: &Name, eps: &[EndpointAddr], names: &PortNames, affinity: bool) {
        let eps: Vec<&EndpointChain> = eps.iter().filter_map(|ep| names.endpoint(ep)).collect();
        if affinity {
            for ep in &eps {
                let text = self
                    .text()
                    .word(self.family.saddr())
                    .set(ep.affinity())
                    .word("goto")
                    .name(&ep.chain);
                self.add_rule(chain, text, None);
            }
        }
        let mut text = self
            .text()
            .word("numgen random mod")
            .number(eps.len() as u64)
            .word("vmap {");
        for (i, ep) in eps.iter().enumerate() {
            if i > 0 {
                text = text.word(",");
            }
            text = text.number(i as u64).word(": goto").name(&ep.chain);
        }
        self.add_rule(chain, text.word("}"), None);
    }
}
