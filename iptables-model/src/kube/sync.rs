//! A proxier that remembers what the kernel holds and writes partial syncs (KEP-3453,
//! `docs/iptables.md` §11).

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::net::IpAddr;

use super::fixed;
use super::generate::{Generated, Prepared, Rejected, WriteMode, delete_stale, prepare};
use super::input::{EndpointSlice, ProxyOptions, Service};
use super::naming::is_service_chain;
use super::port::{Output, Probabilities, Shared};

/// How a partial sync treats the top-level chains that every service has lines in
/// (`KUBE-SERVICES`, `KUBE-NODEPORTS`, `KUBE-EXTERNAL-SERVICES`, `KUBE-PROXY-FIREWALL`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PartialSync {
    /// As kube-proxy (KEP-3453): every top-level chain is rewritten in full, with the lines of
    /// every service, and only the changed services' own chains are written. The input grows
    /// with the cluster (about one line per service).
    #[default]
    KubeProxy,
    /// Only what changed: the changed services' own chains, and their lines in the top-level
    /// chains deleted by content (`-D CHAIN rule`) and inserted at the top (`-I CHAIN n rule`,
    /// so `KUBE-SERVICES` keeps its NodePort rule last); top-level chains are not flushed. The
    /// input's size depends on the change only. A line that is not in the kernel makes the
    /// restore fail, which makes the next sync full.
    Minimal,
}

/// A service's `(namespace, name)`.
type ServiceKey = (String, String);

/// A service a partial sync writes: its key, its inputs (absent once gone), its rules' inputs.
type Written<'a> = (
    &'a ServiceKey,
    Option<&'a Arc<Desired>>,
    Option<Prepared<'a>>,
);

/// The inputs of one service: the Service (absent before it is created or once deleted) and
/// its EndpointSlices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Desired {
    service: Option<Service>,
    slices: Vec<EndpointSlice>,
}

impl Desired {
    fn is_empty(&self) -> bool {
        self.service.is_none() && self.slices.is_empty()
    }

    /// Its rules' inputs, or `None` when it has none; a rejected Service is pushed on
    /// `rejected` and has none.
    fn prepare<'a>(
        &'a self,
        options: &ProxyOptions,
        rejected: &mut Vec<Rejected>,
    ) -> Option<Prepared<'a>> {
        let slices: Vec<&EndpointSlice> = self.slices.iter().collect();
        prepare(options, self.service.as_ref()?, &slices).unwrap_or_else(|r| {
            rejected.push(r);
            None
        })
    }
}

/// What one service has in the kernel after a successful restore.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct ServiceRules {
    /// Its endpoints (for the large-cluster threshold).
    endpoints: usize,
    /// Its lines in the top-level chains.
    shared: Shared,
    /// The nat chains it uses.
    chains: Vec<String>,
}

/// A service as the kernel has it: the inputs it was written from, and what was written.
#[derive(Clone, Debug)]
struct Synced {
    input: Arc<Desired>,
    rules: ServiceRules,
}

/// A planned restore, applied to the proxier's memory by [`Proxier::restored`].
#[derive(Clone, Debug)]
struct Pending {
    generated: Generated,
    /// The services written and what the kernel will hold for them (`None`: nothing). A
    /// full sync lists every service.
    written: Vec<(ServiceKey, Option<Synced>)>,
    large: bool,
}

/// kube-proxy's sync loop state, without the I/O.
///
/// Feed it changes ([`Proxier::update_service`], [`Proxier::remove_service`],
/// [`Proxier::update_endpoint_slices`], or a whole state with [`Proxier::sync`]); plan a
/// restore with [`Proxier::sync_changes`]; run `iptables-restore --noflush` with
/// [`Generated::text`] and report back with [`Proxier::restored`] or
/// [`Proxier::restore_failed`].
///
/// The first sync, the one after a failure and the ones after [`Proxier::force_full_sync`]
/// are full; the others are partial: they write only the services whose Service or
/// EndpointSlices differ from what the last successful restore wrote (see [`PartialSync`]),
/// and delete the chains those no longer use. The work of a partial sync is proportional to
/// the changed services.
#[derive(Clone, Debug)]
pub struct Proxier {
    options: ProxyOptions,
    partial: PartialSync,
    desired: BTreeMap<ServiceKey, Arc<Desired>>,
    /// Keys whose desired inputs differ from what the kernel was written from.
    dirty: BTreeSet<ServiceKey>,
    synced: BTreeMap<ServiceKey, Synced>,
    /// Whether the kernel's rules are in large-cluster mode.
    synced_large: bool,
    /// Service chains found in the kernel that no service accounts for, deleted by the next
    /// full sync unless a service uses them.
    foreign: BTreeSet<String>,
    probabilities: Probabilities,
    pending: Option<Pending>,
    full_next: bool,
}

impl Proxier {
    /// A proxier whose first sync is full and whose partial syncs are kube-proxy's.
    pub fn new(options: ProxyOptions) -> Self {
        Self {
            options,
            partial: PartialSync::default(),
            desired: BTreeMap::new(),
            dirty: BTreeSet::new(),
            synced: BTreeMap::new(),
            synced_large: false,
            foreign: BTreeSet::new(),
            probabilities: Probabilities::default(),
            pending: None,
            full_next: true,
        }
    }

    /// Chooses how partial syncs are written.
    #[must_use]
    pub fn with_partial_sync(mut self, partial: PartialSync) -> Self {
        self.partial = partial;
        self
    }

    /// The options.
    pub const fn options(&self) -> &ProxyOptions {
        &self.options
    }

    /// Sets the node's interface addresses, which `--nodeport-addresses` is matched against
    /// (kube-proxy reads them at every sync). Returns whether the NodePort rules depend on the
    /// change, in which case the next sync is full (partial syncs do not rewrite them).
    pub fn set_interface_addresses(&mut self, addresses: Vec<IpAddr>) -> bool {
        if self.options.interface_addresses == addresses {
            return false;
        }
        self.options.interface_addresses = addresses;
        let matters = self.options.node_port_addresses.is_some();
        self.full_next |= matters;
        matters
    }

    /// Sets this node's zone (its Node's `topology.kubernetes.io/zone` label, empty when the
    /// label or the Node is missing). Returns whether it changed, in which case the next sync
    /// is full, as kube-proxy's after a change of the node's topology labels: any service with
    /// hints may prefer other endpoints.
    pub fn set_zone(&mut self, zone: &str) -> bool {
        if self.options.zone == zone {
            return false;
        }
        self.options.zone = zone.into();
        self.full_next = true;
        true
    }

    /// Makes the next sync a full one (node labels changed, canary gone, periodic resync).
    pub const fn force_full_sync(&mut self) {
        self.full_next = true;
    }

    /// Whether the next sync is full.
    pub const fn full_sync_pending(&self) -> bool {
        self.full_next
    }

    /// The services whose inputs changed since the last successful restore.
    pub fn pending_changes(&self) -> usize {
        self.dirty.len()
    }

    /// Whether a sync would write anything: a full sync is due or a service changed.
    pub fn needs_sync(&self) -> bool {
        self.full_next || !self.dirty.is_empty()
    }

    /// Records service chains found in the kernel (from `iptables-save -t nat`, at start-up):
    /// the next full sync deletes those no service uses. Other chains are ignored.
    pub fn note_existing_chains(&mut self, chains: impl IntoIterator<Item = String>) {
        self.foreign
            .extend(chains.into_iter().filter(|c| is_service_chain(c)));
    }

    /// Sets a Service (added or modified).
    pub fn update_service(&mut self, service: Service) {
        let key = (service.namespace.clone(), service.name.clone());
        self.change(key, |d| d.service = Some(service));
    }

    /// Removes the Service `namespace/name`.
    pub fn remove_service(&mut self, namespace: &str, name: &str) {
        self.change((namespace.into(), name.into()), |d| d.service = None);
    }

    /// Sets every EndpointSlice of the Service `namespace/service` (empty: none left).
    pub fn update_endpoint_slices(
        &mut self,
        namespace: &str,
        service: &str,
        slices: Vec<EndpointSlice>,
    ) {
        self.change((namespace.into(), service.into()), |d| d.slices = slices);
    }

    fn change(&mut self, key: ServiceKey, edit: impl FnOnce(&mut Desired)) {
        let mut next = self
            .desired
            .get(&key)
            .map(|d| Desired::clone(d))
            .unwrap_or_default();
        edit(&mut next);
        if self.desired.get(&key).is_some_and(|d| **d == next) {
            return;
        }
        if next.is_empty() {
            self.desired.remove(&key);
        } else {
            self.desired.insert(key.clone(), Arc::new(next));
        }
        self.mark(key);
    }

    /// Marks `key` dirty unless its desired inputs are what the kernel was written from.
    fn mark(&mut self, key: ServiceKey) {
        let same = match (self.desired.get(&key), self.synced.get(&key)) {
            (Some(d), Some(s)) => Arc::ptr_eq(d, &s.input) || **d == *s.input,
            (None, None) => true,
            _ => false,
        };
        if same {
            self.dirty.remove(&key);
        } else {
            self.dirty.insert(key);
        }
    }

    /// Sets the whole state to `services` + `slices` and plans a restore
    /// ([`Proxier::sync_changes`]). Work proportional to the cluster; feed changes one by one
    /// to avoid it.
    pub fn sync(&mut self, services: &[Service], slices: &[EndpointSlice]) -> &Generated {
        self.replace_all(services, slices);
        self.sync_changes()
    }

    /// Sets the whole state to `services` + `slices`, recording what changed (no plan yet).
    /// Work proportional to the cluster.
    pub fn replace_all(&mut self, services: &[Service], slices: &[EndpointSlice]) {
        let mut current: BTreeMap<ServiceKey, Desired> = BTreeMap::new();
        for service in services {
            current
                .entry((service.namespace.clone(), service.name.clone()))
                .or_default()
                .service = Some(service.clone());
        }
        for slice in slices {
            current
                .entry((slice.namespace.clone(), slice.service.clone()))
                .or_default()
                .slices
                .push(slice.clone());
        }
        let gone: Vec<ServiceKey> = self
            .desired
            .keys()
            .filter(|k| !current.contains_key(*k))
            .cloned()
            .collect();
        for key in gone {
            self.change(key, |d| *d = Desired::default());
        }
        for (key, next) in current {
            self.change(key, |d| *d = next);
        }
    }

    /// Plans the restore input that brings the kernel to the current inputs.
    pub fn sync_changes(&mut self) -> &Generated {
        let plan = match (self.full_next, self.plan_partial()) {
            (false, Some(plan)) => plan,
            _ => self.plan_full(),
        };
        &self.pending.insert(plan).generated
    }

    fn plan_full(&mut self) -> Pending {
        let options = &self.options;
        let mut rejected = Vec::new();
        let prepared: Vec<(&ServiceKey, &Arc<Desired>, Option<Prepared<'_>>)> = self
            .desired
            .iter()
            .map(|(k, d)| (k, d, d.prepare(options, &mut rejected)))
            .collect();
        let (ports, total) = prepared
            .iter()
            .filter_map(|(_, _, p)| p.as_ref())
            .fold((0, 0), |(ports, endpoints), p| {
                (ports + p.ports(), endpoints + p.endpoints())
            });
        let large = total > options.large_cluster_endpoints;
        let mut out = Output::with_room_for(ports, total);
        fixed::head(options, &mut out);
        let mut written = Vec::with_capacity(prepared.len());
        for (key, input, p) in &prepared {
            let mut rules = ServiceRules::default();
            if let Some(p) = p {
                rules.endpoints = p.endpoints();
                p.write(
                    options,
                    WriteMode::all(large, true),
                    &mut self.probabilities,
                    &mut out,
                    &mut rules.shared,
                    Some(&mut rules.chains),
                );
            }
            let synced = Synced {
                input: Arc::clone(input),
                rules,
            };
            written.push(((*key).clone(), Some(synced)));
        }
        // Stale: chains a service used and no longer does, and foreign chains nobody uses.
        let mut stale: BTreeSet<&String> = BTreeSet::new();
        let mut new = written.iter().peekable();
        for (key, old) in &self.synced {
            while new.next_if(|(k, _)| k < key).is_some() {}
            let now = new
                .peek()
                .filter(|(k, _)| k == key)
                .and_then(|(_, s)| s.as_ref());
            stale.extend(
                old.rules
                    .chains
                    .iter()
                    .filter(|c| now.is_none_or(|n| !n.rules.chains.contains(c))),
            );
        }
        if !self.foreign.is_empty() {
            let active: BTreeSet<&String> = written
                .iter()
                .filter_map(|(_, s)| s.as_ref())
                .flat_map(|s| &s.rules.chains)
                .collect();
            stale.extend(self.foreign.iter().filter(|c| !active.contains(c)));
        }
        delete_stale(&mut out, stale);
        fixed::tail(options, &mut out);
        Pending {
            generated: Generated {
                text: out.finish(),
                full: true,
                rejected,
            },
            written,
            large,
        }
    }

    /// A partial sync, or `None` when a full one is needed (large-cluster mode changes).
    fn plan_partial(&mut self) -> Option<Pending> {
        if self.full_next {
            return None;
        }
        let options = &self.options;
        let mut total: usize = self.synced.values().map(|s| s.rules.endpoints).sum();
        let mut rejected = Vec::new();
        let prepared: Vec<Written<'_>> = self
            .dirty
            .iter()
            .map(|k| {
                let desired = self.desired.get(k);
                (
                    k,
                    desired,
                    desired.and_then(|d| d.prepare(options, &mut rejected)),
                )
            })
            .collect();
        for (key, _, p) in &prepared {
            total -= self.synced.get(*key).map_or(0, |s| s.rules.endpoints);
            total += p.as_ref().map_or(0, Prepared::endpoints);
        }
        let large = total > options.large_cluster_endpoints;
        if large != self.synced_large {
            return None;
        }
        let copy_shared = self.partial == PartialSync::KubeProxy;
        let mut out = Output::default();
        // Each changed service's rules, written alone so they can be placed in order.
        let mut fresh: BTreeMap<&ServiceKey, (ServiceRules, Output)> = BTreeMap::new();
        for (key, _, p) in &prepared {
            let mut rules = ServiceRules::default();
            let mut own = Output::default();
            if let Some(p) = p {
                rules.endpoints = p.endpoints();
                p.write(
                    options,
                    WriteMode::all(large, copy_shared),
                    &mut self.probabilities,
                    &mut own,
                    &mut rules.shared,
                    Some(&mut rules.chains),
                );
            }
            fresh.insert(*key, (rules, own));
        }
        let stale: BTreeSet<&String> = fresh
            .iter()
            .flat_map(|(key, (new, _))| {
                self.synced
                    .get(*key)
                    .into_iter()
                    .flat_map(|old| &old.rules.chains)
                    .filter(|c| !new.chains.contains(c))
            })
            .collect();
        match self.partial {
            PartialSync::KubeProxy => {
                // Every service's shared lines in order; the changed ones with their chains.
                fixed::head(options, &mut out);
                let mut changed = fresh.iter().peekable();
                let write_changed = |out: &mut Output, own: &Output| {
                    out.nat_chains.push_str(&own.nat_chains);
                    out.filter_rules.push_str(&own.filter_rules);
                    out.nat_rules.push_str(&own.nat_rules);
                };
                for (key, synced) in &self.synced {
                    while let Some((_, (_, own))) = changed.next_if(|(k, _)| **k < key) {
                        write_changed(&mut out, own);
                    }
                    if let Some((_, (_, own))) = changed.next_if(|(k, _)| **k == key) {
                        write_changed(&mut out, own);
                        continue;
                    }
                    out.filter_rules.push_str(&synced.rules.shared.filter);
                    out.nat_rules.push_str(&synced.rules.shared.nat);
                }
                for (_, (_, own)) in changed {
                    write_changed(&mut out, own);
                }
                delete_stale(&mut out, stale);
                fixed::tail(options, &mut out);
            }
            PartialSync::Minimal => {
                let (mut filter_inserts, mut nat_inserts) =
                    (Inserts::default(), Inserts::default());
                let mut deletes = Output::default();
                let mut adds = Output::default();
                let mut own_rules = String::new();
                for (key, (new, own)) in &fresh {
                    let old = self.synced.get(*key).map(|s| &s.rules.shared);
                    for (old_lines, new_lines, deleted, added, inserts) in [
                        (
                            old.map(|s| s.filter.as_str()),
                            &new.shared.filter,
                            &mut deletes.filter_rules,
                            &mut adds.filter_rules,
                            &mut filter_inserts,
                        ),
                        (
                            old.map(|s| s.nat.as_str()),
                            &new.shared.nat,
                            &mut deletes.nat_rules,
                            &mut adds.nat_rules,
                            &mut nat_inserts,
                        ),
                    ] {
                        if old_lines == Some(new_lines.as_str()) {
                            continue;
                        }
                        for line in old_lines.unwrap_or_default().lines() {
                            rewrite_command(deleted, line, "-D", None);
                        }
                        for line in new_lines.lines() {
                            let position = inserts.next(line_chain(line));
                            rewrite_command(added, line, "-I", Some(position));
                        }
                    }
                    out.nat_chains.push_str(&own.nat_chains);
                    own_rules.push_str(&own.nat_rules);
                }
                out.filter_rules = deletes.filter_rules;
                out.filter_rules.push_str(&adds.filter_rules);
                out.nat_rules = deletes.nat_rules;
                out.nat_rules.push_str(&adds.nat_rules);
                out.nat_rules.push_str(&own_rules);
                delete_stale(&mut out, stale);
            }
        }
        let written = prepared
            .iter()
            .map(|(key, input, _)| {
                let rules = fresh.remove(*key).map(|(rules, _)| rules);
                let synced = input.zip(rules).map(|(input, rules)| Synced {
                    input: Arc::clone(input),
                    rules,
                });
                ((*key).clone(), synced)
            })
            .collect();
        Some(Pending {
            generated: Generated {
                text: out.finish(),
                full: false,
                rejected,
            },
            written,
            large,
        })
    }

    /// The last planned restore succeeded: remember what the kernel now holds.
    pub fn restored(&mut self) {
        let Some(pending) = self.pending.take() else {
            return;
        };
        if pending.generated.full {
            self.synced.clear();
            self.foreign.clear();
            self.full_next = false;
        }
        let keys: Vec<ServiceKey> = pending.written.iter().map(|(k, _)| k.clone()).collect();
        for (key, synced) in pending.written {
            match synced {
                Some(synced) => self.synced.insert(key, synced),
                None => self.synced.remove(&key),
            };
        }
        self.synced_large = pending.large;
        if pending.generated.full {
            self.dirty.clear();
            let keys: Vec<ServiceKey> = self.desired.keys().cloned().collect();
            keys.into_iter().for_each(|k| self.mark(k));
        } else {
            keys.into_iter().for_each(|k| self.mark(k));
        }
    }

    /// The last planned restore failed: the next sync is full.
    pub fn restore_failed(&mut self) {
        self.pending = None;
        self.full_next = true;
    }
}

/// The chain of a `-A CHAIN …` line.
fn line_chain(line: &str) -> &str {
    line.strip_prefix("-A ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_default()
}

/// Writes `-A CHAIN RULE` as `COMMAND CHAIN [POSITION] RULE`.
fn rewrite_command(out: &mut String, line: &str, command: &str, position: Option<u32>) {
    let rest = line.strip_prefix("-A ").unwrap_or(line);
    let (chain, rule) = rest.split_once(' ').unwrap_or((rest, ""));
    out.push_str(command);
    out.push(' ');
    out.push_str(chain);
    if let Some(position) = position {
        out.push(' ');
        crate::text::push_u32(out, position);
    }
    out.push(' ');
    out.push_str(rule);
    out.push('\n');
}

/// The next `-I` position per top-level chain: each service's lines go to the top, in order.
#[derive(Default)]
struct Inserts(Vec<(String, u32)>);

impl Inserts {
    fn next(&mut self, chain: &str) -> u32 {
        match self.0.iter_mut().find(|(c, _)| c == chain) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.0.push((chain.into(), 1));
                1
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;
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

    fn options() -> ProxyOptions {
        ProxyOptions::new("node-a", "192.168.0.2".parse().unwrap())
    }

    #[test]
    fn a_plan_never_restored_leaves_no_stale_cache() {
        let (states, mut a, mut b) = (
            [
                cluster([0, 0, 0, 0]),
                cluster([1, 1, 0, 0]),
                cluster([0, 0, 1, 0]),
                cluster([0, 2, 1, 0]),
            ],
            Proxier::new(options()),
            Proxier::new(options()),
        );
        let [s0, s1, s2, s3] = &states;
        a.sync(&s0.0, &s0.1);
        a.restored();
        b.sync(&s0.0, &s0.1);
        b.restored();
        // Planned, never restored: its rules for svc0 and svc1 must not be replayed later.
        a.sync(&s1.0, &s1.1);
        for (services, slices) in [&s2, &s3].map(|s| (&s.0, &s.1)) {
            let left = a.sync(services, slices).text.clone();
            let right = b.sync(services, slices).text.clone();
            assert_eq!(left, right);
            a.restored();
            b.restored();
        }
    }

    #[test]
    fn minimal_partial_syncs_touch_only_the_changed_service() {
        let mut proxier = Proxier::new(options()).with_partial_sync(PartialSync::Minimal);
        let (services, slices) = cluster([0, 0, 0, 0]);
        assert!(proxier.sync(&services, &slices).full);
        proxier.restored();
        assert!(!proxier.needs_sync());
        // An endpoint moves: its chains are rewritten, the KUBE-SERVICES line is unchanged.
        let (_, moved) = cluster([0, 0, 3, 0]);
        let slice = moved.into_iter().nth(2).unwrap();
        proxier.update_endpoint_slices("ns", "svc2", vec![slice]);
        assert_eq!(proxier.pending_changes(), 1);
        let text = proxier.sync_changes().text.clone();
        assert!(!text.contains("KUBE-SERVICES"), "{text}");
        assert!(
            text.contains("-j DNAT --to-destination 10.3.0.2:8080"),
            "{text}"
        );
        assert!(text.contains("-X KUBE-SEP-"), "{text}");
        proxier.restored();
        // The service goes: its lines are deleted by content, its chains flushed and deleted.
        proxier.remove_service("ns", "svc1");
        let text = proxier.sync_changes().text.clone();
        assert!(
            text.contains("-D KUBE-SERVICES -m comment --comment \"ns/svc1:http cluster IP\""),
            "{text}"
        );
        assert!(text.contains("-j REJECT") || !text.contains("svc1 cluster IP"));
        proxier.restored();
        // Back again: inserted at the top of KUBE-SERVICES.
        proxier.update_service(services[1].clone());
        let text = proxier.sync_changes().text.clone();
        assert!(
            text.contains("-I KUBE-SERVICES 1 -m comment --comment \"ns/svc1:http cluster IP\""),
            "{text}"
        );
    }

    #[test]
    fn a_failed_restore_makes_the_next_sync_full_and_keeps_the_changes() {
        let mut proxier = Proxier::new(options()).with_partial_sync(PartialSync::Minimal);
        let (services, slices) = cluster([0, 0, 0, 0]);
        proxier.sync(&services, &slices);
        proxier.restored();
        proxier.remove_service("ns", "svc0");
        assert!(!proxier.sync_changes().full);
        proxier.restore_failed();
        assert!(proxier.full_sync_pending());
        let text = proxier.sync_changes().text.clone();
        assert!(text.contains(":KUBE-SERVICES - [0:0]"));
        assert!(!text.contains("ns/svc0:http cluster IP"));
        proxier.restored();
        assert!(!proxier.needs_sync());
    }

    /// kube-proxy's `NodePortAddresses.GetNodeIPs` runs at every sync: a new matching
    /// interface address needs the `-d IP -j KUBE-NODEPORTS` tail, which only full syncs write.
    #[test]
    fn new_interface_addresses_resync_in_full_only_with_nodeport_addresses() {
        let (services, slices) = cluster([0, 0, 0, 0]);
        let mut all = Proxier::new(options());
        all.sync(&services, &slices);
        all.restored();
        assert!(!all.set_interface_addresses(vec!["192.168.0.3".parse().unwrap()]));
        assert!(!all.needs_sync());

        let mut opts = options();
        opts.node_port_addresses = Some(vec!["192.168.0.0/24".parse().unwrap()]);
        let mut some = Proxier::new(opts);
        some.sync(&services, &slices);
        some.restored();
        let addresses = vec![
            "192.168.0.2".parse().unwrap(),
            "192.168.0.3".parse().unwrap(),
        ];
        assert!(some.set_interface_addresses(addresses.clone()));
        assert!(!some.set_interface_addresses(addresses));
        let generated = some.sync_changes();
        assert!(generated.full);
        assert!(
            generated.text.contains("-d 192.168.0.3 -j KUBE-NODEPORTS"),
            "{}",
            generated.text
        );
    }

    #[test]
    fn a_new_zone_resyncs_in_full_and_the_hints_choose_the_endpoints() {
        let (services, mut slices) = cluster([0, 0, 0, 0]);
        let hinted = |address: &str, zone: &str| Endpoint {
            addresses: vec![address.into()],
            zone_hints: vec![zone.into()],
            ..Endpoint::default()
        };
        slices[0].endpoints = vec![hinted("10.9.0.1", "zone-a"), hinted("10.9.0.2", "zone-b")];
        let mut proxier = Proxier::new(options());
        let text = proxier.sync(&services, &slices).text.clone();
        assert!(text.contains("10.9.0.1:8080") && text.contains("10.9.0.2:8080"));
        proxier.restored();
        assert!(proxier.set_zone("zone-b"));
        assert!(!proxier.set_zone("zone-b"));
        let generated = proxier.sync_changes();
        assert!(generated.full);
        assert!(
            generated.text.contains("10.9.0.2:8080"),
            "{}",
            generated.text
        );
        assert!(
            !generated.text.contains("10.9.0.1:8080"),
            "{}",
            generated.text
        );
        proxier.restored();
        // A zone no endpoint is hinted for: every endpoint again (kube-proxy's fallback).
        assert!(proxier.set_zone("zone-z"));
        let text = &proxier.sync_changes().text;
        assert!(text.contains("10.9.0.1:8080") && text.contains("10.9.0.2:8080"));
    }
}
