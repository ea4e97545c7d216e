//! The manifest source: reads the folder, watches it, and publishes snapshots.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use k8s_openapi::api::networking::v1::IngressLoadBalancerStatus;
use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache};
use tokio::sync::watch;

use super::ManifestError;
use super::folder::Folder;
use super::status::{STATUS_DIR, StatusFiles};
use crate::{Kind, ObjectRef, Snapshot, SourceError, StatusError};

/// A folder of manifests, watched; dropping it stops the watch.
pub(crate) struct ManifestSource {
    state: Arc<Mutex<State>>,
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
}

/// What the watcher thread and status writers share.
struct State {
    folder: Folder,
    /// The kinds to publish; the others are left out of the snapshots.
    kinds: Vec<Kind>,
    statuses: StatusFiles,
    snapshots: watch::Sender<Arc<Snapshot>>,
}

impl ManifestSource {
    /// Starts watching `dir` (changes are read once they have been quiet for `debounce`), then
    /// reads it and publishes the first snapshot of the objects of `kinds` on `snapshots`.
    pub(crate) fn start(
        dir: &Path,
        kinds: Vec<Kind>,
        debounce: Duration,
        snapshots: watch::Sender<Arc<Snapshot>>,
    ) -> Result<Self, SourceError> {
        let unusable = |source| SourceError::Manifests {
            path: dir.to_owned(),
            source,
        };
        let root = dir.canonicalize().map_err(unusable)?;
        if !root.is_dir() {
            let not_a_folder = std::io::Error::other("not a folder");
            return Err(unusable(not_a_folder));
        }
        let (statuses, errors) = StatusFiles::load(&root);
        report(&errors);
        let state = Arc::new(Mutex::new(State {
            folder: Folder::new(root.clone()),
            kinds,
            statuses,
            snapshots,
        }));

        // Watch first, then read: a change made meanwhile is read twice rather than missed.
        let watched = Arc::clone(&state);
        let status_dir = root.join(STATUS_DIR);
        let mut debouncer = notify_debouncer_full::new_debouncer(
            debounce,
            None,
            move |result: DebounceEventResult| {
                if concerns_manifests(&result, &status_dir) {
                    lock(&watched).refresh();
                }
            },
        )
        .map_err(|source| SourceError::Watch {
            path: root.clone(),
            source,
        })?;
        debouncer
            .watch(&root, RecursiveMode::Recursive)
            .map_err(|source| SourceError::Watch {
                path: root.clone(),
                source,
            })?;
        lock(&state).refresh();
        tracing::info!(folder = %root.display(), "watching the manifest folder");
        Ok(Self {
            state,
            _debouncer: debouncer,
        })
    }

    /// Writes the `status.loadBalancer` of the Ingress `key` to its status file, and publishes
    /// the Ingress with it.
    pub(crate) async fn write_ingress_status(
        &self,
        key: &ObjectRef,
        status: IngressLoadBalancerStatus,
    ) -> Result<(), StatusError> {
        let state = Arc::clone(&self.state);
        let owned_key = key.clone();
        let write = move || lock(&state).write_ingress_status(&owned_key, status);
        let joined = tokio::task::spawn_blocking(write).await;
        joined.unwrap_or_else(|error| {
            Err(StatusError::Write {
                key: key.clone(),
                source: std::io::Error::other(error),
            })
        })
    }
}

impl State {
    fn write_ingress_status(
        &mut self,
        key: &ObjectRef,
        status: IngressLoadBalancerStatus,
    ) -> Result<(), StatusError> {
        if !self.snapshots.borrow().ingresses.contains_key(key) {
            return Err(StatusError::NotFound {
                kind: Kind::Ingress,
                key: key.clone(),
            });
        }
        let written = self.statuses.write_ingress(key, status);
        written.map_err(|source| StatusError::Write {
            key: key.clone(),
            source,
        })?;
        self.publish();
        Ok(())
    }

    /// Reads the changed files and publishes what changed.
    fn refresh(&mut self) {
        let errors = self.folder.reload();
        report(&errors);
        self.publish();
    }

    /// Publishes the folder's objects if they differ from the last snapshot.
    fn publish(&mut self) {
        let (mut snapshot, duplicates) = self.folder.snapshot();
        for duplicate in duplicates {
            tracing::warn!("{duplicate}");
        }
        for kind in Kind::ALL.iter().filter(|kind| !self.kinds.contains(kind)) {
            snapshot.clear(*kind);
        }
        self.statuses.apply(&mut snapshot);
        self.snapshots.send_if_modified(|current| {
            let Some(next) = snapshot.succeeding(current) else {
                return false;
            };
            tracing::info!(
                revision = next.revision,
                objects = next.len(),
                changed = next.changes.len(),
                "manifests changed"
            );
            *current = Arc::new(next);
            true
        });
    }
}

/// Whether a batch of events may change a manifest: anything but our own status writes.
fn concerns_manifests(result: &DebounceEventResult, status_dir: &Path) -> bool {
    match result {
        Ok(events) => events.iter().any(|event| {
            event.paths.is_empty() || event.paths.iter().any(|path| !path.starts_with(status_dir))
        }),
        Err(errors) => {
            for error in errors {
                tracing::warn!(%error, "watching the manifest folder; reading it again");
            }
            true
        }
    }
}

fn report(errors: &[ManifestError]) {
    for error in errors {
        tracing::warn!("{error}; its objects stay as in its last good version");
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A panic while holding the lock cannot leave the state half-updated in a way that matters:
    // the next reload rebuilds the snapshot from the files.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}
