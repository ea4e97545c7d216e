#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod config;
pub mod error;
mod json;
pub mod micro_time;
pub mod record;
pub mod time;

pub use config::{Config, ConfigBuilder, ConfigError};
pub use error::{DecodeError, DecodeErrorKind};
pub use micro_time::{MicroTime, Precision, TimeError};
pub use record::{ANNOTATION_KEY, Record};
pub use time::{Duration, Instant};
