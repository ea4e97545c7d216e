//! What the state machine asks of the store, and the answers a driver hands back.
//!
//! The store is anything with a linearizable compare-and-swap on a version: a Kubernetes Lease
//! (`resourceVersion`, 409 Conflict on a stale one), an etcd key (`mod_revision` in a
//! transaction), a file guarded by a lock file, or memory. Drivers carry out each [`Action`] and
//! report the outcome; every request must end (with [`StoreError::Unavailable`] on timeout)
//! within [`Config::request_timeout`](crate::Config::request_timeout).

use core::fmt;

use crate::record::Record;

/// The store's compare-and-swap token for one state of the record.
///
/// Kubernetes `resourceVersion`s are opaque strings, but the apiserver backed by etcd issues
/// decimal revisions; a Kubernetes driver parses them (and reports a non-numeric one as
/// [`StoreError::Unavailable`]). Versions increase with every write, so the version of the
/// write that won leadership doubles as a fencing token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(pub u64);

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The record as read from the store, with its current version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The election record.
    pub record: Record,
    /// Its version, to pass back in a compare-and-swap.
    pub version: Version,
}

/// A request to the store, produced by [`Elector::poll_action`](crate::Elector::poll_action).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Read the record; answer with [`Elector::handle_get`](crate::Elector::handle_get)
    /// (`Ok(None)` when it does not exist).
    Get,
    /// Create the record; fail with [`StoreError::Conflict`] if it already exists. Answer with
    /// [`Elector::handle_write`](crate::Elector::handle_write).
    Create(Record),
    /// Replace the record if and only if its version is still `expected`; otherwise fail with
    /// [`StoreError::Conflict`]. Answer with [`Elector::handle_write`](crate::Elector::handle_write).
    Update {
        /// The record to write.
        record: Record,
        /// The version the write is conditional on.
        expected: Version,
    },
}

/// Why a store request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// The compare-and-swap lost: the version changed, or a created record already exists
    /// (HTTP 409 Conflict).
    Conflict,
    /// An update found no record (HTTP 404).
    NotFound,
    /// Anything else: timeout, connection loss, server error. The write may or may not have
    /// taken effect.
    Unavailable,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Conflict => "the record changed since it was read (compare-and-swap conflict)",
            Self::NotFound => "the record does not exist",
            Self::Unavailable => "the store did not answer in time or failed",
        })
    }
}

impl core::error::Error for StoreError {}
