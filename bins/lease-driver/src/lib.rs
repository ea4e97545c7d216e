#![doc = include_str!("../README.md")]
//!
//! [`Config::request_timeout`]: leader_lease::Config::request_timeout

mod clock;
mod driver;
mod status;
pub mod store;

pub use clock::Clock;
pub use driver::Driver;
pub use status::{Notice, Request, Status, Term};
#[cfg(feature = "etcd")]
pub use store::EtcdStore;
#[cfg(feature = "kubernetes")]
pub use store::KubernetesStore;
pub use store::{FileStore, MemoryStore, RequestError, Store};
