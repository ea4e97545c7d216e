//! kube-proxy's `syncProxyRules`: Services and EndpointSlices in, restore input out (spec §2-§3,
//! §11 for partial syncs).

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::endpoints::{Ep, categorize, collect};
use super::input::{EndpointSlice, ProxyOptions, Service, ServicePort, ServiceType, TrafficPolicy};
use super::naming::{ServiceChains, endpoint_chain, is_service_chain, service_port_name};
use super::rules::{
    addrtype_local, ctstate, destination, has_mark, jump, mark_target, nfacct, protocol, random,
    recent, service_ip, source,
};
use crate::addr::{Cidr, parse_ip_lenient};
use crate::model::{
    Command, CtState, Line, MarkAction, Probability, RestoreFile, Rule, Table, TableSection, Target,
};
use crate::probability::compute_probability;

/// Whether the service `(namespace, name)` changed since the last successful sync.
pub type ChangedFn<'a> = &'a dyn Fn(&str, &str) -> bool;

/// What a sync may assume about the kernel and which services it must rewrite.
#[derive(Clone, Copy)]
pub struct SyncRequest<'a> {
    /// The nat chains that exist in the kernel now; service chains among them that the new
    /// state does not use are flushed and deleted (`:CHAIN` + `-X CHAIN`).
    pub existing_chains: &'a BTreeSet<String>,
    /// `None` for a full sync; for a partial sync (KEP-3453), whether the service
    /// `(namespace, name)` changed since the last successful sync: only those services' own
    /// chains (SVC, SVL, EXT, FW, SEP) are written.
    pub changed: Option<ChangedFn<'a>>,
}

impl core::fmt::Debug for SyncRequest<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SyncRequest")
            .field("existing_chains", &self.existing_chains)
            .field("partial", &self.changed.is_some())
            .finish()
    }
}

/// The result of a sync.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    /// The iptables-restore input (filter, then nat), in kube-proxy's emission order.
    pub restore: RestoreFile,
    /// Every nat chain the new state uses (written or not); after a successful restore the
    /// kernel holds these plus the untouched fixed chains.
    pub active_chains: BTreeSet<String>,
}

/// Rules under construction: chain declarations first, then commands, per table.
#[derive(Default)]
struct Tables {
    filter_chains: Vec<Line>,
    filter_rules: Vec<Line>,
    nat_chains: Vec<Line>,
    nat_rules: Vec<Line>,
}

impl Tables {
    /// The length of each list, in field order.
    const fn lens(&self) -> [usize; 4] {
        [
            self.filter_chains.len(),
            self.filter_rules.len(),
            self.nat_chains.len(),
            self.nat_rules.len(),
        ]
    }

    const fn lists(&self) -> [&Vec<Line>; 4] {
        [
            &self.filter_chains,
            &self.filter_rules,
            &self.nat_chains,
            &self.nat_rules,
        ]
    }

    const fn lists_mut(&mut self) -> [&mut Vec<Line>; 4] {
        [
            &mut self.filter_chains,
            &mut self.filter_rules,
            &mut self.nat_chains,
            &mut self.nat_rules,
        ]
    }
}

/// What one service's ports wrote outside their own chains (steps 1-5 of spec §3) and the
/// chains they use: everything a partial sync needs from a service that did not change.
#[derive(Clone, Debug, Default)]
pub(crate) struct SharedRules {
    /// The number of service ports (a different count means a different service).
    ports: usize,
    /// The endpoints of those ports (for the large-cluster threshold).
    endpoints: usize,
    /// The lines, per list of [`Tables`] in field order.
    lines: [Vec<Line>; 4],
    /// The nat chains the ports use.
    active: Vec<String>,
}

/// [`SharedRules`] by service `(namespace, name)`, kept by the proxier between syncs.
pub(crate) type SharedCache = BTreeMap<ServiceKey, SharedRules>;

/// A service's `(namespace, name)`.
type ServiceKey = (String, String);

fn service_key(service: &Service) -> ServiceKey {
    (service.namespace.clone(), service.name.clone())
}

fn declare(lines: &mut Vec<Line>, name: &str) {
    let mut section = TableSection::new(Table::Nat);
    section.declare(name);
    lines.append(&mut section.lines);
}

fn append(lines: &mut Vec<Line>, chain: &str, rule: Rule) {
    lines.push(Line::Command(Command::Append {
        chain: chain.into(),
        rule,
    }));
}

const FILTER_CHAINS: [&str; 5] = [
    "KUBE-SERVICES",
    "KUBE-EXTERNAL-SERVICES",
    "KUBE-FORWARD",
    "KUBE-NODEPORTS",
    "KUBE-PROXY-FIREWALL",
];
const NAT_CHAINS: [&str; 4] = [
    "KUBE-SERVICES",
    "KUBE-NODEPORTS",
    "KUBE-POSTROUTING",
    "KUBE-MARK-MASQ",
];
const LAST_RULE: &str =
    "kubernetes service nodeports; NOTE: this must be the last rule in this chain";

fn family_ip(text: &str, options: &ProxyOptions) -> Option<IpAddr> {
    parse_ip_lenient(text).filter(|ip| ip.is_ipv6() == options.ipv6)
}

/// How one service's ports are written in this sync.
enum Plan {
    /// Unchanged in a partial sync: replay what the last sync wrote for it.
    Cached(SharedRules),
    /// Computed from the endpoints of each port.
    Fresh(Vec<Vec<Ep>>),
}

type PortRef<'a> = (&'a Service, &'a ServicePort, IpAddr);

/// Generates the restore input for `services` and `slices` (spec §3).
pub fn generate(
    options: &ProxyOptions,
    services: &[Service],
    slices: &[EndpointSlice],
    request: SyncRequest<'_>,
) -> Generated {
    generate_cached(options, services, slices, request, None).0
}

/// [`generate`], reusing `previous` for services a partial sync does not rewrite; returns the
/// cache for the next sync when `previous` is given.
pub(crate) fn generate_cached(
    options: &ProxyOptions,
    services: &[Service],
    slices: &[EndpointSlice],
    request: SyncRequest<'_>,
    mut previous: Option<SharedCache>,
) -> (Generated, Option<SharedCache>) {
    let mut by_service: BTreeMap<(&str, &str), Vec<&EndpointSlice>> = BTreeMap::new();
    for slice in slices {
        by_service
            .entry((slice.namespace.as_str(), slice.service.as_str()))
            .or_default()
            .push(slice);
    }
    let mut ports: Vec<PortRef<'_>> = Vec::new();
    for service in services
        .iter()
        .filter(|s| s.service_type != ServiceType::ExternalName)
    {
        let Some(cluster_ip) = family_ip(&service.cluster_ip, options) else {
            continue;
        };
        ports.extend(service.ports.iter().map(|p| (service, p, cluster_ip)));
    }
    ports.sort_by(|a, b| {
        (&a.0.namespace, &a.0.name, &a.1.name).cmp(&(&b.0.namespace, &b.0.name, &b.1.name))
    });
    let groups: Vec<(&[PortRef<'_>], Option<ServiceKey>, Plan)> = ports
        .chunk_by(|a, b| a.0.namespace == b.0.namespace && a.0.name == b.0.name)
        .filter_map(|group| {
            let (service, ..) = group.first()?;
            // Keys only when caching: a plain `generate` needs none.
            let key = previous.is_some().then(|| service_key(service));
            let write_own = request
                .changed
                .is_none_or(|changed| changed(&service.namespace, &service.name));
            let cached = previous
                .as_mut()
                .zip(key.as_ref())
                .filter(|_| !write_own)
                .and_then(|(cache, key)| cache.remove(key))
                .filter(|c| c.ports == group.len());
            let plan = match cached {
                Some(shared) => Plan::Cached(shared),
                None => Plan::Fresh(
                    group
                        .iter()
                        .map(|(s, p, _)| {
                            collect(
                                by_service
                                    .get(&(s.namespace.as_str(), s.name.as_str()))
                                    .map_or(&[][..], |v| v),
                                p,
                                options,
                            )
                        })
                        .collect(),
                ),
            };
            Some((group, key, plan))
        })
        .collect();
    let total: usize = groups
        .iter()
        .map(|(_, _, plan)| match plan {
            Plan::Cached(shared) => shared.endpoints,
            Plan::Fresh(eps) => eps.iter().map(Vec::len).sum(),
        })
        .sum();
    let large = total > options.large_cluster_endpoints;

    let mut out = Tables::default();
    // Collected as a list and sorted once: much cheaper than inserting name by name.
    let mut active = Vec::new();
    let mut next = previous.as_ref().map(|_| SharedCache::new());
    fixed_rules_head(options, &mut out);
    for (group, key, plan) in groups {
        let shared = match plan {
            Plan::Cached(shared) => {
                for (list, lines) in out.lists_mut().into_iter().zip(&shared.lines) {
                    list.extend(lines.iter().cloned());
                }
                active.extend(shared.active.iter().cloned());
                shared
            }
            Plan::Fresh(endpoints) => {
                let mut shared = SharedRules {
                    ports: group.len(),
                    endpoints: endpoints.iter().map(Vec::len).sum(),
                    ..SharedRules::default()
                };
                for ((service, port, cluster_ip), eps) in group.iter().zip(&endpoints) {
                    let write_own = request
                        .changed
                        .is_none_or(|changed| changed(&service.namespace, &service.name));
                    let ctx = PortContext {
                        options,
                        service,
                        port,
                        cluster_ip: *cluster_ip,
                        large,
                    };
                    let before = out.lens();
                    let mut port_active = Vec::new();
                    let end = ctx.emit(eps, &mut out, &mut port_active, write_own);
                    if next.is_some() {
                        for (((list, lines), start), end) in out
                            .lists()
                            .into_iter()
                            .zip(&mut shared.lines)
                            .zip(before)
                            .zip(end)
                        {
                            lines.extend(list.get(start..end).unwrap_or_default().iter().cloned());
                        }
                        shared.active.extend(port_active.iter().cloned());
                    }
                    active.extend(port_active);
                }
                shared
            }
        };
        if let (Some(next), Some(key)) = (next.as_mut(), key) {
            next.insert(key, shared);
        }
    }
    let active: BTreeSet<String> = active.into_iter().collect();
    // Both sets are sorted: walk them together instead of looking each chain up.
    let mut used = active.iter().peekable();
    let stale = request.existing_chains.iter().filter(|chain| {
        while used.next_if(|a| a < chain).is_some() {}
        is_service_chain(chain) && used.peek() != Some(chain)
    });
    for stale in stale {
        declare(&mut out.nat_chains, stale);
        out.nat_rules
            .push(Line::Command(Command::DeleteChain(Some(stale.clone()))));
    }
    fixed_rules_tail(options, &mut out);

    let mut filter = TableSection::new(Table::Filter);
    filter.lines = out.filter_chains;
    filter.lines.append(&mut out.filter_rules);
    let mut nat = TableSection::new(Table::Nat);
    nat.lines = out.nat_chains;
    nat.lines.append(&mut out.nat_rules);
    let generated = Generated {
        restore: RestoreFile {
            tables: alloc::vec![filter, nat],
        },
        active_chains: active,
    };
    (generated, next)
}

/// Chains and rules that do not depend on services and come before them.
fn fixed_rules_head(options: &ProxyOptions, out: &mut Tables) {
    FILTER_CHAINS
        .iter()
        .for_each(|c| declare(&mut out.filter_chains, c));
    NAT_CHAINS
        .iter()
        .for_each(|c| declare(&mut out.nat_chains, c));
    let mark = options.masquerade_mark;
    append(
        &mut out.nat_rules,
        "KUBE-POSTROUTING",
        has_mark(Rule::new(), true, mark).target(Target::Return),
    );
    append(
        &mut out.nat_rules,
        "KUBE-POSTROUTING",
        Rule::new().target(mark_target(MarkAction::XorMark(mark))),
    );
    let masquerade = Target::Masquerade {
        to_ports: None,
        random: false,
        random_fully: options.random_fully,
    };
    append(
        &mut out.nat_rules,
        "KUBE-POSTROUTING",
        Rule::new()
            .comment("kubernetes service traffic requiring SNAT")
            .target(masquerade),
    );
    append(
        &mut out.nat_rules,
        "KUBE-MARK-MASQ",
        Rule::new().target(mark_target(MarkAction::OrMark(mark))),
    );
    if !options.ipv6 && options.localhost_node_ports {
        declare(&mut out.filter_chains, "KUBE-FIREWALL");
        let loopback = Cidr {
            addr: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)),
            prefix: Some(8),
        };
        let rule = source(
            destination(
                Rule::new().comment("block incoming localnet connections"),
                loopback,
            ),
            true,
            loopback,
        );
        let rule = ctstate(
            rule,
            true,
            &[CtState::Related, CtState::Established, CtState::Dnat],
        )
        .target(Target::Drop);
        append(&mut out.filter_rules, "KUBE-FIREWALL", rule);
    }
}

/// Rules that come after the services: the NodePort dispatch and KUBE-FORWARD.
fn fixed_rules_tail(options: &ProxyOptions, out: &mut Tables) {
    let last = Rule::new().comment(LAST_RULE);
    match &options.node_port_addresses {
        None => {
            let mut rule = addrtype_local(last, false, false);
            if options.ipv6 {
                rule = destination_negated(
                    rule,
                    Cidr {
                        addr: IpAddr::V6(Ipv6Addr::LOCALHOST),
                        prefix: Some(128),
                    },
                );
            } else if !options.localhost_node_ports {
                rule = destination_negated(
                    rule,
                    Cidr {
                        addr: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)),
                        prefix: Some(8),
                    },
                );
            }
            append(
                &mut out.nat_rules,
                "KUBE-SERVICES",
                rule.target(jump("KUBE-NODEPORTS")),
            );
        }
        Some(cidrs) => {
            for ip in node_port_ips(options, cidrs) {
                append(
                    &mut out.nat_rules,
                    "KUBE-SERVICES",
                    destination(last.clone(), Cidr::host(ip)).target(jump("KUBE-NODEPORTS")),
                );
            }
        }
    }
    if !options.conntrack_tcp_liberal {
        let mut rule = ctstate(Rule::new(), false, &[CtState::Invalid]);
        if options.nfacct {
            rule = nfacct(rule, "ct_state_invalid_dropped_pkts");
        }
        append(
            &mut out.filter_rules,
            "KUBE-FORWARD",
            rule.target(Target::Drop),
        );
    }
    let forward = has_mark(
        Rule::new().comment("kubernetes forwarding rules"),
        false,
        options.masquerade_mark,
    );
    append(
        &mut out.filter_rules,
        "KUBE-FORWARD",
        forward.target(Target::Accept),
    );
    let conntrack = ctstate(
        Rule::new().comment("kubernetes forwarding conntrack rule"),
        false,
        &[CtState::Related, CtState::Established],
    );
    append(
        &mut out.filter_rules,
        "KUBE-FORWARD",
        conntrack.target(Target::Accept),
    );
}

fn destination_negated(rule: Rule, address: Cidr) -> Rule {
    rule.with(crate::model::Spec::Destination {
        negated: true,
        address,
    })
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

/// Everything needed to write one service port.
struct PortContext<'a> {
    options: &'a ProxyOptions,
    service: &'a Service,
    port: &'a ServicePort,
    cluster_ip: IpAddr,
    large: bool,
}

impl PortContext<'_> {
    /// A comment, omitted in large-cluster mode for the per-endpoint rules (spec §3 step 11).
    fn endpoint_comment(&self, rule: Rule, text: impl FnOnce() -> String) -> Rule {
        if self.large {
            rule
        } else {
            rule.comment(text())
        }
    }

    #[allow(clippy::too_many_lines)] // one step of spec §3 per block, in order
    /// Writes the port's rules; returns the table lengths at the end of its shared rules
    /// (steps 1-5, outside its own chains) and adds the chains it uses to `active`.
    fn emit(
        &self,
        eps: &[Ep],
        out: &mut Tables,
        active: &mut Vec<String>,
        write_own: bool,
    ) -> [usize; 4] {
        let (options, service, port) = (self.options, self.service, self.port);
        let spn = service_port_name(&service.namespace, &service.name, &port.name);
        let chains = ServiceChains::new(&spn, port.protocol);
        let proto = port.protocol;
        let lb = service.service_type == ServiceType::LoadBalancer;
        let node_port = if matches!(
            service.service_type,
            ServiceType::NodePort | ServiceType::LoadBalancer
        ) {
            port.node_port
        } else {
            0
        };
        let external_ips: Vec<IpAddr> = service
            .external_ips
            .iter()
            .filter_map(|ip| family_ip(ip, options))
            .collect();
        let lb_ips: Vec<IpAddr> = if lb {
            service
                .load_balancer_ips
                .iter()
                .filter_map(|ip| family_ip(ip, options))
                .collect()
        } else {
            Vec::new()
        };
        let ranges: Vec<Cidr> = service
            .load_balancer_source_ranges
            .iter()
            .filter_map(|r| Cidr::parse_lenient(r))
            .filter(|c| c.addr.is_ipv6() == options.ipv6)
            .collect();
        let etp_local = service.external_traffic_policy == TrafficPolicy::Local
            && (matches!(
                service.service_type,
                ServiceType::NodePort | ServiceType::LoadBalancer
            ) || !external_ips.is_empty());
        let itp_local = service.internal_traffic_policy == TrafficPolicy::Local;
        let externally_accessible =
            node_port != 0 || !external_ips.is_empty() || !lb_ips.is_empty();
        // kube-proxy's UsesClusterEndpoints: even with eTP=Local, an externally reachable port
        // needs the cluster chain for the short-circuit rules of KUBE-EXT.
        let uses_cluster = !itp_local || externally_accessible;
        let uses_local = itp_local || (externally_accessible && etp_local);
        let cat = categorize(eps, uses_cluster, uses_local);

        let (internal_chain, has_internal) = if itp_local {
            (&chains.svl, !cat.local.is_empty())
        } else {
            (&chains.svc, cat.any)
        };
        let (external_policy_chain, has_external) = if etp_local {
            (&chains.svl, !cat.local.is_empty())
        } else {
            (&chains.svc, cat.any)
        };
        let uses_fw = cat.any && !lb_ips.is_empty() && !ranges.is_empty();
        let lb_chain = if uses_fw { &chains.fw } else { &chains.ext };
        let (no_internal, no_external) = if cat.any {
            (
                (Target::Drop, format!("{spn} has no local endpoints")),
                (Target::Drop, format!("{spn} has no local endpoints")),
            )
        } else {
            (
                (
                    Target::Reject { with: None },
                    format!("{spn} has no endpoints"),
                ),
                (
                    Target::Reject { with: None },
                    format!("{spn} has no endpoints"),
                ),
            )
        };

        // 1. ClusterIP.
        if has_internal {
            let rule = service_ip(
                format!("{spn} cluster IP"),
                proto,
                Some(self.cluster_ip),
                port.port,
            );
            append(
                &mut out.nat_rules,
                "KUBE-SERVICES",
                rule.target(jump(internal_chain)),
            );
        } else {
            let rule = service_ip(
                no_internal.1.clone(),
                proto,
                Some(self.cluster_ip),
                port.port,
            );
            append(
                &mut out.filter_rules,
                "KUBE-SERVICES",
                rule.target(no_internal.0.clone()),
            );
        }
        // 2. External IPs.
        for ip in &external_ips {
            if cat.any {
                let rule = service_ip(format!("{spn} external IP"), proto, Some(*ip), port.port);
                append(
                    &mut out.nat_rules,
                    "KUBE-SERVICES",
                    rule.target(jump(&chains.ext)),
                );
            }
            if !has_external {
                let rule = service_ip(no_external.1.clone(), proto, Some(*ip), port.port);
                append(
                    &mut out.filter_rules,
                    "KUBE-EXTERNAL-SERVICES",
                    rule.target(no_external.0.clone()),
                );
            }
        }
        // 3. Load-balancer IPs.
        for ip in &lb_ips {
            if cat.any {
                let rule = service_ip(
                    format!("{spn} loadbalancer IP"),
                    proto,
                    Some(*ip),
                    port.port,
                );
                append(
                    &mut out.nat_rules,
                    "KUBE-SERVICES",
                    rule.target(jump(lb_chain)),
                );
            }
            if uses_fw {
                let rule = service_ip(
                    format!("{spn} traffic not accepted by {}", chains.fw),
                    proto,
                    Some(*ip),
                    port.port,
                );
                append(
                    &mut out.filter_rules,
                    "KUBE-PROXY-FIREWALL",
                    rule.target(Target::Drop),
                );
            }
        }
        if !has_external {
            for ip in &lb_ips {
                let rule = service_ip(no_external.1.clone(), proto, Some(*ip), port.port);
                append(
                    &mut out.filter_rules,
                    "KUBE-EXTERNAL-SERVICES",
                    rule.target(no_external.0.clone()),
                );
            }
        }
        // 4. NodePort.
        if node_port != 0 {
            if cat.any {
                if options.localhost_node_ports && !options.ipv6 && options.nfacct {
                    let loopback = Cidr {
                        addr: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)),
                        prefix: Some(8),
                    };
                    let rule = super::rules::dport(
                        destination(protocol(Rule::new().comment(spn.clone()), proto), loopback),
                        node_port,
                    );
                    append(
                        &mut out.nat_rules,
                        "KUBE-NODEPORTS",
                        nfacct(rule, "localhost_nps_accepted_pkts").target(jump(&chains.ext)),
                    );
                }
                let rule = service_ip(spn.clone(), proto, None, node_port);
                append(
                    &mut out.nat_rules,
                    "KUBE-NODEPORTS",
                    rule.target(jump(&chains.ext)),
                );
            }
            if !has_external {
                let rule = addrtype_local(Rule::new().comment(no_external.1.clone()), false, false);
                let rule = super::rules::dport(protocol(rule, proto), node_port);
                append(
                    &mut out.filter_rules,
                    "KUBE-EXTERNAL-SERVICES",
                    rule.target(no_external.0.clone()),
                );
            }
        }
        // 5. Health-check NodePort.
        if lb && etp_local && service.health_check_node_port != 0 {
            let rule = service_ip(
                format!("{spn} health check node port"),
                super::input::Protocol::Tcp,
                None,
                service.health_check_node_port,
            );
            append(
                &mut out.filter_rules,
                "KUBE-NODEPORTS",
                rule.target(Target::Accept),
            );
        }

        // The service's own chains (steps 6-10), written in full syncs and when it changed.
        let uses_ext_chain = cat.any && externally_accessible;
        let uses_cluster_chain = uses_cluster && !cat.cluster.is_empty();
        let uses_local_chain = uses_local && !cat.local.is_empty();
        let sep_chains: Vec<String> = cat
            .all
            .iter()
            .map(|e| endpoint_chain(&spn, proto, &e.host_port))
            .collect();
        for (used, name) in [
            (uses_ext_chain, &chains.ext),
            (uses_fw, &chains.fw),
            (uses_cluster_chain, &chains.svc),
            (uses_local_chain, &chains.svl),
        ] {
            if used {
                active.push(name.clone());
            }
        }
        active.extend(sep_chains.iter().cloned());
        let shared_end = out.lens();
        if !write_own {
            return shared_end;
        }
        let chain_rules = &mut out.nat_rules;
        // 6. Masquerade rule of the internal chain.
        if has_internal && (options.masquerade_all || options.pod_cidr.is_some()) {
            let rule = service_ip(
                format!("{spn} cluster IP"),
                proto,
                Some(self.cluster_ip),
                port.port,
            );
            let rule = match (options.masquerade_all, options.pod_cidr) {
                (false, Some(pod_cidr)) => source(rule, true, pod_cidr),
                _ => rule,
            };
            append(
                chain_rules,
                internal_chain,
                rule.target(jump("KUBE-MARK-MASQ")),
            );
        }
        // 7. KUBE-EXT.
        if uses_ext_chain {
            declare(&mut out.nat_chains, &chains.ext);
            if etp_local {
                if let Some(pod_cidr) = options.pod_cidr {
                    let rule = source(
                        Rule::new().comment(format!("pod traffic for {spn} external destinations")),
                        false,
                        pod_cidr,
                    );
                    append(chain_rules, &chains.ext, rule.target(jump(&chains.svc)));
                }
                let rule = addrtype_local(
                    Rule::new().comment(format!(
                        "masquerade LOCAL traffic for {spn} external destinations"
                    )),
                    true,
                    false,
                );
                append(
                    chain_rules,
                    &chains.ext,
                    rule.target(jump("KUBE-MARK-MASQ")),
                );
                let rule = addrtype_local(
                    Rule::new().comment(format!(
                        "route LOCAL traffic for {spn} external destinations"
                    )),
                    true,
                    false,
                );
                append(chain_rules, &chains.ext, rule.target(jump(&chains.svc)));
            } else {
                let rule = Rule::new().comment(format!(
                    "masquerade traffic for {spn} external destinations"
                ));
                append(
                    chain_rules,
                    &chains.ext,
                    rule.target(jump("KUBE-MARK-MASQ")),
                );
            }
            if has_external {
                append(
                    chain_rules,
                    &chains.ext,
                    Rule::new().target(jump(external_policy_chain)),
                );
            }
        }
        // 8. KUBE-FW.
        if uses_fw {
            declare(&mut out.nat_chains, &chains.fw);
            for range in &ranges {
                let rule = source(
                    Rule::new().comment(format!("{spn} loadbalancer IP")),
                    false,
                    *range,
                );
                append(chain_rules, &chains.fw, rule.target(jump(&chains.ext)));
            }
            if ranges.iter().any(|r| r.contains(options.node_ip)) {
                for ip in &lb_ips {
                    let rule = source(
                        Rule::new().comment(format!("{spn} loadbalancer IP")),
                        false,
                        Cidr::host(*ip),
                    );
                    append(chain_rules, &chains.fw, rule.target(jump(&chains.ext)));
                }
            }
            append(
                chain_rules,
                &chains.fw,
                Rule::new().comment(format!(
                    "other traffic to {spn} will be dropped by KUBE-PROXY-FIREWALL"
                )),
            );
        }
        // 9. SVC / SVL → SEP.
        let sep_of = |ep: &Ep| {
            cat.all
                .iter()
                .position(|e| e.host_port == ep.host_port)
                .and_then(|i| sep_chains.get(i))
        };
        for (used, chain, list) in [
            (uses_cluster_chain, &chains.svc, &cat.cluster),
            (uses_local_chain, &chains.svl, &cat.local),
        ] {
            if !used {
                continue;
            }
            declare(&mut out.nat_chains, chain);
            if let Some(timeout) = service.client_ip_affinity {
                for ep in list.iter() {
                    let Some(sep) = sep_of(ep) else { continue };
                    let rule =
                        self.endpoint_comment(Rule::new(), || format!("{spn} -> {}", ep.host_port));
                    append(
                        chain_rules,
                        chain,
                        recent(rule, sep, Some(timeout)).target(jump(sep)),
                    );
                }
            }
            let n = list.len();
            for (i, ep) in list.iter().enumerate() {
                let Some(sep) = sep_of(ep) else { continue };
                let mut rule =
                    self.endpoint_comment(Rule::new(), || format!("{spn} -> {}", ep.host_port));
                if let Some(p) = (i + 1 < n)
                    .then(|| Probability::new(&compute_probability((n - i) as u64)))
                    .flatten()
                {
                    rule = random(rule, p);
                }
                append(chain_rules, chain, rule.target(jump(sep)));
            }
        }
        // 10. SEP chains.
        for (ep, sep) in cat.all.iter().zip(&sep_chains) {
            declare(&mut out.nat_chains, sep);
            let hairpin = source(
                self.endpoint_comment(Rule::new(), || spn.clone()),
                false,
                Cidr::host(ep.ip),
            );
            append(chain_rules, sep, hairpin.target(jump("KUBE-MARK-MASQ")));
            let mut dnat = self.endpoint_comment(Rule::new(), || spn.clone());
            if service.client_ip_affinity.is_some() {
                dnat = recent(dnat, sep, None);
            }
            let dnat = protocol(dnat, proto).target(Target::Dnat {
                to: Some(ep.host_port.clone()),
                random: false,
                persistent: false,
            });
            append(chain_rules, sep, dnat);
        }
        shared_end
    }
}

/// The jumps from the built-in chains that kube-proxy installs outside the restore (spec §2.1),
/// as a restore document for an empty namespace: the target chains are declared and the jumps
/// appended. Restore it before the first sync so that packets reach kube-proxy's chains.
pub fn jump_rules() -> RestoreFile {
    let jump_rule = |new_only: bool, comment: Option<&str>, chain: &str| {
        let mut rule = Rule::new();
        if new_only {
            rule = ctstate(rule, false, &[CtState::New]);
        }
        if let Some(comment) = comment {
            rule = rule.comment(comment);
        }
        rule.target(jump(chain))
    };
    let mut nat = TableSection::new(Table::Nat);
    nat.declare("KUBE-SERVICES");
    nat.declare("KUBE-POSTROUTING");
    nat.append(
        "PREROUTING",
        jump_rule(false, Some("kubernetes service portals"), "KUBE-SERVICES"),
    );
    nat.append(
        "OUTPUT",
        jump_rule(false, Some("kubernetes service portals"), "KUBE-SERVICES"),
    );
    nat.append(
        "POSTROUTING",
        jump_rule(
            false,
            Some("kubernetes postrouting rules"),
            "KUBE-POSTROUTING",
        ),
    );
    let mut filter = TableSection::new(Table::Filter);
    for chain in [
        "KUBE-EXTERNAL-SERVICES",
        "KUBE-NODEPORTS",
        "KUBE-SERVICES",
        "KUBE-FORWARD",
        "KUBE-PROXY-FIREWALL",
        "KUBE-FIREWALL",
    ] {
        filter.declare(chain);
    }
    let external = Some("kubernetes externally-visible service portals");
    let portals = Some("kubernetes service portals");
    let firewall = Some("kubernetes load balancer firewall");
    let jumps: [(&str, bool, Option<&str>, &str); 11] = [
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
    for (builtin, new_only, comment, chain) in jumps {
        filter.append(builtin, jump_rule(new_only, comment, chain));
    }
    RestoreFile {
        tables: alloc::vec![filter, nat],
    }
}
