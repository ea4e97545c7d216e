//! The form `iptables-save` prints a rule back in (`docs/iptables.md` §7), so generated rules can
//! be compared with what the kernel reports.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::model::{
    CtState, MarkAction, MatchOption, Module, Probability, RecentOption, Rule, Spec, Target,
};
use crate::probability::{kernel_threshold, save_probability};

/// Comments longer than this are cut by the kernel module.
const COMMENT_MAX: usize = 255;

/// Where a general criterion goes in the saved rule.
fn general_rank(spec: &Spec) -> Option<u8> {
    match spec {
        Spec::Source { .. } => Some(0),
        Spec::Destination { .. } => Some(1),
        Spec::InInterface { .. } => Some(2),
        Spec::OutInterface { .. } => Some(3),
        Spec::Protocol { .. } => Some(4),
        Spec::Fragment { .. } => Some(5),
        Spec::Module(_) | Spec::Option(_) => None,
    }
}

/// The order `libxt_conntrack` prints states in.
fn ct_rank(state: CtState) -> u8 {
    match state {
        CtState::Invalid => 0,
        CtState::New => 1,
        CtState::Related => 2,
        CtState::Established => 3,
        CtState::Untracked => 4,
        CtState::Snat => 5,
        CtState::Dnat => 6,
    }
}

/// The order options of one module are printed in.
fn option_rank(option: &MatchOption) -> u8 {
    match option {
        MatchOption::SourcePort { .. } => 0,
        MatchOption::DestinationPort { .. } => 1,
        MatchOption::StatisticMode(_) => 0,
        MatchOption::Probability { .. } | MatchOption::Every { .. } => 1,
        MatchOption::Packet(_) => 2,
        MatchOption::Recent { option, .. } => match option {
            RecentOption::Set
            | RecentOption::Rcheck
            | RecentOption::Update
            | RecentOption::Remove => 0,
            RecentOption::Seconds(_) => 1,
            RecentOption::Reap => 2,
            RecentOption::HitCount(_) => 3,
            RecentOption::Rttl => 4,
            RecentOption::Name(_) => 5,
            RecentOption::Mask(_) => 6,
            RecentOption::Rsource | RecentOption::Rdest => 7,
        },
        MatchOption::SrcType { .. } => 0,
        MatchOption::DstType { .. } => 1,
        MatchOption::LimitIfaceIn | MatchOption::LimitIfaceOut => 2,
        _ => 10,
    }
}

fn normalize_option<'a>(option: &MatchOption<'a>) -> MatchOption<'a> {
    match option {
        MatchOption::Comment(text) => {
            let mut end = text.len().min(COMMENT_MAX);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            MatchOption::Comment(match text.get(..end) {
                Some(kept) if end < text.len() => String::from(kept).into(),
                _ => text.clone(),
            })
        }
        MatchOption::CtState { negated, states } | MatchOption::State { negated, states } => {
            let mut states = states.clone();
            states.sort_by_key(|s| ct_rank(*s));
            states.dedup();
            let negated = *negated;
            if matches!(option, MatchOption::State { .. }) {
                MatchOption::State { negated, states }
            } else {
                MatchOption::CtState { negated, states }
            }
        }
        MatchOption::SrcType { negated, types } | MatchOption::DstType { negated, types } => {
            let mut types = types.clone();
            types.sort();
            types.dedup();
            if matches!(option, MatchOption::SrcType { .. }) {
                MatchOption::SrcType {
                    negated: *negated,
                    types,
                }
            } else {
                MatchOption::DstType {
                    negated: *negated,
                    types,
                }
            }
        }
        MatchOption::Probability {
            negated,
            probability,
        } => {
            let saved = save_probability(kernel_threshold(probability));
            MatchOption::Probability {
                negated: *negated,
                probability: Probability::new(&saved).unwrap_or_else(|| probability.clone()),
            }
        }
        other => other.clone(),
    }
}

/// The options `recent` always prints (`--name DEFAULT`, the full mask, `--rsource`).
fn complete_recent(block: &mut Vec<MatchOption>, ipv6: bool) {
    let has = |block: &Vec<MatchOption>, f: fn(&RecentOption) -> bool| {
        block
            .iter()
            .any(|o| matches!(o, MatchOption::Recent { option, .. } if f(option)))
    };
    let recent = |option| MatchOption::Recent {
        negated: false,
        option,
    };
    if !has(block, |o| matches!(o, RecentOption::Name(_))) {
        block.push(recent(RecentOption::Name("DEFAULT".into())));
    }
    if !has(block, |o| matches!(o, RecentOption::Mask(_))) {
        let mask = if ipv6 {
            IpAddr::V6(Ipv6Addr::from_bits(u128::MAX))
        } else {
            IpAddr::V4(Ipv4Addr::BROADCAST)
        };
        block.push(recent(RecentOption::Mask(mask)));
    }
    if !has(block, |o| {
        matches!(o, RecentOption::Rsource | RecentOption::Rdest)
    }) {
        block.push(recent(RecentOption::Rsource));
    }
}

/// Which module block an option joins: the latest module accepting it, else (ports) an
/// implicit protocol match, else the latest module of any kind.
fn owner(blocks: &[(Module, Vec<MatchOption>)], option: &MatchOption) -> Option<usize> {
    let name = option.name();
    blocks
        .iter()
        .rposition(|(m, _)| m.accepts(name))
        .or_else(|| {
            let port = matches!(
                option,
                MatchOption::SourcePort { .. } | MatchOption::DestinationPort { .. }
            );
            if port {
                None
            } else {
                blocks.len().checked_sub(1)
            }
        })
}

/// `rule` as `iptables-save` prints it: general criteria first (`-s`, `-d`, `-i`, `-o`, `-p`,
/// with explicit prefix lengths), then each `-m` block with its options in the module's own
/// order (an implicit `-m tcp` where ports were given without one), then the target in its
/// saved spelling (`--set-xmark`, `--reject-with`). `ipv6` selects the REJECT default and the
/// `recent` mask.
pub fn normalize_rule<'a>(rule: &Rule<'a>, ipv6: bool) -> Rule<'a> {
    let mut general: Vec<(u8, Spec)> = Vec::new();
    let mut blocks: Vec<(Module, Vec<MatchOption>)> = Vec::new();
    for spec in &rule.specs {
        match spec {
            Spec::Module(m) => blocks.push((m.clone(), Vec::new())),
            Spec::Option(o) => {
                let index = owner(&blocks, o).or_else(|| {
                    blocks.push((Module::implicit(rule.protocol()?)?, Vec::new()));
                    blocks.len().checked_sub(1)
                });
                if let Some((_, options)) = index.and_then(|i| blocks.get_mut(i)) {
                    options.push(normalize_option(o));
                }
            }
            Spec::Source { negated, address } => general.push((
                0,
                Spec::Source {
                    negated: *negated,
                    address: address.with_full_prefix(),
                },
            )),
            Spec::Destination { negated, address } => {
                general.push((
                    1,
                    Spec::Destination {
                        negated: *negated,
                        address: address.with_full_prefix(),
                    },
                ));
            }
            other => general.push((general_rank(other).unwrap_or(9), other.clone())),
        }
    }
    general.sort_by_key(|(rank, _)| *rank);
    let mut specs: Vec<Spec> = general.into_iter().map(|(_, s)| s).collect();
    for (module, mut options) in blocks {
        if module == Module::Recent {
            complete_recent(&mut options, ipv6);
        }
        options.sort_by_key(option_rank);
        specs.push(Spec::Module(module));
        specs.extend(options.into_iter().map(Spec::Option));
    }
    let target = rule.target.as_ref().map(|t| match t {
        Target::Mark(action) => {
            let (value, mask) = action.as_xmark();
            Target::Mark(MarkAction::SetXmark {
                value,
                mask: Some(mask),
            })
        }
        Target::Reject { with: None } => Target::Reject {
            with: Some(Cow::Borrowed(if ipv6 {
                "icmp6-port-unreachable"
            } else {
                "icmp-port-unreachable"
            })),
        },
        other => other.clone(),
    });
    Rule {
        counters: rule.counters,
        specs,
        target,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Style, Styled};
    use crate::parse_rule;
    use alloc::string::ToString;

    fn saved(rule: &str) -> String {
        Styled(
            &normalize_rule(&parse_rule(rule).unwrap(), false),
            Style::Save,
        )
        .to_string()
    }

    #[test]
    fn spec_7_rules_1_to_8() {
        // 1-4: prefixes, option order, implicit -m tcp, comments always quoted.
        assert_eq!(
            saved("-m comment --comment ns1/svc1:p80 -m tcp -p tcp -d 10.0.0.1 --dport 80 -j X"),
            r#"-d 10.0.0.1/32 -p tcp -m comment --comment "ns1/svc1:p80" -m tcp --dport 80 -j X"#
        );
        assert_eq!(
            saved("-p udp --dport 53 -j ACCEPT"),
            "-p udp -m udp --dport 53 -j ACCEPT"
        );
        // 5: MARK spellings.
        assert_eq!(
            saved("-j MARK --or-mark 0x4000"),
            "-j MARK --set-xmark 0x4000/0x4000"
        );
        assert_eq!(
            saved("-j MARK --xor-mark 0x4000"),
            "-j MARK --set-xmark 0x4000/0x0"
        );
        // 6: recent.
        assert_eq!(
            saved("-m recent --name L --set"),
            "-m recent --set --name L --mask 255.255.255.255 --rsource"
        );
        // 7: REJECT default.
        assert_eq!(
            saved("-j REJECT"),
            "-j REJECT --reject-with icmp-port-unreachable"
        );
        // 8: probabilities through the kernel's 31 bits.
        assert_eq!(
            saved("-m statistic --mode random --probability 0.3333333333 -j X"),
            "-m statistic --mode random --probability 0.33333333349 -j X"
        );
        let long = "x".repeat(300);
        assert_eq!(
            saved(&alloc::format!("-m comment --comment {long}")).len(),
            r#"-m comment --comment """#.len() + 255
        );
    }

    /// The saved form reads back as the same saved form (what iptables-save prints of a
    /// restore of its own output), whatever the position `-p` was written in. The fuzz case
    /// `-m 8 --dport -p tcp` (issue 29) is refused by the parser; these are its neighbours.
    #[test]
    fn saved_form_of_rules_with_unknown_modules_and_ports_reads_back_unchanged() {
        for rule in [
            "-m 8 --dport -p icmp",
            "-m 8 --dport",
            "-p tcp -m 8 --dport 80 --foo",
            "-m 8 --foo 1 -p tcp --dport 2",
            "-m 8 --comment x -m comment --comment y",
            "-m tcp --sport 1 -m 8 --foo -p tcp --dport 3",
        ] {
            let once = saved(rule);
            assert_eq!(saved(&once), once, "{rule}");
        }
    }
}
