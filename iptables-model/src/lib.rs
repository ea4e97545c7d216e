#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod addr;
pub mod codec;
pub mod error;
pub mod eval;
pub mod kube;
pub mod model;
pub mod normalize;
pub mod probability;
pub mod ruleset;
pub mod text;

pub use addr::Cidr;
pub use codec::{parse, parse_rule};
pub use error::{EmitError, Field, ParseError, ParseErrorKind, Position, RestoreError, TraceError};
pub use model::{
    ChainName, Command, IpProtocol, Line, MatchOption, Module, OwnedRestoreFile, OwnedRule,
    RestoreFile, Rule, Spec, Table, TableSection, Target,
};
pub use ruleset::Ruleset;
