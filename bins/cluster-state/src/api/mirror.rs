//! The objects the watchers have reported, as snapshots: a pure state machine.
//!
//! Every object is validated as the API server would ([`crate::validate`]) before it goes in:
//! the API server has accepted it, so only skew or a bug can make one invalid, but what the
//! binaries build from an object must never depend on that. An invalid object is left out (a
//! new version that is invalid removes the old one: the old one is no longer what the cluster
//! says), and reported once per version.

use std::collections::{BTreeMap, BTreeSet};

use crate::{Invalid, Kind, Object, ObjectRef, Snapshot, validate};

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
    /// The API server does not serve `kind` (its CRD is not installed): it has no objects.
    Absent(Kind),
}

/// An object left out because it is invalid, reported for the first time in this version.
#[derive(Debug)]
pub(crate) struct Rejected {
    /// The object as the API server sent it.
    pub(crate) object: Object,
    /// Why it is invalid.
    pub(crate) invalid: Invalid,
}

/// An object, validated.
enum Checked {
    Valid(Object),
    /// Its kind and key, and the report if this version was not reported before.
    Invalid((Kind, ObjectRef), Option<Rejected>),
}

/// The version of an invalid object last reported (its `resourceVersion`).
type Version = Option<String>;

/// The API server's objects of the watched kinds, as far as the watchers have told.
#[derive(Debug)]
pub(crate) struct Mirror {
    objects: Snapshot,
    /// The lists in progress, swapped in whole when complete (a relist is atomic).
    lists: BTreeMap<Kind, Vec<Object>>,
    /// The kinds not listed completely even once yet.
    unlisted: BTreeSet<Kind>,
    /// The objects left out as invalid, with the version reported.
    invalid: BTreeMap<(Kind, ObjectRef), Version>,
    /// The invalid objects of each list in progress: those not in it are forgotten with it.
    listed_invalid: BTreeMap<Kind, BTreeSet<ObjectRef>>,
    /// The kinds the API server does not serve, since it last said so.
    absent: BTreeSet<Kind>,
}

impl Mirror {
    /// A mirror of `kinds`, none listed yet.
    pub(crate) fn new(kinds: &[Kind]) -> Self {
        Self {
            objects: Snapshot::default(),
            lists: BTreeMap::new(),
            unlisted: kinds.iter().copied().collect(),
            invalid: BTreeMap::new(),
            listed_invalid: BTreeMap::new(),
            absent: BTreeSet::new(),
        }
    }

    /// Takes in one update; returns the object it leaves out as invalid, when this version of
    /// it was not reported before.
    pub(crate) fn apply(&mut self, update: Update) -> Option<Rejected> {
        match update {
            Update::Relisting(kind) => {
                self.lists.insert(kind, Vec::new());
                self.listed_invalid.insert(kind, BTreeSet::new());
            }
            Update::Listed(object) => {
                let kind = object.kind();
                match self.check(object) {
                    Checked::Valid(object) => self.lists.entry(kind).or_default().push(object),
                    Checked::Invalid((_, key), rejected) => {
                        self.listed_invalid.entry(kind).or_default().insert(key);
                        return rejected;
                    }
                }
            }
            Update::Relisted(kind) => {
                self.absent.remove(&kind);
                self.objects.clear(kind);
                for object in self.lists.remove(&kind).unwrap_or_default() {
                    self.objects.insert(object);
                }
                let still_invalid = self.listed_invalid.remove(&kind).unwrap_or_default();
                self.invalid
                    .retain(|(of, key), _| *of != kind || still_invalid.contains(key));
                self.unlisted.remove(&kind);
            }
            Update::Applied(object) => match self.check(object) {
                Checked::Valid(object) => self.objects.insert(object),
                Checked::Invalid((kind, key), rejected) => {
                    self.objects.remove(kind, &key);
                    return rejected;
                }
            },
            Update::Deleted(kind, key) => {
                self.invalid.remove(&(kind, key.clone()));
                self.objects.remove(kind, &key);
            }
            Update::Absent(kind) => {
                self.absent.insert(kind);
                self.lists.remove(&kind);
                self.listed_invalid.remove(&kind);
                self.objects.clear(kind);
                self.invalid.retain(|(of, _), _| *of != kind);
                self.unlisted.remove(&kind);
            }
        }
        None
    }

    /// Whether the API server said last that it does not serve `kind`.
    pub(crate) fn is_absent(&self, kind: Kind) -> bool {
        self.absent.contains(&kind)
    }

    /// Validates `object`, recording it as invalid if it is.
    fn check(&mut self, object: Object) -> Checked {
        let key = (object.kind(), object.key());
        let Err(invalid) = validate(&object) else {
            self.invalid.remove(&key);
            return Checked::Valid(object);
        };
        let version = object.metadata().resource_version.clone();
        let reported = self.invalid.insert(key.clone(), version.clone());
        let new = reported.as_ref() != Some(&version);
        Checked::Invalid(key, new.then_some(Rejected { object, invalid }))
    }

    /// How many objects are left out as invalid.
    pub(crate) fn invalid_count(&self) -> usize {
        self.invalid.len()
    }

    /// The objects, once every kind has been listed.
    pub(crate) fn objects(&self) -> Option<&Snapshot> {
        self.unlisted.is_empty().then_some(&self.objects)
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

    /// A Service `name` with one port named `port_name`.
    fn service(name: &str, port_name: &str, version: &str) -> Object {
        use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
        Service {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                resource_version: Some(version.into()),
                ..ObjectMeta::default()
            },
            spec: Some(ServiceSpec {
                ports: Some(vec![ServicePort {
                    name: Some(port_name.into()),
                    port: 80,
                    ..ServicePort::default()
                }]),
                ..ServiceSpec::default()
            }),
            ..Service::default()
        }
        .into()
    }

    fn next(mirror: &Mirror, previous: &Snapshot) -> Option<Snapshot> {
        mirror.objects()?.clone().succeeding(previous)
    }

    #[test]
    fn publishes_once_every_kind_is_listed_and_relists_atomically() {
        let mut mirror = Mirror::new(&[Kind::ConfigMap, Kind::Namespace]);
        mirror.apply(Update::Relisting(Kind::ConfigMap));
        mirror.apply(Update::Listed(config_map("a")));
        mirror.apply(Update::Listed(config_map("b")));
        mirror.apply(Update::Relisted(Kind::ConfigMap));
        assert!(mirror.objects().is_none(), "namespaces not listed yet");
        mirror.apply(Update::Relisting(Kind::Namespace));
        mirror.apply(Update::Relisted(Kind::Namespace));
        let first = next(&mirror, &Snapshot::default()).unwrap();
        assert_eq!((first.revision, first.config_maps.len()), (1, 2));

        mirror.apply(Update::Deleted(
            Kind::ConfigMap,
            ObjectRef::new("default", "a"),
        ));
        mirror.apply(Update::Applied(config_map("c")));
        let second = next(&mirror, &first).unwrap();
        let changed: Vec<_> = second
            .changes
            .of(Kind::ConfigMap)
            .map(|k| &k.name)
            .collect();
        assert_eq!(changed, ["a", "c"]);

        // A relist in progress changes nothing until it is complete; then `b` is gone.
        mirror.apply(Update::Relisting(Kind::ConfigMap));
        mirror.apply(Update::Listed(config_map("c")));
        assert!(next(&mirror, &second).is_none());
        mirror.apply(Update::Relisted(Kind::ConfigMap));
        let third = next(&mirror, &second).unwrap();
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

    #[test]
    fn an_absent_kind_counts_as_listed_empty_until_it_is_listed() {
        let mut mirror = Mirror::new(&[Kind::ConfigMap, Kind::HttpRoute]);
        mirror.apply(Update::Relisting(Kind::ConfigMap));
        mirror.apply(Update::Listed(config_map("a")));
        mirror.apply(Update::Relisted(Kind::ConfigMap));
        assert!(mirror.objects().is_none());
        assert!(!mirror.is_absent(Kind::HttpRoute));
        mirror.apply(Update::Absent(Kind::HttpRoute));
        assert!(mirror.is_absent(Kind::HttpRoute));
        let first = next(&mirror, &Snapshot::default()).unwrap();
        assert_eq!((first.config_maps.len(), first.http_routes.len()), (1, 0));
        // Asked again and still absent: nothing changes. Then the CRD is installed.
        mirror.apply(Update::Absent(Kind::HttpRoute));
        assert!(next(&mirror, &first).is_none());
        mirror.apply(Update::Relisting(Kind::HttpRoute));
        mirror.apply(Update::Relisted(Kind::HttpRoute));
        assert!(!mirror.is_absent(Kind::HttpRoute));
        assert!(mirror.objects().is_some());
    }

    #[test]
    fn invalid_objects_are_left_out_and_reported_once_per_version() {
        let bad = "x\n-A KUBE-SERVICES -j DNAT --to-destination 6.6.6.6\n#";
        let mut mirror = Mirror::new(&[Kind::Service]);
        assert!(mirror.apply(Update::Relisting(Kind::Service)).is_none());
        assert!(
            mirror
                .apply(Update::Listed(service("web", "http", "1")))
                .is_none()
        );
        let rejected = mirror
            .apply(Update::Listed(service("api", bad, "2")))
            .unwrap();
        assert_eq!(rejected.object.key().name, "api");
        assert!(!rejected.invalid.errors.is_empty());
        mirror.apply(Update::Relisted(Kind::Service));
        let first = next(&mirror, &Snapshot::default()).unwrap();
        assert_eq!(first.services.len(), 1, "the invalid Service is left out");
        assert_eq!(mirror.invalid_count(), 1);

        // The same version again (a relist) is not reported again; a new version is.
        mirror.apply(Update::Relisting(Kind::Service));
        assert!(
            mirror
                .apply(Update::Listed(service("api", bad, "2")))
                .is_none()
        );
        mirror.apply(Update::Listed(service("web", "http", "1")));
        mirror.apply(Update::Relisted(Kind::Service));
        assert!(
            mirror
                .apply(Update::Applied(service("api", bad, "3")))
                .is_some()
        );
        assert_eq!(mirror.invalid_count(), 1);

        // A valid object made invalid by an update is removed, not kept in its old version.
        assert!(
            mirror
                .apply(Update::Applied(service("web", bad, "4")))
                .is_some()
        );
        let second = next(&mirror, &first).unwrap();
        assert!(second.services.is_empty(), "{:?}", second.services.keys());
        assert_eq!(mirror.invalid_count(), 2);

        // Deleted, or gone from a relist, it is forgotten.
        mirror.apply(Update::Deleted(
            Kind::Service,
            ObjectRef::new("default", "api"),
        ));
        mirror.apply(Update::Relisting(Kind::Service));
        mirror.apply(Update::Relisted(Kind::Service));
        assert_eq!(mirror.invalid_count(), 0);
    }
}
