//! The canonical order kube-proxy's unit tests compare restore texts in (`sortIPTablesRules`;
//! `testdata/iptables/README.md`).

use alloc::vec::Vec;

use crate::model::{Command, Line, RestoreFile, Rule, TableSection};

/// Chain order: KUBE-NODEPORTS, KUBE-SERVICES, other KUBE-* chains, then the rest, each group
/// byte-wise.
fn chain_rank(name: &str) -> (u8, &str) {
    match name {
        "KUBE-NODEPORTS" => (0, name),
        "KUBE-SERVICES" => (1, name),
        n if n.starts_with("KUBE-") => (2, n),
        n => (3, n),
    }
}

/// The service a rule belongs to: its comment up to the first space or `:`.
fn service_of<'r>(rule: &'r Rule<'_>) -> &'r str {
    let comment = rule.comment_text().unwrap_or("");
    comment.split([' ', ':']).next().unwrap_or("")
}

fn is_last_rule(rule: &Rule) -> bool {
    rule.comment_text()
        .is_some_and(|c| c.contains("must be the last rule"))
}

fn canonical_table<'a>(section: &TableSection<'a>) -> TableSection<'a> {
    let mut chains: Vec<&str> = Vec::new();
    for line in &section.lines {
        let name = match line {
            Line::Chain(c) => c.name.as_str(),
            Line::Command(Command::Append { chain, .. }) => chain.as_str(),
            Line::Command(_) => continue,
        };
        if !chains.contains(&name) {
            chains.push(name);
        }
    }
    chains.sort_by(|a, b| chain_rank(a).cmp(&chain_rank(b)));
    let nat = section.table == crate::model::Table::Nat;
    let mut out = TableSection::new(section.table);
    let mut declared: Vec<_> = section.chains().cloned().collect();
    declared.sort_by(|a, b| chain_rank(&a.name).cmp(&chain_rank(&b.name)));
    out.lines.extend(declared.into_iter().map(Line::Chain));
    for chain in &chains {
        let mut rules: Vec<&Rule> = section.appended(chain).collect();
        if *chain == "KUBE-SERVICES" || *chain == "KUBE-NODEPORTS" {
            let last = nat && *chain == "KUBE-SERVICES";
            rules.sort_by(|a, b| {
                (last && is_last_rule(a), service_of(a))
                    .cmp(&(last && is_last_rule(b), service_of(b)))
            });
        }
        out.lines.extend(rules.into_iter().map(|r| {
            Line::Command(Command::Append {
                chain: (*chain).into(),
                rule: r.clone(),
            })
        }));
    }
    for chain in &chains {
        for line in &section.lines {
            if let Line::Command(Command::DeleteChain(Some(c))) = line
                && c == chain
            {
                out.lines.push(line.clone());
            }
        }
    }
    out
}

/// `file` in the unit tests' canonical order: tables by name; chains KUBE-NODEPORTS,
/// KUBE-SERVICES, other KUBE-*, others; rules grouped by chain in that order, KUBE-SERVICES and
/// KUBE-NODEPORTS stable-sorted by service name (nat KUBE-SERVICES' "last rule" kept last);
/// `-X` lines after all rules.
pub fn canonical_order<'a>(file: &RestoreFile<'a>) -> RestoreFile<'a> {
    let mut tables: Vec<TableSection> = file.tables.iter().map(canonical_table).collect();
    tables.sort_by(|a, b| a.table.name().cmp(b.table.name()));
    RestoreFile { tables }
}
