//! What one set or map holds in the kernel, so a sync adds only new or changed elements and
//! deletes only the ones no longer wanted (kube-proxy's `nftElementStorage`). Each element
//! keeps the Services that want it, so a sync that rewrites a few Services settles only the
//! elements those Services wanted before or want now. A full sync keeps what the kernel is
//! known to hold (from the transactions applied, or from a listing of an earlier run's
//! table) and writes the difference, as kube-proxy's `readOrReset`; only when that is
//! unknown (a new proxier told nothing, or after a failed transaction) does it flush the
//! set or map and write every element.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use hashbrown::HashMap;
use hashbrown::hash_map::Entry as MapEntry;

use crate::element::{Element, Key as ElementKey, Verdict};
use crate::name::{Comment, Name};
use crate::transaction::{Op, Sink};

/// A Service, by namespace and name.
pub(crate) type Key = (String, String);

/// The Service that wants an element, by namespace and name: shared by all the elements it
/// wants, its text in one allocation (the namespace, then the name). Compared, ordered and
/// hashed as the pair (namespace, name).
#[derive(Clone, Debug)]
pub(crate) struct Owner {
    text: Arc<str>,
    /// Where the name starts.
    split: usize,
}

impl Owner {
    /// The Service `namespace`/`name`, its text joined in `scratch` first (so only the
    /// shared text allocates).
    pub(crate) fn new(namespace: &str, name: &str, scratch: &mut String) -> Self {
        scratch.clear();
        scratch.push_str(namespace);
        scratch.push_str(name);
        Self {
            text: Arc::from(scratch.as_str()),
            split: namespace.len(),
        }
    }

    /// (namespace, name).
    pub(crate) fn parts(&self) -> (&str, &str) {
        self.text
            .split_at_checked(self.split)
            .unwrap_or((&self.text, ""))
    }
}

impl PartialEq for Owner {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for Owner {}

impl PartialOrd for Owner {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Owner {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.parts().cmp(&other.parts())
    }
}

/// As the pair (namespace, name) hashes: each string as `str`, in order.
impl core::hash::Hash for Owner {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        let (namespace, name) = self.parts();
        namespace.hash(state);
        name.hash(state);
    }
}

/// One element: the value the kernel holds (`None` while it is not there) and the Services
/// that want it, each with what it wants of the element beyond its set and key.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    written: Option<Option<Verdict>>,
    owners: Wants,
}

/// The Services that want one key, in (namespace, name) order, each with what it wants:
/// nearly always one, held without a list of its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum Wants {
    #[default]
    None,
    One(Owner, Want),
    Many(Vec<(Owner, Want)>),
}

/// What a Service wants of an element beyond its set and key (which the store and its index
/// hold once): its value and comment.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Want {
    value: Option<Verdict>,
    comment: Option<Comment>,
}

impl Want {
    fn of(element: &Element) -> Self {
        Self {
            value: element.value.clone(),
            comment: element.comment.clone(),
        }
    }

    /// Whether this is what `element` (of this set, with this key) wants.
    fn is(&self, element: &Element) -> bool {
        self.value == element.value && self.comment == element.comment
    }
}

impl Wants {
    /// Adds what `owner` wants of `element` in its place.
    fn insert(&mut self, owner: &Owner, element: &Element) {
        let new = (owner.clone(), Want::of(element));
        match core::mem::take(self) {
            Self::None => *self = Self::One(new.0, new.1),
            Self::One(o, e) => {
                let mut list = Vec::with_capacity(2);
                list.push((o, e));
                let at = list.partition_point(|(o, _)| o <= owner);
                list.insert(at, new);
                *self = Self::Many(list);
            }
            Self::Many(mut list) => {
                let at = list.partition_point(|(o, _)| o <= owner);
                list.insert(at, new);
                *self = Self::Many(list);
            }
        }
    }

    /// Removes what `owner` wants of `element` (once); whether it was there.
    fn remove(&mut self, owner: &Owner, element: &Element) -> bool {
        match self {
            Self::One(o, want) if o == owner && want.is(element) => {
                *self = Self::None;
                true
            }
            Self::Many(list) => match list.iter().position(|(o, w)| o == owner && w.is(element)) {
                Some(at) => {
                    list.remove(at);
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    /// What the last Service in (namespace, name) order wants, which decides the value.
    fn last(&self) -> Option<&Want> {
        match self {
            Self::None => None,
            Self::One(_, e) => Some(e),
            Self::Many(list) => list.last().map(|(_, e)| e),
        }
    }
}

/// The elements of one set or map, by key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Store {
    name: Name,
    map: bool,
    elements: HashMap<ElementKey, Entry>,
    /// The keys whose owners changed since the last [`Store::settle`] (once or more).
    dirty: Vec<ElementKey>,
    /// Every key is to settle (a full sync): then `dirty` is not kept.
    all_dirty: bool,
    /// Whether `written` is what the kernel holds.
    known: bool,
}

impl Store {
    pub(crate) fn new(name: Name, map: bool) -> Self {
        Self {
            name,
            map,
            elements: HashMap::new(),
            dirty: Vec::new(),
            all_dirty: false,
            known: false,
        }
    }

    /// The set or map's name.
    pub(crate) const fn name(&self) -> &Name {
        &self.name
    }

    /// Starts a full sync: every element the kernel is known to hold is kept, wanted by no
    /// Service until the sync wants it again (the rest are deleted when it settles); when
    /// that is not known, the set or map is flushed.
    pub(crate) fn read_or_reset(&mut self, tx: &mut impl Sink) {
        self.dirty.clear();
        self.all_dirty = true;
        if self.known {
            self.elements.retain(|_, entry| entry.written.is_some());
            for entry in self.elements.values_mut() {
                entry.owners = Wants::None;
            }
        } else {
            self.elements.clear();
            tx.push(Op::FlushContainer(self.name.clone(), self.map));
        }
    }

    /// Records what the kernel holds (a listing of the set or map): the next full sync writes
    /// only the difference.
    pub(crate) fn note(
        &mut self,
        elements: impl IntoIterator<Item = (ElementKey, Option<Verdict>)>,
    ) {
        self.elements.clear();
        self.dirty.clear();
        self.all_dirty = false;
        for (key, value) in elements {
            self.elements.insert(
                key,
                Entry {
                    written: Some(value),
                    owners: Wants::None,
                },
            );
        }
        self.known = true;
    }

    /// Records whether the last transaction was applied: if not, what the kernel holds is no
    /// longer known (`written` was set as if it would be).
    pub(crate) const fn applied(&mut self, ok: bool) {
        self.known = ok;
    }

    /// Notes that `owner` wants `element`. Where Services disagree on a key's value, the last
    /// in (namespace, name) order decides, as when a full sync writes them in that order.
    pub(crate) fn want(&mut self, owner: &Owner, element: &Element) {
        match self.elements.entry(element.key) {
            MapEntry::Occupied(entry) => entry.into_mut().owners.insert(owner, element),
            // A new key's entry is made whole and written once, not read back (as
            // `Chains::want`: a full sync of a new proxier adds every key).
            MapEntry::Vacant(entry) => {
                let mut owners = Wants::None;
                owners.insert(owner, element);
                entry.insert(Entry {
                    written: None,
                    owners,
                });
            }
        }
        if !self.all_dirty {
            self.dirty.push(element.key);
        }
    }

    /// Notes that `owner` no longer wants `element` (once, as it was wanted).
    pub(crate) fn release(&mut self, owner: &Owner, element: &Element) {
        if let Some(entry) = self.elements.get_mut(&element.key)
            && entry.owners.remove(owner, element)
            && !self.all_dirty
        {
            self.dirty.push(element.key);
        }
    }

    /// Writes what changed for the keys whose owners changed: an element no Service wants is
    /// deleted, a new one added, one whose value changed deleted and added again.
    pub(crate) fn settle(&mut self, tx: &mut impl Sink) {
        let mut gone = Vec::new();
        if core::mem::take(&mut self.all_dirty) {
            // Every key: the entries themselves, sorted, without looking each up.
            self.dirty.clear();
            let mut entries: Vec<(&ElementKey, &mut Entry)> = self.elements.iter_mut().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (key, entry) in entries {
                if !settle_one(&self.name, *key, entry, tx) {
                    gone.push(*key);
                }
            }
        } else {
            let mut dirty = core::mem::take(&mut self.dirty);
            dirty.sort_unstable();
            dirty.dedup();
            for key in dirty {
                if let Some(entry) = self.elements.get_mut(&key)
                    && !settle_one(&self.name, key, entry, tx)
                {
                    gone.push(key);
                }
            }
        }
        for key in gone {
            self.elements.remove(&key);
        }
    }
}

/// Writes what changed for `key` of set or map `name`; whether any Service still wants it
/// (if not, it is deleted from the kernel and the entry can go).
fn settle_one(name: &Name, key: ElementKey, entry: &mut Entry, tx: &mut impl Sink) -> bool {
    let Some(want) = entry.owners.last() else {
        if entry.written.is_some() {
            tx.delete_element(&Element {
                container: name.clone(),
                key,
                value: None,
                comment: None,
            });
        }
        return false;
    };
    if entry.written.as_ref() == Some(&want.value) {
        return true;
    }
    let element = Element {
        container: name.clone(),
        key,
        value: want.value.clone(),
        comment: want.comment.clone(),
    };
    if entry.written.is_some() {
        tx.delete_element(&element);
    }
    tx.add_element(&element);
    entry.written = Some(element.value);
    true
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

    /// Makes room for `n` elements in `cluster-ips` and in `service-ips`, which hold one for
    /// nearly every Service port.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.cluster_ips.elements.reserve(n);
        self.service_ips.elements.reserve(n);
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
