//! The configuration layer: from a Corefile to a server plan. Building a plan starts
//! nothing but the plugins' background tasks, which stop by themselves when the plan is
//! dropped, so a bad new Corefile never disturbs the running one.
//!
//! The Corefile is read and parsed in `source.rs`, checked against the plugins this server
//! implements (`registry.rs`), and each server block becomes its plugin chain (`chain.rs`)
//! and routes in the plan (`plan.rs`); `error.rs` says what is wrong with a Corefile that
//! fails.

mod chain;
mod error;
mod plan;
mod registry;
mod source;

pub(crate) use chain::Setup;
pub use error::ConfigError;
pub use plan::{
    Empty, HealthPlan, ListenerPlan, Plan, ReloadPlan, Route, Table, build, http_address,
};
pub use registry::{Entry, PLUGINS, directive_order, plugins_text};
pub use source::{Source, build_hash};
