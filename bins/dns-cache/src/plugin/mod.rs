//! The plugins of the query chain and the chain that runs them.
//!
//! Every plugin implements one trait, [`Plugin`] (`handler.rs`, CoreDNS's
//! `plugin.Handler`); a server block's plugins make a [`Chain`] (`chain.rs`), in the order
//! of the list in `config/registry.rs` (CoreDNS's `plugin.cfg`) whatever the Corefile's.
//! Each plugin has its module here; `builtin.rs` joins the built-in ones (`errors`, `log`,
//! `cache`, `hosts`, `kubernetes`, `loop`, `forward`, `whoami`) to the chain, `prometheus.rs` is the
//! metrics plugin's part of it, and [`prehashed`] is the hasher of the maps that `cache`
//! and `forward` key by values that are random already.

pub mod builtin;
pub mod cache;
pub mod chain;
pub mod errors;
pub mod example;
pub mod forward;
pub mod handler;
pub mod hosts;
pub mod kubernetes;
pub mod loadbalance;
pub mod log;
pub mod loop_detect;
pub mod prehashed;
pub mod prometheus;
pub mod whoami;

pub use chain::{Chain, ChainBuilder, Step, Wait};
pub use handler::{Failure, Plugin, Query, Reply, Serve, SubQuery};
pub use prometheus::report;
