//! A [`Resolver`] over the file system (`std` feature).

use crate::glob::{is_glob, matches_component};
use crate::include::Resolver;
use alloc::string::String;
use alloc::vec::Vec;
use std::path::PathBuf;

/// Reads included files from the file system. Relative paths resolve against a base folder
/// (the working directory by default) and are reported as written, as crossplane does when run
/// from that folder.
#[derive(Clone, Debug, Default)]
pub struct FsResolver {
    base: Option<PathBuf>,
}

impl FsResolver {
    /// Resolves relative paths against the working directory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Resolves relative paths against `base`.
    pub fn in_dir(base: impl Into<PathBuf>) -> Self {
        Self {
            base: Some(base.into()),
        }
    }

    fn locate(&self, path: &str) -> PathBuf {
        match &self.base {
            Some(base) if !path.starts_with('/') => base.join(path),
            _ => PathBuf::from(path),
        }
    }
}

impl Resolver for FsResolver {
    fn read(&mut self, path: &str) -> Option<Vec<u8>> {
        std::fs::read(self.locate(path)).ok()
    }

    fn glob(&mut self, pattern: &str) -> Vec<String> {
        let (mut found, components) = match pattern.strip_prefix('/') {
            Some(rest) => (alloc::vec![String::from("/")], rest),
            None => (alloc::vec![String::new()], pattern),
        };
        for component in components.split('/').filter(|c| !c.is_empty()) {
            let mut next = Vec::new();
            for prefix in &found {
                if !is_glob(component.as_bytes()) {
                    let candidate = join(prefix, component);
                    if self.locate(&candidate).exists() {
                        next.push(candidate);
                    }
                    continue;
                }
                let dir = self.locate(if prefix.is_empty() { "." } else { prefix });
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let name = entry.file_name();
                    if let Some(name) = name.to_str()
                        && matches_component(component.as_bytes(), name.as_bytes())
                    {
                        next.push(join(prefix, name));
                    }
                }
            }
            found = next;
        }
        found.retain(|path| self.locate(path).is_file());
        found
    }
}

fn join(prefix: &str, name: &str) -> String {
    let mut path = String::from(prefix);
    if !path.is_empty() && !path.ends_with('/') {
        path.push('/');
    }
    path.push_str(name);
    path
}
