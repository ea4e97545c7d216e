//! Where the repository's test corpora are, for the workspace's tests and benchmarks.
//!
//! The data lives beside this crate in `testdata/<name>/` (`dns`, `corefile`, `nginx`,
//! `iptables`, `gateway-api`; see `testdata/README.md`). A crate whose tests read it takes this
//! crate as a dev-dependency and asks here instead of building paths itself. Data that is missing makes
//! the test fail with the path it looked for: a test never skips because its corpus is absent.

use core::fmt::Display;
use std::path::{Path, PathBuf};

/// Fails the calling test: `what` went wrong at `path`.
#[allow(
    clippy::panic,
    reason = "this crate serves tests only, and a test whose data is missing must fail"
)]
fn fail(what: &str, path: &Path, cause: impl Display) -> ! {
    panic!("test data {what} at {}: {cause}", path.display())
}

/// The folder `testdata/<name>` of the repository; `name` may go deeper
/// (`"corefile/setup-inputs"`).
///
/// # Panics
///
/// When the folder does not exist, naming the path.
pub fn dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    if !dir.is_dir() {
        fail(
            "folder missing",
            &dir,
            "no such folder (the corpora are part of the repository)",
        );
    }
    dir
}

/// The files directly in `testdata/<name>` (not in its subfolders) whose extension is `ext`
/// (without the dot), sorted by path.
///
/// # Panics
///
/// When the folder is missing or cannot be listed.
pub fn files(name: &str, ext: &str) -> Vec<PathBuf> {
    let dir = dir(name);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| fail("folder unreadable", &dir, e));
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| fail("folder unreadable", &dir, e))
            .path();
        if path.is_file() && path.extension().is_some_and(|e| e == ext) {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The bytes of the file `testdata/<name>/<file>`.
///
/// # Panics
///
/// When the file cannot be read, naming its path.
pub fn read(name: &str, file: &str) -> Vec<u8> {
    let path = dir(name).join(file);
    std::fs::read(&path).unwrap_or_else(|e| fail("file unreadable", &path, e))
}

/// The text of the file `testdata/<name>/<file>`.
///
/// # Panics
///
/// When the file cannot be read or is not UTF-8, naming its path.
pub fn read_to_string(name: &str, file: &str) -> String {
    let path = dir(name).join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| fail("file unreadable", &path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_corpus_folder_is_there() {
        for name in ["dns", "dns/public", "corefile", "corefile/setup-inputs"] {
            assert!(dir(name).is_dir());
        }
        assert!(dir("nginx").join("nginx-tests").is_dir());
        assert!(dir("iptables").join("README.md").is_file());
    }

    #[test]
    fn files_lists_one_extension_sorted_without_subfolders() {
        let bins = files("dns", "bin");
        let names: Vec<_> = bins
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["large.bin", "query.bin", "query_do.bin", "response.bin"]
        );
    }

    #[test]
    fn read_and_read_to_string_agree() {
        let text = read_to_string("dns", "query.txt");
        assert_eq!(read("dns", "query.txt"), text.into_bytes());
    }

    #[test]
    #[should_panic(expected = "testdata/no-such-corpus")]
    fn a_missing_folder_fails_naming_its_path() {
        dir("no-such-corpus");
    }

    #[test]
    #[should_panic(expected = "dns/no-such-file.bin")]
    fn a_missing_file_fails_naming_its_path() {
        read("dns", "no-such-file.bin");
    }
}
