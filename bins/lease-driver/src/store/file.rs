//! A store in one file, for candidates in several processes on one machine.
//!
//! The record file holds `{"version":N,"spec":{…Lease spec…}}`. Writers serialise on an
//! advisory lock (`flock`) on a lock file beside it, released by the kernel when a holder dies;
//! under the lock a writer checks the version, writes a temporary file, syncs it and renames it
//! over the record, so readers (who take no lock) see either the old or the new record whole.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use leader_lease::{Record, Stored, Version};

use super::{RequestError, Store};

/// A compare-and-swap register in a file (see the module documentation for the format).
///
/// Versions count writes from 1; deleting the file restarts them, so do not delete it while
/// fencing tokens from it are in use.
#[derive(Clone, Debug)]
pub struct FileStore {
    paths: Arc<Paths>,
}

#[derive(Debug)]
struct Paths {
    record: PathBuf,
    lock: PathBuf,
    temporary: PathBuf,
}

impl FileStore {
    /// A store whose record is `path`; the lock file is `path` with `.lock` appended, and
    /// writes go through `path` with `.tmp` appended. The directory must exist.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let record = path.into();
        let with_suffix = |suffix: &str| {
            let mut name = record.clone().into_os_string();
            name.push(suffix);
            PathBuf::from(name)
        };
        Self {
            paths: Arc::new(Paths {
                lock: with_suffix(".lock"),
                temporary: with_suffix(".tmp"),
                record,
            }),
        }
    }

    /// The record file.
    pub fn path(&self) -> &Path {
        &self.paths.record
    }

    /// Runs blocking file work off the async threads.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Paths) -> Result<T, RequestError> + Send + 'static,
    ) -> Result<T, RequestError> {
        let paths = Arc::clone(&self.paths);
        tokio::task::spawn_blocking(move || work(&paths))
            .await
            .map_err(|e| RequestError::Backend(e.into()))?
    }
}

impl Paths {
    fn read(&self) -> Result<Option<Stored>, RequestError> {
        let text = match fs::read_to_string(&self.record) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io_error("read", e)),
        };
        decode(&text)
            .map(Some)
            .map_err(|reason| RequestError::Corrupt {
                location: self.record.display().to_string(),
                reason,
            })
    }

    /// Writes `record` if the stored version is `expected` (`None`: if there is no record).
    fn write(&self, record: &Record, expected: Option<Version>) -> Result<Version, RequestError> {
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.lock)
            .map_err(|e| self.io_error("open the lock file of", e))?;
        lock.lock().map_err(|e| self.io_error("lock", e))?;
        // The lock is released when `lock` is closed, on every path out of here.
        let current = self.read()?.map(|stored| stored.version);
        let version = match (current, expected) {
            (None, Some(_)) => return Err(RequestError::NotFound),
            (Some(_), None) => return Err(RequestError::Conflict),
            (Some(current), Some(expected)) if current != expected => {
                return Err(RequestError::Conflict);
            }
            (current, _) => Version(current.map_or(0, |v| v.0).saturating_add(1)),
        };
        self.replace(&encode(record, version))
            .map_err(|e| self.io_error("write", e))?;
        Ok(version)
    }

    fn replace(&self, text: &str) -> io::Result<()> {
        let mut file = File::create(&self.temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        fs::rename(&self.temporary, &self.record)
    }

    fn io_error(&self, what: &str, error: io::Error) -> RequestError {
        RequestError::Backend(
            io::Error::new(
                error.kind(),
                format!("cannot {what} {}: {error}", self.record.display()),
            )
            .into(),
        )
    }
}

fn encode(record: &Record, version: Version) -> String {
    format!(
        "{{\"version\":{version},\"spec\":{}}}\n",
        record.encode_lease_spec()
    )
}

fn decode(text: &str) -> Result<Stored, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let version = value
        .get("version")
        .and_then(serde_json::Value::as_u64)
        .ok_or("\"version\" must be a non-negative integer")?;
    let spec = value.get("spec").ok_or("\"spec\" is missing")?;
    let record =
        Record::decode_lease_spec(&spec.to_string()).map_err(|e| format!("\"spec\" {e}"))?;
    Ok(Stored {
        record,
        version: Version(version),
    })
}

impl Store for FileStore {
    async fn get(&self) -> Result<Option<Stored>, RequestError> {
        self.blocking(Paths::read).await
    }

    async fn create(&self, record: &Record) -> Result<Version, RequestError> {
        let record = record.clone();
        self.blocking(move |paths| paths.write(&record, None)).await
    }

    async fn update(&self, record: &Record, expected: Version) -> Result<Version, RequestError> {
        let record = record.clone();
        self.blocking(move |paths| paths.write(&record, Some(expected)))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(holder: &str) -> Record {
        Record {
            holder_identity: leader_lease::Text::try_from(holder).unwrap(),
            lease_duration_seconds: 2,
            leader_transitions: 4,
            ..Record::default()
        }
    }

    /// `leader_lease::Action` semantics: create fails on an existing record, update is a CAS.
    #[tokio::test]
    async fn compare_and_swap_across_handles() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileStore::new(dir.path().join("lease.json"));
        let b = FileStore::new(a.path());
        assert!(a.get().await.unwrap().is_none());
        assert!(matches!(
            a.update(&record("a"), Version(1)).await,
            Err(RequestError::NotFound)
        ));
        assert_eq!(a.create(&record("a")).await.unwrap(), Version(1));
        assert!(matches!(
            b.create(&record("b")).await,
            Err(RequestError::Conflict)
        ));
        assert_eq!(
            b.update(&record("b"), Version(1)).await.unwrap(),
            Version(2)
        );
        assert!(matches!(
            a.update(&record("a"), Version(1)).await,
            Err(RequestError::Conflict)
        ));
        let stored = a.get().await.unwrap().unwrap();
        assert_eq!(
            stored,
            Stored {
                record: record("b"),
                version: Version(2)
            }
        );
    }

    #[test]
    fn the_file_is_versioned_lease_spec_json() {
        let text = encode(&record("node-a"), Version(7));
        assert_eq!(
            text,
            "{\"version\":7,\"spec\":{\"holderIdentity\":\"node-a\",\"leaseDurationSeconds\":2,\"leaseTransitions\":4}}\n"
        );
        assert_eq!(
            decode(&text).unwrap(),
            Stored {
                record: record("node-a"),
                version: Version(7)
            }
        );
    }

    /// The lock makes the compare-and-swap atomic: of many writers racing on one version,
    /// exactly one wins.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn racing_writers_have_one_winner() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lease.json");
        let first = FileStore::new(&path).create(&record("a")).await.unwrap();
        let racers: Vec<_> = (0..8)
            .map(|i| {
                let store = FileStore::new(&path);
                tokio::spawn(async move { store.update(&record(&format!("r{i}")), first).await })
            })
            .collect();
        let mut winners = 0;
        for racer in racers {
            match racer.await.unwrap() {
                Ok(version) => {
                    assert_eq!(version, Version(2));
                    winners += 1;
                }
                Err(e) => assert!(matches!(e, RequestError::Conflict), "{e}"),
            }
        }
        assert_eq!(winners, 1);
    }

    proptest::proptest! {
        #[test]
        fn the_file_format_round_trips(
            holder in "\\PC{0,20}",
            duration in proptest::prelude::any::<i32>(),
            transitions in proptest::prelude::any::<i32>(),
            renew in proptest::option::of(0_i64..253_402_300_800_000_000),
            // `omitempty`: an empty preferred holder is written as none.
            preferred in proptest::option::of("[a-z0-9.-]{1,12}"),
            version in proptest::prelude::any::<u64>(),
        ) {
            let record = Record {
                holder_identity: leader_lease::Text::try_from(holder.as_str()).unwrap(),
                lease_duration_seconds: duration,
                acquire_time: renew.map(leader_lease::MicroTime::from_unix_micros),
                renew_time: renew.map(leader_lease::MicroTime::from_unix_micros),
                leader_transitions: transitions,
                strategy: None,
                preferred_holder: preferred.map(|p| leader_lease::Text::try_from(p.as_str()).unwrap()),
            };
            let stored = Stored { record, version: Version(version) };
            proptest::prop_assert_eq!(decode(&encode(&stored.record, stored.version)), Ok(stored));
        }
    }

    #[tokio::test]
    async fn a_corrupt_record_is_reported_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path().join("lease.json"));
        fs::write(store.path(), "{\"version\":-1}").unwrap();
        let error = store.get().await.unwrap_err();
        assert_eq!(error.kind(), leader_lease::StoreError::Unavailable);
        let message = error.to_string();
        assert!(
            message.contains("lease.json: not an election record: \"version\" must be"),
            "{message}"
        );
        fs::write(
            store.path(),
            "{\"version\":1,\"spec\":{\"leaseDurationSeconds\":\"x\"}}",
        )
        .unwrap();
        let message = store.get().await.unwrap_err().to_string();
        assert!(message.contains("\"spec\" at byte"), "{message}");
    }
}
