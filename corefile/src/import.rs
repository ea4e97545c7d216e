//! File imports: the caller-supplied [`Resolver`] (`docs/corefile.md` §2.4).
//!
//! The parser handles snippets itself; any other `import PATTERN` asks the resolver for the
//! files that match. [`NoFiles`] is the pure resolver of an empty file system; the `std`
//! feature adds [`crate::fs::FsResolver`], which reads the real one with CoreDNS's glob rules.

use alloc::string::String;
use alloc::vec::Vec;

/// One imported file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedFile {
    /// Its absolute path: imported tokens carry it as their file, and errors print it.
    pub path: String,
    /// Its bytes, lexed like the main input.
    pub contents: Vec<u8>,
}

/// Finds and reads the files an `import` names.
pub trait Resolver {
    /// The files matching `pattern` (already environment-substituted), which appears in the
    /// file `from` (the input's name, or an imported file's absolute path), in lexical order.
    ///
    /// A pattern with a wildcard that matches nothing is not an error (CoreDNS only logs a
    /// warning): return an empty list. The error is the message CoreDNS prints after
    /// `Error during parsing: `, e.g. `File to import not found: x.conf`.
    fn resolve(&mut self, pattern: &str, from: &str) -> Result<Vec<ImportedFile>, String>;
}

/// An empty file system: a plain path is not found, a glob matches nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoFiles;

impl Resolver for NoFiles {
    fn resolve(&mut self, pattern: &str, _from: &str) -> Result<Vec<ImportedFile>, String> {
        check_glob(pattern)?;
        if has_wildcard(pattern) {
            Ok(Vec::new())
        } else {
            Err(alloc::format!("File to import not found: {pattern}"))
        }
    }
}

/// CoreDNS's limit on glob patterns (caddy issue #2096): at most one `*`, at most one `?`,
/// and no `[...]` pair. `pattern` is the absolute pattern, as the message prints it.
pub fn check_glob(pattern: &str) -> Result<(), String> {
    let count = |c: char| pattern.matches(c).count();
    if count('*') > 1 || count('?') > 1 || (pattern.contains('[') && pattern.contains(']')) {
        return Err(alloc::format!(
            "Glob pattern may only contain one wildcard (*), but has others: {pattern}"
        ));
    }
    Ok(())
}

/// Whether a pattern that matched nothing only earns a warning (it has a glob character).
pub fn has_wildcard(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', ']'])
}
