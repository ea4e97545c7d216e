//! The API source: the same snapshots from a live API server, through kube-rs watchers.

mod config;
mod lease;
mod mirror;
mod source;

pub use config::api_client;
pub use lease::{LeaseClient, LeaseError};
pub(crate) use source::ApiSource;
pub use source::api_calls;
