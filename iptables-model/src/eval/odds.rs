//! The exact evaluator: every outcome of the first packet of a flow through the kernel's hooks,
//! with its probability both as the rules are written (decimal strings taken exactly) and as the
//! kernel applies them (31-bit thresholds), `docs/iptables.md` §4.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::net::{IpAddr, Ipv4Addr};

use num_rational::BigRational;
use num_traits::{One, Zero};

use super::MAX_DEPTH;
use super::kube_test::dnat_host;
use crate::error::TraceError;
use crate::model::{
    AddrType, CtState, MatchOption, MultiportKind, Policy, RecentOption, Rule, Spec, Table, Target,
};
use crate::probability::{decimal_value, kernel_value};
use crate::ruleset::{Chain, Ruleset, TableState};

/// Where the packet enters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Path {
    /// From a network interface: PREROUTING, then INPUT (local destination) or FORWARD and
    /// POSTROUTING.
    Incoming,
    /// Sent by a local process: OUTPUT, then POSTROUTING.
    Local,
}

/// The first packet of a flow.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Packet {
    /// Source address.
    pub source: IpAddr,
    /// Destination address.
    pub destination: IpAddr,
    /// `tcp`, `udp`, `sctp`, `icmp`...
    pub protocol: String,
    /// Source port (0 when the protocol has none).
    pub source_port: u16,
    /// Destination port.
    pub destination_port: u16,
    /// The interface it arrived on (`-i`), when known.
    pub in_interface: Option<String>,
    /// The interface it leaves by (`-o`), when known.
    pub out_interface: Option<String>,
    /// The packet mark on entry.
    pub mark: u32,
}

impl Packet {
    /// A TCP packet from `source` to `destination:port` (source port 40000, no interfaces).
    pub fn tcp(source: IpAddr, destination: IpAddr, port: u16) -> Self {
        Self {
            source,
            destination,
            protocol: "tcp".into(),
            source_port: 40000,
            destination_port: port,
            in_interface: None,
            out_interface: None,
            mark: 0,
        }
    }
}

/// How the flow ends.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Passed every hook: delivered locally or sent on.
    Accept,
    /// Dropped in `chain`.
    Drop {
        /// The chain whose rule or policy dropped it.
        chain: String,
    },
    /// Rejected in `chain`.
    Reject {
        /// The chain whose rule rejected it.
        chain: String,
    },
}

/// Source NAT applied in POSTROUTING.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SourceNat {
    /// `-j MASQUERADE`.
    Masquerade,
    /// `-j SNAT --to-source`, as written.
    To(String),
}

/// One possible end of the flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Accepted, dropped or rejected.
    pub verdict: Verdict,
    /// The destination after DNAT.
    pub destination: IpAddr,
    /// The destination port after DNAT.
    pub destination_port: u16,
    /// Source NAT, if any.
    pub source_nat: Option<SourceNat>,
    /// The packet mark at the end.
    pub mark: u32,
    /// Probability with each `--probability` taken as the exact decimal written.
    pub exact: BigRational,
    /// Probability with the kernel's arithmetic (`lround(p × 2^31) / 2^31` per rule).
    pub kernel: BigRational,
}

/// The node: its local addresses (for `addrtype LOCAL` and the routing decision); loopback
/// addresses are always local.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Host {
    /// Local addresses.
    pub local_addresses: Vec<IpAddr>,
}

impl Host {
    /// Whether `ip` is an address of the node (loopback included).
    pub fn is_local(&self, ip: IpAddr) -> bool {
        ip.is_loopback() || self.local_addresses.contains(&ip)
    }
}

/// Rule evaluations [`evaluate`] allows before giving up.
pub const RULE_BUDGET: usize = 1_000_000;

#[derive(Clone, Debug)]
struct State {
    packet: Packet,
    dnat: bool,
    snat: Option<SourceNat>,
    untracked: bool,
    exact: BigRational,
    kernel: BigRational,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum End {
    /// Fell off the end of the chain or hit RETURN.
    Return,
    /// ACCEPT, or a NAT target: this hook's table is done.
    Accept,
    Drop(String),
    Reject(String),
}

enum Decision {
    No,
    Yes,
    /// Matches with this probability (exact, kernel).
    Random(BigRational, BigRational),
}

struct Evaluator<'a> {
    host: &'a Host,
    budget: usize,
    limit: usize,
}

fn interface_matches(pattern: &str, name: Option<&str>) -> bool {
    let Some(name) = name else { return false };
    match pattern.strip_suffix('+') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// Protocol numbers iptables may print for the names.
fn protocol_name(p: &str) -> &str {
    match p {
        "6" => "tcp",
        "17" => "udp",
        "132" => "sctp",
        "1" => "icmp",
        other => other,
    }
}

fn protocol_matches(rule: &str, packet: &str) -> bool {
    rule == "all" || rule == "0" || protocol_name(rule) == protocol_name(packet)
}

impl Evaluator<'_> {
    fn addr_type(&self, ip: IpAddr, types: &[AddrType]) -> bool {
        types.iter().any(|t| match t {
            AddrType::Local => self.host.is_local(ip),
            AddrType::Unicast => {
                !self.host.is_local(ip)
                    && !ip.is_multicast()
                    && ip != IpAddr::V4(Ipv4Addr::BROADCAST)
            }
            AddrType::Multicast => ip.is_multicast(),
            AddrType::Broadcast => ip == IpAddr::V4(Ipv4Addr::BROADCAST),
            _ => false,
        })
    }

    /// Whether `rule` matches the packet in `state`; errors for what cannot be decided.
    fn decide(
        &self,
        chain: &Chain,
        index: usize,
        rule: &Rule,
        state: &State,
    ) -> Result<Decision, TraceError> {
        let p = &state.packet;
        let mut random: Option<(BigRational, BigRational)> = None;
        for spec in &rule.specs {
            let (negated, hit) = match spec {
                Spec::Protocol { negated, protocol } => {
                    (*negated, protocol_matches(protocol.name(), &p.protocol))
                }
                Spec::Source { negated, address } => (*negated, address.contains(p.source)),
                Spec::Destination { negated, address } => {
                    (*negated, address.contains(p.destination))
                }
                Spec::InInterface { negated, name } => {
                    (*negated, interface_matches(name, p.in_interface.as_deref()))
                }
                Spec::OutInterface { negated, name } => (
                    *negated,
                    interface_matches(name, p.out_interface.as_deref()),
                ),
                Spec::Fragment { negated } => (*negated, false),
                Spec::Module(_) => (false, true),
                Spec::Option(option) => match option {
                    MatchOption::SourcePort { negated, ports } => {
                        (*negated, ports.contains(p.source_port))
                    }
                    MatchOption::DestinationPort { negated, ports } => {
                        (*negated, ports.contains(p.destination_port))
                    }
                    MatchOption::Multiport {
                        kind,
                        negated,
                        ports,
                    } => {
                        let any = |port: u16| ports.iter().any(|r| r.contains(port));
                        let hit = match kind {
                            MultiportKind::Source => any(p.source_port),
                            MultiportKind::Destination => any(p.destination_port),
                            MultiportKind::Either => any(p.source_port) || any(p.destination_port),
                        };
                        (*negated, hit)
                    }
                    MatchOption::CtState { negated, states }
                    | MatchOption::State { negated, states } => {
                        let hit = states.iter().any(|s| match s {
                            CtState::New => !state.untracked,
                            CtState::Untracked => state.untracked,
                            CtState::Dnat => state.dnat,
                            CtState::Snat => state.snat.is_some(),
                            CtState::Invalid | CtState::Established | CtState::Related => false,
                        });
                        (*negated, hit)
                    }
                    MatchOption::Mark { negated, mark } => (
                        *negated,
                        p.mark & mark.mask.unwrap_or(u32::MAX) == mark.value,
                    ),
                    MatchOption::SrcType { negated, types } => {
                        (*negated, self.addr_type(p.source, types))
                    }
                    MatchOption::DstType { negated, types } => {
                        (*negated, self.addr_type(p.destination, types))
                    }
                    MatchOption::Recent { negated, option } => {
                        // A new flow's source is on no list: checks fail, `--set` matches.
                        let hit = !matches!(
                            option,
                            RecentOption::Rcheck | RecentOption::Update | RecentOption::Remove
                        );
                        (*negated, hit)
                    }
                    MatchOption::Probability {
                        negated,
                        probability,
                    } => {
                        let (mut exact, mut kernel) =
                            (decimal_value(probability), kernel_value(probability));
                        if *negated {
                            exact = BigRational::one() - exact;
                            kernel = BigRational::one() - kernel;
                        }
                        random = Some(match random {
                            Some((e, k)) => (e * exact, k * kernel),
                            None => (exact, kernel),
                        });
                        (false, true)
                    }
                    MatchOption::Every { negated, every } => {
                        // Per flow, one packet in `every` matches: modelled as 1/every.
                        let mut q = BigRational::new(1.into(), (*every).max(1).into());
                        if *negated {
                            q = BigRational::one() - q;
                        }
                        random = Some(match random {
                            Some((e, k)) => (e * &q, k * q),
                            None => (q.clone(), q),
                        });
                        (false, true)
                    }
                    MatchOption::Comment(_)
                    | MatchOption::NfacctName(_)
                    | MatchOption::StatisticMode(_)
                    | MatchOption::Packet(_)
                    | MatchOption::LimitIfaceIn
                    | MatchOption::LimitIfaceOut => (false, true),
                    MatchOption::Unknown(option) => {
                        return Err(TraceError::Unsupported {
                            chain: chain.name.to_string(),
                            rule: index + 1,
                            what: option.name.to_string(),
                        });
                    }
                },
            };
            if hit == negated {
                return Ok(Decision::No);
            }
        }
        Ok(match random {
            Some((exact, kernel)) => Decision::Random(exact, kernel),
            None => Decision::Yes,
        })
    }

    /// Walks `chain` for `state`; each branch ends with how it left the chain.
    fn walk(
        &mut self,
        table: &TableState,
        chain: &Chain,
        state: State,
        depth: usize,
    ) -> Result<Vec<(State, End)>, TraceError> {
        if depth > MAX_DEPTH {
            return Err(TraceError::TooDeep {
                chain: chain.name.to_string(),
                limit: MAX_DEPTH,
            });
        }
        let mut work = alloc::vec![(0usize, state)];
        let mut done = Vec::new();
        while let Some((start, mut st)) = work.pop() {
            let mut index = start;
            loop {
                let Some(rule) = chain.rules.get(index) else {
                    done.push((st, End::Return));
                    break;
                };
                self.budget = self
                    .budget
                    .checked_sub(1)
                    .ok_or(TraceError::BudgetExhausted { budget: self.limit })?;
                match self.decide(chain, index, rule, &st)? {
                    Decision::No => {
                        index += 1;
                        continue;
                    }
                    Decision::Yes => {}
                    Decision::Random(exact, kernel) => {
                        let mut miss = st.clone();
                        miss.exact *= BigRational::one() - &exact;
                        miss.kernel *= BigRational::one() - &kernel;
                        st.exact *= exact;
                        st.kernel *= kernel;
                        if !miss.exact.is_zero() || !miss.kernel.is_zero() {
                            work.push((index + 1, miss));
                        }
                        if st.exact.is_zero() && st.kernel.is_zero() {
                            break;
                        }
                    }
                }
                let end = match &rule.target {
                    None => None,
                    Some(Target::Accept) => Some(End::Accept),
                    Some(Target::Drop) => Some(End::Drop(chain.name.to_string())),
                    Some(Target::Reject { .. }) => Some(End::Reject(chain.name.to_string())),
                    Some(Target::Return) => Some(End::Return),
                    Some(Target::Dnat { to, .. }) => {
                        if let Some(to) = to {
                            apply_dnat(&mut st.packet, to);
                        }
                        st.dnat = true;
                        Some(End::Accept)
                    }
                    Some(Target::Masquerade { .. }) => {
                        st.snat = Some(SourceNat::Masquerade);
                        Some(End::Accept)
                    }
                    Some(Target::Snat { to, .. }) => {
                        st.snat = Some(SourceNat::To(to.as_deref().unwrap_or_default().into()));
                        Some(End::Accept)
                    }
                    Some(Target::Mark(action)) => {
                        st.packet.mark = action.apply(st.packet.mark);
                        None
                    }
                    Some(Target::Notrack) => {
                        st.untracked = true;
                        None
                    }
                    Some(Target::Jump(next) | Target::Goto(next)) => {
                        let goto = matches!(rule.target, Some(Target::Goto(_)));
                        let callee = table.chain(next).ok_or_else(|| TraceError::NoSuchChain {
                            chain: chain.name.to_string(),
                            target: next.to_string(),
                        })?;
                        for (sub, end) in self.walk(table, callee, st, depth + 1)? {
                            match (end, goto) {
                                (End::Return, false) => work.push((index + 1, sub)),
                                (end, _) => done.push((sub, end)),
                            }
                        }
                        break;
                    }
                    Some(Target::Other(other))
                        if matches!(other.name.as_str(), "LOG" | "NFLOG" | "TRACE" | "AUDIT") =>
                    {
                        None
                    }
                    Some(other) => {
                        return Err(TraceError::Unsupported {
                            chain: chain.name.to_string(),
                            rule: index + 1,
                            what: other.name().into(),
                        });
                    }
                };
                match end {
                    Some(end) => {
                        done.push((st, end));
                        break;
                    }
                    None => index += 1,
                }
            }
        }
        Ok(done)
    }
}

fn apply_dnat(packet: &mut Packet, to: &str) {
    if let Some(ip) = dnat_host(to) {
        packet.destination = ip;
    }
    let port = match to.strip_prefix('[') {
        Some(rest) => rest.split_once("]:").map(|(_, p)| p),
        None => to
            .split_once(':')
            .filter(|_| to.matches(':').count() == 1)
            .map(|(_, p)| p),
    };
    if let Some(port) = port
        .and_then(|p| p.split('-').next())
        .and_then(|p| p.parse().ok())
    {
        packet.destination_port = port;
    }
}

/// The hooks a packet passes, in order, given whether its destination is local.
fn hooks(path: Path, local_destination: bool) -> &'static [(Table, &'static str)] {
    match (path, local_destination) {
        (Path::Local, _) => &[
            (Table::Raw, "OUTPUT"),
            (Table::Mangle, "OUTPUT"),
            (Table::Nat, "OUTPUT"),
            (Table::Filter, "OUTPUT"),
            (Table::Security, "OUTPUT"),
            (Table::Mangle, "POSTROUTING"),
            (Table::Nat, "POSTROUTING"),
        ],
        (Path::Incoming, true) => &[
            (Table::Mangle, "INPUT"),
            (Table::Filter, "INPUT"),
            (Table::Security, "INPUT"),
            (Table::Nat, "INPUT"),
        ],
        (Path::Incoming, false) => &[
            (Table::Mangle, "FORWARD"),
            (Table::Filter, "FORWARD"),
            (Table::Security, "FORWARD"),
            (Table::Mangle, "POSTROUTING"),
            (Table::Nat, "POSTROUTING"),
        ],
    }
}

const PREROUTING: &[(Table, &str)] = &[
    (Table::Raw, "PREROUTING"),
    (Table::Mangle, "PREROUTING"),
    (Table::Nat, "PREROUTING"),
];

/// Runs `states` through `hooks`; ended branches go to `finished`, the rest are returned.
fn run_hooks(
    eval: &mut Evaluator<'_>,
    ruleset: &Ruleset,
    hooks: &[(Table, &str)],
    mut states: Vec<State>,
    finished: &mut Vec<(State, Verdict)>,
) -> Result<Vec<State>, TraceError> {
    for (table, chain) in hooks {
        let Some(table_state) = ruleset.table(*table) else {
            continue;
        };
        let Some(builtin) = table_state.chain(chain) else {
            continue;
        };
        let mut after = Vec::new();
        for s in states {
            if *table == Table::Nat && s.untracked {
                after.push(s);
                continue;
            }
            for (s, end) in eval.walk(table_state, builtin, s, 0)? {
                match end {
                    End::Accept => after.push(s),
                    End::Return => match builtin.policy {
                        Some(Policy::Drop) => finished.push((
                            s,
                            Verdict::Drop {
                                chain: builtin.name.to_string(),
                            },
                        )),
                        _ => after.push(s),
                    },
                    End::Drop(chain) => finished.push((s, Verdict::Drop { chain })),
                    End::Reject(chain) => finished.push((s, Verdict::Reject { chain })),
                }
            }
        }
        states = after;
    }
    Ok(states)
}

/// Every outcome of `packet` entering by `path`, merged when equal, most likely first.
///
/// `Incoming` packets pass PREROUTING, then the routing decision (is the destination, after
/// DNAT, a local address of `host`?) sends them to INPUT or to FORWARD and POSTROUTING. Each
/// `--probability` rule splits the flow in two; conntrack sees a NEW flow, `recent` lists are
/// empty. Errors for loops deeper than [`super::MAX_DEPTH`], more than [`RULE_BUDGET`] rule
/// evaluations, and matches or targets it cannot decide.
pub fn evaluate(
    ruleset: &Ruleset,
    host: &Host,
    packet: &Packet,
    path: Path,
) -> Result<Vec<Outcome>, TraceError> {
    evaluate_with_budget(ruleset, host, packet, path, RULE_BUDGET)
}

/// [`evaluate`] with an explicit budget of rule evaluations.
pub fn evaluate_with_budget(
    ruleset: &Ruleset,
    host: &Host,
    packet: &Packet,
    path: Path,
    budget: usize,
) -> Result<Vec<Outcome>, TraceError> {
    let mut eval = Evaluator {
        host,
        budget,
        limit: budget,
    };
    let start = State {
        packet: packet.clone(),
        dnat: false,
        snat: None,
        untracked: false,
        exact: BigRational::one(),
        kernel: BigRational::one(),
    };
    let mut finished: Vec<(State, Verdict)> = Vec::new();
    let routed = match path {
        Path::Incoming => run_hooks(
            &mut eval,
            ruleset,
            PREROUTING,
            alloc::vec![start],
            &mut finished,
        )?,
        Path::Local => alloc::vec![start],
    };
    for st in routed {
        let route = hooks(path, host.is_local(st.packet.destination));
        for s in run_hooks(&mut eval, ruleset, route, alloc::vec![st], &mut finished)? {
            finished.push((s, Verdict::Accept));
        }
    }
    Ok(merge(finished.into_iter().map(|(s, verdict)| Outcome {
        verdict,
        destination: s.packet.destination,
        destination_port: s.packet.destination_port,
        source_nat: s.snat,
        mark: s.packet.mark,
        exact: s.exact,
        kernel: s.kernel,
    })))
}

/// The outcomes of every path a flow took, merged where they end the same (verdict,
/// destination, source NAT, mark: their probabilities add up), most likely first.
pub fn merge(ends: impl IntoIterator<Item = Outcome>) -> Vec<Outcome> {
    let mut outcomes: Vec<Outcome> = Vec::new();
    for end in ends {
        let same = |o: &&mut Outcome| {
            o.verdict == end.verdict
                && o.destination == end.destination
                && o.destination_port == end.destination_port
                && o.source_nat == end.source_nat
                && o.mark == end.mark
        };
        match outcomes.iter_mut().find(same) {
            Some(o) => {
                o.exact += end.exact;
                o.kernel += end.kernel;
            }
            None => outcomes.push(end),
        }
    }
    outcomes.sort_by(|a, b| b.exact.cmp(&a.exact));
    outcomes
}
