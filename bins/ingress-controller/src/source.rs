//! Objects from a directory of manifests, re-read when its files change (polled), until the
//! cluster-state source replaces it.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::path::PathBuf;

use crate::manifests::{self, ManifestError};
use crate::objects::Objects;

/// Polls a manifests directory.
#[derive(Debug)]
pub struct ManifestDir {
    dir: PathBuf,
    digest: Option<u64>,
}

impl ManifestDir {
    /// Watches `dir`.
    pub fn new(dir: PathBuf) -> Self {
        Self { dir, digest: None }
    }

    /// The objects, when the files changed since the last call.
    ///
    /// # Errors
    ///
    /// [`ManifestError`] when a file cannot be read or parsed; the next call retries.
    pub fn poll(&mut self) -> Result<Option<Objects>, ManifestError> {
        let digest = self.digest()?;
        if self.digest == Some(digest) {
            return Ok(None);
        }
        let objects = manifests::load_dir(&self.dir)?;
        self.digest = Some(digest);
        Ok(Some(objects))
    }

    fn digest(&self) -> Result<u64, ManifestError> {
        let io = |source| ManifestError::Io {
            path: self.dir.clone(),
            source,
        };
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .map_err(io)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        let mut hasher = DefaultHasher::new();
        for path in entries {
            path.hash(&mut hasher);
            if let Ok(content) = std::fs::read(&path) {
                content.hash(&mut hasher);
            }
        }
        Ok(hasher.finish())
    }
}
