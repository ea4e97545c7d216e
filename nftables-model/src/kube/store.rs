//! What one set or map holds in the kernel, so a sync adds only new or changed elements and
//! deletes only the ones no longer wanted (kube-proxy's `nftElementStorage`).

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

use crate::element::{Atom, Element, Verdict};
use crate::name::Name;
use crate::transaction::{Op, Transaction};

/// The elements of one set or map, by key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Store {
    name: Name,
    map: bool,
    elements: BTreeMap<Vec<Atom>, Option<Verdict>>,
    leftover: BTreeSet<Vec<Atom>>,
}

impl Store {
    pub(crate) const fn new(name: Name, map: bool) -> Self {
        Self {
            name,
            map,
            elements: BTreeMap::new(),
            leftover: BTreeSet::new(),
        }
    }

    /// Forgets every element and flushes the set or map (a full sync).
    pub(crate) fn reset(&mut self, tx: &mut Transaction) {
        self.elements.clear();
        self.leftover.clear();
        tx.push(Op::FlushContainer(self.name.clone(), self.map));
    }

    /// Starts a sync: every element is left over until [`Store::ensure`] wants it.
    pub(crate) fn begin(&mut self) {
        self.leftover = self.elements.keys().cloned().collect();
    }

    /// Makes sure `element` is there: added when new, deleted and added again when its value
    /// changed, nothing when it is already there.
    pub(crate) fn ensure(&mut self, tx: &mut Transaction, element: Element) {
        self.leftover.remove(&element.key);
        let previous = self
            .elements
            .insert(element.key.clone(), element.value.clone());
        match previous {
            Some(value) if value == element.value => {}
            Some(_) => {
                tx.push(Op::DeleteElement(element.clone()));
                tx.push(Op::AddElement(element));
            }
            None => tx.push(Op::AddElement(element)),
        }
    }

    /// Deletes the elements nothing wanted this sync.
    pub(crate) fn cleanup(&mut self, tx: &mut Transaction) {
        for key in core::mem::take(&mut self.leftover) {
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
