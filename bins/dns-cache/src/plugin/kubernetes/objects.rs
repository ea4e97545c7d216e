//! Where the plugin's objects come from, and keeping its index current: a
//! `cluster-state` source (the `-manifests DIR` folder, else the API server of the
//! `kubeconfig` or `endpoint` option, else of the pod's service account, as CoreDNS) whose
//! every snapshot is indexed and swapped in whole. Queries read the index in place; the
//! plugin is ready (and name errors are NXDOMAIN rather than SERVFAIL) once the first
//! snapshot is in.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use cluster_state::k8s::jiff::Timestamp;
use cluster_state::kube::config::{KubeConfigOptions, Kubeconfig};
use cluster_state::kube::{Client, Config};
use cluster_state::{Kind, Snapshot, Source, SourceError};
use tokio::sync::oneshot;

use super::index::{Index, Selection};
use super::memo::Memo;
use super::programming;
use crate::metrics::Metrics;

/// How long the manifest folder must be quiet before a change is read.
const MANIFEST_DEBOUNCE: Duration = Duration::from_millis(200);
/// The wait before trying again to start a source that failed.
const RETRY: Duration = Duration::from_secs(5);

/// The folder `-manifests DIR` names, once per process.
static MANIFESTS: OnceLock<PathBuf> = OnceLock::new();

/// Makes every `kubernetes` plugin read its objects from the manifests under `dir` (the
/// `-manifests DIR` flag), whatever its `kubeconfig` or `endpoint` option says.
pub fn read_manifests_from(dir: PathBuf) {
    let _ = MANIFESTS.set(dir);
}

/// Where objects come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Origin {
    /// A folder of manifests, watched.
    Manifests(PathBuf),
    /// A kubeconfig file and the context to use (default: its current one).
    Kubeconfig(PathBuf, Option<String>),
    /// `endpoint URL`, with `tls CERT KEY CACERT` if given.
    Endpoint(String, Option<[String; 3]>),
    /// The pod's service account.
    InCluster,
}

impl Origin {
    /// The origin of the options: `-manifests` first, then `kubeconfig` (which CoreDNS
    /// prefers to `endpoint`), then `endpoint`, then in-cluster.
    pub(super) fn choose(
        kubeconfig: Option<&(String, Option<String>)>,
        endpoint: Option<&String>,
        tls: Option<&[String; 3]>,
    ) -> Self {
        if let Some(dir) = MANIFESTS.get() {
            return Origin::Manifests(dir.clone());
        }
        match (kubeconfig, endpoint) {
            (Some((file, context)), _) => Origin::Kubeconfig(file.into(), context.clone()),
            (None, Some(url)) => Origin::Endpoint(url.clone(), tls.cloned()),
            (None, None) => Origin::InCluster,
        }
    }

    async fn start(&self, kinds: &[Kind]) -> Result<Source, SourceError> {
        let client = match self {
            Origin::Manifests(dir) => {
                return Source::manifests(dir, kinds, MANIFEST_DEBOUNCE).await;
            }
            Origin::InCluster => cluster_state::api_client(None).await?,
            Origin::Kubeconfig(file, context) => {
                let unusable = |e: &dyn std::fmt::Display| {
                    SourceError::KubeConfig(format!("kubeconfig {}: {e}", file.display()))
                };
                let read = Kubeconfig::read_from(file).map_err(|e| unusable(&e))?;
                let options = KubeConfigOptions {
                    context: context.clone(),
                    ..KubeConfigOptions::default()
                };
                let config = Config::from_custom_kubeconfig(read, &options).await;
                client(config.map_err(|e| unusable(&e))?)?
            }
            Origin::Endpoint(url, tls) => {
                let unusable =
                    |e: &dyn std::fmt::Display| SourceError::KubeConfig(format!("{url}: {e}"));
                let read = Kubeconfig::from_yaml(&endpoint_kubeconfig(url, tls.as_ref()))
                    .map_err(|e| unusable(&e))?;
                let options = KubeConfigOptions::default();
                let config = Config::from_custom_kubeconfig(read, &options).await;
                client(config.map_err(|e| unusable(&e))?)?
            }
        };
        Ok(Source::api(client, kinds))
    }
}

fn client(config: Config) -> Result<Client, SourceError> {
    Client::try_from(config)
        .map_err(|e| SourceError::KubeConfig(format!("cannot build a client: {e}")))
}

/// A kubeconfig naming `url`, and with `tls` its client certificate, key and CA.
fn endpoint_kubeconfig(url: &str, tls: Option<&[String; 3]>) -> String {
    // Debug formatting quotes and escapes as a YAML double-quoted scalar reads it.
    let mut cluster = format!("    server: {url:?}\n");
    let mut user = String::from("{}");
    if let Some([cert, key, ca]) = tls {
        cluster.push_str(&format!("    certificate-authority: {ca:?}\n"));
        user = format!("\n    client-certificate: {cert:?}\n    client-key: {key:?}");
    }
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: endpoint\n  cluster:\n{cluster}users:\n- name: endpoint\n  user: {user}\ncontexts:\n- name: endpoint\n  context:\n    cluster: endpoint\n    user: endpoint\ncurrent-context: endpoint\n"
    )
}

/// The index queries read, and whether the first snapshot is in.
#[derive(Debug, Default)]
pub(super) struct Shared {
    index: RwLock<Arc<Index>>,
    synced: AtomicBool,
    /// The replies built from the current index.
    pub(super) memo: Memo,
}

impl Shared {
    /// The current index.
    pub(super) fn index(&self) -> Arc<Index> {
        match self.index.read() {
            Ok(index) => Arc::clone(&index),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Whether the first snapshot is in.
    pub(super) fn synced(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }

    /// Swaps `index` in.
    pub(super) fn publish(&self, index: Index) {
        let index = Arc::new(index);
        match self.index.write() {
            Ok(mut slot) => *slot = index,
            Err(poisoned) => *poisoned.into_inner() = index,
        }
        self.synced.store(true, Ordering::Release);
    }
}

/// Starts watching `origin` for the plugin owning `shared`; the watch ends when the
/// returned sender is dropped (the plugin with it, at a reload).
pub(super) fn watch(
    origin: Origin,
    selection: Selection,
    shared: Arc<Shared>,
    metrics: Arc<Metrics>,
) -> oneshot::Sender<()> {
    let (stop, stopped) = oneshot::channel();
    let kinds = super::KINDS
        .iter()
        .copied()
        .filter(|kind| match kind {
            Kind::EndpointSlice => selection.endpoints,
            Kind::Pod => selection.pods,
            _ => true,
        })
        .collect();
    tokio::spawn(run(origin, kinds, selection, shared, metrics, stopped));
    stop
}

async fn run(
    origin: Origin,
    kinds: Vec<Kind>,
    selection: Selection,
    shared: Arc<Shared>,
    metrics: Arc<Metrics>,
    mut stopped: oneshot::Receiver<()>,
) {
    let source = loop {
        let started = tokio::select! {
            started = origin.start(&kinds) => started,
            _ = &mut stopped => return,
        };
        match started {
            Ok(source) => break source,
            Err(e) => {
                tracing::error!(plugin = "kubernetes", "{e}; trying again in 5s");
                tokio::select! {
                    () = tokio::time::sleep(RETRY) => {}
                    _ = &mut stopped => return,
                }
            }
        }
    };
    let mut snapshots = source.snapshots();
    // The snapshot of the index being served, for the programming latency of the next.
    let mut served: Option<Arc<Snapshot>> = None;
    loop {
        let snapshot = Arc::clone(&snapshots.borrow_and_update());
        let revision = snapshot.revision;
        if revision > 0 {
            // About a second for 10,000 Services: off the runtime's workers, which serve the
            // queries meanwhile (from the previous index).
            let (chosen, building) = (selection.clone(), Arc::clone(&snapshot));
            let built = tokio::task::spawn_blocking(move || Index::build(&building, &chosen));
            let built = tokio::select! {
                built = built => built,
                _ = &mut stopped => return,
            };
            match built {
                Ok(index) => {
                    let (services, slices, addresses) = index.counts();
                    tracing::debug!(
                        plugin = "kubernetes",
                        "objects of revision {revision}: {services} Services, {slices} EndpointSlices, {addresses} ready addresses"
                    );
                    shared.publish(index);
                    programming::record(&metrics, served.as_deref(), &snapshot, Timestamp::now());
                    served = Some(snapshot);
                }
                // The previous index keeps answering; the next snapshot is built again.
                Err(error) => {
                    tracing::error!(plugin = "kubernetes", %error, "the index of revision {revision} was not built");
                }
            }
        }
        tokio::select! {
            changed = snapshots.changed() => if changed.is_err() { return },
            _ = &mut stopped => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_with_tls_reads_as_a_kubeconfig() {
        let tls = [
            "/c.pem".to_owned(),
            "/k.pem".to_owned(),
            "/ca.pem".to_owned(),
        ];
        let text = endpoint_kubeconfig("https://10.0.0.1:6443", Some(&tls));
        let config = Kubeconfig::from_yaml(&text).unwrap();
        let cluster = config.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://10.0.0.1:6443"));
        assert_eq!(cluster.certificate_authority.as_deref(), Some("/ca.pem"));
        let user = config.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(user.client_key.as_deref(), Some("/k.pem"));
        let plain = Kubeconfig::from_yaml(&endpoint_kubeconfig("http://h:8080", None)).unwrap();
        assert_eq!(plain.current_context.as_deref(), Some("endpoint"));
    }
}
