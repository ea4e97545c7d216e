//! Helpers shared by the integration tests: the nginx corpus (`testdata/nginx/`) and its files.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

/// The nginx corpus, `testdata/nginx/` at the repository root; a missing corpus fails the test.
pub(crate) fn corpus() -> PathBuf {
    testdata::dir("nginx")
}

/// Every main config of the corpus: nginx-tests' `nginx.conf`s and crossplane's fixtures.
pub(crate) fn main_configs() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(corpus().join("nginx-tests")).unwrap() {
        let path = entry.unwrap().path().join("nginx.conf");
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    assert_eq!(files.len(), 492, "nginx-tests holds 492 main configs");
    files
}

/// Every `.conf` file of the corpus, includes and crossplane's fixtures too.
pub(crate) fn all_conf_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "conf") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&corpus(), &mut files);
    files.sort();
    files
}
