//! The proxier: what a sync writes depends on what the previous ones wrote. The first sync
//! (and any after a failure) is full; later ones are partial, as kube-proxy's: only the chains
//! of Services that changed are rewritten, only changed set and map elements are added or
//! deleted, chains no longer used are flushed at once and deleted by a later sync at least a
//! second after (kernels before 6.2 notice late that a map no longer refers to them), and
//! unused affinity sets are deleted at once.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use iptables_model::kube::{EndpointSlice, Service, resolve_ports};

use super::local::matches;
use super::names::{AFFINITY_PREFIX, is_service_chain, table};
use super::options::NftOptions;
use super::service::{Context, PortNames, Wanted};
use super::setup::setup;
use super::store::Stores;
use crate::error::Error;
use crate::name::Name;
use crate::transaction::{Op, Transaction};

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

/// What one sync asks of the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Synced {
    /// Deletes chains stale for long enough; run before [`Synced::transaction`]. If it fails,
    /// say so with [`Proxier::cleanup_failed`]: the chains are deleted later.
    pub cleanup: Option<Transaction>,
    /// The sync.
    pub transaction: Transaction,
    /// Whether the transaction is a full sync.
    pub full: bool,
    /// The Services left out.
    pub rejected: Vec<Rejected>,
}

type Key = (String, String);

/// kube-proxy's nftables proxier for one IP family.
#[derive(Clone, Debug)]
pub struct Proxier {
    options: NftOptions,
    need_full: bool,
    /// Base chains were recreated once (the first sync adds and deletes them).
    flushed: bool,
    stores: Stores,
    /// Per-service chains and affinity sets believed to exist in the kernel.
    chains: BTreeSet<Name>,
    affinity_sets: BTreeSet<Name>,
    /// Flushed chains and when they became stale.
    stale: BTreeMap<Name, Duration>,
    /// What the last sync wrote for each Service: the Service and its slices.
    written: BTreeMap<Key, Written>,
    /// The state to keep if the pending transaction succeeds.
    pending: Option<Pending>,
}

#[derive(Clone, Debug)]
struct Pending {
    chains: BTreeSet<Name>,
    affinity_sets: BTreeSet<Name>,
    /// The changes to [`Proxier::written`]: a new copy, or `None` to forget the Service.
    written: Vec<(Key, Option<Written>)>,
}

/// A Service and its EndpointSlices as a sync wrote them, and what they wanted.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Written {
    service: Service,
    slices: Vec<EndpointSlice>,
    wanted: Vec<Wanted>,
}

impl Written {
    /// Whether `service` with `slices` is what was written.
    fn is(&self, service: &Service, slices: &[&EndpointSlice]) -> bool {
        self.service == *service
            && self.slices.len() == slices.len()
            && self.slices.iter().zip(slices).all(|(a, b)| a == *b)
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
            stores: Stores::new(),
            chains: BTreeSet::new(),
            affinity_sets: BTreeSet::new(),
            stale: BTreeMap::new(),
            written: BTreeMap::new(),
            pending: None,
        })
    }

    /// The options.
    pub const fn options(&self) -> &NftOptions {
        &self.options
    }

    /// Notes chains and sets found in the kernel's table (`nft list chains`/`sets`), such as
    /// those of an earlier run: unused per-service ones are cleaned up by the next sync.
    pub fn note_existing(&mut self, names: impl IntoIterator<Item = Name>) {
        for name in names {
            if name.as_str().starts_with(AFFINITY_PREFIX) {
                self.affinity_sets.insert(name);
            } else if is_service_chain(&name) {
                self.chains.insert(name);
            }
        }
    }

    /// Builds the sync of `services` and `slices` at time `now` (any monotonic clock; it only
    /// times stale chains). Call [`Proxier::applied`] with the outcome of running it.
    pub fn sync(
        &mut self,
        services: &[Service],
        slices: &[EndpointSlice],
        now: Duration,
    ) -> Synced {
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
            self.chains.remove(&name);
            cleanup.push(Op::DeleteChain(name));
        }

        let mut tx = Transaction::new(family, table());
        if full {
            setup(&mut tx, &self.options, !self.flushed, &mut self.stores);
            self.flushed = true;
        }
        for store in self.stores.all() {
            store.begin();
        }

        // Services in (namespace, name) order with their slices.
        let mut by_service: BTreeMap<Key, (Option<&Service>, Vec<&EndpointSlice>)> =
            BTreeMap::new();
        for s in services {
            by_service
                .entry((s.namespace.clone(), s.name.clone()))
                .or_default()
                .0 = Some(s);
        }
        for e in slices {
            by_service
                .entry((e.namespace.clone(), e.service.clone()))
                .or_default()
                .1
                .push(e);
        }

        let local = matches(&self.options.proxy.local_detector, family)
            .ok()
            .flatten();
        let mut active_chains = BTreeSet::new();
        let mut active_affinity = BTreeSet::new();
        let mut rejected = Vec::new();
        // What the record of written Services becomes if the transaction is applied: only the
        // Services that changed are copied.
        let mut written: Vec<(Key, Option<Written>)> = Vec::new();
        let mut ctx = Context {
            family,
            masquerade_all: self.options.proxy.masquerade_all,
            node_ip: self.options.proxy.node_ip,
            local: local.as_ref(),
            tx: &mut tx,
            stores: &mut self.stores,
            active_chains: &mut active_chains,
            active_affinity: &mut active_affinity,
            wanted: Vec::new(),
        };
        for (key, (service, own_slices)) in &by_service {
            let Some(service) = service else { continue };
            let previous = self.written.get(key).filter(|w| w.is(service, own_slices));
            if let (false, Some(w)) = (full, previous) {
                // Unchanged since it was written: nothing to write, the same to keep.
                ctx.replay(&w.wanted);
                continue;
            }
            let ports = resolve_ports(&self.options.proxy, service, own_slices);
            let names = match ports
                .iter()
                .map(PortNames::of)
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(names) => names,
                Err(error) => {
                    if self.written.contains_key(key) {
                        written.push((key.clone(), None));
                    }
                    rejected.push(Rejected {
                        namespace: service.namespace.clone(),
                        name: service.name.clone(),
                        error,
                    });
                    continue;
                }
            };
            for (port, names) in ports.iter().zip(&names) {
                ctx.write_port(port, names);
            }
            let wanted = core::mem::take(&mut ctx.wanted);
            if previous.is_none() {
                let copy = Written {
                    service: (*service).clone(),
                    slices: own_slices.iter().map(|e| (*e).clone()).collect(),
                    wanted,
                };
                written.push((key.clone(), Some(copy)));
            }
        }
        // Services gone since the last sync.
        for key in self.written.keys() {
            if !by_service.get(key).is_some_and(|(s, _)| s.is_some()) {
                written.push((key.clone(), None));
            }
        }

        for chain in &self.chains {
            if active_chains.contains(chain) {
                self.stale.remove(chain);
            } else {
                tx.push(Op::FlushChain(chain.clone()));
                self.stale.insert(chain.clone(), now);
            }
        }
        for set in &self.affinity_sets {
            if !active_affinity.contains(set) {
                tx.push(Op::DeleteContainer(set.clone(), false));
            }
        }
        for store in self.stores.all() {
            store.cleanup(&mut tx);
        }

        let mut chains = active_chains;
        chains.extend(self.stale.keys().cloned());
        self.pending = Some(Pending {
            chains,
            affinity_sets: active_affinity,
            written,
        });
        Synced {
            cleanup: (!cleanup.is_empty()).then_some(cleanup),
            transaction: tx,
            full,
            rejected,
        }
    }

    /// Records that `cleanup` ([`Synced::cleanup`]) failed: its chains are still in the
    /// kernel, so the next sync flushes them again and a later one retries the deletion.
    pub fn cleanup_failed(&mut self, cleanup: &Transaction) {
        for op in &cleanup.ops {
            if let Op::DeleteChain(name) = op {
                self.chains.insert(name.clone());
            }
        }
    }

    /// Records whether the last [`Proxier::sync`]'s transaction was applied. After a failure
    /// the next sync is full.
    pub fn applied(&mut self, ok: bool) {
        let pending = self.pending.take();
        match (ok, pending) {
            (true, Some(p)) => {
                self.need_full = false;
                self.chains = p.chains;
                self.affinity_sets = p.affinity_sets;
                for (key, copy) in p.written {
                    match copy {
                        Some(w) => {
                            self.written.insert(key, w);
                        }
                        None => {
                            self.written.remove(&key);
                        }
                    }
                }
            }
            _ => {
                self.need_full = true;
                self.stale.clear();
            }
        }
    }
}
