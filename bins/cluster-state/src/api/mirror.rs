//! The objects the watchers have reported, as snapshots: a pure state machine.

use std::collections::{BTreeMap, BTreeSet};

use crate::{Kind, Object, ObjectRef, Snapshot};

/// What a watcher reported, for any kind.
#[derive(Debug)]
pub(crate) enum Update {
    /// A (re)list of `kind` begins: its objects follow as `Listed`.
    Relisting(Kind),
    /// An object of the list in progress.
    Listed(Object),
    /// The list of `kind` is complete: it replaces every object of that kind.
    Relisted(Kind),
    /// An object was added or modified.
    Applied(Object),
    /// An object was deleted.
    Deleted(Kind, ObjectRef),
}

/// The API server's objects of the watched kinds, as far as the watchers have told.
#[derive(Debug)]
pub(crate) struct Mirror {
    objects: Snapshot,
    /// The lists in progress, swapped in whole when complete (a relist is atomic).
    lists: BTreeMap<Kind, Vec<Object>>,
    /// The kinds not listed completely even once yet.
    unlisted: BTreeSet<Kind>,
}

impl Mirror {
    /// A mirror of `kinds`, none listed yet.
    pub(crate) fn new(kinds: &[Kind]) -> Self {
        Self {
            objects: Snapshot::default(),
            lists: BTreeMap::new(),
            unlisted: kinds.iter().copied().collect(),
        }
    }

    /// Takes in one update.
    pub(crate) fn apply(&mut self, update: Update) {
        match update {
            Update::Relisting(kind) => {
                self.lists.insert(kind, Vec::new());
            }
            Update::Listed(object) => {
                self.lists.entry(object.kind()).or_default().push(object);
            }
            Update::Relisted(kind) => {
                self.objects.clear(kind);
                for object in self.lists.remove(&kind).unwrap_or_default() {
                    self.objects.insert(object);
                }
                self.unlisted.remove(&kind);
            }
            Update::Applied(object) => self.objects.insert(object),
            Update::Deleted(kind, key) => self.objects.remove(kind, &key),
        }
    }

    /// The snapshot to publish after `previous`: none before every kind was listed once, nor
    /// when no object changed.
    pub(crate) fn snapshot(&self, previous: &Snapshot) -> Option<Snapshot> {
        if !self.unlisted.is_empty() {
            return None;
        }
        self.objects.clone().succeeding(previous)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn config_map(name: &str) -> Object {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
        .into()
    }

    #[test]
    fn publishes_once_every_kind_is_listed_and_relists_atomically() {
        let mut mirror = Mirror::new(&[Kind::ConfigMap, Kind::Namespace]);
        mirror.apply(Update::Relisting(Kind::ConfigMap));
        mirror.apply(Update::Listed(config_map("a")));
        mirror.apply(Update::Listed(config_map("b")));
        mirror.apply(Update::Relisted(Kind::ConfigMap));
        assert!(
            mirror.snapshot(&Snapshot::default()).is_none(),
            "namespaces not listed yet"
        );
        mirror.apply(Update::Relisting(Kind::Namespace));
        mirror.apply(Update::Relisted(Kind::Namespace));
        let first = mirror.snapshot(&Snapshot::default()).unwrap();
        assert_eq!((first.revision, first.config_maps.len()), (1, 2));

        mirror.apply(Update::Deleted(
            Kind::ConfigMap,
            ObjectRef::new("default", "a"),
        ));
        mirror.apply(Update::Applied(config_map("c")));
        let second = mirror.snapshot(&first).unwrap();
        let changed: Vec<_> = second
            .changes
            .of(Kind::ConfigMap)
            .map(|k| &k.name)
            .collect();
        assert_eq!(changed, ["a", "c"]);

        // A relist in progress changes nothing until it is complete; then `b` is gone.
        mirror.apply(Update::Relisting(Kind::ConfigMap));
        mirror.apply(Update::Listed(config_map("c")));
        assert!(mirror.snapshot(&second).is_none());
        mirror.apply(Update::Relisted(Kind::ConfigMap));
        let third = mirror.snapshot(&second).unwrap();
        assert_eq!(
            third
                .config_maps
                .keys()
                .map(|k| &k.name)
                .collect::<Vec<_>>(),
            ["c"]
        );
        assert_eq!(third.changes.len(), 1);
    }
}
