//! What one set or map holds in the kernel, so a sync adds only new or changed elements and
//! deletes only the ones no longer wanted (kube-proxy's `nftElementStorage`).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::element::{Atom, Element, Verdict};
use crate::name::Name;
use crate::transaction::{Op, Transaction};

/// The elements of one set or map, by key, each with the number of the last sync that wanted
/// it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Store {
    name: Name,
    map: bool,
    elements: BTreeMap<Vec<Atom>, (Option<Verdict>, u64)>,
    sync: u64,
}

impl Store {
    pub(crate) const fn new(name: Name, map: bool) -> Self {
        Self {
            name,
            map,
            elements: BTreeMap::new(),
            sync: 0,
        }
    }

    /// Forgets every element and flushes the set or map (a full sync).
    pub(crate) fn reset(&mut self, tx: &mut Transaction) {
        self.elements.clear();
        tx.push(Op::FlushContainer(self.name.clone(), self.map));
    }

    /// Starts a sync: no element is wanted until [`Store::ensure`] or [`Store::keep`] says so.
    pub(crate) fn begin(&mut self) {
        self.sync += 1;
    }

    /// Makes sure `element` is there: added when new, deleted and added again when its value
    /// changed, nothing when it is already there.
    pub(crate) fn ensure(&mut self, tx: &mut Transaction, element: Element) {
        let sync = self.sync;
        match self.elements.get_mut(&element.key) {
            Some((value, wanted)) if *value == element.value => *wanted = sync,
            Some((value, wanted)) => {
                value.clone_from(&element.value);
                *wanted = sync;
                tx.push(Op::DeleteElement(element.clone()));
                tx.push(Op::AddElement(element));
            }
            None => {
                self.elements
                    .insert(element.key.clone(), (element.value.clone(), sync));
                tx.push(Op::AddElement(element));
            }
        }
    }

    /// [`Store::ensure`] for an element an unchanged Service wrote in an earlier sync: copied
    /// only when it is missing or another Service changed its value since (two Services
    /// claiming one address, as during a delete and re-create), so that the last Service
    /// written decides, as it would in a full sync.
    pub(crate) fn keep(&mut self, tx: &mut Transaction, element: &Element) {
        match self.elements.get_mut(&element.key) {
            Some((value, wanted)) if *value == element.value => *wanted = self.sync,
            _ => self.ensure(tx, element.clone()),
        }
    }

    /// Deletes the elements nothing wanted this sync.
    pub(crate) fn cleanup(&mut self, tx: &mut Transaction) {
        let sync = self.sync;
        let unwanted: Vec<Vec<Atom>> = self
            .elements
            .iter()
            .filter(|(_, (_, wanted))| *wanted != sync)
            .map(|(key, _)| key.clone())
            .collect();
        for key in unwanted {
            self.elements.remove(&key);
            tx.push(Op::DeleteElement(Element {
                container: self.name.clone(),
                key,
                value: None,
                comment: None,
            }));
        }
    }
}

/// Which of the [`Stores`] an element goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    ClusterIps,
    ServiceIps,
    FirewallIps,
    NoEndpointServices,
    NoEndpointNodeports,
    ServiceNodeports,
}

/// The six sets and maps a sync fills element by element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stores {
    pub(crate) cluster_ips: Store,
    pub(crate) service_ips: Store,
    pub(crate) firewall_ips: Store,
    pub(crate) no_endpoint_services: Store,
    pub(crate) no_endpoint_nodeports: Store,
    pub(crate) service_nodeports: Store,
}

impl Stores {
    pub(crate) fn new() -> Self {
        use super::names::{
            CLUSTER_IPS, FIREWALL_IPS, NO_ENDPOINT_NODEPORTS, NO_ENDPOINT_SERVICES, SERVICE_IPS,
            SERVICE_NODEPORTS, fixed,
        };
        Self {
            cluster_ips: Store::new(fixed(CLUSTER_IPS), false),
            service_ips: Store::new(fixed(SERVICE_IPS), true),
            firewall_ips: Store::new(fixed(FIREWALL_IPS), true),
            no_endpoint_services: Store::new(fixed(NO_ENDPOINT_SERVICES), true),
            no_endpoint_nodeports: Store::new(fixed(NO_ENDPOINT_NODEPORTS), true),
            service_nodeports: Store::new(fixed(SERVICE_NODEPORTS), true),
        }
    }

    /// The store of `slot`.
    pub(crate) const fn get(&mut self, slot: Slot) -> &mut Store {
        match slot {
            Slot::ClusterIps => &mut self.cluster_ips,
            Slot::ServiceIps => &mut self.service_ips,
            Slot::FirewallIps => &mut self.firewall_ips,
            Slot::NoEndpointServices => &mut self.no_endpoint_services,
            Slot::NoEndpointNodeports => &mut self.no_endpoint_nodeports,
            Slot::ServiceNodeports => &mut self.service_nodeports,
        }
    }

    /// The stores in kube-proxy's order.
    pub(crate) fn all(&mut self) -> [&mut Store; 6] {
        [
            &mut self.cluster_ips,
            &mut self.service_ips,
            &mut self.firewall_ips,
            &mut self.no_endpoint_services,
            &mut self.no_endpoint_nodeports,
            &mut self.service_nodeports,
        ]
    }
}
