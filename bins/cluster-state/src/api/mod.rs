//! The API source: the same snapshots from a live API server, through kube-rs watchers.

mod config;
mod events;
mod lease;
mod mirror;
mod peers;
mod source;

pub use config::api_client;
pub(crate) use events::record as record_event;
pub use events::{EVENT_API_CALLS, INVALID_OBJECT_EVENT_API_CALLS};
pub use lease::{LeaseClient, LeaseError};
pub use peers::PEER_API_CALLS;
pub(crate) use peers::running_peers;
pub(crate) use source::ApiSource;
pub use source::api_calls;
