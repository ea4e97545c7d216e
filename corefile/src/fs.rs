//! The file-system import resolver (`std` feature): CoreDNS's `import` of files and globs.
//!
//! A relative pattern is taken relative to the directory of the file that contains the
//! `import`; the glob may hold one `*` or one `?` (no `[...]`), matches are read in lexical
//! order, a directory is an error, and a glob that matches nothing imports nothing.
//!
//! [`resolv_conf_upstreams`] reads a resolv.conf-style file named as a `forward` upstream.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use std::path::{Component, Path, PathBuf};

use crate::import::{ImportedFile, Resolver, check_glob, has_wildcard};

/// Reads imports from the file system.
#[derive(Clone, Debug, Default)]
pub struct FsResolver;

impl Resolver for FsResolver {
    fn resolve(&mut self, pattern: &str, from: &str) -> Result<Vec<ImportedFile>, String> {
        let from = absolute(Path::new(from))
            .map_err(|e| format!("Failed to get absolute path of file: {from}: {e}"))?;
        let glob = if Path::new(pattern).is_absolute() {
            PathBuf::from(pattern)
        } else {
            from.parent().unwrap_or(Path::new("/")).join(pattern)
        };
        let glob_text = glob.to_string_lossy().into_owned();
        check_glob(&glob_text)?;
        let matches = expand(&glob);
        if matches.is_empty() {
            if has_wildcard(&glob_text) {
                return Ok(Vec::new());
            }
            return Err(format!("File to import not found: {pattern}"));
        }
        matches
            .into_iter()
            .map(|path| {
                let shown = path.display().to_string();
                if path.is_dir() {
                    return Err(format!("Could not import {shown}: is a directory"));
                }
                let contents =
                    std::fs::read(&path).map_err(|e| format!("Could not import {shown}: {e}"))?;
                let path = absolute(&path).unwrap_or(path).display().to_string();
                Ok(ImportedFile { path, contents })
            })
            .collect()
    }
}

/// The upstreams CoreDNS's `forward` takes from the resolv.conf-style file at `path` (see
/// [`crate::plugins::resolv_conf_upstreams`]); bytes that are not UTF-8 read as U+FFFD.
pub fn resolv_conf_upstreams(path: &Path) -> std::io::Result<Vec<String>> {
    let bytes = std::fs::read(path)?;
    Ok(crate::plugins::resolv_conf_upstreams(
        &crate::lexer::decode_lossy(&bytes),
    ))
}

fn absolute(path: &Path) -> std::io::Result<PathBuf> {
    if path.is_absolute() {
        Ok(path.to_path_buf())
    } else {
        Ok(std::env::current_dir()?.join(path))
    }
}

/// Expands a pattern whose components may hold `*` or `?`, like Go's `filepath.Glob`.
fn expand(pattern: &Path) -> Vec<PathBuf> {
    let mut candidates = alloc::vec![PathBuf::new()];
    for component in pattern.components() {
        let text = component.as_os_str().to_string_lossy();
        let is_glob = matches!(component, Component::Normal(_)) && has_wildcard(&text);
        candidates = if is_glob {
            let mut next = Vec::new();
            for dir in &candidates {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                let mut names: Vec<String> = entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| glob_match(&text, name))
                    .collect();
                names.sort();
                next.extend(names.into_iter().map(|n| dir.join(n)));
            }
            next
        } else {
            candidates.into_iter().map(|c| c.join(component)).collect()
        };
    }
    candidates.retain(|p| p.symlink_metadata().is_ok());
    candidates
}

/// Go's `filepath.Match` for `*` and `?` within one path component.
fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some('?') => {
                pi += 1;
                ni += 1;
            }
            Some(c) if Some(c) == n.get(ni) => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|&c| c == '*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matching() {
        assert!(glob_match("*.conf", "a.conf"));
        assert!(!glob_match("*.conf", "a.conf.bak"));
        assert!(glob_match("zone?.db", "zone1.db"));
        assert!(glob_match("*", ""));
    }
}
