//! The shapes of kube-proxy's rules, spelled as kube-proxy writes them (spec §2.3):
//! comment first, then `-m PROTO -p PROTO [-d IP] --dport PORT`, then the target.

use alloc::string::String;
use core::net::IpAddr;

use super::input::Protocol;
use crate::addr::Cidr;
use crate::model::{
    AddrType, CtState, MarkAction, MarkValue, MatchOption, Module, PortRange, Probability,
    RecentOption, Rule, Spec, StatisticMode, Target,
};

/// The `-m` module of an L4 protocol.
pub(crate) fn module(protocol: Protocol) -> Module {
    match protocol {
        Protocol::Tcp => Module::Tcp,
        Protocol::Udp => Module::Udp,
        Protocol::Sctp => Module::Sctp,
    }
}

/// `-j CHAIN`.
pub(crate) fn jump(chain: &str) -> Target {
    Target::Jump(chain.into())
}

/// `-m PROTO -p PROTO`.
pub(crate) fn protocol(rule: Rule, protocol: Protocol) -> Rule {
    rule.module(module(protocol)).with(Spec::Protocol {
        negated: false,
        protocol: protocol.lower().into(),
    })
}

/// `-d ADDRESS`.
pub(crate) fn destination(rule: Rule, address: Cidr) -> Rule {
    rule.with(Spec::Destination {
        negated: false,
        address,
    })
}

/// `[!] -s ADDRESS`.
pub(crate) fn source(rule: Rule, negated: bool, address: Cidr) -> Rule {
    rule.with(Spec::Source { negated, address })
}

/// `--dport PORT`.
pub(crate) fn dport(rule: Rule, port: u16) -> Rule {
    rule.option(MatchOption::DestinationPort {
        negated: false,
        ports: PortRange::single(port),
    })
}

/// `-m comment --comment TEXT -m PROTO -p PROTO [-d IP] --dport PORT`: the match of every
/// per-IP service rule.
pub(crate) fn service_ip(comment: String, proto: Protocol, ip: Option<IpAddr>, port: u16) -> Rule {
    let rule = protocol(Rule::new().comment(comment), proto);
    let rule = match ip {
        Some(ip) => destination(rule, Cidr::host(ip)),
        None => rule,
    };
    dport(rule, port)
}

/// `-m addrtype --src-type LOCAL` / `--dst-type LOCAL`.
pub(crate) fn addrtype_local(rule: Rule, source: bool, negated: bool) -> Rule {
    let types = alloc::vec![AddrType::Local];
    let option = if source {
        MatchOption::SrcType { negated, types }
    } else {
        MatchOption::DstType { negated, types }
    };
    rule.module(Module::AddrType).option(option)
}

/// `-m nfacct --nfacct-name NAME`.
pub(crate) fn nfacct(rule: Rule, name: &str) -> Rule {
    rule.module(Module::Nfacct)
        .option(MatchOption::NfacctName(name.into()))
}

/// `-m conntrack [!] --ctstate STATES`.
pub(crate) fn ctstate(rule: Rule, negated: bool, states: &[CtState]) -> Rule {
    rule.module(Module::Conntrack).option(MatchOption::CtState {
        negated,
        states: states.into(),
    })
}

/// `-m mark [!] --mark M/M`.
pub(crate) fn has_mark(rule: Rule, negated: bool, mark: u32) -> Rule {
    rule.module(Module::Mark).option(MatchOption::Mark {
        negated,
        mark: MarkValue {
            value: mark,
            mask: Some(mark),
        },
    })
}

/// `-j MARK --or-mark M` / `--xor-mark M`.
pub(crate) fn mark_target(action: MarkAction) -> Target {
    Target::Mark(action)
}

/// `-m statistic --mode random --probability P`.
pub(crate) fn random(rule: Rule, probability: Probability) -> Rule {
    rule.module(Module::Statistic)
        .option(MatchOption::StatisticMode(StatisticMode::Random))
        .option(MatchOption::Probability {
            negated: false,
            probability,
        })
}

/// `-m recent --name LIST --rcheck --seconds T --reap` (`check`) or `-m recent --name LIST --set`.
pub(crate) fn recent(rule: Rule, list: &str, check: Option<u32>) -> Rule {
    let recent = |option| MatchOption::Recent {
        negated: false,
        option,
    };
    let rule = rule
        .module(Module::Recent)
        .option(recent(RecentOption::Name(list.into())));
    match check {
        Some(seconds) => rule
            .option(recent(RecentOption::Rcheck))
            .option(recent(RecentOption::Seconds(seconds)))
            .option(recent(RecentOption::Reap)),
        None => rule.option(recent(RecentOption::Set)),
    }
}
