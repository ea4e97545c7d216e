//! Status written by the binaries, kept beside the manifests in `DIR/.status/`.
//!
//! One file per object, `.status/RESOURCE/NAMESPACE/NAME.yaml` (`.status/RESOURCE/NAME.yaml`
//! for a cluster-scoped one: `ingresses/shop/web.yaml`, `gatewayclasses/nginx.yaml`), holding
//! the object with only its name, namespace and `status` (a manifest `kubectl` reads; the
//! Gateway API kinds also carry an empty `spec`, which their schema requires). The folder is hidden, so the
//! manifest scan skips it and the watcher ignores its events: writing a status never triggers
//! a reload. The statuses are laid over the objects of every snapshot, as an API server returns
//! an object with the status last written.
//!
//! Events (`events.k8s.io/v1`) go to `.status/events/NAMESPACE/NAME.yaml`, one file per event,
//! rewritten whole when its `series` grows; they are written, never read back.
//!
//! An object name may be 253 bytes, but a file name at most 255 (`NAME_MAX` on Linux), and the
//! temporary file of an atomic write adds `.yaml.tmp`: a name longer than [`FILE_STEM_LIMIT`]
//! is written as its first bytes, `_` and a SHA-256 of the whole name (see [`file_name`]).
//! Names that fit keep the file they always had.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use k8s_openapi::api::events::v1::Event;
use sha2::{Digest, Sha256};

use super::ManifestError;
use super::parse::read_objects;
use crate::{Kind, ObjectRef, Snapshot, Status};

/// The name of the hidden status folder inside the manifest folder.
pub(crate) const STATUS_DIR: &str = ".status";

/// The longest object name used as is in a file name: with `.yaml.tmp`, 255 bytes. Longer
/// names are shortened and hashed to this length.
const FILE_STEM_LIMIT: usize = 255 - ".yaml.tmp".len();

/// Hex digits of the hash in a shortened name (128 bits).
const HASH_DIGITS: usize = 32;

/// The file of object `name`: `NAME.yaml`, or for a name longer than [`FILE_STEM_LIMIT`],
/// `PREFIX_HASH.yaml` of the same length, with the start of the name and 128 bits of its
/// SHA-256 in hex.
/// `_` is not a character of object names, so a shortened name never equals a kept one, and
/// the hash of the whole name keeps long names that share a prefix apart.
fn file_name(name: &str) -> String {
    if name.len() <= FILE_STEM_LIMIT {
        return format!("{name}.yaml");
    }
    let cut = (0..=FILE_STEM_LIMIT - HASH_DIGITS - 1)
        .rev()
        .find(|i| name.is_char_boundary(*i))
        .unwrap_or(0);
    let prefix = name.get(..cut).unwrap_or_default();
    let digest = Sha256::digest(name.as_bytes());
    let hash: String = digest
        .iter()
        .take(HASH_DIGITS / 2)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{prefix}_{hash}.yaml")
}

/// The statuses written so far, by kind and object.
#[derive(Debug)]
pub(crate) struct StatusFiles {
    dir: PathBuf,
    statuses: BTreeMap<(Kind, ObjectRef), Status>,
}

impl StatusFiles {
    /// Reads the statuses under `manifests/.status`; unreadable files are reported and skipped.
    pub(crate) fn load(manifests: &Path) -> (Self, Vec<ManifestError>) {
        let dir = manifests.join(STATUS_DIR);
        let mut files = Self {
            dir,
            statuses: BTreeMap::new(),
        };
        let mut errors = Vec::new();
        for kind in Status::KINDS {
            let folder = files.dir.join(kind.resource());
            for path in yaml_files(&folder, &mut errors) {
                match read_status(&path, kind) {
                    Ok(Some((key, status))) => {
                        files.statuses.insert((kind, key), status);
                    }
                    Ok(None) => {}
                    Err(error) => errors.push(error),
                }
            }
        }
        (files, errors)
    }

    /// Writes `status` for the object `key` (atomically: a temporary file renamed over it).
    pub(crate) fn write(&mut self, key: &ObjectRef, status: Status) -> io::Result<PathBuf> {
        let kind = status.kind();
        let path = self.status_path(kind, key);
        let text = serde_saphyr::to_string(&status.object(key)).map_err(io::Error::other)?;
        write_atomically(&path, text.as_bytes())?;
        self.statuses.insert((kind, key.clone()), status);
        Ok(path)
    }

    /// Writes `event`, whose namespace and name are `key` (checked safe as file names), to
    /// its file (atomically).
    pub(crate) fn write_event(&self, key: &ObjectRef, event: &Event) -> io::Result<PathBuf> {
        let path = self
            .dir
            .join("events")
            .join(&key.namespace)
            .join(file_name(&key.name));
        let text = serde_saphyr::to_string(event).map_err(io::Error::other)?;
        write_atomically(&path, text.as_bytes())?;
        Ok(path)
    }

    /// Lays the statuses over the objects of `snapshot` that exist.
    pub(crate) fn apply(&self, snapshot: &mut Snapshot) {
        for ((_, key), status) in &self.statuses {
            status.lay_over(snapshot, key);
        }
    }

    /// `.status/RESOURCE/NAMESPACE/NAME.yaml`, or `.status/RESOURCE/NAME.yaml` for a
    /// cluster-scoped object.
    fn status_path(&self, kind: Kind, key: &ObjectRef) -> PathBuf {
        let mut path = self.dir.join(kind.resource());
        if !key.namespace.is_empty() {
            path.push(&key.namespace);
        }
        path.join(file_name(&key.name))
    }
}

/// The `.yaml` files in `folder` and in its subfolders (one level: the namespaces); a missing
/// folder has none.
fn yaml_files(folder: &Path, errors: &mut Vec<ManifestError>) -> Vec<PathBuf> {
    let entries = match fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Vec::new(),
        Err(error) => {
            errors.push(ManifestError::file(folder, format!("cannot list: {error}")));
            return Vec::new();
        }
    };
    let mut files = Vec::new();
    for path in entries.flatten().map(|entry| entry.path()) {
        if path.is_dir() {
            let names = fs::read_dir(&path).into_iter().flatten().flatten();
            files.extend(names.map(|name| name.path()));
        } else {
            files.push(path);
        }
    }
    files.retain(|path| path.extension().is_some_and(|e| e == "yaml"));
    files
}

/// The status of kind `kind` that the file `path` holds, with its object's key.
fn read_status(path: &Path, kind: Kind) -> Result<Option<(ObjectRef, Status)>, ManifestError> {
    let text = fs::read_to_string(path)
        .map_err(|error| ManifestError::file(path, format!("cannot read: {error}")))?;
    // A status file holds an object's metadata and status only, not a valid object: it is
    // read, not validated (the object itself was, in its manifest).
    let objects = read_objects(path, &text)?;
    Ok(objects
        .into_iter()
        .filter(|read| read.object.kind() == kind)
        .find_map(|read| Some((read.object.key(), Status::of(&read.object)?))))
}

fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let mut temporary = path.to_owned();
    temporary.set_extension("yaml.tmp");
    let mut file = fs::File::create(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use crate::Object;
    use k8s_openapi::api::networking::v1::{
        Ingress, IngressLoadBalancerIngress, IngressLoadBalancerStatus,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};

    use crate::gateway::{GatewayClass, GatewayClassStatus, HttpRoute, RouteParentStatus};
    use crate::gateway::{ParentReference, RouteStatus};

    use super::*;

    fn status(ip: &str) -> IngressLoadBalancerStatus {
        IngressLoadBalancerStatus {
            ingress: Some(vec![IngressLoadBalancerIngress {
                ip: Some(ip.into()),
                ..IngressLoadBalancerIngress::default()
            }]),
        }
    }

    fn event(key: &ObjectRef) -> Event {
        Event {
            metadata: ObjectMeta {
                name: Some(key.name.clone()),
                namespace: Some(key.namespace.clone()),
                ..ObjectMeta::default()
            },
            note: Some("refused".into()),
            ..Event::default()
        }
    }

    /// A valid 253-byte name (the longest object name) made "File name too long" for its
    /// event file, retried forever: long names are shortened with a hash, and stay apart.
    #[test]
    fn the_longest_names_have_files_that_fit() {
        let dir = tempfile::tempdir().unwrap();
        let (mut files, _) = StatusFiles::load(dir.path());
        let label = "a".repeat(63);
        let long = |last: char| format!("{label}.{label}.{label}.{}{last}", "b".repeat(60));
        let (one, two) = (long('x'), long('y'));
        assert_eq!(one.len(), 253);
        let mut written = Vec::new();
        for name in [&one, &two] {
            let key = ObjectRef::new("shop", name.as_str());
            let path = files.write_event(&key, &event(&key)).unwrap();
            let file = path.file_name().unwrap().to_str().unwrap().to_owned();
            assert_eq!(file.len() + ".tmp".len(), 255, "{file}");
            assert!(
                file.starts_with(&name[..213]) && file.ends_with(".yaml"),
                "{file}"
            );
            let text = fs::read_to_string(&path).unwrap();
            assert!(text.contains(name.as_str()), "{text}");
            files
                .write(&key, Status::Ingress(status("192.0.2.9")))
                .unwrap();
            written.push(path);
        }
        assert_ne!(written[0], written[1]);
        // Statuses are found by their content, whatever the file is called.
        let (files, errors) = StatusFiles::load(dir.path());
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(files.statuses.len(), 2);
        // Names up to the limit keep their plain file name.
        assert_eq!(
            file_name("web.0123456789abcdef"),
            "web.0123456789abcdef.yaml"
        );
        assert_eq!(
            file_name(&"c".repeat(246)),
            format!("{}.yaml", "c".repeat(246))
        );
    }

    #[test]
    fn statuses_survive_a_restart_and_apply_to_existing_ingresses_only() {
        let dir = tempfile::tempdir().unwrap();
        let (mut files, errors) = StatusFiles::load(dir.path());
        assert!(errors.is_empty());
        let key = ObjectRef::new("shop", "shop");
        let path = files
            .write(&key, Status::Ingress(status("192.0.2.7")))
            .unwrap();
        assert_eq!(path, dir.path().join(".status/ingresses/shop/shop.yaml"));
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("kind: Ingress") && text.contains("192.0.2.7"),
            "{text}"
        );

        let (files, errors) = StatusFiles::load(dir.path());
        assert!(errors.is_empty(), "{errors:?}");
        let mut snapshot = Snapshot::default();
        snapshot.insert(
            Ingress {
                metadata: ObjectMeta {
                    name: Some("shop".into()),
                    namespace: Some("shop".into()),
                    ..ObjectMeta::default()
                },
                ..Ingress::default()
            }
            .into(),
        );
        files.apply(&mut snapshot);
        let applied = snapshot.ingresses[&key].status.clone().unwrap();
        assert_eq!(applied.load_balancer, Some(status("192.0.2.7")));
        assert_eq!(snapshot.len(), 1);
    }

    fn condition(type_: &str) -> Condition {
        Condition {
            type_: type_.into(),
            status: "True".into(),
            reason: type_.into(),
            message: String::new(),
            observed_generation: Some(1),
            last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
        }
    }

    /// A cluster-scoped GatewayClass and a namespaced HTTPRoute: each status has its file by
    /// resource (and namespace), is read back after a restart, and is laid over its object.
    #[test]
    fn gateway_api_statuses_have_files_by_resource() {
        let dir = tempfile::tempdir().unwrap();
        let (mut files, _) = StatusFiles::load(dir.path());
        let class_key = ObjectRef::cluster("nginx");
        let class_status = GatewayClassStatus {
            conditions: Some(vec![condition("Accepted")]),
            ..GatewayClassStatus::default()
        };
        let path = files
            .write(&class_key, Status::GatewayClass(class_status.clone()))
            .unwrap();
        assert_eq!(path, dir.path().join(".status/gatewayclasses/nginx.yaml"));
        let route_key = ObjectRef::new("shop", "web");
        let route_status = RouteStatus {
            parents: vec![RouteParentStatus {
                parent_ref: ParentReference {
                    name: "gw".into(),
                    ..ParentReference::default()
                },
                controller_name: "example.com/gateway".into(),
                conditions: vec![condition("Accepted")],
            }],
        };
        let path = files
            .write(&route_key, Status::HttpRoute(route_status.clone()))
            .unwrap();
        assert_eq!(path, dir.path().join(".status/httproutes/shop/web.yaml"));

        let (files, errors) = StatusFiles::load(dir.path());
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(files.statuses.len(), 2);
        let mut snapshot = Snapshot::default();
        let meta = |key: &ObjectRef| ObjectMeta {
            name: Some(key.name.clone()),
            namespace: (!key.namespace.is_empty()).then(|| key.namespace.clone()),
            ..ObjectMeta::default()
        };
        snapshot.insert(Object::GatewayClass(std::sync::Arc::new(GatewayClass {
            metadata: meta(&class_key),
            spec: Default::default(),
            status: None,
        })));
        snapshot.insert(Object::HttpRoute(std::sync::Arc::new(HttpRoute {
            metadata: meta(&route_key),
            spec: Default::default(),
            status: None,
        })));
        files.apply(&mut snapshot);
        assert_eq!(
            snapshot.gateway_classes[&class_key].status,
            Some(class_status)
        );
        assert_eq!(snapshot.http_routes[&route_key].status, Some(route_status));
    }
}
