//! Replays every committed corpus file through its fuzz target on stable Rust.
//!
//! `fuzz/corpus/NAME/` holds the inputs of target `NAME` (seeds, and every crash once found:
//! drop the file from `fuzz/artifacts/NAME/` into the corpus folder). Every folder must belong
//! to a registered target, and every registered target must have a cargo-fuzz binary.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("fuzz/targets has a parent")
        .to_path_buf()
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    entries
}

#[test]
fn every_corpus_file_passes_its_target() {
    let corpus = fuzz_dir().join("corpus");
    let mut failures = Vec::new();
    let mut replayed = 0usize;
    for dir in sorted_entries(&corpus) {
        if !dir.is_dir() {
            continue;
        }
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .expect("utf-8 folder name");
        let target = fuzz_targets::find(name)
            .unwrap_or_else(|| panic!("fuzz/corpus/{name}/ belongs to no registered fuzz target"));
        for file in sorted_entries(&dir) {
            let data = std::fs::read(&file).expect("corpus file");
            if catch_unwind(AssertUnwindSafe(|| (target.run)(&data))).is_err() {
                failures.push(file.display().to_string());
            }
            replayed += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {replayed} corpus inputs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("replayed {replayed} corpus inputs");
}

#[test]
fn every_target_has_a_cargo_fuzz_binary_and_a_corpus() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for target in fuzz_targets::all() {
        let source = fuzz_dir()
            .join("fuzz_targets")
            .join(format!("{}.rs", target.name));
        let body = std::fs::read_to_string(&source)
            .unwrap_or_else(|_| panic!("{} is missing", source.display()));
        assert!(
            body.contains(&format!("\"{}\"", target.name)),
            "{} must run fuzz_targets::find(\"{}\")",
            source.display(),
            target.name
        );
        assert!(
            manifest.contains(&format!("name = \"{}\"", target.name)),
            "fuzz/Cargo.toml has no [[bin]] named {}",
            target.name
        );
        assert!(
            fuzz_dir().join("corpus").join(target.name).is_dir(),
            "fuzz/corpus/{}/ is missing: commit at least one seed",
            target.name
        );
    }
}
