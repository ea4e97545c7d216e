//! Ingress `status.loadBalancer`: the addresses to publish, and a writer that stores them in
//! one JSON file per Ingress (the manifests source's status channel until cluster-state's
//! status writer is wired in). Only the elected leader writes.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;

use k8s_openapi::api::networking::v1::{
    IngressLoadBalancerIngress, IngressLoadBalancerStatus, IngressStatus,
};

/// The status every served Ingress gets: each address as `ip` when it is one, else as
/// `hostname`.
pub fn load_balancer(addresses: &[String]) -> IngressStatus {
    let ingress = addresses
        .iter()
        .map(|address| {
            if address.parse::<IpAddr>().is_ok() {
                IngressLoadBalancerIngress {
                    ip: Some(address.clone()),
                    ..IngressLoadBalancerIngress::default()
                }
            } else {
                IngressLoadBalancerIngress {
                    hostname: Some(address.clone()),
                    ..IngressLoadBalancerIngress::default()
                }
            }
        })
        .collect();
    IngressStatus {
        load_balancer: Some(IngressLoadBalancerStatus {
            ingress: Some(ingress),
        }),
    }
}

/// Writes statuses as `DIR/NAMESPACE_NAME.json` (`{"metadata": {...}, "status": {...}}`),
/// removing files of Ingresses no longer served.
#[derive(Debug)]
pub struct StatusFiles {
    dir: PathBuf,
}

impl StatusFiles {
    /// Files in `dir` (created when needed).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// Publishes `status` for each Ingress of `ingresses` (`namespace/name`); returns how
    /// many files were written.
    ///
    /// # Errors
    ///
    /// The I/O error.
    pub fn publish(&self, ingresses: &[String], status: &IngressStatus) -> std::io::Result<usize> {
        std::fs::create_dir_all(&self.dir)?;
        let mut wanted = BTreeMap::new();
        for ingress in ingresses {
            let (namespace, name) = ingress.split_once('/').unwrap_or(("", ingress));
            let document = serde_json::json!({
                "apiVersion": "networking.k8s.io/v1",
                "kind": "Ingress",
                "metadata": {"namespace": namespace, "name": name},
                "status": status,
            });
            wanted.insert(
                self.dir.join(format!("{namespace}_{name}.json")),
                document.to_string(),
            );
        }
        for (path, text) in &wanted {
            let tmp = path.with_extension("tmp");
            std::fs::write(&tmp, text)?;
            std::fs::rename(&tmp, path)?;
        }
        for entry in std::fs::read_dir(&self.dir)? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "json") && !wanted.contains_key(&path) {
                std::fs::remove_file(path)?;
            }
        }
        Ok(wanted.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_files() {
        let status = load_balancer(&["10.0.0.1".into(), "lb.example.com".into()]);
        let lb = status
            .load_balancer
            .as_ref()
            .unwrap()
            .ingress
            .as_ref()
            .unwrap();
        assert_eq!(lb[0].ip.as_deref(), Some("10.0.0.1"));
        assert_eq!(lb[1].hostname.as_deref(), Some("lb.example.com"));
        let dir = tempfile::tempdir().unwrap();
        let files = StatusFiles::new(dir.path().join("status"));
        assert_eq!(
            files
                .publish(&["a/x".into(), "a/y".into()], &status)
                .unwrap(),
            2
        );
        assert_eq!(files.publish(&["a/x".into()], &status).unwrap(), 1);
        let text = std::fs::read_to_string(dir.path().join("status/a_x.json")).unwrap();
        assert!(text.contains("\"ip\":\"10.0.0.1\""), "{text}");
        assert!(!dir.path().join("status/a_y.json").exists());
    }
}
