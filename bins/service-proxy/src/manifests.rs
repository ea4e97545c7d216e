//! Services and EndpointSlices read from a directory of YAML manifests (multi-document files;
//! other kinds are ignored). The object source until the cluster-state crate provides one.

use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;

/// One consistent view of the objects.
#[derive(Clone, Debug, Default)]
pub struct Objects {
    /// Every Service.
    pub services: Vec<Service>,
    /// Every EndpointSlice.
    pub slices: Vec<EndpointSlice>,
}

/// A manifest that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The directory or a file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not valid YAML, or an object is not a valid Service / EndpointSlice.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The `*.yaml`, `*.yml` and `*.json` files of `dir`, in name order.
fn files(dir: &Path) -> Result<Vec<PathBuf>, ManifestError> {
    let read = |source| ManifestError::Read {
        path: dir.to_owned(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read)? {
        let path = entry.map_err(read)?.path();
        let manifest = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"));
        if manifest && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Parses the documents of one manifest file's text.
///
/// # Errors
///
/// A message naming the document that is not YAML or not a valid object.
pub fn parse(text: &str, into: &mut Objects) -> Result<(), String> {
    let documents: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(text).map_err(|e| e.to_string())?;
    for (i, document) in documents.into_iter().enumerate() {
        let kind = document
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or("")
            .to_owned();
        let invalid = |e: serde_json::Error| format!("document {}: {kind}: {e}", i + 1);
        match kind.as_str() {
            "Service" => into
                .services
                .push(serde_json::from_value(document).map_err(invalid)?),
            "EndpointSlice" => into
                .slices
                .push(serde_json::from_value(document).map_err(invalid)?),
            _ => {}
        }
    }
    Ok(())
}

/// Reads every manifest of `dir`.
///
/// # Errors
///
/// The first file that cannot be read or parsed: the caller keeps its previous view.
pub fn read(dir: &Path) -> Result<Objects, ManifestError> {
    let mut objects = Objects::default();
    for path in files(dir)? {
        let text = std::fs::read_to_string(&path).map_err(|source| ManifestError::Read {
            path: path.clone(),
            source,
        })?;
        parse(&text, &mut objects).map_err(|message| ManifestError::Invalid { path, message })?;
    }
    Ok(objects)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_and_slices_are_picked_out_of_multi_document_files() {
        let mut objects = Objects::default();
        parse(
            "kind: Namespace\nmetadata: {name: ns}\n---\nkind: Service\napiVersion: v1\nmetadata: {namespace: ns, name: web}\nspec: {clusterIP: 10.96.0.5, ports: [{port: 80}]}\n---\nkind: EndpointSlice\napiVersion: discovery.k8s.io/v1\nmetadata: {namespace: ns, name: web-1}\naddressType: IPv4\nendpoints: []\n",
            &mut objects,
        )
        .unwrap();
        assert_eq!(objects.services.len(), 1);
        assert_eq!(objects.slices.len(), 1);
        let error = parse("kind: Service\nspec: {ports: 3}\n", &mut objects).unwrap_err();
        assert!(error.starts_with("document 1: Service:"), "{error}");
        assert!(parse("a: [", &mut objects).is_err());
    }
}
