//! The kernel's view: tables of chains of rules, changed by applying restore documents with the
//! kernel's checks (what a real `iptables-restore` would refuse, [`RestoreError`] refuses too).

use alloc::collections::BTreeMap;
use alloc::string::ToString;
use alloc::vec::Vec;

use crate::error::RestoreError;
use crate::model::{
    ChainLine, ChainName, Command, Counters, Line, OwnedRestoreFile, OwnedRule, Policy,
    RestoreFile, Table, TableSection, Target,
};
use crate::normalize::normalize_rule;

/// A chain with its rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    /// The name.
    pub name: ChainName,
    /// The policy of a built-in chain; `None` for user chains.
    pub policy: Option<Policy>,
    /// The chain's counters.
    pub counters: Counters,
    /// The rules, in order.
    pub rules: Vec<OwnedRule>,
}

/// One table: built-in chains in hook order, then user chains in creation order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableState {
    /// The table.
    pub table: Table,
    /// The chains.
    pub chains: Vec<Chain>,
    index: BTreeMap<ChainName, usize>,
}

impl TableState {
    /// The table with its built-in chains, empty, policy ACCEPT.
    pub fn new(table: Table) -> Self {
        let chains: Vec<Chain> = table
            .builtin_chains()
            .iter()
            .map(|name| Chain {
                name: (*name).into(),
                policy: Some(Policy::Accept),
                counters: Counters::default(),
                rules: Vec::new(),
            })
            .collect();
        let mut state = Self {
            table,
            chains,
            index: BTreeMap::new(),
        };
        state.reindex();
        state
    }

    fn reindex(&mut self) {
        self.index = self
            .chains
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect();
    }

    /// The chain called `name`.
    pub fn chain(&self, name: &str) -> Option<&Chain> {
        self.index.get(name).and_then(|i| self.chains.get(*i))
    }

    fn chain_mut(&mut self, name: &str, line: usize) -> Result<&mut Chain, RestoreError> {
        let index = *self
            .index
            .get(name)
            .ok_or_else(|| RestoreError::NoSuchChain {
                line,
                chain: name.into(),
            })?;
        self.chains
            .get_mut(index)
            .ok_or_else(|| RestoreError::NoSuchChain {
                line,
                chain: name.into(),
            })
    }

    fn referenced(&self, name: &str) -> bool {
        self.chains
            .iter()
            .flat_map(|c| &c.rules)
            .any(|r| r.target.as_ref().and_then(Target::chain) == Some(name))
    }

    fn declare(&mut self, line: usize, decl: &ChainLine) -> Result<(), RestoreError> {
        let builtin = self.table.is_builtin(&decl.name);
        if !builtin && decl.policy.is_some() {
            return Err(RestoreError::BadPolicy {
                line,
                chain: decl.name.to_string(),
            });
        }
        if !self.index.contains_key(&decl.name) {
            self.chains.push(Chain {
                name: decl.name.clone(),
                policy: None,
                counters: Counters::default(),
                rules: Vec::new(),
            });
            self.reindex();
        }
        let chain = self.chain_mut(&decl.name, line)?;
        chain.rules.clear();
        if let Some(policy) = decl.policy {
            chain.policy = Some(policy);
        }
        if let Some(counters) = decl.counters {
            chain.counters = counters;
        }
        Ok(())
    }

    fn delete_chain(&mut self, line: usize, name: &str) -> Result<(), RestoreError> {
        let busy = |reason| {
            Err(RestoreError::ChainBusy {
                line,
                chain: name.into(),
                reason,
            })
        };
        if self.table.is_builtin(name) {
            return busy("it is a built-in chain");
        }
        if !self.chain_mut(name, line)?.rules.is_empty() {
            return busy("it still has rules (flush it first)");
        }
        if self.referenced(name) {
            return busy("rules still jump to it");
        }
        self.chains.retain(|c| c.name != name);
        self.reindex();
        Ok(())
    }

    fn apply(&mut self, line: usize, command: &Command<'_>) -> Result<(), RestoreError> {
        match command {
            Command::Append { chain, rule } => self
                .chain_mut(chain, line)?
                .rules
                .push(rule.clone().into_owned()),
            Command::Insert {
                chain,
                position,
                rule,
            } => {
                let rules = &mut self.chain_mut(chain, line)?.rules;
                let at = position.map_or(0, |p| p.saturating_sub(1) as usize);
                if at > rules.len() {
                    return Err(RestoreError::NoSuchRule {
                        line,
                        chain: chain.to_string(),
                    });
                }
                rules.insert(at, rule.clone().into_owned());
            }
            Command::Delete { chain, rule } => {
                let rules = &mut self.chain_mut(chain, line)?.rules;
                let at = rules
                    .iter()
                    .position(|r| r.specs == rule.specs && r.target == rule.target)
                    .ok_or_else(|| RestoreError::NoSuchRule {
                        line,
                        chain: chain.to_string(),
                    })?;
                rules.remove(at);
            }
            Command::DeleteAt { chain, position } => {
                let rules = &mut self.chain_mut(chain, line)?.rules;
                let at = (*position as usize)
                    .checked_sub(1)
                    .filter(|i| *i < rules.len());
                let at = at.ok_or_else(|| RestoreError::NoSuchRule {
                    line,
                    chain: chain.to_string(),
                })?;
                rules.remove(at);
            }
            Command::NewChain(name) => {
                if self.index.contains_key(name) {
                    return Err(RestoreError::ChainExists {
                        line,
                        chain: name.to_string(),
                    });
                }
                self.declare(
                    line,
                    &ChainLine {
                        name: name.clone(),
                        policy: None,
                        counters: None,
                    },
                )?;
            }
            Command::DeleteChain(Some(name)) => self.delete_chain(line, name)?,
            Command::DeleteChain(None) => {
                let users: Vec<ChainName> = self
                    .chains
                    .iter()
                    .filter(|c| c.policy.is_none())
                    .map(|c| c.name.clone())
                    .collect();
                self.chains
                    .iter_mut()
                    .filter(|c| c.policy.is_none())
                    .for_each(|c| c.rules.clear());
                for name in users {
                    self.delete_chain(line, &name)?;
                }
            }
            Command::Flush(Some(name)) => self.chain_mut(name, line)?.rules.clear(),
            Command::Flush(None) => self.chains.iter_mut().for_each(|c| c.rules.clear()),
        }
        Ok(())
    }

    /// The checks the kernel makes when the table is committed.
    fn validate(&self) -> Result<(), RestoreError> {
        let table = self.table.name();
        for chain in &self.chains {
            for rule in &chain.rules {
                let Some(target) = &rule.target else { continue };
                if let Some(next) = target.chain()
                    && !self.index.contains_key(next)
                {
                    return Err(RestoreError::MissingJumpTarget {
                        chain: chain.name.to_string(),
                        target: next.into(),
                    });
                }
                let allowed = match target {
                    Target::Dnat { .. } | Target::Snat { .. } | Target::Masquerade { .. } => {
                        self.table == Table::Nat
                    }
                    Target::Reject { .. } => self.table != Table::Nat,
                    Target::Notrack => self.table == Table::Raw,
                    _ => true,
                };
                if !allowed {
                    let name = match target {
                        Target::Dnat { .. } => "DNAT",
                        Target::Snat { .. } => "SNAT",
                        Target::Masquerade { .. } => "MASQUERADE",
                        Target::Reject { .. } => "REJECT",
                        _ => "NOTRACK",
                    };
                    return Err(RestoreError::TargetNotAllowed {
                        table,
                        target: name,
                    });
                }
            }
        }
        self.check_loops()
    }

    /// Depth-first search over jumps with an explicit stack; a jump back into a chain on the
    /// current path is a loop.
    fn check_loops(&self) -> Result<(), RestoreError> {
        // 0 = unvisited, 1 = on the current path, 2 = done.
        let mut state = alloc::vec![0u8; self.chains.len()];
        let targets = |i: usize| -> Vec<usize> {
            self.chains
                .get(i)
                .map(|c| {
                    c.rules
                        .iter()
                        .filter_map(|r| r.target.as_ref()?.chain())
                        .filter_map(|n| self.index.get(n).copied())
                        .collect()
                })
                .unwrap_or_default()
        };
        for start in 0..self.chains.len() {
            if state.get(start) != Some(&0) {
                continue;
            }
            let mut stack: Vec<(usize, Vec<usize>)> = alloc::vec![(start, targets(start))];
            if let Some(s) = state.get_mut(start) {
                *s = 1;
            }
            while let Some((node, pending)) = stack.last_mut() {
                match pending.pop() {
                    Some(next) => match state.get(next).copied() {
                        Some(0) => {
                            if let Some(s) = state.get_mut(next) {
                                *s = 1;
                            }
                            stack.push((next, targets(next)));
                        }
                        Some(1) => {
                            let chain = self
                                .chains
                                .get(next)
                                .map(|c| c.name.to_string())
                                .unwrap_or_default();
                            return Err(RestoreError::Loop { chain });
                        }
                        _ => {}
                    },
                    None => {
                        if let Some(s) = state.get_mut(*node) {
                            *s = 2;
                        }
                        stack.pop();
                    }
                }
            }
        }
        Ok(())
    }
}

/// Every table of a network namespace, as the kernel holds them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ruleset {
    tables: Vec<TableState>,
}

impl Ruleset {
    /// An empty namespace (tables appear, with their built-in chains, when first restored).
    pub const fn new() -> Self {
        Self { tables: Vec::new() }
    }

    /// The state of `table`, if it was ever restored.
    pub fn table(&self, table: Table) -> Option<&TableState> {
        self.tables.iter().find(|t| t.table == table)
    }

    /// Applies `file` as `iptables-restore` does; `noflush` is `--noflush` (otherwise each
    /// restored table starts empty). Each table is committed atomically: on error the tables
    /// committed before it stay, the failing one is unchanged. Error lines count as in `file`'s
    /// emitted text.
    pub fn restore(&mut self, file: &RestoreFile, noflush: bool) -> Result<(), RestoreError> {
        let mut line = 0;
        for section in &file.tables {
            line += 1;
            let mut state = match (noflush, self.table(section.table)) {
                (true, Some(existing)) => existing.clone(),
                _ => TableState::new(section.table),
            };
            for entry in &section.lines {
                line += 1;
                match entry {
                    Line::Chain(decl) => state.declare(line, decl)?,
                    Line::Command(command) => state.apply(line, command)?,
                }
            }
            line += 1;
            state.validate()?;
            match self.tables.iter_mut().find(|t| t.table == section.table) {
                Some(slot) => *slot = state,
                None => self.tables.push(state),
            }
        }
        Ok(())
    }

    /// What `iptables-save` would print: per table, built-in chains with policy and counters,
    /// then user chains alphabetically, then every rule in its saved form
    /// ([`normalize_rule`]); write it with [`crate::codec::Style::Save`].
    pub fn save(&self, ipv6: bool) -> OwnedRestoreFile {
        let tables = self
            .tables
            .iter()
            .map(|t| {
                let mut chains: Vec<&Chain> = t.chains.iter().collect();
                chains.sort_by(|a, b| {
                    (
                        a.policy.is_none(),
                        if a.policy.is_none() {
                            a.name.as_str()
                        } else {
                            ""
                        },
                    )
                        .cmp(&(
                            b.policy.is_none(),
                            if b.policy.is_none() {
                                b.name.as_str()
                            } else {
                                ""
                            },
                        ))
                });
                let mut section = TableSection::new(t.table);
                section.lines.extend(chains.iter().map(|c| {
                    Line::Chain(ChainLine {
                        name: c.name.clone(),
                        policy: c.policy,
                        counters: Some(c.counters),
                    })
                }));
                for chain in &chains {
                    section.lines.extend(chain.rules.iter().map(|r| {
                        Line::Command(Command::Append {
                            chain: chain.name.clone(),
                            rule: normalize_rule(r, ipv6),
                        })
                    }));
                }
                section
            })
            .collect();
        RestoreFile { tables }
    }
}
