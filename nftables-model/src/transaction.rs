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

/// The table lines are written for, and the starts of the lines a sync writes most
/// (`add rule ip kube-proxy `, with the space before the object's name), made once per
/// transaction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Heads {
    family: Family,
    table: Name,
    add_chain: String,
    flush_chain: String,
    add_rule: String,
    add_element: String,
    delete_element: String,
}

impl Heads {
    pub(crate) fn new(family: Family, table: Name) -> Self {
        let head = |verb: &str| {
            let mut text = String::new();
            start(&mut text, verb, None, family, &table);
            text.push(' ');
            text
        };
        Self {
            add_chain: head("add chain"),
            flush_chain: head("flush chain"),
            add_rule: head("add rule"),
            add_element: head("add element"),
            delete_element: head("delete element"),
            family,
            table,
        }
    }

    /// `VERB [KIND] FAMILY TABLE NAME` of a verb without a kept start.
    fn named(&self, out: &mut String, verb: &str, kind: Option<&str>, name: &Name) {
        start(out, verb, kind, self.family, &self.table);
        out.push(' ');
        out.push_str(name.as_str());
    }

    /// Appends `op` as knftables writes it, without the newline.
    pub(crate) fn write_op(&self, out: &mut String, op: &Op) {
        match op {
            Op::AddTable(t) => {
                start(out, "add table", None, self.family, &self.table);
                if let Some(c) = &t.comment {
                    out.push_str(" { comment ");
                    c.push_quoted(out);
                    out.push_str(" ; }");
                }
            }
            Op::DeleteTable => start(out, "delete table", None, self.family, &self.table),
            Op::AddChain(c) => {
                out.push_str(&self.add_chain);
                out.push_str(c.name.as_str());
                c.write_properties(out);
            }
            Op::FlushChain(n) => {
                out.push_str(&self.flush_chain);
                out.push_str(n.as_str());
            }
            Op::DeleteChain(n) => self.named(out, "delete chain", None, n),
            Op::AddRule(r) => self.write_rule(out, &r.chain, &r.text, r.comment.as_ref()),
            Op::AddContainer(c) => {
                self.named(out, "add", Some(c.keyword()), &c.name);
                c.write_properties(out);
            }
            Op::FlushContainer(n, map) => self.named(out, "flush", Some(kind(*map)), n),
            Op::DeleteContainer(n, map) => self.named(out, "delete", Some(kind(*map)), n),
            Op::AddElement(e) => self.write_element(out, e, true),
            Op::DeleteElement(e) => self.write_element(out, e, false),
        }
    }

    /// `add rule FAMILY TABLE CHAIN TEXT [comment "C"]`.
    fn write_rule(
        &self,
        out: &mut String,
        chain: &Name,
        text: &RuleText,
        comment: Option<&Comment>,
    ) {
        out.push_str(&self.add_rule);
        out.push_str(chain.as_str());
        out.push(' ');
        out.push_str(text.as_str());
        if let Some(c) = comment {
            out.push_str(" comment ");
            c.push_quoted(out);
        }
    }

    /// `add element FAMILY TABLE SET { KEY [comment "C"] [: VALUE] }`, or `delete element
    /// ... { KEY }`.
    fn write_element(&self, out: &mut String, element: &Element, add: bool) {
        out.push_str(if add {
            &self.add_element
        } else {
            &self.delete_element
        });
        out.push_str(element.container.as_str());
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
    heads: Heads,
    text: String,
    len: usize,
    /// The buffer of the last rule text written, lent to the next ([`Sink::rule_text`]).
    spare: String,
}

impl Script {
    /// An empty transaction on `family` `table`.
    pub fn new(family: Family, table: Name) -> Self {
        Self::empty(family, table, 0)
    }

    /// The table's family.
    pub const fn family(&self) -> Family {
        self.heads.family
    }

    /// The table's name.
    pub const fn table(&self) -> &Name {
        &self.heads.table
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
            script.heads.write_op(&mut script.text, op);
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
            heads: Heads::new(family, table),
            text: String::with_capacity(bytes),
            len: 0,
            spare: String::new(),
        }
    }

    fn push(&mut self, op: Op) {
        self.heads.write_op(&mut self.text, &op);
        self.end();
    }

    fn bytes(&self) -> usize {
        self.text.len()
    }

    fn add_and_flush_chain(&mut self, chain: &Name) {
        for head in [&self.heads.add_chain, &self.heads.flush_chain] {
            self.text.push_str(head);
            self.text.push_str(chain.as_str());
            self.text.push('\n');
        }
        self.len += 2;
    }

    fn rule_text(&mut self) -> RuleText {
        RuleText::in_buffer(core::mem::take(&mut self.spare))
    }

    fn add_rule(&mut self, chain: &Name, text: RuleText, comment: Option<Comment>) {
        self.heads
            .write_rule(&mut self.text, chain, &text, comment.as_ref());
        self.end();
        // The rule is in the text: its buffer serves the next one.
        self.spare = text.into_buffer();
    }

    fn add_element(&mut self, element: &Element) {
        self.heads.write_element(&mut self.text, element, true);
        self.end();
    }

    fn delete_element(&mut self, element: &Element) {
        self.heads.write_element(&mut self.text, element, false);
        self.end();
    }
}
