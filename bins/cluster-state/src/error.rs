//! Why a source could not start, and why a status or an event could not be written.

use std::path::PathBuf;

use crate::{Kind, ObjectRef};

/// A source that could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The manifest folder cannot be used.
    #[error("manifest folder {}: {source}", path.display())]
    Manifests {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The manifest folder cannot be watched (for inotify: raise
    /// `fs.inotify.max_user_watches` / `max_user_instances`).
    #[error("cannot watch the manifest folder {}: {source}", path.display())]
    Watch {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: notify::Error,
    },
    /// Neither `--manifests` nor the API source is available.
    #[error("no object source: pass --manifests DIR (this build has no Kubernetes API source)")]
    NoSource,
    /// The kubeconfig or the in-cluster configuration cannot be used.
    #[cfg(feature = "kube-api")]
    #[error("Kubernetes API configuration: {0}")]
    KubeConfig(String),
}

/// A status that could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StatusError {
    /// The object does not exist (any more).
    #[error("{kind} {key} does not exist")]
    NotFound {
        /// Its kind.
        kind: Kind,
        /// Its key.
        key: ObjectRef,
    },
    /// The status file could not be written.
    #[error("cannot write the status of {kind} {key}: {source}")]
    Write {
        /// Its kind.
        kind: Kind,
        /// The object.
        key: ObjectRef,
        /// Why.
        source: std::io::Error,
    },
    /// The API server refused or failed the update.
    #[cfg(feature = "kube-api")]
    #[error("cannot update the status of {kind} {key}: {source}")]
    Api {
        /// Its kind.
        kind: Kind,
        /// Its key.
        key: ObjectRef,
        /// The API error.
        source: kube::Error,
    },
}

/// An event that could not be recorded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EventError {
    /// The event's namespace or name is not a DNS name (it would not be a safe path).
    #[error("event {key:?}: its namespace and name must be lowercase DNS names")]
    InvalidName {
        /// The event's namespace and name.
        key: ObjectRef,
    },
    /// The event file could not be written.
    #[error("cannot write the event {key}: {source}")]
    Write {
        /// The event.
        key: ObjectRef,
        /// Why.
        source: std::io::Error,
    },
    /// The API server refused or failed the request.
    #[cfg(feature = "kube-api")]
    #[error("cannot record the event {key}: {source}")]
    Api {
        /// The event.
        key: ObjectRef,
        /// The API error.
        source: kube::Error,
    },
}
