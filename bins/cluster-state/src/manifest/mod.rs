//! The manifest source: a folder of kubectl-style YAML or JSON files.

mod error;
mod folder;
mod health;
mod limits;
mod parse;
mod source;
mod status;
mod walk;

pub use error::{ManifestError, Position};
pub use health::{SourceHealth, WATCHER_STALL_LIMIT};
pub use limits::{
    MAX_MANIFEST_BYTES, MAX_YAML_ALIASES, MAX_YAML_DEPTH, MAX_YAML_EVENTS, MAX_YAML_NODES,
};
pub use parse::parse_manifest;
pub(crate) use source::ManifestSource;
