//! The manifest source: reads the folder, watches it, and publishes snapshots.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use k8s_openapi::api::events::v1::Event;
use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache};
use tokio::sync::watch;

use super::folder::Folder;
use super::status::{STATUS_DIR, StatusFiles};
use super::{ManifestError, SourceHealth};
use crate::events::event_key;
use crate::snapshot::publish;
use crate::{
    EventError, Filter, Kind, Metrics, ObjectRef, Snapshot, SourceError, Status, StatusError,
};

/// A folder of manifests, watched; dropping it stops the watch.
pub(crate) struct ManifestSource {
    state: Arc<Mutex<State>>,
    health: SourceHealth,
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
}

/// What the watcher thread and status writers share.
struct State {
    folder: Folder,
    /// The kinds to publish; the others are left out of the snapshots.
    kinds: Vec<Kind>,
    /// Which objects of those kinds to publish.
    filter: Filter,
    statuses: StatusFiles,
    snapshots: watch::Sender<Arc<Snapshot>>,
    metrics: Metrics,
}

impl ManifestSource {
    /// Starts watching `dir` (changes are read once they have been quiet for `debounce`), then
    /// reads it and publishes the first snapshot of the objects of `kinds` that `filter` keeps
    /// on `snapshots`, recording into `metrics`.
    pub(crate) fn start(
        dir: &Path,
        kinds: Vec<Kind>,
        filter: Filter,
        debounce: Duration,
        snapshots: watch::Sender<Arc<Snapshot>>,
        metrics: Metrics,
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
            filter,
            statuses,
            snapshots,
            metrics,
        }));

        let health = SourceHealth::watcher();

        // Watch first, then read: a change made meanwhile is read twice rather than missed.
        let (watched, scans) = (Arc::clone(&state), health.clone());
        let status_dir = root.join(STATUS_DIR);
        let mut debouncer = notify_debouncer_full::new_debouncer(
            debounce,
            None,
            move |result: DebounceEventResult| {
                if concerns_manifests(&result, &status_dir) {
                    scan(&watched, &scans);
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
        scan(&state, &health);
        tracing::info!(folder = %root.display(), "watching the manifest folder");
        Ok(Self {
            state,
            health,
            _debouncer: debouncer,
        })
    }

    /// Whether the watcher keeps up.
    pub(crate) fn health(&self) -> SourceHealth {
        self.health.clone()
    }

    /// Writes `status` of the object `key` to its status file, and publishes the object with
    /// it.
    pub(crate) async fn write_status(
        &self,
        key: &ObjectRef,
        status: Status,
    ) -> Result<(), StatusError> {
        let state = Arc::clone(&self.state);
        let (owned_key, kind) = (key.clone(), status.kind());
        let write = move || lock(&state).write_status(&owned_key, status);
        let joined = tokio::task::spawn_blocking(write).await;
        joined.unwrap_or_else(|error| {
            Err(StatusError::Write {
                kind,
                key: key.clone(),
                source: std::io::Error::other(error),
            })
        })
    }

    /// Writes `event` to its file beside the statuses.
    pub(crate) async fn record_event(&self, event: &Event) -> Result<(), EventError> {
        let key = event_key(event)?;
        let state = Arc::clone(&self.state);
        let (owned_key, event) = (key.clone(), event.clone());
        let write = move || lock(&state).statuses.write_event(&owned_key, &event);
        let joined = tokio::task::spawn_blocking(write).await;
        let written = joined.unwrap_or_else(|error| Err(std::io::Error::other(error)));
        written
            .map(drop)
            .map_err(|source| EventError::Write { key, source })
    }
}

impl State {
    fn write_status(&mut self, key: &ObjectRef, status: Status) -> Result<(), StatusError> {
        let kind = status.kind();
        if !status.target_exists(&self.snapshots.borrow(), key) {
            return Err(StatusError::NotFound {
                kind,
                key: key.clone(),
            });
        }
        let written = self.statuses.write(key, status);
        written.map_err(|source| StatusError::Write {
            kind,
            key: key.clone(),
            source,
        })?;
        self.publish();
        Ok(())
    }

    /// Reads the changed files and publishes what changed.
    fn refresh(&mut self) {
        tracing::debug!("reading the manifest folder");
        let reload = self.folder.reload();
        for skipped in &reload.skipped {
            tracing::warn!("{skipped}");
        }
        report(&reload.errors);
        for invalid in &reload.invalid {
            tracing::warn!("{invalid}");
        }
        self.metrics.rejected_files(self.folder.rejected_files());
        self.metrics.invalid_objects(self.folder.invalid_objects());
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
        self.filter.retain(&mut snapshot);
        self.statuses.apply(&mut snapshot);
        publish(&self.snapshots, snapshot, "manifests", &self.metrics);
    }
}

/// Reads the folder and publishes, timed for `health`: waiting for the lock (a status write)
/// counts as part of the scan.
fn scan(state: &Mutex<State>, health: &SourceHealth) {
    health.scan_started(Instant::now());
    lock(state).refresh();
    health.scan_finished();
}

/// Whether a batch of events may change a manifest: anything but reads (our own, too) and our
/// own status writes.
fn concerns_manifests(result: &DebounceEventResult, status_dir: &Path) -> bool {
    match result {
        Ok(events) => events.iter().any(|event| {
            let outside_status = |path: &std::path::PathBuf| !path.starts_with(status_dir);
            !event.kind.is_access()
                && (event.paths.is_empty() || event.paths.iter().any(outside_status))
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
        tracing::warn!("{error}; keeping the objects of its last good version, if any");
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A panic while holding the lock cannot leave the state half-updated in a way that matters:
    // the next reload rebuilds the snapshot from the files.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use notify::EventKind;
    use notify::event::{AccessKind, CreateKind, Event};
    use notify_debouncer_full::DebouncedEvent;

    use super::*;

    fn batch(kind: EventKind, path: &str) -> DebounceEventResult {
        let event = Event::new(kind).add_path(path.into());
        Ok(vec![DebouncedEvent::new(event, Instant::now())])
    }

    #[test]
    fn reads_and_status_writes_do_not_trigger_a_reload() {
        let status = Path::new("/m/.status");
        let create = EventKind::Create(CreateKind::File);
        assert!(concerns_manifests(&batch(create, "/m/a.yaml"), status));
        assert!(!concerns_manifests(
            &batch(create, "/m/.status/ingresses/a/b.yaml"),
            status
        ));
        let read = EventKind::Access(AccessKind::Any);
        assert!(!concerns_manifests(&batch(read, "/m/a.yaml"), status));
        assert!(concerns_manifests(&Err(Vec::new()), status));
    }
}
