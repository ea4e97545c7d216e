//! Objects from a directory of YAML manifests (`*.yaml`, `*.yml`, several documents per file),
//! sorted by `kind`; other kinds are skipped.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::objects::Objects;

/// Why manifests could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// A file or directory could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A document is not valid YAML or not a valid object of its kind.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
struct Kind {
    kind: Option<String>,
}

/// Reads every `*.yaml` / `*.yml` file of `dir` (not recursively), in name order.
///
/// # Errors
///
/// [`ManifestError`] naming the file at fault.
pub fn load_dir(dir: &Path) -> Result<Objects, ManifestError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| ManifestError::Io { path, source }
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    let mut objects = Objects::default();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(io(&file))?;
        add_documents(&mut objects, &text).map_err(|message| ManifestError::Invalid {
            path: file.clone(),
            message,
        })?;
    }
    Ok(objects)
}

/// The parser's limits: serde-saphyr's defaults (depth, aliases, sizes) except the counts of
/// documents, nodes and events, raised so that one file may hold a whole cluster's objects
/// (tens of thousands).
fn options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_documents = 200_000;
    budget.max_nodes = 20_000_000;
    budget.max_events = 80_000_000;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// Adds the objects of a multi-document YAML text.
///
/// # Errors
///
/// A message for invalid YAML or an invalid object.
pub fn add_documents(objects: &mut Objects, text: &str) -> Result<(), String> {
    let documents: Vec<serde_json::Value> =
        serde_saphyr::from_multiple_with_options(text, options()).map_err(|e| e.to_string())?;
    for document in documents {
        if document.is_null() {
            continue;
        }
        let kind = Kind::deserialize(&document)
            .map_err(|e| e.to_string())?
            .kind
            .unwrap_or_default();
        let err = |e: serde_json::Error| format!("{kind}: {e}");
        match kind.as_str() {
            "Ingress" => objects
                .ingresses
                .push(serde_json::from_value(document).map_err(err)?),
            "IngressClass" => objects
                .ingress_classes
                .push(serde_json::from_value(document).map_err(err)?),
            "Service" => objects
                .services
                .push(serde_json::from_value(document).map_err(err)?),
            "EndpointSlice" => objects
                .endpoint_slices
                .push(serde_json::from_value(document).map_err(err)?),
            "Secret" => objects
                .secrets
                .push(serde_json::from_value(document).map_err(err)?),
            _ => {}
        }
    }
    Ok(())
}
