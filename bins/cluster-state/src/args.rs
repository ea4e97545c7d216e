//! The command-line flags that choose a source, shared by every binary.

use std::path::PathBuf;
use std::time::Duration;

use crate::{Source, SourceError};

/// How long the manifest folder must be quiet before changes are read: one editor save or one
/// `kubectl`-style folder sync is one reload.
const MANIFEST_DEBOUNCE: Duration = Duration::from_millis(200);

/// Where the objects come from: `--manifests DIR`, or the API server of `--kubeconfig FILE`,
/// or, with neither, of the pod's service account. Flatten it into a binary's arguments with
/// `#[command(flatten)]`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SourceArgs {
    /// Read Kubernetes objects from the YAML/JSON manifests under this folder, and watch it.
    #[arg(long, value_name = "DIR", conflicts_with = "kubeconfig")]
    pub manifests: Option<PathBuf>,

    /// Read Kubernetes objects from the API server of this kubeconfig file (default: the
    /// in-cluster service account when run in a pod).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
}

impl SourceArgs {
    /// Starts the chosen source.
    pub async fn start(&self) -> Result<Source, SourceError> {
        match &self.manifests {
            Some(dir) => Source::manifests(dir, MANIFEST_DEBOUNCE).await,
            None => Err(SourceError::NoSource),
        }
    }
}
