//! The rules of one service port, steps 1-10 of `docs/iptables.md` §3, in kube-proxy's emission
//! order.

use alloc::string::String;
use alloc::vec::Vec;
use core::net::{IpAddr, Ipv4Addr};

use super::endpoints::{Ep, categorize};
use super::input::{Protocol, ProxyOptions, Service, ServicePort};
use super::naming::{ServiceChains, endpoint_chain, service_port_name};
use super::resolve::{Facts, facts};
use super::rules::{Quoting, RuleText, declare};
use super::topology::Place;
use crate::addr::{Cidr, parse_ip_lenient};
use crate::probability::compute_probability;

/// A restore text under construction: per table, chain declarations first, then commands.
#[derive(Debug, Default)]
pub(crate) struct Output {
    pub(crate) filter_chains: String,
    pub(crate) filter_rules: String,
    pub(crate) nat_chains: String,
    pub(crate) nat_rules: String,
}

impl Output {
    /// An output with room for a full sync of `ports` service ports with `endpoints`
    /// endpoints in all (about 300 bytes of rules per port and 400 per endpoint, with
    /// comments, and one 35-byte declaration each), so the text is not copied as it grows;
    /// the nat rules also have room for what [`Output::finish`] puts in front of them.
    pub(crate) fn with_room_for(ports: usize, endpoints: usize) -> Self {
        let declarations = 35 * (ports + endpoints);
        Self {
            nat_chains: String::with_capacity(declarations),
            nat_rules: String::with_capacity(300 * ports + 400 * endpoints + declarations),
            ..Self::default()
        }
    }

    /// The restore text: filter, then nat. The nat rules, by far the largest part, stay
    /// where they are: everything before them is moved in front (no second full-size copy).
    pub(crate) fn finish(self) -> String {
        let Self {
            filter_chains,
            filter_rules,
            nat_chains,
            mut nat_rules,
        } = self;
        let head = [
            "*filter\n",
            &filter_chains,
            &filter_rules,
            "COMMIT\n*nat\n",
            &nat_chains,
        ]
        .concat();
        nat_rules.insert_str(0, &head);
        nat_rules.push_str("COMMIT\n");
        nat_rules
    }
}

/// A service's lines outside its own chains (steps 1-5: the service, external, firewall and
/// NodePort tables), per table. Partial syncs replay or diff them instead of recomputing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shared {
    pub(crate) filter: String,
    pub(crate) nat: String,
}

/// Where one port's rules go.
pub(crate) struct Sink<'a> {
    /// The service's shared lines (steps 1-5) are appended here.
    pub(crate) shared: &'a mut Shared,
    /// The restore text: own chains (steps 6-10) when `write_own`, and the shared lines too
    /// when `copy_shared`.
    pub(crate) out: &'a mut Output,
    pub(crate) copy_shared: bool,
    pub(crate) write_own: bool,
    /// The nat chains the port uses are pushed here, when wanted.
    pub(crate) chains: Option<&'a mut Vec<String>>,
}

/// kube-proxy's `%0.10f` probability strings by endpoint count, computed once
/// (kube-proxy's `precomputedProbabilities`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Probabilities(Vec<String>);

impl Probabilities {
    /// `computeProbability(n)`.
    pub(crate) fn get(&mut self, n: usize) -> &str {
        while self.0.len() <= n {
            self.0.push(compute_probability(self.0.len() as u64));
        }
        self.0.get(n).map_or("", String::as_str)
    }
}

/// The address of `text` if it is of the proxier's family.
pub(crate) fn family_ip(text: &str, options: &ProxyOptions) -> Option<IpAddr> {
    parse_ip_lenient(text).filter(|ip| ip.is_ipv6() == options.ipv6)
}

const LOOPBACK_V4: Cidr = Cidr {
    addr: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)),
    prefix: Some(8),
};

/// Everything needed to write one service port.
pub(crate) struct PortContext<'a> {
    pub(crate) options: &'a ProxyOptions,
    pub(crate) service: &'a Service,
    pub(crate) port: &'a ServicePort,
    pub(crate) cluster_ip: IpAddr,
    /// Large-cluster mode: no comments on per-endpoint rules (`docs/iptables.md` §3 step 11).
    pub(crate) large: bool,
}

impl PortContext<'_> {
    #[allow(clippy::too_many_lines)] // one step of `docs/iptables.md` §3 per block, in order
    /// Writes the port's rules to `sink`.
    pub(crate) fn emit(&self, eps: &[Ep], sink: Sink<'_>, probabilities: &mut Probabilities) {
        let (options, service, port) = (self.options, self.service, self.port);
        let spn = service_port_name(&service.namespace, &service.name, &port.name);
        let named = Named {
            spn: &spn,
            quoting: Quoting::of(&[&spn]),
        };
        let chains = ServiceChains::new(&spn, port.protocol);
        let proto = port.protocol;
        let Facts {
            load_balancer: lb,
            node_port,
            external_ips,
            load_balancer_ips: lb_ips,
            source_ranges: ranges,
            internal_local: itp_local,
            external_local: etp_local,
            externally_accessible,
            uses_cluster,
            uses_local,
        } = facts(options, service, port);
        let place = Place {
            node: &options.hostname,
            zone: &options.zone,
        };
        let cat = categorize(eps, uses_cluster, uses_local, place);

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
        // What replaces a missing internal or external destination, and its comment.
        let (no_target, no_comment) = if cat.any {
            ("DROP", "has no local endpoints")
        } else {
            ("REJECT", "has no endpoints")
        };
        let Sink {
            shared,
            out,
            copy_shared,
            write_own,
            chains: used,
        } = sink;
        let (filter_start, nat_start) = (shared.filter.len(), shared.nat.len());
        let (filter, nat) = (&mut shared.filter, &mut shared.nat);
        // 1. ClusterIP.
        if has_internal {
            RuleText::append(nat, "KUBE-SERVICES")
                .service_ip(
                    &[&spn, " cluster IP"],
                    proto,
                    Some(self.cluster_ip),
                    port.port,
                )
                .jump(internal_chain);
        } else {
            RuleText::append(filter, "KUBE-SERVICES")
                .service_ip(
                    &[&spn, " ", no_comment],
                    proto,
                    Some(self.cluster_ip),
                    port.port,
                )
                .jump(no_target);
        }
        // 2. External IPs.
        for ip in &external_ips {
            if cat.any {
                RuleText::append(nat, "KUBE-SERVICES")
                    .service_ip(&[&spn, " external IP"], proto, Some(*ip), port.port)
                    .jump(&chains.ext);
            }
            if !has_external {
                RuleText::append(filter, "KUBE-EXTERNAL-SERVICES")
                    .service_ip(&[&spn, " ", no_comment], proto, Some(*ip), port.port)
                    .jump(no_target);
            }
        }
        // 3. Load-balancer IPs.
        for ip in &lb_ips {
            if cat.any {
                RuleText::append(nat, "KUBE-SERVICES")
                    .service_ip(&[&spn, " loadbalancer IP"], proto, Some(*ip), port.port)
                    .jump(lb_chain);
            }
            if uses_fw {
                RuleText::append(filter, "KUBE-PROXY-FIREWALL")
                    .service_ip(
                        &[&spn, " traffic not accepted by ", &chains.fw],
                        proto,
                        Some(*ip),
                        port.port,
                    )
                    .jump("DROP");
            }
        }
        if !has_external {
            for ip in &lb_ips {
                RuleText::append(filter, "KUBE-EXTERNAL-SERVICES")
                    .service_ip(&[&spn, " ", no_comment], proto, Some(*ip), port.port)
                    .jump(no_target);
            }
        }
        // 4. NodePort.
        if node_port != 0 {
            if cat.any {
                if options.localhost_node_ports && !options.ipv6 && options.nfacct {
                    RuleText::append(nat, "KUBE-NODEPORTS")
                        .comment(&[&spn])
                        .protocol(proto)
                        .destination(false, LOOPBACK_V4)
                        .dport(node_port)
                        .nfacct("localhost_nps_accepted_pkts")
                        .jump(&chains.ext);
                }
                RuleText::append(nat, "KUBE-NODEPORTS")
                    .service_ip(&[&spn], proto, None, node_port)
                    .jump(&chains.ext);
            }
            if !has_external {
                RuleText::append(filter, "KUBE-EXTERNAL-SERVICES")
                    .comment(&[&spn, " ", no_comment])
                    .addrtype_local(false)
                    .protocol(proto)
                    .dport(node_port)
                    .jump(no_target);
            }
        }
        // 5. Health-check NodePort.
        if lb && etp_local && service.health_check_node_port != 0 {
            RuleText::append(filter, "KUBE-NODEPORTS")
                .service_ip(
                    &[&spn, " health check node port"],
                    Protocol::Tcp,
                    None,
                    service.health_check_node_port,
                )
                .jump("ACCEPT");
        }
        if copy_shared {
            out.filter_rules
                .push_str(shared.filter.get(filter_start..).unwrap_or_default());
            out.nat_rules
                .push_str(shared.nat.get(nat_start..).unwrap_or_default());
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
        if let Some(used) = used {
            for (wanted, name) in [
                (uses_ext_chain, &chains.ext),
                (uses_fw, &chains.fw),
                (uses_cluster_chain, &chains.svc),
                (uses_local_chain, &chains.svl),
            ] {
                if wanted {
                    used.push(name.clone());
                }
            }
            used.extend(sep_chains.iter().cloned());
        }
        if !write_own {
            return;
        }
        let rules = &mut out.nat_rules;
        // 6. Masquerade rule of the internal chain.
        let detector = &options.local_detector;
        if has_internal && (options.masquerade_all || detector.is_implemented()) {
            let rule = RuleText::append(rules, internal_chain).service_ip(
                &[&spn, " cluster IP"],
                proto,
                Some(self.cluster_ip),
                port.port,
            );
            let rule = if options.masquerade_all {
                rule
            } else {
                rule.local(true, detector)
            };
            rule.jump("KUBE-MARK-MASQ");
        }
        // 7. KUBE-EXT.
        if uses_ext_chain {
            declare(&mut out.nat_chains, &chains.ext);
            if etp_local {
                if detector.is_implemented() {
                    RuleText::append(rules, &chains.ext)
                        .comment(&["pod traffic for ", &spn, " external destinations"])
                        .local(false, detector)
                        .jump(&chains.svc);
                }
                RuleText::append(rules, &chains.ext)
                    .comment(&[
                        "masquerade LOCAL traffic for ",
                        &spn,
                        " external destinations",
                    ])
                    .addrtype_local(true)
                    .jump("KUBE-MARK-MASQ");
                RuleText::append(rules, &chains.ext)
                    .comment(&["route LOCAL traffic for ", &spn, " external destinations"])
                    .addrtype_local(true)
                    .jump(&chains.svc);
            } else {
                RuleText::append(rules, &chains.ext)
                    .comment(&["masquerade traffic for ", &spn, " external destinations"])
                    .jump("KUBE-MARK-MASQ");
            }
            if has_external {
                RuleText::append(rules, &chains.ext).jump(external_policy_chain);
            }
        }
        // 8. KUBE-FW.
        if uses_fw {
            declare(&mut out.nat_chains, &chains.fw);
            for range in &ranges {
                RuleText::append(rules, &chains.fw)
                    .comment(&[&spn, " loadbalancer IP"])
                    .source(false, *range)
                    .jump(&chains.ext);
            }
            if ranges.iter().any(|r| r.contains(options.node_ip)) {
                for ip in &lb_ips {
                    RuleText::append(rules, &chains.fw)
                        .comment(&[&spn, " loadbalancer IP"])
                        .source(false, Cidr::host(*ip))
                        .jump(&chains.ext);
                }
            }
            RuleText::append(rules, &chains.fw)
                .comment(&[
                    "other traffic to ",
                    &spn,
                    " will be dropped by KUBE-PROXY-FIREWALL",
                ])
                .end();
        }
        // 9. SVC / SVL → SEP.
        // The lists borrow from one de-duplicated slice: the same endpoint is the same address.
        let sep_of = |ep: &Ep| {
            cat.all
                .iter()
                .position(|e| core::ptr::eq(*e, ep))
                .and_then(|i| sep_chains.get(i))
        };
        for (wanted, chain, list) in [
            (uses_cluster_chain, &chains.svc, &cat.cluster),
            (uses_local_chain, &chains.svl, &cat.local),
        ] {
            if !wanted {
                continue;
            }
            declare(&mut out.nat_chains, chain);
            if let Some(timeout) = service.client_ip_affinity {
                for ep in list {
                    let Some(sep) = sep_of(ep) else { continue };
                    self.endpoint_rule(rules, chain, &named, ep)
                        .recent_check(sep, timeout)
                        .jump(sep);
                }
            }
            let n = list.len();
            for (i, ep) in list.iter().enumerate() {
                let Some(sep) = sep_of(ep) else { continue };
                let rule = self.endpoint_rule(rules, chain, &named, ep);
                let rule = if i + 1 < n {
                    rule.random(probabilities.get(n - i))
                } else {
                    rule
                };
                rule.jump(sep);
            }
        }
        // 10. SEP chains.
        for (ep, sep) in cat.all.iter().zip(&sep_chains) {
            declare(&mut out.nat_chains, sep);
            self.spn_rule(rules, sep, &named)
                .source(false, Cidr::host(ep.ip))
                .jump("KUBE-MARK-MASQ");
            let dnat = self.spn_rule(rules, sep, &named);
            let dnat = if service.client_ip_affinity.is_some() {
                dnat.recent_set(sep)
            } else {
                dnat
            };
            dnat.protocol(proto).dnat(&ep.host_port);
        }
    }

    /// `-A CHAIN -m comment --comment "spn -> ep"`, without the comment in large-cluster mode.
    fn endpoint_rule<'o>(
        &self,
        out: &'o mut String,
        chain: &str,
        named: &Named<'_>,
        ep: &Ep,
    ) -> RuleText<'o> {
        let rule = RuleText::append(out, chain);
        if self.large {
            rule
        } else {
            // `ip:port` has nothing to quote or escape.
            rule.comment_as(
                &[named.spn, " -> ", &ep.host_port],
                named.quoting.with_blanks(),
            )
        }
    }

    /// `-A CHAIN -m comment --comment spn`, without the comment in large-cluster mode.
    fn spn_rule<'o>(&self, out: &'o mut String, chain: &str, named: &Named<'_>) -> RuleText<'o> {
        let rule = RuleText::append(out, chain);
        if self.large {
            rule
        } else {
            rule.comment_as(&[named.spn], named.quoting)
        }
    }
}

/// A service port's name and how it is quoted, worked out once for all its endpoints' rules.
struct Named<'a> {
    spn: &'a str,
    quoting: Quoting,
}
