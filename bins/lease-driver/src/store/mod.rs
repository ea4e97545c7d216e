//! The store a driver campaigns on: read, create, and compare-and-swap one election record.
//!
//! Implementations: [`MemoryStore`] (tests, one process), [`FileStore`] (processes on one
//! machine), `EtcdStore` (feature `etcd`), and `KubernetesStore` (feature `kubernetes`: a
//! `coordination.k8s.io/v1` Lease through cluster-state's API client, `resourceVersion` as the
//! version, 409 → `Conflict`).

use std::fmt;
use std::future::Future;

use leader_lease::{Record, Stored, Version};

mod file;
mod memory;

#[cfg(feature = "etcd")]
mod etcd;
#[cfg(feature = "kubernetes")]
mod kubernetes;

#[cfg(feature = "etcd")]
pub use etcd::EtcdStore;
pub use file::FileStore;
#[cfg(feature = "kubernetes")]
pub use kubernetes::KubernetesStore;
pub use memory::MemoryStore;

/// A linearizable compare-and-swap register holding one [`Record`] and its [`Version`].
///
/// Each method answers one [`leader_lease::Action`]. Versions must increase with every write, so
/// the version that won a term doubles as a fencing token. The driver bounds every call with the
/// configuration's request timeout; a call that times out may still take effect, as any
/// failed request may.
pub trait Store: Send + Sync {
    /// Reads the record; `Ok(None)` when there is none.
    fn get(&self) -> impl Future<Output = Result<Option<Stored>, RequestError>> + Send;

    /// Creates the record; fails with [`RequestError::Conflict`] if one exists.
    fn create(&self, record: &Record)
    -> impl Future<Output = Result<Version, RequestError>> + Send;

    /// Replaces the record if its version is still `expected`: [`RequestError::Conflict`] if it
    /// changed, [`RequestError::NotFound`] if there is no record.
    fn update(
        &self,
        record: &Record,
        expected: Version,
    ) -> impl Future<Output = Result<Version, RequestError>> + Send;
}

/// Why a store request failed, with the backend's own error where there is one.
#[derive(Debug)]
#[non_exhaustive]
pub enum RequestError {
    /// The compare-and-swap lost: the version changed, or a record to create already exists.
    Conflict,
    /// An update found no record.
    NotFound,
    /// The request did not finish within the request timeout.
    TimedOut(std::time::Duration),
    /// The stored record is not a valid election record.
    Corrupt {
        /// Where the record lives (a path or a key).
        location: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The backend failed (I/O error, connection loss, server error).
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

impl RequestError {
    /// The answer the state machine understands.
    pub fn kind(&self) -> leader_lease::StoreError {
        match self {
            Self::Conflict => leader_lease::StoreError::Conflict,
            Self::NotFound => leader_lease::StoreError::NotFound,
            Self::TimedOut(_) | Self::Corrupt { .. } | Self::Backend(_) => {
                leader_lease::StoreError::Unavailable
            }
        }
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Conflict => {
                f.write_str("the record changed since it was read (compare-and-swap conflict)")
            }
            Self::NotFound => f.write_str("the record does not exist"),
            Self::TimedOut(limit) => write!(f, "the store did not answer within {limit:?}"),
            Self::Corrupt { location, reason } => {
                write!(
                    f,
                    "{location}: not an election record: {reason}; delete it to start afresh"
                )
            }
            Self::Backend(error) => write!(f, "the store failed: {error}"),
        }
    }
}

impl std::error::Error for RequestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Backend(error) => Some(error.as_ref()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_map_to_the_state_machine_answers() {
        use leader_lease::StoreError;
        assert_eq!(RequestError::Conflict.kind(), StoreError::Conflict);
        assert_eq!(RequestError::NotFound.kind(), StoreError::NotFound);
        let timed_out = RequestError::TimedOut(std::time::Duration::from_secs(1));
        assert_eq!(timed_out.kind(), StoreError::Unavailable);
        assert_eq!(timed_out.to_string(), "the store did not answer within 1s");
        let io = RequestError::Backend(std::io::Error::other("disk on fire").into());
        assert_eq!(io.kind(), StoreError::Unavailable);
        assert_eq!(io.to_string(), "the store failed: disk on fire");
    }
}
