//! A store in one `coordination.k8s.io/v1` Lease: its `spec` as the record, its
//! `resourceVersion` as the version.
//!
//! Create is a POST (409 if the Lease exists); update is a PUT carrying the expected
//! `resourceVersion`, which the API server refuses with 409 if the Lease changed since. The
//! versions are etcd revisions: decimal numbers that grow with every write, so they double as
//! fencing tokens (Kubernetes calls them opaque; one that is not a number is reported).

use cluster_state::k8s::api::coordination::v1::LeaseSpec;
use cluster_state::{ApiCall, LeaseClient, LeaseError};
use leader_lease::{Record, Stored, Version};

use super::{RequestError, Store};

/// A compare-and-swap register in one Kubernetes Lease.
#[derive(Clone, Debug)]
pub struct KubernetesStore {
    lease: LeaseClient,
}

impl KubernetesStore {
    /// The API requests this store makes on its Lease ([`LeaseClient::API_CALLS`]): the RBAC
    /// rules a replica needs in the Lease's namespace.
    pub const API_CALLS: [ApiCall; 3] = LeaseClient::API_CALLS;

    /// A store on the Lease of `lease` (see [`cluster_state::api_client`] for a client).
    pub fn new(lease: LeaseClient) -> Self {
        Self { lease }
    }

    fn corrupt(&self, reason: impl ToString) -> RequestError {
        RequestError::Corrupt {
            location: self.lease.location(),
            reason: reason.to_string(),
        }
    }

    fn version(&self, resource_version: &str) -> Result<Version, RequestError> {
        match resource_version.parse::<u64>() {
            Ok(version) if version > 0 => Ok(Version(version)),
            _ => Err(self.corrupt(format!(
                "resourceVersion {resource_version:?} is not a positive number"
            ))),
        }
    }

    fn spec(&self, record: &Record) -> Result<LeaseSpec, RequestError> {
        serde_json::from_str(&record.encode_lease_spec()).map_err(|e| self.corrupt(e))
    }
}

fn request_error(error: LeaseError) -> RequestError {
    match error {
        LeaseError::Conflict => RequestError::Conflict,
        LeaseError::NotFound => RequestError::NotFound,
        other => RequestError::Backend(other.into()),
    }
}

impl Store for KubernetesStore {
    async fn get(&self) -> Result<Option<Stored>, RequestError> {
        let Some((spec, version)) = self.lease.get().await.map_err(request_error)? else {
            return Ok(None);
        };
        let text = serde_json::to_string(&spec).map_err(|e| self.corrupt(e))?;
        let record = Record::decode_lease_spec(&text).map_err(|e| self.corrupt(e))?;
        let version = self.version(&version)?;
        Ok(Some(Stored { record, version }))
    }

    async fn create(&self, record: &Record) -> Result<Version, RequestError> {
        let created = self.lease.create(self.spec(record)?).await;
        self.version(&created.map_err(request_error)?)
    }

    async fn update(&self, record: &Record, expected: Version) -> Result<Version, RequestError> {
        let replaced = self
            .lease
            .replace(self.spec(record)?, &expected.to_string())
            .await;
        self.version(&replaced.map_err(request_error)?)
    }
}
