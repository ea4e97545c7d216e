//! The command-line flags that choose a source, shared by every binary.

use std::path::PathBuf;
use std::time::Duration;

use crate::{Filter, Kind, Reporter, Source, SourceError};

/// How long the manifest folder must be quiet before changes are read: one editor save or one
/// folder sync is one reload.
const MANIFEST_DEBOUNCE: Duration = Duration::from_millis(200);

/// Where the objects come from: `--manifests DIR`, or the API server of `--kubeconfig FILE`,
/// or, with neither, of the pod's service account. Flatten it into a binary's arguments with
/// `#[command(flatten)]`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SourceArgs {
    /// Read Kubernetes objects from the YAML/JSON manifests under this folder, and watch it.
    #[arg(long, value_name = "DIR", conflicts_with = "kubeconfig")]
    pub manifests: Option<PathBuf>,

    /// Read Kubernetes objects from the API server of this kubeconfig file's current context
    /// (default: the in-cluster service account when run in a pod).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
}

impl SourceArgs {
    /// Starts the chosen source for the objects of `kinds` (watch only what the binary uses:
    /// the API source needs list and watch permissions on each).
    pub async fn start(&self, kinds: &[Kind]) -> Result<Source, SourceError> {
        self.start_filtered(kinds, Filter::default()).await
    }

    /// As [`SourceArgs::start`], keeping only the objects `filter` keeps (the API source asks
    /// the server for those alone).
    pub async fn start_filtered(
        &self,
        kinds: &[Kind],
        filter: Filter,
    ) -> Result<Source, SourceError> {
        self.start_reporting(kinds, filter, None).await
    }

    /// As [`SourceArgs::start_filtered`]; with a `reporter`, the API source also records each
    /// object it leaves out as invalid as an event regarding it (the manifest source reports
    /// them with their file and line in the log).
    pub async fn start_reporting(
        &self,
        kinds: &[Kind],
        filter: Filter,
        reporter: Option<Reporter>,
    ) -> Result<Source, SourceError> {
        if let Some(dir) = &self.manifests {
            return Source::manifests_filtered(dir, kinds, filter, MANIFEST_DEBOUNCE).await;
        }
        self.start_api(kinds, filter, reporter).await
    }

    #[cfg(feature = "kube-api")]
    async fn start_api(
        &self,
        kinds: &[Kind],
        filter: Filter,
        reporter: Option<Reporter>,
    ) -> Result<Source, SourceError> {
        let client = crate::api_client(self.kubeconfig.as_deref()).await?;
        Ok(Source::api_filtered(client, kinds, filter, reporter))
    }

    #[cfg(not(feature = "kube-api"))]
    async fn start_api(
        &self,
        _kinds: &[Kind],
        _filter: Filter,
        _reporter: Option<Reporter>,
    ) -> Result<Source, SourceError> {
        Err(SourceError::NoSource)
    }
}
