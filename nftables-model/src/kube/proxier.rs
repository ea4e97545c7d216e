//! The proxier: what a sync writes depends on what the previous ones wrote. The first sync
//! (and any after a failure) is full; later ones are partial, as kube-proxy's: only the chains
//! of Services that changed are rewritten, only changed set and map elements are added or
//! deleted, chains no longer used are flushed at once and deleted by a later sync at least a
//! second after (kernels before 6.2 notice late that a map no longer refers to them), and
//! unused affinity sets are deleted at once. What each Service wants (chains, affinity sets,
//! set and map elements) is counted when it is written and counted down when it changes or
//! goes, so a partial sync touches only the changed Services: told which they are
//! ([`Proxier::sync_changed`]), its time follows the change, not the number of Services.

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::time::Duration;

use hashbrown::HashMap;
use iptables_model::kube::{EndpointSlice, Service, resolve_ports};

use super::chains::Chains;
use super::local::matches;
use super::names::{AFFINITY_PREFIX, Scratch, is_service_chain, table};
use super::options::NftOptions;
use super::service::{Context, Found, PortNames, Wanted};
use super::setup::setup;
use super::store::{Key, Owner, Stores};
use crate::element::{Key as ElementKey, Verdict};
use crate::error::Error;
use crate::name::Name;
use crate::transaction::{Op, Script, Sink, Transaction};

/// How long a stale chain stays flushed before it is deleted.
const STALE_DELAY: Duration = Duration::from_secs(1);

/// A Service left out of a sync because a value its objects carry cannot be written (its
/// namespace, name or a port name outside nft's name syntax, or a comment that could not be
/// quoted); the rest of the sync goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    /// The Service's namespace.
    pub namespace: String,
    /// The Service's name.
    pub name: String,
    /// The value refused.
    pub error: Error,
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Service {:?}/{:?} left out: {}",
            self.namespace, self.name, self.error
        )
    }
}

impl core::error::Error for Rejected {}

/// What one sync asks of the kernel: its transaction as [`Op`] values ([`Transaction`],
/// from [`Proxier::sync`] and [`Proxier::sync_changed`]) or as `nft -f` text ([`Script`],
/// from [`Proxier::sync_text`] and [`Proxier::sync_changed_text`]), the same operations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Synced<T = Transaction> {
    /// Deletes chains stale for long enough; run before [`Synced::transaction`]. If it fails,
    /// say so with [`Proxier::cleanup_failed`]: the chains are deleted later.
    pub cleanup: Option<Transaction>,
    /// The sync.
    pub transaction: T,
    /// Whether the transaction is a full sync.
    pub full: bool,
    /// Whether the transaction flushes chains no Service uses any more: a sync at least a
    /// second after it deletes them (in its [`Synced::cleanup`]).
    pub flushes_stale: bool,
    /// The Services left out.
    pub rejected: Vec<Rejected>,
}

/// One Service's inputs in a sync: its key, the Service (`None` when it is gone) and its
/// EndpointSlices.
type Group<'a> = (ServiceKey<'a>, Option<&'a Service>, Vec<&'a EndpointSlice>);

/// A Service's (namespace, name), borrowed from the inputs.
type ServiceKey<'a> = (&'a str, &'a str);

/// A Service's (namespace, name) borrowed, to look up an [`Owner`] without making one: it
/// hashes as an owner does (each string as `str`, in order).
#[derive(Hash)]
struct Borrowed<'a>(&'a str, &'a str);

impl hashbrown::Equivalent<Owner> for Borrowed<'_> {
    fn equivalent(&self, key: &Owner) -> bool {
        (self.0, self.1) == key.parts()
    }
}

/// kube-proxy's nftables proxier for one IP family.
#[derive(Clone, Debug)]
pub struct Proxier {
    options: NftOptions,
    need_full: bool,
    /// Base chains were recreated once (the first sync adds and deletes them).
    flushed: bool,
    /// A sync was built and its outcome told ([`Proxier::applied`]): endpoint chains found in
    /// the kernel are kept only by the first.
    synced_once: bool,
    stores: Stores,
    /// Affinity sets believed to exist in the kernel (the chains are in [`Owners::chains`]).
    affinity_sets: BTreeSet<Name>,
    /// Flushed chains and when they became stale.
    stale: BTreeMap<Name, Duration>,
    /// How many written Services want each chain and affinity set.
    owners: Owners,
    /// What the last sync wrote for each Service: the Service and its slices.
    written: HashMap<Owner, Written>,
    /// What the kernel holds if the pending transaction succeeds.
    pending: Option<Pending>,
    /// The size of the last full sync's text, for the next one's room.
    full_bytes: usize,
    /// Which sync this is (the first is 1).
    sync_id: u64,
}

/// The chains and affinity sets Services want, counted, and those whose count fell (or that
/// were found in the kernel) since the last sync, which it checks.
#[derive(Clone, Debug, Default)]
pub(crate) struct Owners {
    /// The per-service chains: wanted, held by the kernel, added.
    pub(crate) chains: Chains,
    affinity: HashMap<Name, u32>,
    unsettled_chains: BTreeSet<Name>,
    unsettled_affinity: BTreeSet<Name>,
}

fn count_up(counts: &mut HashMap<Name, u32>, name: &Name) {
    // One lookup; the clone is a reference count.
    let n = counts.entry(name.clone()).or_insert(0);
    *n = n.saturating_add(1);
}

/// Counts `name` down; whether no one wants it any more.
fn count_down(counts: &mut HashMap<Name, u32>, name: &Name) -> bool {
    match counts.get_mut(name) {
        Some(n) if *n > 1 => {
            *n -= 1;
            false
        }
        Some(_) => {
            counts.remove(name);
            true
        }
        None => false,
    }
}

impl Owners {
    /// Counts what `owner` wants, but its chains: those are counted as the sync writes them
    /// ([`Chains::want`]).
    fn want(&mut self, stores: &mut Stores, owner: &Owner, wanted: &[Wanted]) {
        for w in wanted {
            match w {
                Wanted::Element(slot, element) => stores.get(*slot).want(owner, element),
                Wanted::Chain(_) => {}
                Wanted::Affinity(name) => count_up(&mut self.affinity, name),
            }
        }
    }

    /// Counts down what `owner` wanted.
    fn release(&mut self, stores: &mut Stores, owner: &Owner, wanted: &[Wanted]) {
        for w in wanted {
            match w {
                Wanted::Element(slot, element) => stores.get(*slot).release(owner, element),
                Wanted::Chain(name) => {
                    if self.chains.release(name) {
                        self.unsettled_chains.insert(name.clone());
                    }
                }
                Wanted::Affinity(name) => {
                    if count_down(&mut self.affinity, name) {
                        self.unsettled_affinity.insert(name.clone());
                    }
                }
            }
        }
    }
}

/// The changes to the kernel's per-service chains and affinity sets that a transaction makes.
#[derive(Clone, Debug, Default)]
struct Pending {
    /// The chains added by a partial sync; those of a full sync are read from the counts
    /// when it is applied (those it added say so), rather than listed as it writes them.
    added_chains: Option<Vec<Name>>,
    /// The sync.
    sync: u64,
    added_affinity: BTreeSet<Name>,
    deleted_affinity: Vec<Name>,
}

/// A Service and its EndpointSlices as a sync wrote them ([`Encoded`]), and what they
/// wanted.
#[derive(Clone, Debug)]
struct Written {
    /// The sync that last saw the Service ([`Proxier::sync_groups`]).
    seen: u64,
    inputs: Box<[u8]>,
    wanted: Vec<Wanted>,
    /// The names of its ports' objects.
    names: Vec<PortNames>,
}

/// A Service and its EndpointSlices as bytes: what their `Hash` implementations feed a
/// hasher, kept whole instead of hashed. Those are derived for every input type: each field
/// in order, each string with an end mark, each list with its length, so equal bytes are
/// equal inputs and unequal inputs give unequal bytes. One buffer instead of a copy of each
/// string and list of the inputs (a copy kept per Service cost a sync at 10,000 Services a
/// tenth of its time, in its allocations and their release).
struct Encoded<'a>(&'a mut Vec<u8>);

impl Encoded<'_> {
    /// `service` and `slices` encoded into `buffer` (cleared first).
    fn of<'b>(buffer: &'b mut Vec<u8>, service: &Service, slices: &[&EndpointSlice]) -> &'b [u8] {
        buffer.clear();
        let mut encoder = Encoded(buffer);
        service.hash(&mut encoder);
        slices.hash(&mut encoder);
        buffer
    }
}

impl Hasher for Encoded<'_> {
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    /// Never asked for: the bytes are the result.
    fn finish(&self) -> u64 {
        0
    }
}

impl Proxier {
    /// A proxier whose first sync is full.
    ///
    /// # Errors
    ///
    /// [`Error::Interface`] when the local-traffic detector names an interface that cannot be
    /// written into a rule.
    pub fn new(options: NftOptions) -> Result<Self, Error> {
        matches(&options.proxy.local_detector, options.family())?;
        Ok(Self {
            options,
            need_full: true,
            flushed: false,
            synced_once: false,
            stores: Stores::new(),
            affinity_sets: BTreeSet::new(),
            stale: BTreeMap::new(),
            owners: Owners::default(),
            written: HashMap::new(),
            pending: None,
            full_bytes: 0,
            sync_id: 0,
        })
    }

    /// The options.
    pub const fn options(&self) -> &NftOptions {
        &self.options
    }

    /// Whether the next sync is full: [`Proxier::sync_changed`] then reads every Service.
    pub const fn full_sync_pending(&self) -> bool {
        self.need_full
    }

    /// Notes chains and sets found in the kernel's table (`nft list chains`/`sets`), such as
    /// those of an earlier run: unused per-service ones are cleaned up by the next sync.
    pub fn note_existing(&mut self, names: impl IntoIterator<Item = Name>) {
        for name in names {
            if name.as_str().starts_with(AFFINITY_PREFIX) {
                self.affinity_sets.insert(name.clone());
                self.owners.unsettled_affinity.insert(name);
            } else if is_service_chain(&name) {
                self.owners.chains.held(name.clone());
                self.owners.unsettled_chains.insert(name);
            }
        }
    }

    /// Notes what the kernel's set or map `container` holds (`nft list set`/`map`, keys and
    /// values; comments are not compared), such as an earlier run left it: the next full
    /// sync keeps those elements still wanted and writes only the difference, as kube-proxy's
    /// `readOrReset`. Returns `false` (and notes nothing) when `container` is not one of the
    /// sets and maps a sync fills element by element (`cluster-ips`, `service-ips`,
    /// `firewall-ips`, `no-endpoint-services`, `no-endpoint-nodeports`, `service-nodeports`).
    /// Without it, a full sync flushes them and writes every element.
    pub fn note_elements(
        &mut self,
        container: &Name,
        elements: impl IntoIterator<Item = (ElementKey, Option<Verdict>)>,
    ) -> bool {
        match self
            .stores
            .all()
            .into_iter()
            .find(|s| s.name() == container)
        {
            Some(store) => {
                store.note(elements);
                true
            }
            None => false,
        }
    }

    /// Builds the sync of `services` and `slices` (every Service and slice) at time `now` (any
    /// monotonic clock; it only times stale chains). Call [`Proxier::applied`] with the
    /// outcome of running it. Each Service is compared with what was last written; a caller
    /// that knows which Services changed saves that with [`Proxier::sync_changed`].
    pub fn sync(
        &mut self,
        services: &[Service],
        slices: &[EndpointSlice],
        now: Duration,
    ) -> Synced {
        self.sync_all(services, slices, now)
    }

    /// [`Proxier::sync`] with the transaction written as text while it is built, for a caller
    /// that hands it to `nft -f` (no [`Op`] values are made: the fast way of a full sync).
    pub fn sync_text(
        &mut self,
        services: &[Service],
        slices: &[EndpointSlice],
        now: Duration,
    ) -> Synced<Script> {
        self.sync_all(services, slices, now)
    }

    fn sync_all<'a, W: Sink>(
        &mut self,
        services: &'a [Service],
        slices: &'a [EndpointSlice],
        now: Duration,
    ) -> Synced<W> {
        // Services in (namespace, name) order (the last given of a name), each with its
        // slices in the order given: two sorts and one pass (a sorted map of the Services cost
        // a tenth of a full sync at 10,000 Services in its searches).
        let service_key = |s: &&'a Service| (s.namespace.as_str(), s.name.as_str());
        let slice_key = |e: &&'a EndpointSlice| (e.namespace.as_str(), e.service.as_str());
        let mut sorted: Vec<&Service> = services.iter().collect();
        sorted.sort_by(|a, b| service_key(a).cmp(&service_key(b)));
        let mut unique: Vec<&Service> = Vec::with_capacity(sorted.len());
        for s in sorted {
            match unique.last_mut() {
                Some(last) if service_key(last) == service_key(&s) => *last = s,
                _ => unique.push(s),
            }
        }
        let mut sorted_slices: Vec<&EndpointSlice> = slices.iter().collect();
        sorted_slices.sort_by(|a, b| slice_key(a).cmp(&slice_key(b)));
        let mut rest = sorted_slices.into_iter().peekable();
        let mut groups: Vec<Group<'a>> = Vec::with_capacity(unique.len());
        for s in &unique {
            let key = service_key(s);
            // Slices of no Service before it are passed over; its own are next.
            while rest.next_if(|e| slice_key(e) < key).is_some() {}
            let mut own = Vec::new();
            while let Some(e) = rest.next_if(|e| slice_key(e) == key) {
                own.push(e);
            }
            groups.push((key, Some(*s), own));
        }
        self.sync_groups(groups.into_iter(), true, services.len(), now)
    }

    /// Builds the sync at time `now` when the caller knows which Services changed since the
    /// last sync (added, changed, removed, or their slices changed): `changed` names them,
    /// `services` and `slices` hold every Service and the slices of each, by (namespace,
    /// name). A partial sync reads only the changed Services, so its time follows the change,
    /// not the number of Services; a full one ([`Proxier::full_sync_pending`]) reads them all.
    /// Call [`Proxier::applied`] with the outcome of running it.
    pub fn sync_changed(
        &mut self,
        services: &BTreeMap<Key, Service>,
        slices: &BTreeMap<Key, Vec<EndpointSlice>>,
        changed: &BTreeSet<Key>,
        now: Duration,
    ) -> Synced {
        self.sync_told(services, slices, changed, now)
    }

    /// [`Proxier::sync_changed`] with the transaction written as text while it is built, as
    /// [`Proxier::sync_text`].
    pub fn sync_changed_text(
        &mut self,
        services: &BTreeMap<Key, Service>,
        slices: &BTreeMap<Key, Vec<EndpointSlice>>,
        changed: &BTreeSet<Key>,
        now: Duration,
    ) -> Synced<Script> {
        self.sync_told(services, slices, changed, now)
    }

    fn sync_told<W: Sink>(
        &mut self,
        services: &BTreeMap<Key, Service>,
        slices: &BTreeMap<Key, Vec<EndpointSlice>>,
        changed: &BTreeSet<Key>,
        now: Duration,
    ) -> Synced<W> {
        if self.need_full {
            let groups = services.iter().map(|(key, s)| {
                (
                    (key.0.as_str(), key.1.as_str()),
                    Some(s),
                    slices
                        .get(key)
                        .map(|e| e.iter().collect())
                        .unwrap_or_default(),
                )
            });
            self.sync_groups(groups, true, services.len(), now)
        } else {
            let groups = changed.iter().map(|key| {
                (
                    (key.0.as_str(), key.1.as_str()),
                    services.get(key),
                    slices
                        .get(key)
                        .map(|e| e.iter().collect())
                        .unwrap_or_default(),
                )
            });
            self.sync_groups(groups, false, changed.len(), now)
        }
    }

    /// The sync of `groups`: every Service in a full sync, else at least the changed ones
    /// (unchanged ones are skipped). With `every`, the groups are every Service there is, and
    /// those written before and not among them are gone; without, gone ones come as groups
    /// with no Service. `services` is about how many Services there are.
    fn sync_groups<'a, W: Sink>(
        &mut self,
        groups: impl Iterator<Item = Group<'a>>,
        every: bool,
        services: usize,
        now: Duration,
    ) -> Synced<W> {
        let family = self.options.family();
        let full = self.need_full;

        let mut cleanup = Transaction::new(family, table());
        let ripe: Vec<Name> = self
            .stale
            .iter()
            .filter(|(_, since)| now.saturating_sub(**since) > STALE_DELAY)
            .map(|(name, _)| name.clone())
            .collect();
        for name in ripe {
            self.stale.remove(&name);
            self.owners.chains.deleted(&name);
            cleanup.push(Op::DeleteChain(name));
        }

        // Room for the text of a full sync as large as the last (or of about 2 KB per
        // Service, a Service with 3 endpoints taking 1.9 KB), so that it grows once.
        let room = if full {
            self.full_bytes.max(services.saturating_mul(2048))
        } else {
            0
        };
        let mut tx = W::empty(family, table(), room);
        if full {
            setup(&mut tx, &self.options, !self.flushed, &mut self.stores);
            self.flushed = true;
            // Emptied, their room kept: a full sync wants about as much as the last (and a
            // Service at least a ClusterIP element and a chain or two).
            self.owners.chains.recount(services.saturating_mul(4));
            self.stores.reserve(services);
            self.owners.affinity.clear();
            self.owners.unsettled_chains.clear();
            self.owners.unsettled_affinity.clear();
            self.written.reserve(services);
        }

        let local = matches(&self.options.proxy.local_detector, family)
            .ok()
            .flatten();
        self.sync_id += 1;
        let sync_id = self.sync_id;
        let mut created = (!full).then(Vec::new);
        let mut added_affinity = BTreeSet::new();
        let mut rejected = Vec::new();
        let mut encoded = Vec::new();
        let mut scratch = Scratch::default();
        let mut owner_text = String::new();
        // Only chains found in the kernel can be kept: without any (a new proxier's first
        // sync), no endpoint's chain is looked up for it.
        let look_for_found = !self.synced_once && self.owners.chains.any_in_kernel();
        let mut ctx = Context {
            family,
            masquerade_all: self.options.proxy.masquerade_all,
            node_ip: self.options.proxy.node_ip,
            local: local.as_ref(),
            tx: &mut tx,
            owners: &mut self.owners,
            sync: sync_id,
            created: created.as_mut(),
            wanted: Vec::new(),
            found: look_for_found.then_some(Found {
                affinity_sets: &self.affinity_sets,
            }),
        };
        for ((ns, name), service, own_slices) in groups {
            let key = Borrowed(ns, name);
            let previous = self.written.get_key_value_mut(&key).map(|(owner, w)| {
                w.seen = sync_id;
                (owner, &*w)
            });
            let inputs = service.map(|s| Encoded::of(&mut encoded, s, &own_slices));
            let unchanged = previous.is_some_and(|(_, w)| inputs.is_some_and(|i| *w.inputs == *i));
            if unchanged && !full {
                continue;
            }
            let owner = previous.map(|(owner, _)| owner.clone());
            if let (false, Some((owner, w))) = (full, previous) {
                ctx.owners.release(&mut self.stores, owner, &w.wanted);
            }
            let Some(service) = service else {
                self.written.remove(&key);
                continue;
            };
            let ports = resolve_ports(&self.options.proxy, service, &own_slices);
            // An unchanged Service (rewritten by a full sync) has the names it had: the same
            // inputs make the same ports and endpoints.
            let kept = previous
                .filter(|_| unchanged)
                .map(|(_, w)| w.names.as_slice());
            let mut made = Vec::new();
            let names: &[PortNames] = if let Some(kept) = kept {
                kept
            } else {
                match ports
                    .iter()
                    .map(|port| PortNames::of(port, &mut scratch))
                    .collect::<Result<Vec<_>, _>>()
                {
                    Ok(names) => {
                        made = names;
                        &made
                    }
                    Err(error) => {
                        self.written.remove(&key);
                        rejected.push(Rejected {
                            namespace: service.namespace.clone(),
                            name: service.name.clone(),
                            error,
                        });
                        continue;
                    }
                }
            };
            for (port, names) in ports.iter().zip(names) {
                ctx.write_port(port, names);
            }
            for w in &ctx.wanted {
                if let Wanted::Affinity(set) = w {
                    added_affinity.insert(set.clone());
                }
            }
            let owner = owner.unwrap_or_else(|| Owner::new(ns, name, &mut owner_text));
            ctx.owners.want(&mut self.stores, &owner, &ctx.wanted);
            if unchanged {
                // Its wants are kept already: the buffer serves the next Service.
                ctx.wanted.clear();
            } else {
                // Moved out; the next Service's list starts with as much room.
                let room = ctx.wanted.len();
                let copy = Written {
                    names: made,
                    inputs: Box::from(inputs.unwrap_or_default()),
                    wanted: core::mem::replace(&mut ctx.wanted, Vec::with_capacity(room)),
                    seen: sync_id,
                };
                self.written.insert(owner, copy);
            }
        }

        if every {
            // The Services written before and not seen now are gone.
            let gone: Vec<Owner> = self
                .written
                .iter()
                .filter(|(_, w)| w.seen != sync_id)
                .map(|(owner, _)| owner.clone())
                .collect();
            for owner in gone {
                if let Some(w) = self.written.remove(&owner)
                    && !full
                {
                    self.owners.release(&mut self.stores, &owner, &w.wanted);
                }
            }
        }

        // Chains no Service wants: flushed now, deleted a second later.
        let mut flushes_stale = false;
        // A full sync checks every chain the kernel holds, a partial one those whose count
        // fell and those already stale; either flushes the unwanted ones in name order.
        let chains = &mut self.owners.chains;
        let unwanted: Vec<Name> = if full {
            self.owners.unsettled_chains.clear();
            self.stale.retain(|chain, _| !chains.wanted(chain));
            chains.unwanted()
        } else {
            let mut candidates = core::mem::take(&mut self.owners.unsettled_chains);
            candidates.extend(self.stale.keys().cloned());
            candidates
                .into_iter()
                .filter(|chain| {
                    if chains.wanted(chain) {
                        self.stale.remove(chain);
                        false
                    } else {
                        chains.in_kernel(chain)
                    }
                })
                .collect()
        };
        for chain in unwanted {
            tx.push(Op::FlushChain(chain.clone()));
            self.stale.insert(chain, now);
            flushes_stale = true;
        }
        let candidates: BTreeSet<Name> = if full {
            self.owners.unsettled_affinity.clear();
            self.affinity_sets.clone()
        } else {
            core::mem::take(&mut self.owners.unsettled_affinity)
        };
        let mut deleted_affinity = Vec::new();
        for set in candidates {
            if !self.owners.affinity.contains_key(&set) && self.affinity_sets.contains(&set) {
                tx.push(Op::DeleteContainer(set.clone(), false));
                deleted_affinity.push(set);
            }
        }
        for store in self.stores.all() {
            store.settle(&mut tx);
        }

        self.pending = Some(Pending {
            added_chains: created,
            sync: sync_id,
            added_affinity,
            deleted_affinity,
        });
        if full {
            self.full_bytes = tx.bytes();
        }
        Synced {
            cleanup: (!cleanup.is_empty()).then_some(cleanup),
            transaction: tx,
            full,
            flushes_stale,
            rejected,
        }
    }

    /// Records that `cleanup` ([`Synced::cleanup`]) failed: its chains are still in the
    /// kernel, so the next sync flushes them again and a later one retries the deletion.
    pub fn cleanup_failed(&mut self, cleanup: &Transaction) {
        for op in &cleanup.ops {
            if let Op::DeleteChain(name) = op {
                self.owners.chains.held(name.clone());
                self.owners.unsettled_chains.insert(name.clone());
            }
        }
    }

    /// Records whether the last sync's transaction was applied. After a failure the next sync
    /// is full.
    pub fn applied(&mut self, ok: bool) {
        self.synced_once = true;
        for store in self.stores.all() {
            store.applied(ok);
        }
        let pending = self.pending.take();
        match (ok, pending) {
            (true, Some(p)) => {
                self.need_full = false;
                match p.added_chains {
                    Some(added) => {
                        for chain in added {
                            self.owners.chains.held(chain);
                        }
                    }
                    None => self.owners.chains.added_by(p.sync),
                }
                self.affinity_sets.extend(p.added_affinity);
                for set in &p.deleted_affinity {
                    self.affinity_sets.remove(set);
                }
            }
            _ => {
                self.need_full = true;
                self.stale.clear();
            }
        }
    }
}
