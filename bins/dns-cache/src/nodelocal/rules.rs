//! The iptables rules node-cache installs (`cache_app.go`, `initIptables`), as
//! iptables-model values: NOTRACK in `raw` for DNS to and from each local IP, ACCEPT in
//! `filter` for the same flows (untracked packets miss the usual ESTABLISHED accept), and
//! NOTRACK for the health port. Pure: what is missing from an `iptables-save` dump, and the
//! `iptables-restore --noflush` documents that insert or delete rules.

use std::net::IpAddr;

use iptables_model::model::{IpProtocol, PortRange};
use iptables_model::normalize::normalize_rule;
use iptables_model::{
    Cidr, Command, Line, MatchOption, Module, OwnedRestoreFile, OwnedRule, RestoreFile, Rule, Spec,
    Table, TableSection, Target,
};

/// The comment of the NOTRACK rules, as node-cache writes it.
pub const SKIP_CONNTRACK: &str = "NodeLocal DNS Cache: skip conntrack";
/// The comment of the ACCEPT rules, as node-cache writes it.
pub const ALLOW_TRAFFIC: &str = "NodeLocal DNS Cache: allow DNS traffic";

/// One rule and where it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedRule {
    /// `raw` or `filter`.
    pub table: Table,
    /// A built-in chain of that table.
    pub chain: &'static str,
    /// The rule.
    pub rule: OwnedRule,
}

/// Which way a rule matches the DNS (or health) port.
#[derive(Clone, Copy)]
enum Way {
    /// `-d IP --dport PORT`.
    To,
    /// `-s IP --sport PORT`.
    From,
}

/// Every rule node-cache installs for `local_ips`, in its order.
pub fn node_cache_rules(local_ips: &[IpAddr], dns_port: u16, health_port: u16) -> Vec<PlacedRule> {
    use Way::{From, To};
    let mut rules = Vec::with_capacity(local_ips.len() * 12);
    for &ip in local_ips {
        let mut both = |table, chain, way, target: Target<'static>, comment| {
            for protocol in ["tcp", "udp"] {
                let rule = rule(protocol, ip, way, dns_port, target.clone(), comment);
                rules.push(PlacedRule { table, chain, rule });
            }
        };
        both(
            Table::Raw,
            "PREROUTING",
            To,
            Target::Notrack,
            SKIP_CONNTRACK,
        );
        both(Table::Filter, "INPUT", To, Target::Accept, ALLOW_TRAFFIC);
        both(Table::Raw, "OUTPUT", From, Target::Notrack, SKIP_CONNTRACK);
        both(Table::Filter, "OUTPUT", From, Target::Accept, ALLOW_TRAFFIC);
        both(Table::Raw, "OUTPUT", To, Target::Notrack, SKIP_CONNTRACK);
        for way in [To, From] {
            let rule = rule("tcp", ip, way, health_port, Target::Notrack, SKIP_CONNTRACK);
            rules.push(PlacedRule {
                table: Table::Raw,
                chain: "OUTPUT",
                rule,
            });
        }
    }
    rules
}

/// `-p PROTOCOL -m PROTOCOL -d IP --dport PORT -m comment --comment C -j TARGET` (or `-s`
/// and `--sport`).
fn rule(
    protocol: &str,
    ip: IpAddr,
    way: Way,
    port: u16,
    target: Target<'static>,
    comment: &'static str,
) -> OwnedRule {
    let ports = PortRange::single(port);
    let (address, port) = match way {
        Way::To => (
            Spec::Destination {
                negated: false,
                address: Cidr::host(ip),
            },
            MatchOption::DestinationPort {
                negated: false,
                ports,
            },
        ),
        Way::From => (
            Spec::Source {
                negated: false,
                address: Cidr::host(ip),
            },
            MatchOption::SourcePort {
                negated: false,
                ports,
            },
        ),
    };
    Rule::new()
        .with(Spec::Protocol {
            negated: false,
            protocol: IpProtocol::from_name(protocol),
        })
        .module(Module::from_name(protocol))
        .with(address)
        .option(port)
        .comment(comment)
        .target(target)
}

/// How many copies of each of `wanted` are in `saved` (an `iptables-save` dump), compared
/// as iptables prints rules back.
pub fn count_present(wanted: &[PlacedRule], saved: &RestoreFile<'_>, ipv6: bool) -> Vec<usize> {
    wanted
        .iter()
        .map(|placed| {
            let want = normalize_rule(&placed.rule, ipv6);
            saved.table(placed.table).map_or(0, |section| {
                section
                    .appended(placed.chain)
                    .filter(|have| {
                        let mut have = normalize_rule(have, ipv6);
                        have.counters = None;
                        have == want
                    })
                    .count()
            })
        })
        .collect()
}

/// The restore document that prepends (`-I CHAIN 1`) each rule of `wanted` whose count is 0.
pub fn insert_missing(wanted: &[PlacedRule], counts: &[usize]) -> OwnedRestoreFile {
    document(
        wanted
            .iter()
            .zip(counts)
            .filter(|(_, n)| **n == 0)
            .map(|(placed, _)| {
                let command = Command::Insert {
                    chain: placed.chain.into(),
                    position: Some(1),
                    rule: placed.rule.clone(),
                };
                (placed.table, command)
            }),
    )
}

/// The restore document that deletes every copy (`-D CHAIN rule`, once per copy) of the
/// rules of `wanted`.
pub fn delete_present(wanted: &[PlacedRule], counts: &[usize]) -> OwnedRestoreFile {
    document(wanted.iter().zip(counts).flat_map(|(placed, &n)| {
        let command = Command::Delete {
            chain: placed.chain.into(),
            rule: placed.rule.clone(),
        };
        std::iter::repeat_n((placed.table, command), n)
    }))
}

/// Groups commands by table, in the order tables first appear.
fn document(commands: impl Iterator<Item = (Table, Command<'static>)>) -> OwnedRestoreFile {
    let mut file = RestoreFile::default();
    for (table, command) in commands {
        let index = match file.tables.iter().position(|s| s.table == table) {
            Some(index) => index,
            None => {
                file.tables.push(TableSection::new(table));
                file.tables.len() - 1
            }
        };
        if let Some(section) = file.tables.get_mut(index) {
            section.lines.push(Line::Command(command));
        }
    }
    file
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> Vec<IpAddr> {
        vec!["169.254.20.10".parse().unwrap()]
    }

    #[test]
    fn node_cache_rule_set() {
        let rules = node_cache_rules(&local(), 53, 8080);
        assert_eq!(rules.len(), 12);
        let text = insert_missing(&rules, &[0; 12]).to_string();
        assert!(text.starts_with("*raw\n-I PREROUTING 1 -p tcp -m tcp -d 169.254.20.10 --dport 53 -m comment --comment \"NodeLocal DNS Cache: skip conntrack\" -j NOTRACK\n"), "{text}");
        assert!(text.contains("-I OUTPUT 1 -p tcp -m tcp -s 169.254.20.10 --sport 8080 -m comment --comment \"NodeLocal DNS Cache: skip conntrack\" -j NOTRACK\n"), "{text}");
        assert!(text.contains("*filter\n-I INPUT 1 -p tcp -m tcp -d 169.254.20.10 --dport 53 -m comment --comment \"NodeLocal DNS Cache: allow DNS traffic\" -j ACCEPT\n"), "{text}");
        assert_eq!(text.matches("COMMIT\n").count(), 2);
    }

    #[test]
    fn saved_rules_are_recognised_and_missing_ones_inserted() {
        let rules = node_cache_rules(&local(), 53, 8080);
        // As `iptables-save` prints them back, one NOTRACK twice and one missing.
        let mut saved = String::from("*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
        saved.push_str("-A PREROUTING -d 169.254.20.10/32 -p tcp -m tcp --dport 53 -m comment --comment \"NodeLocal DNS Cache: skip conntrack\" -j NOTRACK\n".repeat(2).as_str());
        for p in ["tcp", "udp"] {
            saved.push_str(&format!("-A OUTPUT -s 169.254.20.10/32 -p {p} -m {p} --sport 53 -m comment --comment \"NodeLocal DNS Cache: skip conntrack\" -j NOTRACK\n"));
            saved.push_str(&format!("-A OUTPUT -d 169.254.20.10/32 -p {p} -m {p} --dport 53 -m comment --comment \"NodeLocal DNS Cache: skip conntrack\" -j NOTRACK\n"));
        }
        saved.push_str("COMMIT\n");
        let saved = iptables_model::parse(&saved).unwrap();
        let counts = count_present(&rules, &saved, false);
        assert_eq!(counts, [2, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0]);
        let insert = insert_missing(&rules, &counts).to_string();
        assert_eq!(insert.lines().filter(|l| l.starts_with("-I ")).count(), 7);
        assert!(insert.contains("-I PREROUTING 1 -p udp"));
        let delete = delete_present(&rules, &counts).to_string();
        assert_eq!(delete.matches("-D PREROUTING -p tcp").count(), 2);
        assert_eq!(
            delete.lines().filter(|l| l.starts_with("-D ")).count(),
            6,
            "{delete}"
        );
        assert!(!delete.contains("*filter"));
    }

    #[test]
    fn nothing_to_do_is_an_empty_document() {
        let rules = node_cache_rules(&local(), 53, 8080);
        assert!(insert_missing(&rules, &[1; 12]).tables.is_empty());
        assert!(delete_present(&rules, &[0; 12]).tables.is_empty());
    }
}
