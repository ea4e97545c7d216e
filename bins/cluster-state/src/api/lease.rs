//! One `coordination.k8s.io/v1` Lease, read and written with its `resourceVersion` as the
//! compare-and-swap guard: the store of a leader election.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::PostParams;

use crate::ApiCall;

/// A Lease on the API server, by namespace and name.
#[derive(Clone)]
pub struct LeaseClient {
    api: Api<Lease>,
    namespace: String,
    name: String,
}

impl std::fmt::Debug for LeaseClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseClient")
            .field("namespace", &self.namespace)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Why a Lease request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaseError {
    /// 409: the Lease to create exists, or its `resourceVersion` is no longer the expected one.
    #[error("the Lease changed since it was read (409 Conflict)")]
    Conflict,
    /// 404: the Lease to replace does not exist.
    #[error("the Lease does not exist (404)")]
    NotFound,
    /// The answer has no usable `resourceVersion`.
    #[error("the API server returned a Lease without a resourceVersion")]
    NoVersion,
    /// Any other failure: connection, authorization, server error.
    #[error("Lease request failed: {0}")]
    Api(#[source] kube::Error),
}

impl LeaseClient {
    /// The requests a `LeaseClient` makes, in its Lease's namespace: [`get`](Self::get),
    /// [`create`](Self::create) and [`replace`](Self::replace) (an `update`). A binary's
    /// RBAC rules for its Lease are exactly these.
    pub const API_CALLS: [ApiCall; 3] = [
        lease_call("get"),
        lease_call("create"),
        lease_call("update"),
    ];

    /// The Lease `name` in `namespace`, through `client`.
    pub fn new(client: kube::Client, namespace: &str, name: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// `namespace/name`.
    pub fn location(&self) -> String {
        format!("Lease {}/{}", self.namespace, self.name)
    }

    /// The Lease's spec and `resourceVersion`, or `None` if it does not exist.
    pub async fn get(&self) -> Result<Option<(LeaseSpec, String)>, LeaseError> {
        let lease = self.api.get_opt(&self.name).await.map_err(classify)?;
        lease.map(spec_and_version).transpose()
    }

    /// Creates the Lease with `spec`; returns its `resourceVersion`.
    pub async fn create(&self, spec: LeaseSpec) -> Result<String, LeaseError> {
        let lease = self.lease(spec, None);
        let created = self.api.create(&PostParams::default(), &lease).await;
        spec_and_version(created.map_err(classify)?).map(|(_, version)| version)
    }

    /// Replaces the Lease's spec if its `resourceVersion` is still `expected`; returns the new
    /// `resourceVersion`.
    pub async fn replace(&self, spec: LeaseSpec, expected: &str) -> Result<String, LeaseError> {
        let lease = self.lease(spec, Some(expected.to_owned()));
        let replaced = self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await;
        spec_and_version(replaced.map_err(classify)?).map(|(_, version)| version)
    }

    fn lease(&self, spec: LeaseSpec, resource_version: Option<String>) -> Lease {
        Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                resource_version,
                ..ObjectMeta::default()
            },
            spec: Some(spec),
        }
    }
}

const fn lease_call(verb: &'static str) -> ApiCall {
    ApiCall {
        verb,
        group: "coordination.k8s.io",
        resource: "leases",
        subresource: None,
    }
}

fn spec_and_version(lease: Lease) -> Result<(LeaseSpec, String), LeaseError> {
    let version = lease.metadata.resource_version.filter(|v| !v.is_empty());
    let version = version.ok_or(LeaseError::NoVersion)?;
    Ok((lease.spec.unwrap_or_default(), version))
}

fn classify(error: kube::Error) -> LeaseError {
    match &error {
        kube::Error::Api(status) if status.code == 409 => LeaseError::Conflict,
        kube::Error::Api(status) if status.is_not_found() => LeaseError::NotFound,
        _ => LeaseError::Api(error),
    }
}
