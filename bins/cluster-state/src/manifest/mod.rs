//! The manifest source: a folder of kubectl-style YAML or JSON files.

mod error;
mod folder;
mod parse;
mod required;
mod source;
mod status;

pub use error::{ManifestError, Position};
pub use parse::parse_manifest;
pub(crate) use source::ManifestSource;
