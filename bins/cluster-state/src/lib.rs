#![doc = include_str!("../README.md")]

#[cfg(feature = "kube-api")]
mod api;
mod args;
mod error;
mod kind;
mod manifest;
mod object_ref;
mod snapshot;
mod source;

pub use args::SourceArgs;
pub use error::{SourceError, StatusError};
pub use k8s_openapi as k8s;
pub use kind::{Kind, Object};
pub use manifest::{ManifestError, Position, parse_manifest};
pub use object_ref::ObjectRef;
pub use snapshot::{Changes, Objects, Snapshot};
pub use source::Source;
