//! The objects of a folder of manifests: every file's from its last good version.

use std::collections::BTreeMap;
use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::{ManifestError, parse_manifest};
use crate::{Object, Snapshot};

/// Files larger than this are rejected rather than read (manifests are kilobytes).
const MAX_FILE_BYTES: u64 = 16 << 20;

/// Folders nested deeper than this are not read (guards against symlink loops).
const MAX_DEPTH: usize = 16;

/// The manifest files of a folder and the objects each defined in its last good version.
#[derive(Debug)]
pub(crate) struct Folder {
    root: PathBuf,
    files: BTreeMap<PathBuf, File>,
}

#[derive(Debug)]
struct File {
    /// A hash of the content last read, good or bad: unchanged files are not parsed again.
    fingerprint: u64,
    /// The objects of the last version that parsed.
    objects: Vec<Object>,
}

impl Folder {
    /// A folder not read yet.
    pub(crate) fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            files: BTreeMap::new(),
        }
    }

    /// Reads the folder again: parses new and changed files, forgets deleted ones. Returns the
    /// errors of the files that changed since the last reload; a bad file keeps the objects of
    /// its last good version.
    pub(crate) fn reload(&mut self) -> Vec<ManifestError> {
        let mut errors = Vec::new();
        let mut paths = Vec::new();
        if let Err(error) = list_manifests(&self.root, 0, &mut paths) {
            // The folder itself is gone or unreadable: keep everything until it is back.
            let message = format!("cannot list the manifest folder: {error}");
            errors.push(ManifestError::file(&self.root, message));
            return errors;
        }
        let mut files = BTreeMap::new();
        for path in paths {
            let mut file = self.files.remove(&path);
            match read_manifest(&path) {
                Ok(None) => continue, // deleted since it was listed
                Ok(Some(text)) => {
                    let fingerprint = fingerprint(&text);
                    if file
                        .as_ref()
                        .is_none_or(|file| file.fingerprint != fingerprint)
                    {
                        let file = file.get_or_insert_with(|| File {
                            fingerprint,
                            objects: Vec::new(),
                        });
                        file.fingerprint = fingerprint;
                        match parse_manifest(&path, &text) {
                            Ok(objects) => file.objects = objects,
                            Err(error) => errors.push(error),
                        }
                    }
                }
                // Unreadable (a half-done rename, a permission change): keep its last state.
                Err(error) => errors.push(error),
            }
            if let Some(file) = file {
                files.insert(path, file);
            }
        }
        self.files = files;
        errors
    }

    /// Every object, the first definition in path order winning; the errors name the files
    /// whose definitions lost.
    pub(crate) fn snapshot(&self) -> (Snapshot, Vec<ManifestError>) {
        let mut snapshot = Snapshot::default();
        let mut origins: BTreeMap<_, &Path> = BTreeMap::new();
        let mut errors = Vec::new();
        for (path, file) in &self.files {
            for object in &file.objects {
                let key = (object.kind(), object.key());
                if let Some(first) = origins.get(&key) {
                    let message = format!(
                        "{} {} is also defined in {}, which wins (files are read in path order)",
                        key.0,
                        key.1,
                        first.display()
                    );
                    errors.push(ManifestError::file(path, message));
                    continue;
                }
                origins.insert(key, path);
                snapshot.insert(object.clone());
            }
        }
        (snapshot, errors)
    }
}

/// Collects the `*.yaml`, `*.yml` and `*.json` files under `dir`, skipping hidden entries
/// (`.status`, and a ConfigMap volume's `..data` and `..2024_…` folders, whose files are also
/// reachable through the visible symlinks).
fn list_manifests(dir: &Path, depth: usize, paths: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        // Follows symlinks; an entry that vanished meanwhile is simply not there.
        let Ok(metadata) = fs::metadata(&path) else {
            continue;
        };
        if metadata.is_dir() {
            if depth < MAX_DEPTH {
                // A subfolder that vanished or cannot be read hides only its own files.
                if let Err(error) = list_manifests(&path, depth + 1, paths) {
                    tracing::warn!(path = %path.display(), %error, "cannot list a manifest folder");
                }
            }
        } else if is_manifest(&path) {
            paths.push(path);
        }
    }
    Ok(())
}

fn is_manifest(path: &Path) -> bool {
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| matches!(extension, "yaml" | "yml" | "json"))
}

/// The text of a manifest file; `None` if it no longer exists.
fn read_manifest(path: &Path) -> Result<Option<String>, ManifestError> {
    let cannot = |error: io::Error| ManifestError::file(path, format!("cannot read: {error}"));
    let file = match fs::File::open(path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        file => file.map_err(cannot)?,
    };
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        let message = format!("larger than the {MAX_FILE_BYTES} bytes a manifest may have");
        return Err(ManifestError::file(path, message));
    }
    String::from_utf8(bytes).map(Some).map_err(|error| {
        let message = format!("not UTF-8 (byte {})", error.utf8_error().valid_up_to());
        ManifestError::file(path, message)
    })
}

fn fingerprint(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}
