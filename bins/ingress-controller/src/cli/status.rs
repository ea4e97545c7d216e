//! Status publication and leader election, with ingress-nginx's flags: `--update-status`,
//! `--publish-service` or `--publish-status-address`, `--election-id` (the Lease's name in the
//! pod's namespace), `--election-ttl`, `--disable-leader-election`,
//! `--update-status-on-shutdown`, `--status-update-interval`. The identity of a replica is its
//! pod's name (`POD_NAME`), else the host name.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{ArgAction, Args};

use super::{NamespacedName, go_duration};
use crate::controller::StatusSettings;
use crate::election::{Election, LeaseStore};
use crate::status::Publish;

/// Ingress status publication and leader election.
#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Write the served Ingresses' `status.loadBalancer`.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = true, action = ArgAction::Set)]
    pub update_status: bool,
    /// The Service (`NAMESPACE/NAME`) fronting the controller: its addresses are the status
    /// (load-balancer ingress and external IPs, its cluster IP, or its external name, as
    /// ingress-nginx).
    #[arg(
        long,
        value_name = "NAMESPACE/NAME",
        conflicts_with = "publish_status_address"
    )]
    pub publish_service: Option<NamespacedName>,
    /// Addresses (IPs or host names, comma-separated) to publish as the status.
    #[arg(long, value_delimiter = ',')]
    pub publish_status_address: Vec<String>,
    /// Clear the status of the served Ingresses when the controller stops for good (the
    /// leader, with one address).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = true, action = ArgAction::Set)]
    pub update_status_on_shutdown: bool,
    /// How often, in seconds, the leader re-checks every served Ingress's status and fixes
    /// what drifted (at least 5, as ingress-nginx).
    #[arg(long, default_value_t = 60)]
    pub status_update_interval: u64,
    /// The name of the leader Lease, in the pod's namespace (`POD_NAMESPACE`), when objects
    /// come from the API server.
    #[arg(long, default_value = "ingress-controller-leader")]
    pub election_id: String,
    /// How long a leader's term lasts unrenewed (Go duration); it renews within half of it
    /// and candidates retry every quarter, as ingress-nginx.
    #[arg(long, value_parser = go_duration)]
    pub election_ttl: Option<Duration>,
    /// Every replica writes status (no election).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, action = ArgAction::Set)]
    pub disable_leader_election: bool,
    /// Elect a leader on this lease file instead (replicas on one machine).
    #[arg(long, conflicts_with = "etcd_endpoint")]
    pub lease_file: Option<PathBuf>,
    /// Elect a leader on an etcd key at this endpoint instead.
    #[arg(long)]
    pub etcd_endpoint: Option<String>,
    /// The etcd key of the lease.
    #[arg(long, default_value = "/kube-node-net/ingress-controller/leader")]
    pub lease_key: String,
    /// Lease duration in milliseconds (without `--election-ttl`).
    #[arg(long, default_value_t = 30_000)]
    pub lease_ms: u64,
    /// Renew deadline in milliseconds (without `--election-ttl`).
    #[arg(long, default_value_t = 15_000)]
    pub renew_ms: u64,
    /// Retry period in milliseconds (without `--election-ttl`).
    #[arg(long, default_value_t = 7_500)]
    pub retry_ms: u64,
}

/// This replica's identity, as ingress-nginx's: the pod's name (`POD_NAME`), else the host
/// name, else the pid. It names the replica in the election and in the events it records.
pub fn identity() -> String {
    let nonempty = |s: String| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
    std::env::var("POD_NAME")
        .ok()
        .and_then(nonempty)
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .and_then(nonempty)
        })
        .unwrap_or_else(|| format!("pid-{}", std::process::id()))
}

impl StatusArgs {
    /// The status settings, or `None` with `--update-status=false`.
    ///
    /// `kubeconfig` and `api` are the object source's: the leader Lease lives on the API
    /// server the objects come from, in `POD_NAMESPACE`.
    ///
    /// # Errors
    ///
    /// When the Lease's namespace is unknown (no `POD_NAMESPACE`).
    pub fn settings(
        &self,
        kubeconfig: Option<&Path>,
        api: bool,
    ) -> Result<Option<StatusSettings>, String> {
        if !self.update_status {
            return Ok(None);
        }
        let publish = match (
            &self.publish_service,
            self.publish_status_address.as_slice(),
        ) {
            (Some(service), _) => Publish::Service(service.clone()),
            (None, []) => Publish::Nothing,
            (None, addresses) => Publish::Addresses(
                addresses
                    .iter()
                    .map(|a| a.trim().to_owned())
                    .filter(|a| !a.is_empty())
                    .collect(),
            ),
        };
        let store = match (&self.lease_file, &self.etcd_endpoint) {
            _ if self.disable_leader_election => None,
            (Some(path), _) => Some(LeaseStore::File(path.clone())),
            (None, Some(endpoint)) => Some(LeaseStore::Etcd {
                endpoint: endpoint.clone(),
                key: self.lease_key.clone(),
            }),
            (None, None) if api => {
                let namespace = std::env::var("POD_NAMESPACE")
                    .ok()
                    .filter(|n| !n.is_empty())
                    .ok_or(
                        "POD_NAMESPACE is not set: the leader Lease (--election-id) lives in the \
                         pod's namespace (set it from the downward API, or pass \
                         --disable-leader-election)",
                    )?;
                Some(LeaseStore::Kubernetes {
                    kubeconfig: kubeconfig.map(Path::to_path_buf),
                    namespace,
                    name: self.election_id.clone(),
                })
            }
            (None, None) => None,
        };
        let (lease, renew, retry) = match self.election_ttl {
            Some(ttl) if !ttl.is_zero() => (ttl, ttl / 2, ttl / 4),
            // ingress-nginx: a TTL of zero or less means its default, 30s.
            Some(_) => (
                Duration::from_secs(30),
                Duration::from_secs(15),
                Duration::from_millis(7_500),
            ),
            None => (
                Duration::from_millis(self.lease_ms),
                Duration::from_millis(self.renew_ms),
                Duration::from_millis(self.retry_ms),
            ),
        };
        Ok(Some(StatusSettings {
            publish,
            election: store.map(|store| Election {
                id: identity(),
                store,
                lease,
                renew,
                retry,
            }),
            clear_on_shutdown: self.update_status_on_shutdown,
            interval: Duration::from_secs(self.status_update_interval.max(5)),
        }))
    }
}
