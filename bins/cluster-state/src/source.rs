//! A running source of snapshots: the manifest folder or the API server, behind one handle.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::events::v1::Event;
use tokio::sync::watch;

#[cfg(feature = "kube-api")]
use crate::api::ApiSource;
use crate::manifest::ManifestSource;
use crate::{
    EventError, Filter, Kind, Metrics, ObjectRef, Reporter, Snapshot, SourceError, SourceHealth,
    Status, StatusError,
};

/// A source of snapshots; dropping it stops it (the receivers keep the last snapshot).
pub struct Source {
    snapshots: watch::Receiver<Arc<Snapshot>>,
    metrics: Metrics,
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
        Source::manifests_filtered(dir, kinds, Filter::default(), debounce).await
    }

    /// As [`Source::manifests`], keeping only the objects `filter` keeps.
    pub async fn manifests_filtered(
        dir: &Path,
        kinds: &[Kind],
        filter: Filter,
        debounce: Duration,
    ) -> Result<Source, SourceError> {
        let (sender, snapshots) = watch::channel(Arc::new(Snapshot::default()));
        let metrics = Metrics::default();
        let owned_dir = dir.to_owned();
        let kinds = kinds.to_vec();
        let recorded = metrics.clone();
        let start =
            move || ManifestSource::start(&owned_dir, kinds, filter, debounce, sender, recorded);
        let started = tokio::task::spawn_blocking(start).await.map_err(|error| {
            SourceError::Manifests {
                path: dir.to_owned(),
                source: std::io::Error::other(error),
            }
        })??;
        Ok(Source {
            snapshots,
            metrics,
            backend: Backend::Manifests(started),
        })
    }

    /// Watches the objects of `kinds` on the API server of `client`, in every namespace. The
    /// first snapshot (`revision` 1) is published once every kind has been listed.
    #[cfg(feature = "kube-api")]
    pub fn api(client: kube::Client, kinds: &[Kind]) -> Source {
        Source::api_filtered(client, kinds, Filter::default(), None)
    }

    /// As [`Source::api`], listing and watching only the objects `filter` keeps (with a field
    /// selector); with a `reporter`, each object left out as invalid is also recorded as a
    /// `Warning` event regarding it (reason `Invalid`, one per version of the object).
    #[cfg(feature = "kube-api")]
    pub fn api_filtered(
        client: kube::Client,
        kinds: &[Kind],
        filter: Filter,
        reporter: Option<Reporter>,
    ) -> Source {
        let (sender, snapshots) = watch::channel(Arc::new(Snapshot::default()));
        let metrics = Metrics::default();
        let api = ApiSource::start(client, kinds, filter, reporter, sender, metrics.clone());
        Source {
            snapshots,
            metrics,
            backend: Backend::Api(api),
        }
    }

    /// A receiver of every snapshot from now on; its current value is the latest one.
    pub fn snapshots(&self) -> watch::Receiver<Arc<Snapshot>> {
        self.snapshots.clone()
    }

    /// The source's metrics, to [`register`](Metrics::register) in a binary's registry.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Whether the source keeps up (the manifest watcher is not stuck), for a binary's
    /// `/healthz`; the handle stays current.
    pub fn health(&self) -> SourceHealth {
        match &self.backend {
            Backend::Manifests(source) => source.health(),
            #[cfg(feature = "kube-api")]
            Backend::Api(_) => SourceHealth::default(),
        }
    }

    /// The latest snapshot.
    pub fn current(&self) -> Arc<Snapshot> {
        Arc::clone(&self.snapshots.borrow())
    }

    /// Sets `status` on the object `key` of its kind: a status file beside the manifests, or a
    /// merge PATCH of the object's `status` subresource. The next snapshot shows it.
    pub async fn write_status(&self, key: &ObjectRef, status: Status) -> Result<(), StatusError> {
        match &self.backend {
            Backend::Manifests(source) => source.write_status(key, status).await,
            #[cfg(feature = "kube-api")]
            Backend::Api(source) => source.write_status(key, status).await,
        }
    }

    /// How many other replicas of the pod `namespace/name` run and are ready (pods of its
    /// namespace with all of its labels), or `None` where there are no pods (manifests).
    ///
    /// # Errors
    ///
    /// The API server's, when the pod cannot be read or the pods listed.
    pub async fn running_peers(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<usize>, String> {
        match &self.backend {
            Backend::Manifests(_) => {
                let _ = (namespace, name);
                Ok(None)
            }
            #[cfg(feature = "kube-api")]
            Backend::Api(source) => crate::api::running_peers(source.client(), namespace, name)
                .await
                .map(Some)
                .map_err(|e| format!("cannot list the pods beside {namespace}/{name}: {e}")),
        }
    }

    /// Records `event` (`events.k8s.io/v1`) on the object it regards: a file
    /// `DIR/.status/events/NAMESPACE/NAME.yaml` beside the manifests, or on the API server a
    /// create, and for an event with a `series` (a repeat) a PATCH of its series (a create
    /// again if the API server has expired it).
    pub async fn record_event(&self, event: &Event) -> Result<(), EventError> {
        match &self.backend {
            Backend::Manifests(source) => source.record_event(event).await,
            #[cfg(feature = "kube-api")]
            Backend::Api(source) => source.record_event(event).await,
        }
    }
}
