//! A table in memory, as the kernel holds it after transactions: [`Ruleset::apply`] checks and
//! applies one the way `nft -f` does (all or nothing), and [`Ruleset::dump`] writes the
//! result as knftables' fake does (`fake.go` `Dump`: one `add` line per object, rule and
//! element), which is what kube-proxy's unit tests compare.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::element::Element;
use crate::error::ApplyError;
use crate::name::Name;
use crate::object::{Chain, Container, Family, Table};
use crate::rule::Rule;
use crate::transaction::{Heads, Op, Transaction};

/// A chain and its rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainState {
    /// The chain as added.
    pub chain: Chain,
    /// Its rules in order.
    pub rules: Vec<Rule>,
}

/// A set or map and its elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerState {
    /// The set or map as added.
    pub container: Container,
    /// Its elements in the order they were added.
    pub elements: Vec<Element>,
}

/// One table's contents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ruleset {
    /// The table, once added.
    pub table: Option<Table>,
    /// Chains by name.
    pub chains: BTreeMap<Name, ChainState>,
    /// Sets and maps by name.
    pub containers: BTreeMap<Name, ContainerState>,
}

fn describe(e: &Element) -> String {
    let mut s = String::new();
    let _ = write!(s, "{} {{", e.container);
    for a in e.key.iter() {
        let _ = write!(s, " {a}");
    }
    s.push_str(" }");
    s
}

impl Ruleset {
    /// An empty ruleset (no table).
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies `tx` atomically: on error nothing changes.
    ///
    /// # Errors
    ///
    /// [`ApplyError`] for the first operation the kernel would refuse.
    pub fn apply(&mut self, tx: &Transaction) -> Result<(), ApplyError> {
        let mut next = self.clone();
        for op in &tx.ops {
            next.apply_op(op)?;
        }
        *self = next;
        Ok(())
    }

    fn chain_mut(&mut self, name: &Name) -> Result<&mut ChainState, ApplyError> {
        self.chains
            .get_mut(name)
            .ok_or_else(|| ApplyError::NoChain(name.as_str().into()))
    }

    fn container_mut(&mut self, name: &Name, map: bool) -> Result<&mut ContainerState, ApplyError> {
        self.containers
            .get_mut(name)
            .filter(|c| c.container.is_map() == map)
            .ok_or_else(|| ApplyError::NoContainer(name.as_str().into()))
    }

    fn apply_op(&mut self, op: &Op) -> Result<(), ApplyError> {
        if !matches!(op, Op::AddTable(_)) && self.table.is_none() {
            return Err(ApplyError::NoTable);
        }
        match op {
            Op::AddTable(t) => {
                if self.table.is_none() {
                    self.table = Some(t.clone());
                }
            }
            Op::DeleteTable => *self = Self::new(),
            // `add chain NAME` without properties leaves an existing chain as it is, base
            // chain or not (the kernel's `nf_tables_updchain` with no hook); with other
            // properties than it has, the kernel refuses it.
            Op::AddChain(c) => match self.chains.get(&c.name) {
                Some(existing) if c.base.is_some() && existing.chain.base != c.base => {
                    return Err(ApplyError::Redefined(c.name.as_str().into()));
                }
                Some(_) => {}
                None => {
                    self.chains.insert(
                        c.name.clone(),
                        ChainState {
                            chain: c.clone(),
                            rules: Vec::new(),
                        },
                    );
                }
            },
            Op::FlushChain(n) => self.chain_mut(n)?.rules.clear(),
            Op::DeleteChain(n) => {
                self.chains
                    .remove(n)
                    .ok_or_else(|| ApplyError::NoChain(n.as_str().into()))?;
            }
            Op::AddRule(r) => {
                if let Some(target) = jump_target(r) {
                    self.chain_mut(&target)?;
                }
                self.chain_mut(&r.chain)?.rules.push(r.clone());
            }
            Op::AddContainer(c) => match self.containers.get(&c.name) {
                Some(existing)
                    if existing.container.key != c.key || existing.container.value != c.value =>
                {
                    return Err(ApplyError::Redefined(c.name.as_str().into()));
                }
                Some(_) => {}
                None => {
                    self.containers.insert(
                        c.name.clone(),
                        ContainerState {
                            container: Container::clone(c),
                            elements: Vec::new(),
                        },
                    );
                }
            },
            Op::FlushContainer(n, map) => self.container_mut(n, *map)?.elements.clear(),
            Op::DeleteContainer(n, map) => {
                self.container_mut(n, *map)?;
                self.containers.remove(n);
            }
            Op::AddElement(e) => {
                if let Some(target) = e.value.as_ref().and_then(|v| v.chain()) {
                    self.chain_mut(target)?;
                }
                let map = e.value.is_some();
                let state = self.container_mut(&e.container, map)?;
                match state.elements.iter().find(|x| x.key == e.key) {
                    Some(x) if x.value != e.value => {
                        return Err(ApplyError::ElementExists(describe(e)));
                    }
                    Some(_) => {}
                    None => state.elements.push(Element::clone(e)),
                }
            }
            Op::DeleteElement(e) => {
                let state = self
                    .containers
                    .get_mut(&e.container)
                    .ok_or_else(|| ApplyError::NoContainer(e.container.as_str().into()))?;
                let before = state.elements.len();
                state.elements.retain(|x| x.key != e.key);
                if state.elements.len() == before {
                    return Err(ApplyError::NoElement(describe(e)));
                }
            }
        }
        Ok(())
    }

    /// The contents as `add` lines, as knftables' fake dumps them: the table, chains, sets and
    /// maps, then every chain's rules, then every element.
    pub fn dump(&self, family: Family, table: &Name) -> String {
        let mut ops: Vec<Op> = Vec::new();
        if let Some(t) = &self.table {
            ops.push(Op::AddTable(t.clone()));
        }
        ops.extend(self.chains.values().map(|c| Op::AddChain(c.chain.clone())));
        ops.extend(
            self.containers
                .values()
                .map(|c| Op::AddContainer(Box::new(c.container.clone()))),
        );
        for c in self.chains.values() {
            ops.extend(c.rules.iter().cloned().map(Op::AddRule));
        }
        for c in self.containers.values() {
            ops.extend(
                c.elements
                    .iter()
                    .map(|e| Op::AddElement(Box::new(e.clone()))),
            );
        }
        let heads = Heads::new(family, table.clone());
        let mut out = String::new();
        for op in &ops {
            heads.write_op(&mut out, op);
            out.push('\n');
        }
        out
    }
}

/// The chain a rule jumps or goes to when its text ends with `jump NAME` or `goto NAME`.
fn jump_target(rule: &Rule) -> Option<Name> {
    let mut words = rule.text.as_str().rsplit(' ');
    let target = words.next()?;
    matches!(words.next(), Some("jump" | "goto"))
        .then(|| Name::new(target).ok())
        .flatten()
}
