//! iptables as data: the restore document, tables, chains, rules, matches and targets.

mod document;
mod matches;
mod name;
mod rule;
pub(crate) mod target;

pub use document::{
    ChainLine, Command, Counters, Line, OwnedRestoreFile, Policy, RestoreFile, Table, TableSection,
};
pub use matches::{
    AddrType, CtState, MarkValue, MatchOption, Module, MultiportKind, PortRange, Probability,
    RecentOption, StatisticMode, UnknownOption,
};
pub use name::{ChainName, INLINE_NAME_BYTES};
pub use rule::{IpProtocol, OwnedRule, Rule, Spec};
pub use target::{MarkAction, OtherTarget, Target};
