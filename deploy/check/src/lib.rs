#![doc = include_str!("../README.md")]
//!
//! The manifests under `deploy/`, read as the API server would read them: every YAML document
//! into its `k8s-openapi` type, refusing fields the type does not know (k8s-openapi itself
//! ignores them, so a misspelt field would silently vanish). The tests in `tests/` check them
//! against the binaries' argument parsers and the API calls their code makes.

use std::fmt;
use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::IngressClass;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The `deploy/` folder of this repository.
pub fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One object of the manifests, typed.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Manifest {
    /// A `DaemonSet`.
    DaemonSet(DaemonSet),
    /// A `Deployment`.
    Deployment(Deployment),
    /// A `Service`.
    Service(Service),
    /// A `ConfigMap`.
    ConfigMap(ConfigMap),
    /// A `ServiceAccount`.
    ServiceAccount(ServiceAccount),
    /// A `Namespace`.
    Namespace(Namespace),
    /// An `IngressClass`.
    IngressClass(IngressClass),
    /// A `PodDisruptionBudget`.
    PodDisruptionBudget(PodDisruptionBudget),
    /// A `ClusterRole`.
    ClusterRole(ClusterRole),
    /// A `ClusterRoleBinding`.
    ClusterRoleBinding(ClusterRoleBinding),
    /// A `Role`.
    Role(Role),
    /// A `RoleBinding`.
    RoleBinding(RoleBinding),
}

/// Why a manifest was refused.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file cannot be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A document is not YAML, or not of its kind's type.
    #[error("{path}: document {document}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The document's index in the file, from 0.
        document: usize,
        /// What is wrong.
        message: String,
    },
}

/// Reads every YAML document of `path` into its type.
///
/// # Errors
///
/// The file cannot be read, a document is not YAML, its `apiVersion`/`kind` is not one of
/// [`Manifest`]'s, it does not fit its type, or it has a field the type does not know.
pub fn read_file(path: &Path) -> Result<Vec<Manifest>, ManifestError> {
    let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
        path: path.to_owned(),
        source,
    })?;
    documents(&text)
        .enumerate()
        .map(|(document, text)| {
            parse_document(text).map_err(|message| ManifestError::Invalid {
                path: path.to_owned(),
                document,
                message,
            })
        })
        .collect()
}

/// The documents of a YAML stream, split at `---` lines as kubectl splits them, without the
/// empty ones.
fn documents(text: &str) -> impl Iterator<Item = &str> {
    text.split("\n---")
        .map(|doc| doc.strip_prefix("---").unwrap_or(doc))
        .filter(|doc| {
            doc.lines()
                .any(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
        })
}

fn parse_document(text: &str) -> Result<Manifest, String> {
    let tree: Value = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
    let field = |name: &str| tree.get(name).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    let manifest = match (api_version, kind) {
        ("apps/v1", "DaemonSet") => Manifest::DaemonSet(typed(&tree)?),
        ("apps/v1", "Deployment") => Manifest::Deployment(typed(&tree)?),
        ("v1", "Service") => Manifest::Service(typed(&tree)?),
        ("v1", "ConfigMap") => Manifest::ConfigMap(typed(&tree)?),
        ("v1", "ServiceAccount") => Manifest::ServiceAccount(typed(&tree)?),
        ("v1", "Namespace") => Manifest::Namespace(typed(&tree)?),
        ("networking.k8s.io/v1", "IngressClass") => Manifest::IngressClass(typed(&tree)?),
        ("policy/v1", "PodDisruptionBudget") => Manifest::PodDisruptionBudget(typed(&tree)?),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => Manifest::ClusterRole(typed(&tree)?),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            Manifest::ClusterRoleBinding(typed(&tree)?)
        }
        ("rbac.authorization.k8s.io/v1", "Role") => Manifest::Role(typed(&tree)?),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => Manifest::RoleBinding(typed(&tree)?),
        _ => {
            return Err(format!(
                "unexpected apiVersion {api_version:?}, kind {kind:?}"
            ));
        }
    };
    Ok(manifest)
}

/// `tree` as `T`, refusing any field of `tree` that `T` drops when written back.
fn typed<T: DeserializeOwned + Serialize>(tree: &Value) -> Result<T, String> {
    let value: T = serde_json::from_value(tree.clone()).map_err(|e| e.to_string())?;
    let written = serde_json::to_value(&value).map_err(|e| e.to_string())?;
    match unknown_field(tree, &written, &mut FieldPath::default()) {
        Some(path) => Err(format!("unknown field {path}")),
        None => Ok(value),
    }
}

/// The first path under which `original` has something `written` has not (`written` may have
/// more: defaults the type fills in, such as `apiVersion`).
fn unknown_field(original: &Value, written: &Value, path: &mut FieldPath) -> Option<String> {
    match (original, written) {
        (Value::Object(original), Value::Object(written)) => {
            original
                .iter()
                .find_map(|(key, value)| match written.get(key) {
                    Some(written) => path.within(key, |path| unknown_field(value, written, path)),
                    None => Some(path.with(key)),
                })
        }
        (Value::Array(original), Value::Array(written)) => original
            .iter()
            .zip(written)
            .enumerate()
            .find_map(|(i, (o, w))| {
                path.within(&format!("[{i}]"), |path| unknown_field(o, w, path))
            }),
        _ if original == written => None,
        _ => Some(format!("{path} (written back as {written})")),
    }
}

/// `spec.template.spec.containers[0]`, built while walking a tree.
#[derive(Default)]
struct FieldPath(Vec<String>);

impl FieldPath {
    fn within<R>(&mut self, key: &str, f: impl FnOnce(&mut Self) -> R) -> R {
        self.0.push(key.to_owned());
        let result = f(self);
        self.0.pop();
        result
    }

    fn with(&mut self, key: &str) -> String {
        self.within(key, |path| path.to_string())
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, key) in self.0.iter().enumerate() {
            if i > 0 && !key.starts_with('[') {
                f.write_str(".")?;
            }
            f.write_str(key)?;
        }
        Ok(())
    }
}

/// Every object of the YAML files under `deploy/` listed by its `kustomization.yaml`, with the
/// file it comes from.
///
/// # Errors
///
/// As [`read_file`], for the first file that fails, or the kustomization cannot be read.
pub fn read_all() -> Result<Vec<(PathBuf, Manifest)>, ManifestError> {
    let mut all = Vec::new();
    for path in kustomization_resources()? {
        for manifest in read_file(&path)? {
            all.push((path.clone(), manifest));
        }
    }
    Ok(all)
}

/// The files the top `kustomization.yaml` lists, as paths.
///
/// # Errors
///
/// The kustomization cannot be read or has no `resources` list of strings.
pub fn kustomization_resources() -> Result<Vec<PathBuf>, ManifestError> {
    let path = deploy_dir().join("kustomization.yaml");
    let invalid = |message: String| ManifestError::Invalid {
        path: path.clone(),
        document: 0,
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|source| ManifestError::Read {
        path: path.clone(),
        source,
    })?;
    let tree: Value = serde_saphyr::from_str(&text).map_err(|e| invalid(e.to_string()))?;
    let resources = tree.get("resources").and_then(Value::as_array);
    let resources = resources.ok_or_else(|| invalid("no `resources` list".into()))?;
    resources
        .iter()
        .map(|resource| match resource.as_str() {
            Some(file) => Ok(deploy_dir().join(file)),
            None => Err(invalid(format!("resource {resource} is not a file name"))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_field_is_refused_with_its_path() {
        let text = "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\nspec:\n  ports:\n    - port: 53\n      protocl: UDP\n";
        let error = parse_document(text).unwrap_err();
        assert_eq!(error, "unknown field spec.ports[0].protocl");
        let text = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: a\n  labls: {}\n";
        assert_eq!(
            parse_document(text).unwrap_err(),
            "unknown field metadata.labls"
        );
    }

    #[test]
    fn a_known_document_is_typed() {
        let text = "# c\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n";
        let docs: Vec<_> = documents(text).collect();
        assert_eq!(docs.len(), 1);
        assert!(matches!(
            parse_document(docs[0]),
            Ok(Manifest::Namespace(_))
        ));
        let error = parse_document("apiVersion: v1\nkind: Pod\n").unwrap_err();
        assert!(error.contains("unexpected"), "{error}");
    }
}
