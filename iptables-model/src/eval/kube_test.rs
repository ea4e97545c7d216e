//! The tracer of kube-proxy's unit tests (`tracePacket`; the tracer rules in
//! `testdata/iptables/README.md`), so that the corpus's flow vectors run against our generated
//! rules.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::net::IpAddr;

use super::MAX_DEPTH;
use crate::error::TraceError;
use crate::model::{
    AddrType, Command, Line, MatchOption, RecentOption, RestoreFile, Rule, Spec, Table, Target,
};

/// What the unit tests' tracer reports for one packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KubeTrace {
    /// The DNAT destinations reachable, in rule order, joined by `", "`; or `ACCEPT`, `DROP`,
    /// `REJECT`; empty when nothing matched.
    pub output: String,
    /// Whether a rule jumped to `KUBE-MARK-MASQ`.
    pub masquerade: bool,
}

type Chains<'a> = BTreeMap<&'a str, Vec<&'a Rule<'a>>>;

fn chains<'a>(file: &'a RestoreFile<'a>, table: Table) -> Chains<'a> {
    let mut map: Chains<'_> = BTreeMap::new();
    for line in file
        .tables
        .iter()
        .filter(|t| t.table == table)
        .flat_map(|t| &t.lines)
    {
        if let Line::Command(Command::Append { chain, rule }) = line {
            map.entry(chain.as_str()).or_default().push(rule);
        }
    }
    map
}

struct Tracer<'a> {
    local: &'a [IpAddr],
    source: IpAddr,
    protocol: &'a str,
    destination: IpAddr,
    port: u16,
    outputs: Vec<String>,
    masquerade: bool,
}

impl Tracer<'_> {
    fn is_local(&self, ip: IpAddr) -> bool {
        ip.is_loopback() || self.local.contains(&ip)
    }

    fn matches(&self, rule: &Rule) -> bool {
        rule.specs.iter().all(|spec| match spec {
            Spec::Source { negated, address } => address.contains(self.source) != *negated,
            Spec::Destination { negated, address } => {
                address.contains(self.destination) != *negated
            }
            Spec::Protocol { negated, protocol } => (protocol.name() == self.protocol) != *negated,
            Spec::Option(MatchOption::SrcType { negated, types }) => {
                (types.contains(&AddrType::Local) && self.is_local(self.source)) != *negated
            }
            Spec::Option(MatchOption::DstType { negated, types }) => {
                (types.contains(&AddrType::Local) && self.is_local(self.destination)) != *negated
            }
            Spec::Option(MatchOption::DestinationPort { negated, ports }) => {
                ports.contains(self.port) != *negated
            }
            Spec::Option(
                MatchOption::Recent {
                    option: RecentOption::Rcheck,
                    ..
                }
                | MatchOption::Mark { .. }
                | MatchOption::CtState { .. },
            ) => false,
            _ => true,
        })
    }

    /// Runs `chain`; true when a terminating target ended it.
    fn run(&mut self, rules: &Chains<'_>, chain: &str, depth: usize) -> Result<bool, TraceError> {
        if depth > MAX_DEPTH {
            return Err(TraceError::TooDeep {
                chain: chain.into(),
                limit: MAX_DEPTH,
            });
        }
        for rule in rules.get(chain).map_or(&[][..], |r| r) {
            let Some(target) = &rule.target else { continue };
            if !self.matches(rule) {
                continue;
            }
            match target {
                Target::Jump(c) if c == "KUBE-MARK-MASQ" => self.masquerade = true,
                Target::Accept | Target::Drop | Target::Reject { .. } => {
                    self.outputs.push(target.name().into());
                    return Ok(true);
                }
                Target::Dnat { to, .. } => {
                    self.outputs.push(to.as_deref().unwrap_or_default().into());
                    return Ok(true);
                }
                Target::Jump(next) | Target::Goto(next) => {
                    let probabilistic = rule
                        .options()
                        .any(|o| matches!(o, MatchOption::Probability { .. }));
                    if self.run(rules, next, depth + 1)? && !probabilistic {
                        return Ok(true);
                    }
                }
                _ => {}
            }
        }
        Ok(false)
    }
}

/// The host part of a DNAT destination (`10.0.0.1:80`, `[fd00::1]:80`, `10.0.0.1`).
pub(crate) fn dnat_host(to: &str) -> Option<IpAddr> {
    if let Some(rest) = to.strip_prefix('[') {
        return rest.split_once(']').and_then(|(host, _)| host.parse().ok());
    }
    to.parse()
        .ok()
        .or_else(|| to.rsplit_once(':').and_then(|(host, _)| host.parse().ok()))
}

/// Traces the first packet of a flow as kube-proxy's `tracePacket` does: nat `KUBE-SERVICES`
/// (jumps through a `--probability` rule do not end the caller, so every endpoint is
/// collected), then, with the destination rewritten to the first DNAT target, filter
/// `KUBE-SERVICES`, `KUBE-EXTERNAL-SERVICES`, `KUBE-NODEPORTS` and `KUBE-PROXY-FIREWALL`.
/// `local` lists the node's addresses (loopback addresses are always local).
pub fn trace_kube_test(
    file: &RestoreFile,
    local: &[IpAddr],
    source: IpAddr,
    protocol: &str,
    destination: IpAddr,
    port: u16,
) -> Result<KubeTrace, TraceError> {
    let mut tracer = Tracer {
        local,
        source,
        protocol,
        destination,
        port,
        outputs: Vec::new(),
        masquerade: false,
    };
    tracer.run(&chains(file, Table::Nat), "KUBE-SERVICES", 0)?;
    if let Some(ip) = tracer.outputs.first().and_then(|o| dnat_host(o)) {
        tracer.destination = ip;
    }
    let filter = chains(file, Table::Filter);
    for chain in [
        "KUBE-SERVICES",
        "KUBE-EXTERNAL-SERVICES",
        "KUBE-NODEPORTS",
        "KUBE-PROXY-FIREWALL",
    ] {
        tracer.run(&filter, chain, 0)?;
    }
    Ok(KubeTrace {
        output: tracer.outputs.join(", "),
        masquerade: tracer.masquerade,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dnat_hosts() {
        assert_eq!(dnat_host("10.0.0.1:80"), Some("10.0.0.1".parse().unwrap()));
        assert_eq!(dnat_host("[fd00::1]:80"), Some("fd00::1".parse().unwrap()));
        assert_eq!(dnat_host("fd00::1"), Some("fd00::1".parse().unwrap()));
        assert_eq!(dnat_host("DROP"), None);
    }
}
