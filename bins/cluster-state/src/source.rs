//! A running source of snapshots: the manifest folder or the API server, behind one handle.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::networking::v1::IngressLoadBalancerStatus;
use tokio::sync::watch;

#[cfg(feature = "kube-api")]
use crate::api::ApiSource;
use crate::manifest::ManifestSource;
use crate::{Kind, ObjectRef, Snapshot, SourceError, StatusError};

/// A source of snapshots; dropping it stops it (the receivers keep the last snapshot).
pub struct Source {
    snapshots: watch::Receiver<Arc<Snapshot>>,
    backend: Backend,
}

enum Backend {
    Manifests(ManifestSource),
    #[cfg(feature = "kube-api")]
    Api(ApiSource),
}

impl Source {
    /// Reads the objects of `kinds` from the manifests under `dir`, and watches them; changes
    /// are read once the folder has been quiet for `debounce`. The first snapshot is published
    /// before this returns.
    pub async fn manifests(
        dir: &Path,
        kinds: &[Kind],
        debounce: Duration,
    ) -> Result<Source, SourceError> {
        let (sender, snapshots) = watch::channel(Arc::new(Snapshot::default()));
        let owned_dir = dir.to_owned();
        let kinds = kinds.to_vec();
        let start = move || ManifestSource::start(&owned_dir, kinds, debounce, sender);
        let started = tokio::task::spawn_blocking(start).await.map_err(|error| {
            SourceError::Manifests {
                path: dir.to_owned(),
                source: std::io::Error::other(error),
            }
        })??;
        Ok(Source {
            snapshots,
            backend: Backend::Manifests(started),
        })
    }

    /// Watches the objects of `kinds` on the API server of `client`, in every namespace. The
    /// first snapshot (`revision` 1) is published once every kind has been listed.
    #[cfg(feature = "kube-api")]
    pub fn api(client: kube::Client, kinds: &[Kind]) -> Source {
        let (sender, snapshots) = watch::channel(Arc::new(Snapshot::default()));
        Source {
            snapshots,
            backend: Backend::Api(ApiSource::start(client, kinds, sender)),
        }
    }

    /// A receiver of every snapshot from now on; its current value is the latest one.
    pub fn snapshots(&self) -> watch::Receiver<Arc<Snapshot>> {
        self.snapshots.clone()
    }

    /// The latest snapshot.
    pub fn current(&self) -> Arc<Snapshot> {
        Arc::clone(&self.snapshots.borrow())
    }

    /// Sets the `status.loadBalancer` of the Ingress `key`: a status file beside the manifests,
    /// or a PATCH of the Ingress's `status` subresource. The next snapshot shows it.
    pub async fn write_ingress_status(
        &self,
        key: &ObjectRef,
        status: IngressLoadBalancerStatus,
    ) -> Result<(), StatusError> {
        match &self.backend {
            Backend::Manifests(source) => source.write_ingress_status(key, status).await,
            #[cfg(feature = "kube-api")]
            Backend::Api(source) => source.write_ingress_status(key, status).await,
        }
    }
}
