//! Helpers shared by the integration tests: the shared corpus and its JSON inputs.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::PathBuf;

/// The shared iptables corpus; fails loudly when it is missing (CI always has it).
pub(crate) fn corpus_dir() -> PathBuf {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/iptables"
    ));
    assert!(
        dir.is_dir(),
        "shared corpus missing at {}: clone ../shared beside the repository",
        dir.display()
    );
    dir
}

/// Reads a corpus file.
pub(crate) fn read(name: &str) -> String {
    let path = corpus_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `.txt` file of the corpus, sorted by name.
pub(crate) fn corpus_texts() -> Vec<(String, String)> {
    let mut names: Vec<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    names.into_iter().map(|n| (n.clone(), read(&n))).collect()
}

/// Compares two texts line by line and reports the first difference readably.
pub(crate) fn assert_text_eq(what: &str, got: &str, expected: &str) {
    if got == expected {
        return;
    }
    for (i, (g, e)) in got.lines().zip(expected.lines()).enumerate() {
        assert_eq!(g, e, "{what}: first difference at line {}", i + 1);
    }
    panic!(
        "{what}: {} lines vs {} expected (or trailing newline differs)\n--- got:\n{got}",
        got.lines().count(),
        expected.lines().count()
    );
}
