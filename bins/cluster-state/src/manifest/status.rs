//! Status written by the binaries, kept beside the manifests in `DIR/.status/`.
//!
//! One file per object, `.status/ingresses/NAMESPACE/NAME.yaml`, holding an `Ingress` with only
//! its name, namespace and `status` (a manifest `kubectl` reads). The folder is hidden, so the
//! manifest scan skips it and the watcher ignores its events: writing a status never triggers
//! a reload. The statuses are laid over the objects of every snapshot, as an API server returns
//! an object with the status last written.
//!
//! Events (`events.k8s.io/v1`) go to `.status/events/NAMESPACE/NAME.yaml`, one file per event,
//! rewritten whole when its `series` grows; they are written, never read back.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::networking::v1::{Ingress, IngressLoadBalancerStatus, IngressStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{ManifestError, parse_manifest};
use crate::{Object, ObjectRef, Snapshot};

/// The name of the hidden status folder inside the manifest folder.
pub(crate) const STATUS_DIR: &str = ".status";

/// The statuses written so far, by object.
#[derive(Debug)]
pub(crate) struct StatusFiles {
    dir: PathBuf,
    ingresses: BTreeMap<ObjectRef, IngressLoadBalancerStatus>,
}

impl StatusFiles {
    /// Reads the statuses under `manifests/.status`; unreadable files are reported and skipped.
    pub(crate) fn load(manifests: &Path) -> (Self, Vec<ManifestError>) {
        let dir = manifests.join(STATUS_DIR);
        let mut files = Self {
            dir,
            ingresses: BTreeMap::new(),
        };
        let mut errors = Vec::new();
        let namespaces = match fs::read_dir(files.dir.join("ingresses")) {
            Ok(namespaces) => namespaces,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return (files, errors),
            Err(error) => {
                errors.push(ManifestError::file(
                    &files.dir,
                    format!("cannot list: {error}"),
                ));
                return (files, errors);
            }
        };
        let paths = namespaces
            .flatten()
            .filter_map(|namespace| fs::read_dir(namespace.path()).ok())
            .flat_map(|names| names.flatten().map(|name| name.path()));
        for path in paths.filter(|path| path.extension().is_some_and(|e| e == "yaml")) {
            match read_ingress_status(&path) {
                Ok(Some((key, status))) => {
                    files.ingresses.insert(key, status);
                }
                Ok(None) => {}
                Err(error) => errors.push(error),
            }
        }
        (files, errors)
    }

    /// Writes the status of the Ingress `key` (atomically: a temporary file renamed over it).
    pub(crate) fn write_ingress(
        &mut self,
        key: &ObjectRef,
        status: IngressLoadBalancerStatus,
    ) -> io::Result<PathBuf> {
        let path = self.ingress_path(key);
        let ingress = Ingress {
            metadata: ObjectMeta {
                name: Some(key.name.clone()),
                namespace: Some(key.namespace.clone()),
                ..ObjectMeta::default()
            },
            status: Some(IngressStatus {
                load_balancer: Some(status.clone()),
            }),
            ..Ingress::default()
        };
        let text = serde_saphyr::to_string(&ingress).map_err(io::Error::other)?;
        write_atomically(&path, text.as_bytes())?;
        self.ingresses.insert(key.clone(), status);
        Ok(path)
    }

    /// Writes `event`, whose namespace and name are `key` (checked safe as file names), to
    /// its file (atomically).
    pub(crate) fn write_event(&self, key: &ObjectRef, event: &Event) -> io::Result<PathBuf> {
        let file = format!("{}.yaml", key.name);
        let path = self.dir.join("events").join(&key.namespace).join(file);
        let text = serde_saphyr::to_string(event).map_err(io::Error::other)?;
        write_atomically(&path, text.as_bytes())?;
        Ok(path)
    }

    /// Lays the statuses over the objects of `snapshot` that exist.
    pub(crate) fn apply(&self, snapshot: &mut Snapshot) {
        for (key, status) in &self.ingresses {
            if let Some(ingress) = snapshot.ingresses.get_mut(key) {
                let ingress = std::sync::Arc::make_mut(ingress);
                ingress.status = Some(IngressStatus {
                    load_balancer: Some(status.clone()),
                });
            }
        }
    }

    fn ingress_path(&self, key: &ObjectRef) -> PathBuf {
        let file = format!("{}.yaml", key.name);
        self.dir.join("ingresses").join(&key.namespace).join(file)
    }
}

fn read_ingress_status(
    path: &Path,
) -> Result<Option<(ObjectRef, IngressLoadBalancerStatus)>, ManifestError> {
    let text = fs::read_to_string(path)
        .map_err(|error| ManifestError::file(path, format!("cannot read: {error}")))?;
    let objects = parse_manifest(path, &text)?;
    Ok(objects.into_iter().find_map(|object| match object {
        Object::Ingress(ingress) => {
            let key = ObjectRef::from_meta(&ingress.metadata);
            let status = ingress.status.as_ref()?.load_balancer.clone()?;
            Some((key, status))
        }
        _ => None,
    }))
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
    use k8s_openapi::api::networking::v1::IngressLoadBalancerIngress;

    use super::*;

    fn status(ip: &str) -> IngressLoadBalancerStatus {
        IngressLoadBalancerStatus {
            ingress: Some(vec![IngressLoadBalancerIngress {
                ip: Some(ip.into()),
                ..IngressLoadBalancerIngress::default()
            }]),
        }
    }

    #[test]
    fn statuses_survive_a_restart_and_apply_to_existing_ingresses_only() {
        let dir = tempfile::tempdir().unwrap();
        let (mut files, errors) = StatusFiles::load(dir.path());
        assert!(errors.is_empty());
        let key = ObjectRef::new("shop", "shop");
        let path = files.write_ingress(&key, status("192.0.2.7")).unwrap();
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
}
