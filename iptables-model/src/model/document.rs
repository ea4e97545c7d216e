//! The iptables-restore document: tables, chain declarations and commands, in written order.

use alloc::vec::Vec;

use super::{ChainName, Rule};

/// The tables of the kernel's IPv4/IPv6 packet filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    /// `filter`: INPUT, FORWARD, OUTPUT.
    Filter,
    /// `nat`: PREROUTING, INPUT, OUTPUT, POSTROUTING.
    Nat,
    /// `mangle`: all five hooks.
    Mangle,
    /// `raw`: PREROUTING, OUTPUT.
    Raw,
    /// `security`: INPUT, FORWARD, OUTPUT.
    Security,
}

impl Table {
    /// Every table, in the order the tables are consulted at a hook.
    pub const ALL: [Self; 5] = [
        Self::Raw,
        Self::Mangle,
        Self::Nat,
        Self::Filter,
        Self::Security,
    ];

    /// The name used after `*` and with `-t`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Filter => "filter",
            Self::Nat => "nat",
            Self::Mangle => "mangle",
            Self::Raw => "raw",
            Self::Security => "security",
        }
    }

    /// The table called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The built-in chains of this table, in the order `iptables-save` prints them.
    pub const fn builtin_chains(self) -> &'static [&'static str] {
        match self {
            Self::Filter | Self::Security => &["INPUT", "FORWARD", "OUTPUT"],
            Self::Nat => &["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"],
            Self::Mangle => &["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"],
            Self::Raw => &["PREROUTING", "OUTPUT"],
        }
    }

    /// Whether `chain` is one of this table's built-in chains.
    pub fn is_builtin(self, chain: &str) -> bool {
        self.builtin_chains().contains(&chain)
    }
}

/// A built-in chain's policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    /// `ACCEPT`.
    Accept,
    /// `DROP`.
    Drop,
}

/// Packet and byte counters, `[packets:bytes]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counters {
    /// Packets.
    pub packets: u64,
    /// Bytes.
    pub bytes: u64,
}

/// A chain declaration, `:NAME POLICY [packets:bytes]`. With `--noflush` it creates the chain
/// or flushes it; `policy` is `None` for `-` (user chains).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ChainLine {
    /// The chain.
    pub name: ChainName,
    /// `ACCEPT`/`DROP`, or `None` for `-`.
    pub policy: Option<Policy>,
    /// The counters, when written.
    pub counters: Option<Counters>,
}

/// A command line of the restore format (its rule borrows from the parsed input for `'a`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Command<'a> {
    /// `-A CHAIN rule`.
    Append {
        /// The chain.
        chain: ChainName,
        /// The rule.
        rule: Rule<'a>,
    },
    /// `-I CHAIN [POSITION] rule` (1-based; `None` inserts first).
    Insert {
        /// The chain.
        chain: ChainName,
        /// The 1-based position, when written.
        position: Option<u32>,
        /// The rule.
        rule: Rule<'a>,
    },
    /// `-D CHAIN rule`: delete the first rule equal to `rule`.
    Delete {
        /// The chain.
        chain: ChainName,
        /// The rule to delete.
        rule: Rule<'a>,
    },
    /// `-D CHAIN POSITION`.
    DeleteAt {
        /// The chain.
        chain: ChainName,
        /// The 1-based position.
        position: u32,
    },
    /// `-N CHAIN`.
    NewChain(ChainName),
    /// `-X [CHAIN]`: delete one user chain, or every user chain of the table.
    DeleteChain(Option<ChainName>),
    /// `-F [CHAIN]`: flush one chain, or every chain of the table.
    Flush(Option<ChainName>),
}

/// A line inside a table section.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Line<'a> {
    /// `:NAME POLICY [p:b]`.
    Chain(ChainLine),
    /// `-A`, `-I`, `-D`, `-N`, `-X`, `-F`.
    Command(Command<'a>),
}

impl Command<'_> {
    /// This command with its rule's text copied out of the parsed input.
    pub fn into_owned(self) -> Command<'static> {
        match self {
            Self::Append { chain, rule } => Command::Append {
                chain,
                rule: rule.into_owned(),
            },
            Self::Insert {
                chain,
                position,
                rule,
            } => Command::Insert {
                chain,
                position,
                rule: rule.into_owned(),
            },
            Self::Delete { chain, rule } => Command::Delete {
                chain,
                rule: rule.into_owned(),
            },
            Self::DeleteAt { chain, position } => Command::DeleteAt { chain, position },
            Self::NewChain(chain) => Command::NewChain(chain),
            Self::DeleteChain(chain) => Command::DeleteChain(chain),
            Self::Flush(chain) => Command::Flush(chain),
        }
    }
}

impl Line<'_> {
    /// This line with its text copied out of the parsed input.
    pub fn into_owned(self) -> Line<'static> {
        match self {
            Self::Chain(chain) => Line::Chain(chain),
            Self::Command(command) => Line::Command(command.into_owned()),
        }
    }
}

/// One `*table … COMMIT` section.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableSection<'a> {
    /// The table.
    pub table: Table,
    /// Chain declarations and commands, in written order.
    pub lines: Vec<Line<'a>>,
}

impl<'a> TableSection<'a> {
    /// An empty section for `table`.
    pub const fn new(table: Table) -> Self {
        Self {
            table,
            lines: Vec::new(),
        }
    }

    /// Declares `name` as a user chain (`:NAME - [0:0]`).
    pub fn declare(&mut self, name: impl Into<ChainName>) {
        self.lines.push(Line::Chain(ChainLine {
            name: name.into(),
            policy: None,
            counters: Some(Counters::default()),
        }));
    }

    /// Appends `rule` to `chain` (`-A`).
    pub fn append(&mut self, chain: impl Into<ChainName>, rule: Rule<'a>) {
        self.lines.push(Line::Command(Command::Append {
            chain: chain.into(),
            rule,
        }));
    }

    /// The chain declarations, in order.
    pub fn chains(&self) -> impl Iterator<Item = &ChainLine> {
        self.lines.iter().filter_map(|l| match l {
            Line::Chain(c) => Some(c),
            Line::Command(_) => None,
        })
    }

    /// The rules appended to `chain` with `-A`, in order.
    pub fn appended<'s>(&'s self, chain: &'s str) -> impl Iterator<Item = &'s Rule<'a>> + 's {
        self.lines.iter().filter_map(move |l| match l {
            Line::Command(Command::Append { chain: c, rule }) if c == chain => Some(rule),
            _ => None,
        })
    }
}

/// A whole iptables-save / iptables-restore document.
///
/// [`parse`](crate::parse) returns one that borrows its free text from the input for `'a`
/// (no allocation per comment or NAT address); [`RestoreFile::into_owned`] gives an
/// [`OwnedRestoreFile`] that outlives the input. Documents built in code are owned.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RestoreFile<'a> {
    /// The table sections, in written order.
    pub tables: Vec<TableSection<'a>>,
}

/// A restore document that owns all its text.
pub type OwnedRestoreFile = RestoreFile<'static>;

impl<'a> RestoreFile<'a> {
    /// This document with its text copied out of the parsed input.
    pub fn into_owned(self) -> OwnedRestoreFile {
        RestoreFile {
            tables: self
                .tables
                .into_iter()
                .map(|section| TableSection {
                    table: section.table,
                    lines: section.lines.into_iter().map(Line::into_owned).collect(),
                })
                .collect(),
        }
    }

    /// The first section of `table`.
    pub fn table(&self, table: Table) -> Option<&TableSection<'a>> {
        self.tables.iter().find(|t| t.table == table)
    }
}
