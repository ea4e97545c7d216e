//! Leader election among replicas with lease-driver, on a Kubernetes Lease, a file or an etcd
//! key: only the leader writes Ingress status.

use std::path::PathBuf;

use leader_lease::{Config, Duration, Event};
use lease_driver::{Driver, FileStore, Notice, Status, Store};
use tokio::sync::watch;
use tracing::{info, warn};

/// Where the lease lives.
#[derive(Clone, Debug)]
pub enum LeaseStore {
    /// A `coordination.k8s.io/v1` Lease, through the API server the objects come from.
    Kubernetes {
        /// The kubeconfig of the object source (`None`: in-cluster).
        kubeconfig: Option<PathBuf>,
        /// The Lease's namespace.
        namespace: String,
        /// The Lease's name.
        name: String,
    },
    /// A file shared by the replicas of one machine.
    File(PathBuf),
    /// An etcd key.
    Etcd {
        /// The etcd endpoint (`http://127.0.0.1:2379`).
        endpoint: String,
        /// The key.
        key: String,
    },
}

/// How to campaign.
#[derive(Clone, Debug)]
pub struct Election {
    /// This replica's identity.
    pub id: String,
    /// The store.
    pub store: LeaseStore,
    /// Lease duration.
    pub lease: std::time::Duration,
    /// Renew deadline.
    pub renew: std::time::Duration,
    /// Retry period.
    pub retry: std::time::Duration,
}

/// Why the campaign could not start.
#[derive(Debug, thiserror::Error)]
pub enum ElectionError {
    /// Invalid timings or identity.
    #[error("invalid election settings: {0}")]
    Config(String),
    /// No client for the API server.
    #[error("cannot reach the API server for the leader Lease: {0}")]
    Kubernetes(String),
    /// etcd unreachable.
    #[error("cannot connect to etcd at {endpoint}: {message}")]
    Etcd {
        /// The endpoint.
        endpoint: String,
        /// The client's error.
        message: String,
    },
}

fn duration(d: std::time::Duration) -> Duration {
    Duration::from_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Starts campaigning in a task until `shutdown` fires (the lease is then released); the
/// receiver tells whether this replica leads.
///
/// # Errors
///
/// [`ElectionError`] if the settings are invalid or etcd cannot be reached.
pub async fn campaign(
    election: Election,
    shutdown: watch::Receiver<bool>,
) -> Result<watch::Receiver<Status>, ElectionError> {
    let config = Config::new(
        election.id.as_str(),
        duration(election.lease),
        duration(election.renew),
        duration(election.retry),
    )
    .map_err(|e| ElectionError::Config(e.to_string()))?;
    match election.store {
        LeaseStore::Kubernetes {
            kubeconfig,
            namespace,
            name,
        } => {
            let client = cluster_state::api_client(kubeconfig.as_deref())
                .await
                .map_err(|e| ElectionError::Kubernetes(e.to_string()))?;
            let lease = cluster_state::LeaseClient::new(client, &namespace, &name);
            Ok(spawn(
                config,
                lease_driver::KubernetesStore::new(lease),
                shutdown,
            ))
        }
        LeaseStore::File(path) => Ok(spawn(config, FileStore::new(path), shutdown)),
        LeaseStore::Etcd { endpoint, key } => {
            let options = etcd_client::ConnectOptions::new()
                .with_connect_timeout(std::time::Duration::from_secs(2))
                .with_timeout(std::time::Duration::from_secs(2));
            let client = etcd_client::Client::connect([endpoint.as_str()], Some(options))
                .await
                .map_err(|e| ElectionError::Etcd {
                    endpoint: endpoint.clone(),
                    message: e.to_string(),
                })?;
            Ok(spawn(
                config,
                lease_driver::EtcdStore::new(&client, key),
                shutdown,
            ))
        }
    }
}

fn spawn<S: Store + 'static>(
    config: Config,
    store: S,
    mut shutdown: watch::Receiver<bool>,
) -> watch::Receiver<Status> {
    let driver = Driver::new(config, store);
    let status = driver.status();
    let stop = async move {
        let _ = shutdown.wait_for(|stop| *stop).await;
    };
    tokio::spawn(driver.run(stop, |notice| match notice {
        Notice::Event { event, .. } => match event {
            Event::StartedLeading { .. } => info!("leading: this replica writes Ingress status"),
            Event::StoppedLeading { reason } => info!(?reason, "no longer leading"),
            Event::NewLeader(leader) => info!(leader = leader.as_deref().unwrap_or("-"), "leader"),
        },
        Notice::RequestFailed { request, error, .. } => {
            warn!("lease {request} failed: {error}");
        }
        other => info!("{other:?}"),
    }));
    status
}
