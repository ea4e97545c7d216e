//! A proxier that remembers what the kernel holds and writes partial syncs (KEP-3453, spec §11).

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;

use super::generate::{Generated, SharedCache, SyncRequest, generate_cached};
use super::input::{EndpointSlice, ProxyOptions, Service};
use crate::model::{Command, Line, Table};

/// What one service looked like: the Service (absent once deleted) and its slices.
type ServiceState = (Option<Service>, Vec<EndpointSlice>);

/// Services by `(namespace, name)`.
type ByService = BTreeMap<(String, String), ServiceState>;

/// The input of one sync by `(namespace, name)`.
type CurrentView<'a> = BTreeMap<(&'a str, &'a str), (Option<&'a Service>, Vec<&'a EndpointSlice>)>;

/// kube-proxy's sync loop state, without the I/O: [`Proxier::sync`] plans a restore, the
/// caller runs `iptables-restore` and reports back with [`Proxier::restored`] or
/// [`Proxier::restore_failed`].
///
/// The first sync, and the one after a failure, is full; the others are partial: they
/// rewrite only the chains of services whose Service or EndpointSlices changed since the last
/// successful restore, and delete the chains nothing uses any more.
#[derive(Clone, Debug)]
pub struct Proxier {
    options: ProxyOptions,
    /// nat chains present in the kernel after the last successful restore.
    existing: BTreeSet<String>,
    /// Each service as of the last successful restore.
    synced: ByService,
    /// What each service of the last successful restore wrote outside its own chains, so
    /// that a partial sync rewrites unchanged services without recomputing them.
    shared: SharedCache,
    /// The plan of the last `sync`, applied by `restored`.
    pending: Option<(Generated, ByService, SharedCache)>,
    full_next: bool,
}

impl Proxier {
    /// A proxier whose first sync is full.
    pub const fn new(options: ProxyOptions) -> Self {
        Self {
            options,
            existing: BTreeSet::new(),
            synced: BTreeMap::new(),
            shared: BTreeMap::new(),
            pending: None,
            full_next: true,
        }
    }

    /// The options.
    pub const fn options(&self) -> &ProxyOptions {
        &self.options
    }

    /// Makes the next sync a full one (node labels changed, canary gone, periodic resync).
    pub const fn force_full_sync(&mut self) {
        self.full_next = true;
    }

    /// Plans the restore input that brings the kernel to `services` + `slices`.
    pub fn sync(&mut self, services: &[Service], slices: &[EndpointSlice]) -> &Generated {
        let mut current: CurrentView<'_> = BTreeMap::new();
        for service in services {
            current
                .entry((&service.namespace, &service.name))
                .or_default()
                .0 = Some(service);
        }
        for slice in slices {
            current
                .entry((&slice.namespace, &slice.service))
                .or_default()
                .1
                .push(slice);
        }
        let mut changed: ByService = BTreeMap::new();
        // Both maps are in key order: walk the synced one alongside instead of looking up.
        let mut synced = self.synced.iter().peekable();
        for ((namespace, name), (service, slices)) in &current {
            let key = (*namespace, *name);
            while synced
                .next_if(|((ns, n), _)| (ns.as_str(), n.as_str()) < key)
                .is_some()
            {}
            let same = synced
                .peek()
                .filter(|((ns, n), _)| (ns.as_str(), n.as_str()) == key)
                .is_some_and(|(_, (s, sl))| {
                    s.as_ref() == *service
                        && sl.len() == slices.len()
                        && sl.iter().zip(slices).all(|(a, b)| a == *b)
                });
            if !same {
                let state = (
                    service.cloned(),
                    slices.iter().map(|s| (*s).clone()).collect(),
                );
                changed.insert(((*namespace).into(), (*name).into()), state);
            }
        }
        for key in self.synced.keys() {
            if !current.contains_key(&(key.0.as_str(), key.1.as_str())) {
                changed.insert(key.clone(), (None, Vec::new()));
            }
        }
        let keys: BTreeSet<(&str, &str)> = changed
            .keys()
            .map(|(ns, n)| (ns.as_str(), n.as_str()))
            .collect();
        let is_changed = |namespace: &str, name: &str| keys.contains(&(namespace, name));
        let request = SyncRequest {
            existing_chains: &self.existing,
            changed: if self.full_next {
                None
            } else {
                Some(&is_changed)
            },
        };
        // Entries are taken out: a plan that is never restored leaves them to be recomputed.
        let previous = core::mem::take(&mut self.shared);
        let (generated, shared) =
            generate_cached(&self.options, services, slices, request, Some(previous));
        let plan = (generated, changed, shared.unwrap_or_default());
        &self.pending.insert(plan).0
    }

    /// The last planned restore succeeded: remember the chains the kernel now has.
    pub fn restored(&mut self) {
        let Some((generated, changed, shared)) = self.pending.take() else {
            return;
        };
        if let Some(nat) = generated.restore.table(Table::Nat) {
            self.existing.extend(nat.chains().map(|c| c.name.clone()));
            for line in &nat.lines {
                if let Line::Command(Command::DeleteChain(Some(chain))) = line {
                    self.existing.remove(chain);
                }
            }
        }
        for (key, state) in changed {
            if state.0.is_none() && state.1.is_empty() {
                self.synced.remove(&key);
            } else {
                self.synced.insert(key, state);
            }
        }
        self.shared = shared;
        self.full_next = false;
    }

    /// The last planned restore failed: the next sync is full.
    pub fn restore_failed(&mut self) {
        self.pending = None;
        self.shared.clear();
        self.full_next = true;
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::ToString;
    use alloc::vec;

    use super::*;
    use crate::kube::{Endpoint, EndpointPort, Protocol, ServicePort};

    /// Four services; service `i` has its endpoint in generation `generations[i]`.
    fn cluster(generations: [u8; 4]) -> (Vec<Service>, Vec<EndpointSlice>) {
        let services = (0..4)
            .map(|i| Service {
                namespace: "ns".into(),
                name: format!("svc{i}"),
                cluster_ip: format!("172.30.0.{i}"),
                ports: vec![ServicePort {
                    name: "http".into(),
                    port: 80,
                    protocol: Protocol::Tcp,
                    node_port: 0,
                }],
                ..Service::default()
            })
            .collect();
        let slices = generations
            .iter()
            .enumerate()
            .map(|(i, generation)| EndpointSlice {
                namespace: "ns".into(),
                service: format!("svc{i}"),
                ports: vec![EndpointPort {
                    name: "http".into(),
                    port: 8080,
                    protocol: Protocol::Tcp,
                }],
                endpoints: vec![Endpoint {
                    addresses: vec![format!("10.{generation}.0.{i}")],
                    ..Endpoint::default()
                }],
            })
            .collect();
        (services, slices)
    }

    #[test]
    fn a_plan_never_restored_leaves_no_stale_cache() {
        let options = ProxyOptions::new("node-a", "192.168.0.2".parse().unwrap());
        let (states, mut a, mut b) = (
            [
                cluster([0, 0, 0, 0]),
                cluster([1, 1, 0, 0]),
                cluster([0, 0, 1, 0]),
                cluster([0, 2, 1, 0]),
            ],
            Proxier::new(options.clone()),
            Proxier::new(options),
        );
        let [s0, s1, s2, s3] = &states;
        a.sync(&s0.0, &s0.1);
        a.restored();
        b.sync(&s0.0, &s0.1);
        b.restored();
        // Planned, never restored: its rules for svc0 and svc1 must not be replayed later.
        a.sync(&s1.0, &s1.1);
        for (services, slices) in [&s2, &s3].map(|s| (&s.0, &s.1)) {
            let left = a.sync(services, slices).restore.to_string();
            let right = b.sync(services, slices).restore.to_string();
            assert_eq!(left, right);
            a.restored();
            b.restored();
        }
    }
}
