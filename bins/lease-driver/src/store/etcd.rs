//! A store in one etcd key: the Lease `spec` JSON as the value, `mod_revision` as the version.
//!
//! Create and update are transactions: create puts only if the key's `create_revision` is 0
//! (it does not exist); update puts only if its `mod_revision` is still the expected one. etcd
//! revisions grow with every write to the cluster, so versions (and fencing tokens) increase
//! even if the key is deleted and created again.

use etcd_client::{Client, Compare, CompareOp, GetOptions, KvClient, Txn, TxnOp};
use leader_lease::{Record, Stored, Version};

use super::{RequestError, Store};

/// A compare-and-swap register in one etcd key.
#[derive(Clone)]
pub struct EtcdStore {
    kv: KvClient,
    key: String,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl EtcdStore {
    /// A store on `key`, through a connected client.
    pub fn new(client: &Client, key: impl Into<String>) -> Self {
        Self {
            kv: client.kv_client(),
            key: key.into(),
        }
    }

    /// The key holding the record.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Puts `record` if `guard` holds, and returns the revision of the write.
    async fn put_if(
        &self,
        guard: Compare,
        record: &Record,
    ) -> Result<Option<Version>, RequestError> {
        let put = TxnOp::put(self.key.as_str(), record.encode_lease_spec(), None);
        let txn = Txn::new().when([guard]).and_then([put]);
        let response = self.kv.clone().txn(txn).await.map_err(backend)?;
        if !response.succeeded() {
            return Ok(None);
        }
        let revision = response.header().map(|h| h.revision()).unwrap_or_default();
        to_version(revision)
            .map(Some)
            .ok_or_else(|| self.corrupt(format!("revision {revision} is not positive")))
    }

    fn corrupt(&self, reason: String) -> RequestError {
        RequestError::Corrupt {
            location: format!("etcd key {:?}", self.key),
            reason,
        }
    }
}

fn backend(error: etcd_client::Error) -> RequestError {
    RequestError::Backend(error.into())
}

/// etcd revisions start at 1; anything else is not a version we issued.
fn to_version(revision: i64) -> Option<Version> {
    u64::try_from(revision).ok().filter(|&r| r > 0).map(Version)
}

impl Store for EtcdStore {
    async fn get(&self) -> Result<Option<Stored>, RequestError> {
        let response = self
            .kv
            .clone()
            .get(self.key.as_str(), None)
            .await
            .map_err(backend)?;
        let Some(kv) = response.kvs().first() else {
            return Ok(None);
        };
        let text = kv.value_str().map_err(|e| self.corrupt(e.to_string()))?;
        let record = Record::decode_lease_spec(text).map_err(|e| self.corrupt(e.to_string()))?;
        let version = to_version(kv.mod_revision()).ok_or_else(|| {
            self.corrupt(format!(
                "mod_revision {} is not positive",
                kv.mod_revision()
            ))
        })?;
        Ok(Some(Stored { record, version }))
    }

    async fn create(&self, record: &Record) -> Result<Version, RequestError> {
        let absent = Compare::create_revision(self.key.as_str(), CompareOp::Equal, 0);
        self.put_if(absent, record)
            .await?
            .ok_or(RequestError::Conflict)
    }

    async fn update(&self, record: &Record, expected: Version) -> Result<Version, RequestError> {
        let revision = i64::try_from(expected.0).map_err(|_| RequestError::Conflict)?;
        let unchanged = Compare::mod_revision(self.key.as_str(), CompareOp::Equal, revision);
        if let Some(version) = self.put_if(unchanged, record).await? {
            return Ok(version);
        }
        // The guard failed: tell a changed record from a missing one.
        let options = GetOptions::new().with_count_only();
        let response = self
            .kv
            .clone()
            .get(self.key.as_str(), Some(options))
            .await
            .map_err(backend)?;
        Err(if response.count() == 0 {
            RequestError::NotFound
        } else {
            RequestError::Conflict
        })
    }
}
