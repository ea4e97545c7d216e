#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod addr;
pub mod codec;
pub mod error;
pub mod model;

pub use addr::Cidr;
pub use codec::{parse, parse_rule};
pub use error::{ParseError, ParseErrorKind, Position, RestoreError};
pub use model::{
    Command, Line, MatchOption, Module, RestoreFile, Rule, Spec, Table, TableSection, Target,
};
pub mod eval;
pub mod kube;
pub mod probability;
