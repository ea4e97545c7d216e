//! cluster-state snapshots to per-Service updates: what changed, and nothing else, so that a
//! sync costs what changed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::SystemTime;

use cluster_state::k8s::api::core::v1::Service;
use cluster_state::k8s::api::discovery::v1::EndpointSlice;
use cluster_state::{Kind, ObjectRef, Snapshot};
use iptables_model::kube::{ServiceType, TrafficPolicy};

use crate::health::ServiceHealth;
use crate::translate::{self, SERVICE_NAME_LABEL};

/// One change for the proxier.
#[derive(Clone, Debug)]
pub enum Update {
    /// The Service with this key is now this one, or gone.
    Service(ObjectRef, Option<Arc<Service>>),
    /// The EndpointSlices of the Service with this key are now these.
    Slices(ObjectRef, Vec<Arc<EndpointSlice>>),
}

/// Which Service each EndpointSlice belongs to, kept across snapshots (a deleted slice is no
/// longer in the snapshot that reports its deletion).
#[derive(Clone, Debug, Default)]
pub struct Feed {
    owner: BTreeMap<ObjectRef, ObjectRef>,
    slices: BTreeMap<ObjectRef, BTreeSet<ObjectRef>>,
}

fn service_of(key: &ObjectRef, slice: &EndpointSlice) -> Option<ObjectRef> {
    let labels = slice.metadata.labels.as_ref()?;
    Some(ObjectRef::new(
        key.namespace.clone(),
        labels.get(SERVICE_NAME_LABEL)?.clone(),
    ))
}

impl Feed {
    /// The updates `snapshot`'s changes call for.
    pub fn updates(&mut self, snapshot: &Snapshot) -> Vec<Update> {
        let mut updates: Vec<Update> = snapshot
            .changes
            .of(Kind::Service)
            .map(|key| Update::Service(key.clone(), snapshot.services.get(key).cloned()))
            .collect();
        let mut affected = BTreeSet::new();
        for key in snapshot.changes.of(Kind::EndpointSlice) {
            if let Some(old) = self.owner.remove(key) {
                if let Some(keys) = self.slices.get_mut(&old) {
                    keys.remove(key);
                }
                affected.insert(old);
            }
            let owner = snapshot
                .endpoint_slices
                .get(key)
                .and_then(|slice| service_of(key, slice));
            if let Some(owner) = owner {
                self.owner.insert(key.clone(), owner.clone());
                self.slices
                    .entry(owner.clone())
                    .or_default()
                    .insert(key.clone());
                affected.insert(owner);
            }
        }
        for service in affected {
            let slices = self.slices_of(&service, snapshot);
            if slices.is_empty() {
                self.slices.remove(&service);
            }
            updates.push(Update::Slices(service, slices));
        }
        updates
    }

    fn slices_of(&self, service: &ObjectRef, snapshot: &Snapshot) -> Vec<Arc<EndpointSlice>> {
        self.slices
            .get(service)
            .into_iter()
            .flatten()
            .filter_map(|k| snapshot.endpoint_slices.get(k).cloned())
            .collect()
    }

    /// The health-check node ports: LoadBalancer Services with `externalTrafficPolicy: Local`
    /// and a `healthCheckNodePort`, with their ready endpoints on node `hostname`.
    pub fn health_checks(
        &self,
        snapshot: &Snapshot,
        hostname: &str,
    ) -> BTreeMap<u16, ServiceHealth> {
        let mut wanted = BTreeMap::new();
        for (key, object) in &snapshot.services {
            let Ok(service) = translate::service(object, false) else {
                continue;
            };
            if service.service_type != ServiceType::LoadBalancer
                || service.external_traffic_policy != TrafficPolicy::Local
                || service.health_check_node_port == 0
            {
                continue;
            }
            let slices: Vec<_> = self
                .slices_of(key, snapshot)
                .iter()
                .filter_map(|s| translate::endpoint_slice(s).ok())
                .collect();
            let health = ServiceHealth {
                namespace: service.namespace,
                name: service.name,
                local_endpoints: translate::local_endpoints(&slices, hostname),
            };
            wanted.insert(service.health_check_node_port, health);
        }
        wanted
    }
}

/// When the EndpointSlice changes of `snapshot` were triggered, for those triggered after
/// `since` (kube-proxy ignores changes older than its own start).
pub fn trigger_times(snapshot: &Snapshot, since: SystemTime) -> Vec<SystemTime> {
    snapshot
        .changes
        .of(Kind::EndpointSlice)
        .filter_map(|key| translate::trigger_time(snapshot.endpoint_slices.get(key)?))
        .filter(|t| *t > since)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cluster_state::Object;

    fn slice(name: &str, service: &str) -> Object {
        Object::EndpointSlice(Arc::new(
            serde_saphyr::from_str(&format!(
                "metadata: {{namespace: ns, name: {name}, labels: {{kubernetes.io/service-name: {service}}}}}\naddressType: IPv4\nendpoints: [{{addresses: [10.0.0.1], nodeName: node-a}}]\n"
            ))
            .unwrap(),
        ))
    }

    fn service(name: &str) -> Object {
        Object::Service(Arc::new(
            serde_saphyr::from_str(&format!(
                "metadata: {{namespace: ns, name: {name}}}\nspec: {{type: LoadBalancer, externalTrafficPolicy: Local, healthCheckNodePort: 30999, clusterIP: 10.96.0.1, ports: [{{port: 80}}]}}\n"
            ))
            .unwrap(),
        ))
    }

    fn next(previous: &Snapshot, edit: impl FnOnce(&mut Snapshot)) -> Snapshot {
        let mut snapshot = previous.clone();
        edit(&mut snapshot);
        snapshot.changes = snapshot.diff(previous);
        snapshot
    }

    #[test]
    fn slices_are_grouped_by_service_and_deletions_reach_their_old_service() {
        let mut feed = Feed::default();
        let first = next(&Snapshot::default(), |s| {
            s.insert(service("web"));
            s.insert(slice("web-1", "web"));
            s.insert(slice("web-2", "web"));
        });
        let updates = feed.updates(&first);
        assert!(matches!(&updates[0], Update::Service(k, Some(_)) if k.name == "web"));
        assert!(matches!(&updates[1], Update::Slices(k, s) if k.name == "web" && s.len() == 2));
        let health = feed.health_checks(&first, "node-a");
        assert_eq!(health[&30999].local_endpoints, 1);

        // One slice moves to another service, the other is deleted.
        let second = next(&first, |s| {
            s.insert(slice("web-1", "api"));
            s.remove(Kind::EndpointSlice, &ObjectRef::new("ns", "web-2"));
        });
        let mut updates: Vec<(String, usize)> = feed
            .updates(&second)
            .into_iter()
            .map(|u| match u {
                Update::Slices(k, s) => (k.name, s.len()),
                Update::Service(k, _) => (k.name, 99),
            })
            .collect();
        updates.sort();
        assert_eq!(updates, [("api".to_owned(), 1), ("web".to_owned(), 0)]);
        assert_eq!(
            feed.health_checks(&second, "node-a")[&30999].local_endpoints,
            0
        );
    }
}
