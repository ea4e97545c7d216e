//! Keeps `-corefile` equal to the base Corefile rendered with the current upstream ClusterIP:
//! re-rendered when the Service changes and every sync interval (a changed base), written
//! atomically only when the text changes, then the server is asked to reload. A base or a
//! Service that does not render is logged and the last good Corefile stays.

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use cluster_state::{Kind, Snapshot, Source, SourceHealth};
use tokio::sync::{Notify, watch};

use super::args::NodeLocalArgs;
use super::corefile::{Values, render};
use super::setup_metrics::SetupMetrics;
use super::upstream::{cluster_ip, service_host_variable};

/// What `__PILLAR__UPSTREAM__SERVERS__` becomes: the node's resolv.conf, which `forward`
/// reads (node-cache's default without a kube-dns ConfigMap).
pub const UPSTREAM_SERVERS: &str = "/etc/resolv.conf";

/// Where the ClusterIP comes from.
enum Upstream {
    /// `<NAME>_SERVICE_HOST` (fixed for the life of the pod).
    Variable(Option<IpAddr>),
    /// The cluster-state source, watched.
    Watched {
        source: Box<Source>,
        snapshots: watch::Receiver<Arc<Snapshot>>,
        namespace: String,
        name: String,
    },
}

/// Renders and writes the node-local Corefile.
pub struct CorefileWriter {
    upstream: Upstream,
    base: PathBuf,
    target: PathBuf,
    local_ips: Vec<IpAddr>,
    written: Option<String>,
}

impl CorefileWriter {
    /// Chooses the ClusterIP's origin: the environment variable when set and no source flag
    /// is given (as node-cache), else the cluster-state source, waited for until it has read
    /// everything once.
    pub async fn start(args: &NodeLocalArgs) -> anyhow::Result<Self> {
        let (namespace, name) = args.upstream_service_ref();
        let variable = service_host_variable(name);
        let from_flags = args.source.manifests.is_some() || args.source.kubeconfig.is_some();
        let upstream = match std::env::var(&variable) {
            Ok(value) if !from_flags => {
                let ip = value.parse().ok();
                if ip.is_none() {
                    tracing::warn!("{variable}={value:?} is not an IP address");
                }
                Upstream::Variable(ip)
            }
            _ => {
                let source = args.source.start(&[Kind::Service]).await?;
                let mut snapshots = source.snapshots();
                snapshots
                    .wait_for(|s| s.revision > 0)
                    .await
                    .context("the cluster-state source stopped")?;
                Upstream::Watched {
                    source: Box::new(source),
                    snapshots,
                    namespace: namespace.to_owned(),
                    name: name.to_owned(),
                }
            }
        };
        Ok(Self {
            upstream,
            base: args.base_corefile.clone(),
            target: args.corefile.clone(),
            local_ips: args.local_ips.clone(),
            written: None,
        })
    }

    /// The health of the watched source (none for the variable), for `/health`.
    pub fn source_health(&self) -> Option<SourceHealth> {
        match &self.upstream {
            Upstream::Variable(_) => None,
            Upstream::Watched { source, .. } => Some(source.health()),
        }
    }

    /// Resolves when the watched source publishes a new snapshot (never for the variable).
    pub async fn upstream_changed(&mut self) {
        if let Upstream::Watched { snapshots, .. } = &mut self.upstream
            && snapshots.changed().await.is_ok()
        {
            return;
        }
        std::future::pending().await
    }

    /// Renders the base and writes it if it changed; returns whether it did.
    pub fn refresh(&mut self) -> anyhow::Result<bool> {
        let base = std::fs::read_to_string(&self.base)
            .with_context(|| format!("reading the base Corefile {}", self.base.display()))?;
        let values = Values {
            local_ips: self.local_ips.clone(),
            cluster_dns: self.cluster_dns(),
            upstream_servers: UPSTREAM_SERVERS.to_owned(),
        };
        let text = render(&base, &values).with_context(|| {
            format!(
                "rendering {} (upstream {})",
                self.base.display(),
                self.upstream_name()
            )
        })?;
        if self.written.as_ref() == Some(&text) {
            return Ok(false);
        }
        let temporary = self.target.with_extension("tmp");
        std::fs::write(&temporary, &text)
            .and_then(|()| std::fs::rename(&temporary, &self.target))
            .with_context(|| format!("writing {}", self.target.display()))?;
        self.written = Some(text);
        Ok(true)
    }

    /// [`CorefileWriter::refresh`], logging and counting a failure (the old Corefile stays)
    /// and asking the server to reload after a change.
    pub fn refresh_logged(&mut self, metrics: &SetupMetrics, reload: &Notify) {
        match self.refresh() {
            Ok(true) => {
                tracing::info!("Updated Corefile {}", self.target.display());
                reload.notify_one();
            }
            Ok(false) => {}
            Err(e) => {
                tracing::error!("{e:#}; keeping the previous Corefile");
                metrics.error("configmap");
            }
        }
    }

    fn cluster_dns(&self) -> Option<IpAddr> {
        match &self.upstream {
            Upstream::Variable(ip) => *ip,
            Upstream::Watched {
                snapshots,
                namespace,
                name,
                ..
            } => cluster_ip(&snapshots.borrow(), namespace, name),
        }
    }

    fn upstream_name(&self) -> String {
        match &self.upstream {
            Upstream::Variable(_) => "from the environment".to_owned(),
            Upstream::Watched {
                namespace, name, ..
            } => format!("Service {namespace}/{name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_changes_only_and_keeps_the_last_good_corefile() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("Corefile.base");
        let target = dir.path().join("Corefile");
        let mut writer = CorefileWriter {
            upstream: Upstream::Variable(Some("10.96.0.11".parse().unwrap())),
            base: base.clone(),
            target: target.clone(),
            local_ips: vec!["169.254.20.10".parse().unwrap()],
            written: None,
        };
        std::fs::write(
            &base,
            ".:53 {\n    bind __PILLAR__LOCAL__DNS__\n    forward . __PILLAR__CLUSTER__DNS__\n}\n",
        )
        .unwrap();
        assert!(writer.refresh().unwrap());
        let good = std::fs::read_to_string(&target).unwrap();
        assert_eq!(
            good,
            ".:53 {\n    bind 169.254.20.10\n    forward . 10.96.0.11\n}\n"
        );
        assert!(!writer.refresh().unwrap());

        // A base that does not parse, or names a placeholder without a value: kept.
        std::fs::write(&base, ".:53 {\n    bind __PILLAR__LOCAL__DNS__\n").unwrap();
        assert!(writer.refresh().is_err());
        std::fs::write(&base, ".:53 {\n    forward . __PILLAR__STUB__\n}\n").unwrap();
        let err = writer.refresh().unwrap_err();
        assert!(format!("{err:#}").contains("__PILLAR__STUB__"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), good);

        // The Service's address gone: kept too.
        writer.upstream = Upstream::Variable(None);
        std::fs::write(&base, ".:53 {\n    forward . __PILLAR__CLUSTER__DNS__\n}\n").unwrap();
        assert!(writer.refresh().is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), good);
    }
}
