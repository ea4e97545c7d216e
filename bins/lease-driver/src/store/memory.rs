//! A store in memory, shared by clones: candidates in one process (tests, examples).

use std::sync::{Arc, Mutex, PoisonError};

use leader_lease::{Record, Stored, Version};

use super::{RequestError, Store};

/// A compare-and-swap register in memory. Clones share the register, so tasks holding clones
/// campaign on the same record. Versions count writes from 1.
#[derive(Clone, Debug, Default)]
pub struct MemoryStore {
    inner: Arc<Mutex<Register>>,
}

#[derive(Debug, Default)]
struct Register {
    current: Option<Stored>,
    writes: u64,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The stored record and version, if any (for tests and inspection).
    pub fn current(&self) -> Option<Stored> {
        self.lock().current.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Register> {
        // The register is consistent after every statement, so a panicked holder left nothing
        // half-written.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self, record: &Record, expected: Option<Version>) -> Result<Version, RequestError> {
        let mut register = self.lock();
        match (&register.current, expected) {
            (None, Some(_)) => return Err(RequestError::NotFound),
            (Some(_), None) => return Err(RequestError::Conflict),
            (Some(stored), Some(expected)) if stored.version != expected => {
                return Err(RequestError::Conflict);
            }
            _ => {}
        }
        register.writes += 1;
        let version = Version(register.writes);
        register.current = Some(Stored {
            record: record.clone(),
            version,
        });
        Ok(version)
    }
}

impl Store for MemoryStore {
    async fn get(&self) -> Result<Option<Stored>, RequestError> {
        Ok(self.current())
    }

    async fn create(&self, record: &Record) -> Result<Version, RequestError> {
        self.write(record, None)
    }

    async fn update(&self, record: &Record, expected: Version) -> Result<Version, RequestError> {
        self.write(record, Some(expected))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(holder: &str) -> Record {
        Record {
            holder_identity: leader_lease::Text::try_from(holder).unwrap(),
            lease_duration_seconds: 2,
            ..Record::default()
        }
    }

    /// `leader_lease::Action` semantics: create fails on an existing record, update is a CAS.
    #[tokio::test]
    async fn compare_and_swap() {
        let store = MemoryStore::new();
        assert!(store.get().await.unwrap().is_none());
        assert!(matches!(
            store.update(&record("a"), Version(1)).await,
            Err(RequestError::NotFound)
        ));
        let v1 = store.create(&record("a")).await.unwrap();
        assert!(matches!(
            store.create(&record("b")).await,
            Err(RequestError::Conflict)
        ));
        let v2 = store.update(&record("b"), v1).await.unwrap();
        assert!(v2 > v1);
        assert!(matches!(
            store.update(&record("c"), v1).await,
            Err(RequestError::Conflict)
        ));
        let stored = store.clone().get().await.unwrap().unwrap();
        assert_eq!(
            (stored.record.holder_identity.as_str(), stored.version),
            ("b", v2)
        );
    }
}
