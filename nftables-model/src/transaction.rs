//! A transaction: the operations kube-proxy's knftables sends to `nft -f` as one atomic batch,
//! written line for line as knftables writes them (`transaction.go`, `objects.go`
//! `writeOperation`).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::element::Element;
use crate::name::Name;
use crate::object::{Chain, Container, Family, Table};
use crate::rule::Rule;

/// One operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `add table` (creates it if missing).
    AddTable(Table),
    /// `delete table`.
    DeleteTable,
    /// `add chain` (creates it if missing; keeps its rules).
    AddChain(Chain),
    /// `flush chain`: removes its rules.
    FlushChain(Name),
    /// `delete chain`.
    DeleteChain(Name),
    /// `add rule`: appends to the chain.
    AddRule(Rule),
    /// `add set` / `add map` (creates it if missing; keeps its elements).
    AddContainer(Box<Container>),
    /// `flush set` / `flush map` (the flag says map): removes every element.
    FlushContainer(Name, bool),
    /// `delete set` / `delete map` (the flag says map).
    DeleteContainer(Name, bool),
    /// `add element`. (Boxed, as the set and map operations: a transaction holds many
    /// operations, each as large as the largest kind.)
    AddElement(Box<Element>),
    /// `delete element` (only the key is written).
    DeleteElement(Box<Element>),
}

/// The operations on one table, in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Transaction {
    /// The table's family.
    pub family: Family,
    /// The table's name.
    pub table: Name,
    /// The operations.
    pub ops: Vec<Op>,
}

impl Transaction {
    /// An empty transaction on `family` `table`.
    pub const fn new(family: Family, table: Name) -> Self {
        Self {
            family,
            table,
            ops: Vec::new(),
        }
    }

    /// Appends `op`.
    pub fn push(&mut self, op: Op) {
        self.ops.push(op);
    }

    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// The `nft -f` input: one line per operation.
    pub fn to_text(&self) -> String {
        alloc::format!("{self}")
    }
}

/// One operation written as a line (without its newline).
pub(crate) struct Line<'a> {
    pub(crate) family: Family,
    pub(crate) table: &'a Name,
    pub(crate) op: &'a Op,
}

const fn kind(map: bool) -> &'static str {
    if map { "map" } else { "set" }
}

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (fam, table) = (self.family.keyword(), self.table);
        match self.op {
            Op::AddTable(t) => {
                write!(f, "add table {fam} {table}")?;
                if let Some(c) = &t.comment {
                    write!(f, " {{ comment {c} ; }}")?;
                }
                Ok(())
            }
            Op::DeleteTable => write!(f, "delete table {fam} {table}"),
            Op::AddChain(c) => {
                write!(f, "add chain {fam} {table} {}", c.name)?;
                c.write_properties(f)
            }
            Op::FlushChain(n) => write!(f, "flush chain {fam} {table} {n}"),
            Op::DeleteChain(n) => write!(f, "delete chain {fam} {table} {n}"),
            Op::AddRule(r) => {
                write!(f, "add rule {fam} {table} {} {}", r.chain, r.text)?;
                if let Some(c) = &r.comment {
                    write!(f, " comment {c}")?;
                }
                Ok(())
            }
            Op::AddContainer(c) => {
                write!(f, "add {} {fam} {table} {}", c.keyword(), c.name)?;
                c.write_properties(f)
            }
            Op::FlushContainer(n, map) => write!(f, "flush {} {fam} {table} {n}", kind(*map)),
            Op::DeleteContainer(n, map) => write!(f, "delete {} {fam} {table} {n}", kind(*map)),
            Op::AddElement(e) => {
                write!(f, "add element {fam} {table} {}", e.container)?;
                e.write_added(f)
            }
            Op::DeleteElement(e) => {
                write!(f, "delete element {fam} {table} {} {{ ", e.container)?;
                e.write_key(f)?;
                f.write_str(" }")
            }
        }
    }
}

impl fmt::Display for Transaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for op in &self.ops {
            let line = Line {
                family: self.family,
                table: &self.table,
                op,
            };
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}
