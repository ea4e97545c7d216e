//! One consistent view of every object, and what changed since the view before it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::kind::with_kinds;
use crate::{Kind, Object, ObjectRef};

/// The objects of one kind, by key.
pub type Objects<T> = BTreeMap<ObjectRef, Arc<T>>;

macro_rules! define_snapshot {
    ($($variant:ident($ty:ty) $field:ident, $scope:ident;)*) => {
        /// Every object the source knows, at one moment, by kind; plus what changed since the
        /// snapshot published before it.
        ///
        /// A source publishes a new snapshot only when an object was added, changed or removed;
        /// unchanged objects keep their `Arc`, so comparing two snapshots is cheap.
        #[derive(Debug, Clone, Default)]
        pub struct Snapshot {
            /// Counts the published snapshots: 0 until the source has read everything once,
            /// then 1, 2, … (wait for `revision > 0` before acting on an empty cluster).
            pub revision: u64,
            /// What changed since the previous snapshot (everything, for the first one).
            pub changes: Changes,
            $(
                #[doc = concat!("Every `", stringify!($variant), "`.")]
                pub $field: Objects<$ty>,
            )*
        }

        impl Snapshot {
            /// Adds `object` under its key, replacing the object of the same kind and key.
            pub fn insert(&mut self, object: Object) {
                let key = object.key();
                match object {
                    $(Object::$variant(object) => {
                        self.$field.insert(key, object);
                    })*
                }
            }

            /// Removes the object of `kind` under `key`, if there is one.
            pub fn remove(&mut self, kind: Kind, key: &ObjectRef) {
                match kind {
                    $(Kind::$variant => {
                        self.$field.remove(key);
                    })*
                }
            }

            /// Removes every object of `kind`.
            pub(crate) fn clear(&mut self, kind: Kind) {
                match kind {
                    $(Kind::$variant => self.$field.clear(),)*
                }
            }

            /// The object of `kind` under `key`.
            pub fn get(&self, kind: Kind, key: &ObjectRef) -> Option<Object> {
                match kind {
                    $(Kind::$variant => self.$field.get(key).cloned().map(Object::$variant),)*
                }
            }

            /// The objects of `kind`, in key order.
            pub fn objects(&self, kind: Kind) -> Box<dyn Iterator<Item = Object> + '_> {
                match kind {
                    $(Kind::$variant => {
                        Box::new(self.$field.values().cloned().map(Object::$variant))
                    })*
                }
            }

            /// The number of objects of every kind.
            pub fn len(&self) -> usize {
                0 $(+ self.$field.len())*
            }

            /// Whether there are no objects at all.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The keys whose object differs between `self` and `other`, by kind.
            pub fn diff(&self, other: &Snapshot) -> Changes {
                let mut changes = Changes::default();
                $(diff_maps(&self.$field, &other.$field, Kind::$variant, &mut changes);)*
                changes
            }
        }
    };
}

with_kinds!(define_snapshot);

impl Snapshot {
    /// This snapshot as the successor of `previous`: numbered after it, with the changes between
    /// them; `None` when no object changed (nothing to publish).
    pub fn succeeding(mut self, previous: &Snapshot) -> Option<Snapshot> {
        let changes = previous.diff(&self);
        if changes.is_empty() && previous.revision > 0 {
            return None;
        }
        self.changes = changes;
        self.revision = previous.revision + 1;
        Some(self)
    }

    /// Whether both snapshots hold the same objects (revision and changes aside).
    pub fn same_objects(&self, other: &Snapshot) -> bool {
        self.diff(other).is_empty()
    }
}

/// Records in `changes` every key of `kind` that is in one map only or whose objects differ.
fn diff_maps<T: PartialEq>(old: &Objects<T>, new: &Objects<T>, kind: Kind, changes: &mut Changes) {
    let same = |a: &Arc<T>, b: &Arc<T>| Arc::ptr_eq(a, b) || a == b;
    for (key, object) in old {
        if !new.get(key).is_some_and(|other| same(object, other)) {
            changes.insert(kind, key.clone());
        }
    }
    for key in new.keys().filter(|key| !old.contains_key(*key)) {
        changes.insert(kind, key.clone());
    }
}

/// The keys that changed (added, modified or removed) between two snapshots, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    keys: BTreeMap<Kind, BTreeSet<ObjectRef>>,
}

impl Changes {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether any object of `kind` changed.
    pub fn any(&self, kind: Kind) -> bool {
        self.keys.contains_key(&kind)
    }

    /// Whether the object of `kind` under `key` changed.
    pub fn contains(&self, kind: Kind, key: &ObjectRef) -> bool {
        self.keys.get(&kind).is_some_and(|keys| keys.contains(key))
    }

    /// The changed keys of `kind`, in order.
    pub fn of(&self, kind: Kind) -> impl Iterator<Item = &ObjectRef> {
        self.keys.get(&kind).into_iter().flatten()
    }

    /// Every changed key with its kind.
    pub fn iter(&self) -> impl Iterator<Item = (Kind, &ObjectRef)> {
        self.keys
            .iter()
            .flat_map(|(kind, keys)| keys.iter().map(|key| (*kind, key)))
    }

    /// The number of changed keys.
    pub fn len(&self) -> usize {
        self.keys.values().map(BTreeSet::len).sum()
    }

    /// Records that the object of `kind` under `key` changed.
    pub fn insert(&mut self, kind: Kind, key: ObjectRef) {
        self.keys.entry(kind).or_default().insert(key);
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn config_map(name: &str, value: &str) -> Object {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                ..ObjectMeta::default()
            },
            data: Some([("k".to_owned(), value.to_owned())].into()),
            ..ConfigMap::default()
        }
        .into()
    }

    fn namespace(name: &str) -> Object {
        Namespace {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        }
        .into()
    }

    #[test]
    fn the_first_snapshot_changes_everything_even_when_empty() {
        let mut first = Snapshot::default();
        first.insert(config_map("a", "1"));
        first.insert(namespace("web"));
        let first = first.succeeding(&Snapshot::default()).unwrap();
        assert_eq!(first.revision, 1);
        assert_eq!(first.changes.len(), 2);
        assert!(
            first
                .changes
                .contains(Kind::Namespace, &ObjectRef::cluster("web"))
        );

        let empty = Snapshot::default()
            .succeeding(&Snapshot::default())
            .unwrap();
        assert_eq!(empty.revision, 1);
        assert!(empty.changes.is_empty());
    }

    #[test]
    fn changes_name_added_modified_and_removed_keys_only() {
        let mut before = Snapshot::default();
        before.insert(config_map("kept", "1"));
        before.insert(config_map("edited", "1"));
        before.insert(config_map("removed", "1"));
        let before = before.succeeding(&Snapshot::default()).unwrap();

        let mut after = before.clone();
        after.insert(config_map("kept", "1")); // equal content, new Arc
        after.insert(config_map("edited", "2"));
        after.remove(Kind::ConfigMap, &ObjectRef::new("default", "removed"));
        after.insert(config_map("added", "1"));
        let after = after.succeeding(&before).unwrap();

        assert_eq!(after.revision, 2);
        let changed: Vec<_> = after
            .changes
            .of(Kind::ConfigMap)
            .map(|k| k.name.as_str())
            .collect();
        assert_eq!(changed, ["added", "edited", "removed"]);
        assert!(!after.changes.any(Kind::Service));
        assert!(after.clone().succeeding(&after).is_none());
    }
}
