//! The exact evaluator for a kube-proxy nftables ruleset, twin of `iptables-model`'s: every
//! outcome of the first packet of a flow through the hooks, with its probability as the rules
//! mean it (`numgen random mod N`: 1/N per bucket) and as the kernel draws it
//! (`reciprocal_scale` of a 32-bit random number: bucket `i` gets the values `v` with
//! `v × N / 2^32 = i`). It answers with `iptables-model`'s [`Outcome`] type, so that both modes
//! can be compared packet for packet.
//!
//! Base chains run by hook in priority order; `accept` ends a base chain (the next base chain
//! of the hook still runs), `drop` and `reject` end the packet; `jump` returns, `goto` does not;
//! a NAT statement (`dnat`, `masquerade`) ends its chain. The first packet is `ct state new`,
//! and affinity sets are empty for it. Only the rule text kube-proxy writes is read
//! (the `statement` module); anything else is an [`EvalError`].

mod numgen;
mod statement;

use alloc::string::String;
use alloc::vec::Vec;

pub use iptables_model::eval::{Host, Outcome, Packet, Path, SourceNat, Verdict as End};
use iptables_model::eval::{MAX_DEPTH, RULE_BUDGET, merge};
use iptables_model::kube::Protocol;
use num_rational::BigRational;
use num_traits::One;

use crate::element::{Atom, Verdict};
use crate::name::Name;
use crate::object::{ChainType, Hook};
use crate::ruleset::Ruleset;
use statement::{Addresses, Field, Item};

/// Why a ruleset could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// A rule the evaluator does not read (only kube-proxy's dialect is read).
    Unreadable {
        /// The chain.
        chain: String,
        /// The rule's text.
        rule: String,
        /// What was not understood.
        why: String,
    },
    /// A jump or goto to a chain that does not exist, or a set or map that does not.
    Missing(String),
    /// Chains nest deeper than the limit (a loop).
    TooDeep(String),
    /// More rule evaluations than the budget.
    Budget,
}

impl core::fmt::Display for EvalError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Unreadable { chain, rule, why } => {
                write!(f, "chain {chain}: rule {rule:?} not read: {why}")
            }
            Self::Missing(name) => write!(f, "{name} does not exist"),
            Self::TooDeep(chain) => write!(f, "chains nest deeper than {MAX_DEPTH} at {chain}"),
            Self::Budget => write!(f, "more than {RULE_BUDGET} rule evaluations"),
        }
    }
}

/// A flow being followed, with its probability so far.
#[derive(Clone, Debug)]
struct State {
    packet: Packet,
    dnat: bool,
    masquerade: bool,
    exact: BigRational,
    kernel: BigRational,
}

/// How a chain left a state.
#[derive(Clone, Debug)]
enum Flow {
    /// Off the end, or `return`: the caller continues.
    Continue,
    /// `accept` (or a NAT statement): this base chain is done.
    Accept,
    /// `drop` in the chain.
    Drop(String),
    /// `reject` in the chain.
    Reject(String),
}

struct Evaluator<'a> {
    ruleset: &'a Ruleset,
    host: &'a Host,
    budget: usize,
}

fn protocol_of(packet: &Packet) -> Option<Protocol> {
    match packet.protocol.as_str() {
        "tcp" => Some(Protocol::Tcp),
        "udp" => Some(Protocol::Udp),
        "sctp" => Some(Protocol::Sctp),
        _ => None,
    }
}

fn atom(packet: &Packet, field: Field) -> Option<Atom> {
    match field {
        Field::Saddr => Some(Atom::Ip(packet.source)),
        Field::Daddr => Some(Atom::Ip(packet.destination)),
        Field::L4proto => protocol_of(packet).map(Atom::Protocol),
        Field::Dport => Some(Atom::Port(packet.destination_port)),
    }
}

impl Evaluator<'_> {
    fn in_set(&self, set: &Name, key: &[Atom]) -> Result<Option<Option<Verdict>>, EvalError> {
        let container = self
            .ruleset
            .containers
            .get(set)
            .ok_or_else(|| EvalError::Missing(alloc::format!("set {set}")))?;
        Ok(container
            .elements
            .iter()
            .find(|e| e.key.as_slice() == key)
            .map(|e| e.value.clone()))
    }

    /// Whether `item`, a match, holds for `packet`.
    fn holds(&self, item: &Item, packet: &Packet) -> Result<bool, EvalError> {
        Ok(match item {
            Item::Address {
                field,
                negated,
                addresses,
            } => {
                let ip = if *field == Field::Saddr {
                    packet.source
                } else {
                    packet.destination
                };
                let found = match addresses {
                    Addresses::Literal(list) => list.iter().any(|c| c.contains(ip)),
                    Addresses::Set(set) => self.in_set(set, &[Atom::Ip(ip)])?.is_some(),
                };
                found != *negated
            }
            Item::Protocol(p) => protocol_of(packet) == Some(*p),
            Item::Port(port) => packet.destination_port == *port,
            Item::Local(field) => self.host.is_local(if *field == Field::Saddr {
                packet.source
            } else {
                packet.destination
            }),
            Item::New => true,
            Item::MarkTest { mask, zero } => (packet.mark & mask == 0) == *zero,
            Item::Interface { negated, name } => {
                let found =
                    packet
                        .in_interface
                        .as_deref()
                        .is_some_and(|i| match name.strip_suffix('*') {
                            Some(prefix) => i.starts_with(prefix),
                            None => i == name,
                        });
                found != *negated
            }
            _ => true,
        })
    }

    /// Runs `chain` on `state`: every way the state leaves it.
    fn chain(
        &mut self,
        name: &Name,
        state: State,
        depth: usize,
    ) -> Result<Vec<(State, Flow)>, EvalError> {
        if depth > MAX_DEPTH {
            return Err(EvalError::TooDeep(name.as_str().into()));
        }
        let chain = self
            .ruleset
            .chains
            .get(name)
            .ok_or_else(|| EvalError::Missing(alloc::format!("chain {name}")))?;
        let mut done = Vec::new();
        // States still running down the chain, with the index of their next rule.
        let mut running = alloc::vec![(state, 0usize)];
        while let Some((mut state, at)) = running.pop() {
            let Some(rule) = chain.rules.get(at) else {
                done.push((state, Flow::Continue));
                continue;
            };
            self.budget = self.budget.checked_sub(1).ok_or(EvalError::Budget)?;
            let items =
                statement::read(rule.text.as_str()).map_err(|why| EvalError::Unreadable {
                    chain: name.as_str().into(),
                    rule: rule.text.as_str().into(),
                    why,
                })?;
            let mut outcome: Option<Vec<(State, Option<Verdict>)>> = None;
            let mut matched = true;
            for item in &items {
                match item {
                    Item::MarkSet { xor, value } => {
                        state.packet.mark = if *xor {
                            state.packet.mark ^ value
                        } else {
                            state.packet.mark | value
                        };
                    }
                    Item::Update => {}
                    Item::Dnat(ip, port) => {
                        state.packet.destination = *ip;
                        state.packet.destination_port = *port;
                        state.dnat = true;
                        outcome = Some(alloc::vec![(state.clone(), Some(Verdict::Accept))]);
                        break;
                    }
                    Item::Masquerade => {
                        state.masquerade = true;
                        outcome = Some(alloc::vec![(state.clone(), Some(Verdict::Accept))]);
                        break;
                    }
                    Item::Reject => {
                        done.push((state.clone(), Flow::Reject(name.as_str().into())));
                        outcome = Some(Vec::new());
                        break;
                    }
                    Item::Verdict(v) => {
                        outcome = Some(alloc::vec![(state.clone(), Some(v.clone()))]);
                        break;
                    }
                    Item::Vmap { key, map } => {
                        let key: Option<Vec<Atom>> =
                            key.iter().map(|f| atom(&state.packet, *f)).collect();
                        let found = match key {
                            Some(key) => self.in_set(map, &key)?.flatten(),
                            None => None,
                        };
                        match found {
                            Some(v) => outcome = Some(alloc::vec![(state.clone(), Some(v))]),
                            // No element: the rule ends without a verdict.
                            None => matched = false,
                        }
                        break;
                    }
                    Item::Numgen { modulus, verdicts } => {
                        // Each bucket below the modulus takes the first verdict written for it
                        // (as a map with one element per key); the buckets without one end the
                        // rule without a verdict.
                        let mut split = Vec::new();
                        let mut taken: Vec<u32> = Vec::new();
                        let (mut exact_rest, mut kernel_rest) =
                            (BigRational::one(), BigRational::one());
                        for (bucket, verdict) in verdicts {
                            if *bucket >= *modulus || taken.contains(bucket) {
                                continue;
                            }
                            taken.push(*bucket);
                            let exact = BigRational::new(1.into(), (*modulus).into());
                            let kernel = numgen::kernel_share(*bucket, *modulus);
                            exact_rest -= &exact;
                            kernel_rest -= &kernel;
                            let mut branch = state.clone();
                            branch.exact *= exact;
                            branch.kernel *= kernel;
                            split.push((branch, Some(verdict.clone())));
                        }
                        if taken.len() < usize::try_from(*modulus).unwrap_or(usize::MAX) {
                            let mut rest = state.clone();
                            rest.exact *= exact_rest;
                            rest.kernel *= kernel_rest;
                            split.push((rest, None));
                        }
                        outcome = Some(split);
                        break;
                    }
                    other => {
                        if !self.holds(other, &state.packet)? {
                            matched = false;
                            break;
                        }
                    }
                }
            }
            let results = match (matched, outcome) {
                (false, _) | (true, None) => alloc::vec![(state, None)],
                (true, Some(results)) => results,
            };
            for (state, verdict) in results {
                match verdict {
                    None => running.push((state, at + 1)),
                    Some(Verdict::Accept) => done.push((state, Flow::Accept)),
                    Some(Verdict::Drop) => done.push((state, Flow::Drop(name.as_str().into()))),
                    Some(Verdict::Return) => done.push((state, Flow::Continue)),
                    Some(Verdict::Jump(target)) => {
                        for (state, flow) in self.chain(&target, state, depth + 1)? {
                            match flow {
                                Flow::Continue => running.push((state, at + 1)),
                                other => done.push((state, other)),
                            }
                        }
                    }
                    Some(Verdict::Goto(target)) => {
                        done.extend(self.chain(&target, state, depth + 1)?);
                    }
                }
            }
        }
        Ok(done)
    }

    /// Runs the base chains of `hook` in priority order (NAT chains only until a NAT is done).
    fn hook(
        &mut self,
        hook: Hook,
        states: Vec<State>,
        finished: &mut Vec<(State, End)>,
    ) -> Result<Vec<State>, EvalError> {
        let mut bases: Vec<(&Name, i32, ChainType)> = self
            .ruleset
            .chains
            .values()
            .filter_map(|c| {
                let base = c.chain.base.as_ref()?;
                (base.hook == hook).then_some((&c.chain.name, base.priority, base.chain_type))
            })
            .collect();
        bases.sort_by_key(|(_, priority, _)| *priority);
        let mut states = states;
        for (name, _, chain_type) in bases {
            let mut next = Vec::new();
            for state in states {
                let nat_done = match hook {
                    Hook::Postrouting => state.masquerade,
                    _ => state.dnat,
                };
                if chain_type == ChainType::Nat && nat_done {
                    next.push(state);
                    continue;
                }
                for (state, flow) in self.chain(name, state, 0)? {
                    match flow {
                        Flow::Continue | Flow::Accept => next.push(state),
                        Flow::Drop(chain) => finished.push((state, End::Drop { chain })),
                        Flow::Reject(chain) => finished.push((state, End::Reject { chain })),
                    }
                }
            }
            states = next;
        }
        Ok(states)
    }
}

/// Every outcome of `packet` entering by `path`, merged when equal, most likely first (as
/// `iptables_model::eval::evaluate`). `Incoming` packets pass prerouting, then the routing
/// decision (is the destination, after DNAT, an address of `host`?) sends them to input, or to
/// forward and postrouting; `Local` ones pass output and postrouting.
///
/// # Errors
///
/// [`EvalError`] for a rule the evaluator does not read, a missing chain or set, nesting
/// deeper than the limit, or more than [`RULE_BUDGET`] rule evaluations.
pub fn evaluate(
    ruleset: &Ruleset,
    host: &Host,
    packet: &Packet,
    path: Path,
) -> Result<Vec<Outcome>, EvalError> {
    let mut eval = Evaluator {
        ruleset,
        host,
        budget: RULE_BUDGET,
    };
    let start = State {
        packet: packet.clone(),
        dnat: false,
        masquerade: false,
        exact: BigRational::one(),
        kernel: BigRational::one(),
    };
    let mut finished = Vec::new();
    let routed = match path {
        Path::Incoming => eval.hook(Hook::Prerouting, alloc::vec![start], &mut finished)?,
        Path::Local => eval.hook(Hook::Output, alloc::vec![start], &mut finished)?,
    };
    for state in routed {
        let local = host.is_local(state.packet.destination);
        let after = match (path, local) {
            (Path::Incoming, true) => eval.hook(Hook::Input, alloc::vec![state], &mut finished)?,
            (Path::Incoming, false) => {
                let forwarded = eval.hook(Hook::Forward, alloc::vec![state], &mut finished)?;
                eval.hook(Hook::Postrouting, forwarded, &mut finished)?
            }
            (Path::Local, _) => eval.hook(Hook::Postrouting, alloc::vec![state], &mut finished)?,
        };
        finished.extend(after.into_iter().map(|s| (s, End::Accept)));
    }
    Ok(merge(finished.into_iter().map(|(s, verdict)| Outcome {
        verdict,
        destination: s.packet.destination,
        destination_port: s.packet.destination_port,
        source_nat: s.masquerade.then_some(SourceNat::Masquerade),
        mark: s.packet.mark,
        exact: s.exact,
        kernel: s.kernel,
    })))
}
