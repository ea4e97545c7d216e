//! The API source: the same snapshots from a live API server, through kube-rs watchers.

mod config;
mod mirror;
mod source;

pub(crate) use config::client;
pub(crate) use source::ApiSource;
