#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(any(feature = "alloc", test))]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod config;
pub mod elector;
pub mod error;
mod jitter;
#[cfg(feature = "alloc")]
mod json;
mod json_string;
pub mod micro_time;
pub mod record;
#[cfg(test)]
mod sim;
pub mod store;
pub mod text;
pub mod time;

pub use config::{Config, ConfigBuilder, ConfigError};
pub use elector::{Elector, Event, FencingToken, StopReason};
pub use error::{DecodeError, DecodeErrorKind};
pub use micro_time::{MicroTime, Precision, TimeError};
pub use record::{ANNOTATION_KEY, Record};
pub use store::{Action, StoreError, Stored, Version};
pub use text::{TEXT_CAPACITY, Text, TextTooLong};
pub use time::{Duration, Instant};
