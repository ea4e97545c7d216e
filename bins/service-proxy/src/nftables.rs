//! One IP family in kube-proxy's nftables mode: the Services and EndpointSlices received (the
//! same translated inputs the iptables mode's proxier keeps), an `nftables_model` [`Proxier`]
//! that turns them into transactions, and `nft` that applies them.
//!
//! This keeps the Services and notes which changed; `nftables_model`'s proxier reads only
//! those in a partial sync, and all of them in a full one. Chains it flushes as no longer used are deleted by a sync more
//! than a second later: one is due then even without a change (the next wake-up of the sync
//! loop, at the latest the periodic one). Its options are fixed when it is made, so a change of the node's
//! zone or interface addresses makes a new one, whose first sync is full and is told first of
//! the chains and sets the table holds (`note_existing`), to delete those no longer used.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::time::{Duration, Instant};

use iptables_exec::{ExecError, Nft};
use iptables_model::kube::{EndpointSlice, Service};
use nftables_model::kube::names::{CLUSTER_IPS, ELEMENT_CONTAINERS};
use nftables_model::kube::{NftOptions, Proxier};
use nftables_model::{Error as ModelError, Name};

use crate::nft_elements::elements;

/// The table kube-proxy's nftables mode writes, in each family.
pub const TABLE: &str = "kube-proxy";

/// The `nft` keywords of the two families.
pub const FAMILIES: [&str; 2] = ["ip", "ip6"];

type Key = (String, String);

/// How long after a chain is flushed as stale a sync deletes it: the proxier's delay (one
/// second) and a margin.
const STALE_DELETION: Duration = Duration::from_millis(1100);

/// What a sync wrote: whether it was full, and how many bytes of transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// A full sync.
    pub full: bool,
    /// The bytes given to `nft -f -`.
    pub bytes: usize,
}

/// A sync that failed: the kernel keeps its previous table, and the next sync is full.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct Failed {
    /// Whether it was a full sync.
    pub full: bool,
    /// Why: `nft` refused the transaction, or could not list the table.
    pub error: ExecError,
}

/// One family's nftables rules.
#[derive(Debug)]
pub struct NftRules {
    options: NftOptions,
    proxier: Proxier,
    nft: Nft,
    services: BTreeMap<Key, Service>,
    slices: BTreeMap<Key, Vec<EndpointSlice>>,
    /// Services with a change since the last sync.
    changed: BTreeSet<Key>,
    /// The next sync is full (the first, and any after a failure or when asked).
    full_next: bool,
    /// The proxier was made anew since the table was last listed: the next sync lists it.
    relist: bool,
    /// The clock the proxier's stale chains are timed against.
    epoch: Instant,
    /// When (on that clock) the chains flushed as stale can be deleted: a sync is due then,
    /// changes or not, as kube-proxy's periodic sync deletes them.
    stale_due: Option<Duration>,
}

impl NftRules {
    /// The rules of one family with `options`.
    ///
    /// # Errors
    ///
    /// The local-traffic detector names an interface that cannot be written into a rule.
    pub fn new(options: NftOptions) -> Result<Self, ModelError> {
        Ok(Self {
            proxier: Proxier::new(options.clone())?,
            options,
            nft: Nft::new(),
            services: BTreeMap::new(),
            slices: BTreeMap::new(),
            changed: BTreeSet::new(),
            full_next: true,
            relist: false,
            epoch: Instant::now(),
            stale_due: None,
        })
    }

    /// Whether this is the IPv6 family.
    pub const fn ipv6(&self) -> bool {
        self.options.proxy.ipv6
    }

    /// The family's `nft` keyword.
    fn family(&self) -> &'static str {
        self.options.family().keyword()
    }

    /// Whether NodePorts are matched against the node's interface addresses.
    pub const fn uses_interface_addresses(&self) -> bool {
        self.options.proxy.node_port_addresses.is_some()
    }

    /// Records a Service, new or changed.
    pub fn update_service(&mut self, service: Service) {
        let key = (service.namespace.clone(), service.name.clone());
        self.changed.insert(key.clone());
        self.services.insert(key, service);
    }

    /// Forgets a Service.
    pub fn remove_service(&mut self, namespace: &str, name: &str) {
        let key = (namespace.to_owned(), name.to_owned());
        self.services.remove(&key);
        self.changed.insert(key);
    }

    /// Replaces the EndpointSlices of a Service (none: forgets them).
    pub fn update_endpoint_slices(
        &mut self,
        namespace: &str,
        name: &str,
        slices: Vec<EndpointSlice>,
    ) {
        let key = (namespace.to_owned(), name.to_owned());
        if slices.is_empty() {
            self.slices.remove(&key);
        } else {
            self.slices.insert(key.clone(), slices);
        }
        self.changed.insert(key);
    }

    /// How many Services changed since the last sync.
    pub fn pending_changes(&self) -> usize {
        self.changed.len()
    }

    /// Whether a sync has something to write.
    pub fn needs_sync(&self) -> bool {
        self.full_next
            || !self.changed.is_empty()
            || self
                .stale_due
                .is_some_and(|due| self.epoch.elapsed() >= due)
    }

    /// Whether the next sync is full.
    pub const fn full_sync_pending(&self) -> bool {
        self.full_next
    }

    /// Makes the next sync full; it reads the table's elements first, as kube-proxy's full
    /// syncs do, so it repairs what another program changed.
    pub fn force_full_sync(&mut self) {
        // With no sync pending, a failure reported makes the proxier's next sync full.
        self.proxier.applied(false);
        self.full_next = true;
        self.relist = true;
    }

    /// Sets the node's zone; whether it changed.
    pub fn set_zone(&mut self, zone: &str) -> bool {
        if self.options.proxy.zone == zone {
            return false;
        }
        zone.clone_into(&mut self.options.proxy.zone);
        self.remake();
        true
    }

    /// Sets the node's interface addresses; whether they changed.
    pub fn set_interface_addresses(&mut self, mut addresses: Vec<IpAddr>) -> bool {
        addresses.sort_unstable();
        addresses.dedup();
        if self.options.proxy.interface_addresses == addresses {
            return false;
        }
        self.options.proxy.interface_addresses = addresses;
        self.remake();
        true
    }

    /// Makes a proxier with the current options; the next sync, full, first lists the table
    /// for it.
    fn remake(&mut self) {
        match Proxier::new(self.options.clone()) {
            Ok(proxier) => {
                self.proxier = proxier;
                self.relist = true;
                self.full_next = true;
            }
            // Only the local-traffic detector can be refused, and it was accepted at start.
            Err(error) => tracing::error!(%error, "the new options are refused; the old stay"),
        }
    }

    /// Lists what an earlier run left in the table: its chains and sets, for the first sync
    /// to clean up those no longer used and keep the endpoint chains it would write the
    /// same, and the elements of the sets and maps a sync fills, for it to write only the
    /// difference (kube-proxy's `readOrReset`). A set or map whose listing cannot be read
    /// is flushed and written whole by that sync.
    ///
    /// # Errors
    ///
    /// `nft` could not list them.
    pub async fn note_existing(&mut self) -> Result<(), ExecError> {
        let family = self.family();
        let existing = self.nft.chains_and_sets(family, TABLE).await?;
        self.proxier
            .note_existing(existing.iter().filter_map(|n| Name::new(n).ok()));
        for name in ELEMENT_CONTAINERS {
            let kind = if name == CLUSTER_IPS { "set" } else { "map" };
            let listed = match self.nft.list_json(kind, family, TABLE, name).await? {
                Some(json) => elements(&json),
                None => Ok(Vec::new()),
            };
            // The names are nftables-model's own, valid names.
            let Ok(container) = Name::new(name) else {
                continue;
            };
            match listed {
                Ok(elements) => {
                    self.proxier.note_elements(&container, elements);
                }
                Err(error) => tracing::warn!(
                    family,
                    set = name,
                    %error,
                    "elements not read: flushed and written again"
                ),
            }
        }
        self.relist = false;
        Ok(())
    }

    /// Writes what changed: the deletion of chains stale for long enough first (its failure
    /// is logged and retried later), then the sync; Services left out are logged.
    ///
    /// # Errors
    ///
    /// `nft` refused the sync (the kernel keeps its previous table; the next sync is full),
    /// or the table could not be listed for a new proxier.
    pub async fn sync(&mut self, family: &'static str) -> Result<Written, Failed> {
        if self.relist {
            self.note_existing()
                .await
                .map_err(|error| Failed { full: true, error })?;
        }
        let now = self.epoch.elapsed();
        let synced =
            self.proxier
                .sync_changed_text(&self.services, &self.slices, &self.changed, now);
        self.changed.clear();
        for rejected in &synced.rejected {
            tracing::warn!(family, %rejected, "Service skipped");
        }
        let mut cleanup_failed = false;
        if let Some(cleanup) = &synced.cleanup
            && let Err(error) = self.nft.apply(&cleanup.to_text()).await
        {
            tracing::warn!(family, %error, "stale chains not deleted: retried later");
            self.proxier.cleanup_failed(cleanup);
            cleanup_failed = true;
        }
        let text = synced.transaction.as_str();
        let result = if synced.transaction.is_empty() {
            Ok(())
        } else {
            self.nft.apply(text).await
        };
        self.proxier.applied(result.is_ok());
        self.full_next = result.is_err();
        // What the kernel holds is read again before the next, full, sync.
        self.relist |= result.is_err();
        if cleanup_failed || (result.is_ok() && synced.flushes_stale) {
            // A failed deletion: the next sync flushes the chains again, a later one retries.
            self.stale_due = Some(now + STALE_DELETION);
        } else if self.stale_due.is_some_and(|due| now >= due) {
            // Every chain flushed before is deleted now, or flushed again by this sync
            // (after a failure), which sets a new time.
            self.stale_due = None;
        }
        result
            .map(|()| Written {
                full: synced.full,
                bytes: text.len(),
            })
            .map_err(|error| Failed {
                full: synced.full,
                error,
            })
    }

    /// The transaction of the next sync, built and dropped (for `--dry-run`).
    pub fn dry_run(&mut self) -> String {
        let synced = self.proxier.sync_changed_text(
            &self.services,
            &self.slices,
            &self.changed,
            self.epoch.elapsed(),
        );
        self.proxier.applied(false);
        let mut text = synced.cleanup.map(|c| c.to_text()).unwrap_or_default();
        text.push_str(synced.transaction.as_str());
        text
    }
}
