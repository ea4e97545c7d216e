#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod cache;
mod compress;
pub mod edns;
pub mod encode;
pub mod error;
pub mod header;
pub mod message;
pub mod name;
pub mod owned;
pub mod rdata;
mod reader;
mod text;
pub mod tcp;
pub mod types;

pub use error::{Error, ErrorKind, Result};
pub use cache::CacheKey;
pub use edns::{Edns, EdnsOption};
pub use header::{Counts, Header};
pub use encode::Encoder;
pub use message::{Message, Question, Record, Section};
pub use owned::{OwnedEdns, OwnedMessage, OwnedQuestion, OwnedRecord, udp_budget};
pub use rdata::RData;
pub use name::{Name, NameRef};
pub use types::{Class, Opcode, Rcode, Type};
