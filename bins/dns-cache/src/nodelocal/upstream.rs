//! The upstream Service's ClusterIP, which fills `__PILLAR__CLUSTER__DNS__`: from a
//! cluster-state snapshot, or from the `<NAME>_SERVICE_HOST` variable Kubernetes puts in
//! every pod (node-cache's only source).

use std::net::IpAddr;

use cluster_state::{ObjectRef, Snapshot};

/// The ClusterIP of Service `namespace/name` in `snapshot`, if it has one (not headless).
pub fn cluster_ip(snapshot: &Snapshot, namespace: &str, name: &str) -> Option<IpAddr> {
    snapshot
        .services
        .get(&ObjectRef::new(namespace, name))?
        .spec
        .as_ref()?
        .cluster_ip
        .as_deref()?
        .parse()
        .ok()
}

/// The environment variable holding Service `name`'s ClusterIP: `kube-dns-upstream` →
/// `KUBE_DNS_UPSTREAM_SERVICE_HOST`.
pub fn service_host_variable(name: &str) -> String {
    format!("{}_SERVICE_HOST", name.replace('-', "_").to_uppercase())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cluster_state::k8s::api::core::v1::{Service, ServiceSpec};
    use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn service(ip: &str) -> Arc<Service> {
        Arc::new(Service {
            metadata: ObjectMeta {
                name: Some("kube-dns-upstream".into()),
                namespace: Some("kube-system".into()),
                ..ObjectMeta::default()
            },
            spec: Some(ServiceSpec {
                cluster_ip: Some(ip.into()),
                ..ServiceSpec::default()
            }),
            ..Service::default()
        })
    }

    #[test]
    fn reads_the_cluster_ip() {
        let mut snapshot = Snapshot::default();
        let key = ObjectRef::new("kube-system", "kube-dns-upstream");
        snapshot.services.insert(key.clone(), service("10.96.0.11"));
        assert_eq!(
            cluster_ip(&snapshot, "kube-system", "kube-dns-upstream"),
            Some("10.96.0.11".parse().unwrap())
        );
        assert_eq!(cluster_ip(&snapshot, "default", "kube-dns-upstream"), None);
        snapshot.services.insert(key, service("None"));
        assert_eq!(
            cluster_ip(&snapshot, "kube-system", "kube-dns-upstream"),
            None
        );
    }

    #[test]
    fn variable_name_as_kubernetes_spells_it() {
        assert_eq!(
            service_host_variable("kube-dns-upstream"),
            "KUBE_DNS_UPSTREAM_SERVICE_HOST"
        );
    }
}
