#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod canonical;
pub mod element;
pub mod error;
pub mod eval;
pub mod kube;
pub mod name;
pub mod object;
pub mod rule;
pub mod ruleset;
pub mod transaction;

pub use element::{Atom, Element, Key, Verdict};
pub use error::{ApplyError, Error};
pub use name::{Comment, Name};
pub use object::{BaseChain, Chain, ChainType, Container, Family, Hook, KeyType, SetFlag, Table};
pub use rule::{Rule, RuleText};
pub use ruleset::Ruleset;
pub use transaction::{Op, Script, Transaction};
