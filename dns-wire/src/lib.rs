#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod bytes;
pub mod cache;
mod compress;
mod dig;
pub mod edns;
pub mod encode;
pub mod error;
pub mod header;
pub mod message;
pub mod name;
pub mod owned;
pub mod rdata;
mod reader;
pub mod tcp;
mod text;
pub mod types;

pub use bytes::RdataBytes;
pub use cache::CacheKey;
pub use edns::{Edns, EdnsOption};
pub use encode::Encoder;
pub use error::{Error, ErrorKind, Result};
pub use header::{Counts, Header};
pub use message::{Message, Question, Record, Section, Walk};
pub use name::{Name, NameRef};
pub use owned::{OwnedEdns, OwnedMessage, OwnedQuestion, OwnedRecord, udp_budget};
pub use rdata::RData;
pub use types::{Class, Opcode, Rcode, Type};
