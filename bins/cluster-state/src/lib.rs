#![doc = include_str!("../README.md")]

#[cfg(feature = "kube-api")]
mod api;
mod api_call;
mod args;
mod error;
mod events;
#[cfg(feature = "fake-api")]
pub mod fake_api;
mod filter;
pub mod gateway;
mod kind;
mod manifest;
mod metrics;
mod object_ref;
mod selector;
mod snapshot;
mod source;
mod status;
mod validate;

#[cfg(feature = "kube-api")]
pub use api::{
    EVENT_API_CALLS, INVALID_OBJECT_EVENT_API_CALLS, LeaseClient, LeaseError, PEER_API_CALLS,
    api_calls, api_client,
};
pub use api_call::ApiCall;
pub use args::SourceArgs;
pub use error::{EventError, SourceError, StatusError};
pub use events::{EVENT_INSTANCE_LIMIT, EVENT_NOTE_LIMIT, Reporter, event_name, truncate_utf8};
pub use filter::Filter;
pub use k8s_openapi as k8s;
pub use kind::{Kind, Object};
/// The Kubernetes client (feature `kube-api`), re-exported so that users share its version.
#[cfg(feature = "kube-api")]
pub use kube;
pub use manifest::{
    MAX_MANIFEST_BYTES, MAX_YAML_ALIASES, MAX_YAML_DEPTH, MAX_YAML_EVENTS, MAX_YAML_NODES,
    ManifestError, Position, SourceHealth, WATCHER_STALL_LIMIT, parse_manifest,
};
pub use metrics::Metrics;
pub use object_ref::ObjectRef;
pub use selector::{LabelSelector, SelectorError};
pub use snapshot::{Changes, Objects, Snapshot};
pub use source::Source;
pub use status::Status;
pub use validate::{FieldError, Invalid, validate};
