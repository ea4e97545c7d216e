//! A transaction: the operations kube-proxy's knftables sends to `nft -f` as one atomic batch,
//! written line for line as knftables writes them (`transaction.go`, `objects.go`
//! `writeOperation`).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::element::Element;
use crate::name::{Comment, Name};
use crate::object::{Chain, Container, Family, Table};
use crate::rule::{Rule, RuleText};

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
        Script::from(self).into_text()
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

/// Appends `VERB [KIND] FAMILY TABLE` (`add rule ip kube-proxy`, `flush map ip kube-proxy`),
/// the start of every line.
fn start(out: &mut String, verb: &str, kind: Option<&str>, family: Family, table: &Name) {
    out.push_str(verb);
    if let Some(kind) = kind {
        out.push(' ');
        out.push_str(kind);
    }
    out.push(' ');
    out.push_str(family.keyword());
    out.push(' ');
    out.push_str(table.as_str());
}

/// `VERB [KIND] FAMILY TABLE NAME`.
fn named(out: &mut String, verb: &str, kind: Option<&str>, head: Head<'_>, name: &Name) {
    start(out, verb, kind, head.0, head.1);
    out.push(' ');
    out.push_str(name.as_str());
}

/// The family and table every line names.
type Head<'a> = (Family, &'a Name);

/// Appends `op` as knftables writes it, without the newline.
pub(crate) fn write_op(out: &mut String, family: Family, table: &Name, op: &Op) {
    let head = (family, table);
    match op {
        Op::AddTable(t) => {
            start(out, "add table", None, family, table);
            if let Some(c) = &t.comment {
                out.push_str(" { comment ");
                c.push_quoted(out);
                out.push_str(" ; }");
            }
        }
        Op::DeleteTable => start(out, "delete table", None, family, table),
        Op::AddChain(c) => {
            named(out, "add chain", None, head, &c.name);
            c.write_properties(out);
        }
        Op::FlushChain(n) => named(out, "flush chain", None, head, n),
        Op::DeleteChain(n) => named(out, "delete chain", None, head, n),
        Op::AddRule(r) => write_rule(out, head, &r.chain, &r.text, r.comment.as_ref()),
        Op::AddContainer(c) => {
            named(out, "add", Some(c.keyword()), head, &c.name);
            c.write_properties(out);
        }
        Op::FlushContainer(n, map) => named(out, "flush", Some(kind(*map)), head, n),
        Op::DeleteContainer(n, map) => named(out, "delete", Some(kind(*map)), head, n),
        Op::AddElement(e) => write_element(out, head, e, true),
        Op::DeleteElement(e) => write_element(out, head, e, false),
    }
}

/// `add rule FAMILY TABLE CHAIN TEXT [comment "C"]`.
fn write_rule(
    out: &mut String,
    head: Head<'_>,
    chain: &Name,
    text: &RuleText,
    comment: Option<&Comment>,
) {
    named(out, "add rule", None, head, chain);
    out.push(' ');
    out.push_str(text.as_str());
    if let Some(c) = comment {
        out.push_str(" comment ");
        c.push_quoted(out);
    }
}

/// `add element FAMILY TABLE SET { KEY [comment "C"] [: VALUE] }`, or `delete element ...
/// { KEY }`.
fn write_element(out: &mut String, head: Head<'_>, element: &Element, add: bool) {
    let verb = if add { "add element" } else { "delete element" };
    named(out, verb, None, head, &element.container);
    out.push_str(" { ");
    element.key.push_to(out);
    if add {
        if let Some(c) = &element.comment {
            out.push_str(" comment ");
            c.push_quoted(out);
        }
        if let Some(v) = &element.value {
            out.push_str(" : ");
            v.push_to(out);
        }
    }
    out.push_str(" }");
}

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::new();
        write_op(&mut line, self.family, self.table, self.op);
        f.write_str(&line)
    }
}

impl fmt::Display for Transaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// Where a sync puts its operations: kept as [`Op`] values ([`Transaction`]), or written
/// as `nft -f` text at once ([`Script`]). The generation writes the same operations in the
/// same order to either.
pub(crate) trait Sink {
    /// An empty one on `family` `table`, with room for about `bytes` of text.
    fn empty(family: Family, table: Name, bytes: usize) -> Self;
    /// Appends `op`.
    fn push(&mut self, op: Op);
    /// The size of the text written, if it is written as it is built.
    fn bytes(&self) -> usize;
    /// `add chain` of a regular chain without a comment, then `flush chain`.
    fn add_and_flush_chain(&mut self, chain: &Name);
    /// An empty rule text for [`Sink::add_rule`].
    fn rule_text(&mut self) -> RuleText;
    /// `add rule`.
    fn add_rule(&mut self, chain: &Name, text: RuleText, comment: Option<Comment>);
    /// `add element`.
    fn add_element(&mut self, element: &Element);
    /// `delete element`.
    fn delete_element(&mut self, element: &Element);
}

impl Sink for Transaction {
    fn empty(family: Family, table: Name, _bytes: usize) -> Self {
        Self::new(family, table)
    }

    fn push(&mut self, op: Op) {
        self.ops.push(op);
    }

    fn bytes(&self) -> usize {
        0
    }

    fn add_and_flush_chain(&mut self, chain: &Name) {
        self.ops.push(Op::AddChain(Chain::regular(chain.clone())));
        self.ops.push(Op::FlushChain(chain.clone()));
    }

    fn rule_text(&mut self) -> RuleText {
        RuleText::new()
    }

    fn add_rule(&mut self, chain: &Name, text: RuleText, comment: Option<Comment>) {
        let mut rule = Rule::new(chain.clone(), text);
        rule.comment = comment;
        self.ops.push(Op::AddRule(rule));
    }

    fn add_element(&mut self, element: &Element) {
        self.ops.push(Op::AddElement(Box::new(element.clone())));
    }

    fn delete_element(&mut self, element: &Element) {
        self.ops.push(Op::DeleteElement(Box::new(element.clone())));
    }
}

/// A transaction written as `nft -f` text while it is built, without [`Op`] values: what a
/// caller that only hands the transaction to `nft` needs ([`crate::kube::Proxier::sync_text`]).
/// The text is what [`Transaction::to_text`] writes for the same operations.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Script {
    family: Family,
    table: Name,
    text: String,
    len: usize,
    /// The buffer of the last rule text written, lent to the next ([`Sink::rule_text`]).
    spare: String,
}

impl Script {
    /// An empty transaction on `family` `table`.
    pub const fn new(family: Family, table: Name) -> Self {
        Self {
            family,
            table,
            text: String::new(),
            len: 0,
            spare: String::new(),
        }
    }

    /// The table's family.
    pub const fn family(&self) -> Family {
        self.family
    }

    /// The table's name.
    pub const fn table(&self) -> &Name {
        &self.table
    }

    /// Whether there is nothing to do.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of operations.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// The `nft -f` input: one line per operation.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The `nft -f` input, owned.
    pub fn into_text(self) -> String {
        self.text
    }

    /// The end of a line just written.
    fn end(&mut self) {
        self.text.push('\n');
        self.len += 1;
    }
}

impl From<&Transaction> for Script {
    fn from(tx: &Transaction) -> Self {
        let mut script = Self::empty(tx.family, tx.table.clone(), 0);
        for op in &tx.ops {
            write_op(&mut script.text, tx.family, &tx.table, op);
            script.end();
        }
        script
    }
}

impl fmt::Display for Script {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Sink for Script {
    fn empty(family: Family, table: Name, bytes: usize) -> Self {
        Self {
            family,
            table,
            text: String::with_capacity(bytes),
            len: 0,
            spare: String::new(),
        }
    }

    fn push(&mut self, op: Op) {
        write_op(&mut self.text, self.family, &self.table, &op);
        self.end();
    }

    fn bytes(&self) -> usize {
        self.text.len()
    }

    fn add_and_flush_chain(&mut self, chain: &Name) {
        let head = (self.family, &self.table);
        named(&mut self.text, "add chain", None, head, chain);
        self.text.push('\n');
        named(&mut self.text, "flush chain", None, head, chain);
        self.text.push('\n');
        self.len += 2;
    }

    fn rule_text(&mut self) -> RuleText {
        RuleText::in_buffer(core::mem::take(&mut self.spare))
    }

    fn add_rule(&mut self, chain: &Name, text: RuleText, comment: Option<Comment>) {
        let head = (self.family, &self.table);
        write_rule(&mut self.text, head, chain, &text, comment.as_ref());
        self.end();
        // The rule is in the text: its buffer serves the next one.
        self.spare = text.into_buffer();
    }

    fn add_element(&mut self, element: &Element) {
        write_element(&mut self.text, (self.family, &self.table), element, true);
        self.end();
    }

    fn delete_element(&mut self, element: &Element) {
        write_element(&mut self.text, (self.family, &self.table), element, false);
        self.end();
    }
}
