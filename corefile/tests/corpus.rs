//! Every corpus Corefile gives exactly its expected CoreDNS view (spec section 9).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

#[path = "../examples/support/view_json.rs"]
#[allow(dead_code)]
mod view_json;

use std::path::{Path, PathBuf};

fn corpus_dir() -> PathBuf {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/corefile"
    ));
    assert!(
        dir.is_dir(),
        "the shared corpus is missing at {} (CI always has it)",
        dir.display()
    );
    dir.to_path_buf()
}

fn corefiles(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "Corefile"))
        .collect();
    files.sort();
    files
}

fn check(dir: &Path, parse_only: bool) -> (usize, Vec<String>) {
    let files = corefiles(dir);
    let mut mismatches = Vec::new();
    for path in &files {
        let input = std::fs::read(path).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        let expected_path = path.with_extension("expected.json");
        let expected = std::fs::read_to_string(&expected_path).unwrap();
        let (json, _) = view_json::view_json(&input, name, parse_only);
        let ours = json.to_pretty();
        if ours != expected {
            let line = ours
                .lines()
                .zip(expected.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            mismatches.push(format!(
                "{name}: first difference at line {}: ours {:?} expected {:?}",
                line + 1,
                ours.lines().nth(line),
                expected.lines().nth(line)
            ));
        }
    }
    (files.len(), mismatches)
}

fn report(kind: &str, (count, mismatches): (usize, Vec<String>), at_least: usize) {
    eprintln!("{kind}: {} of {count} match", count - mismatches.len());
    assert!(count >= at_least, "{kind}: only {count} corpus files found");
    assert!(
        mismatches.is_empty(),
        "{kind}: {} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn full_corefiles_match_coredns() {
    report("full", check(&corpus_dir(), false), 283);
}

#[test]
fn setup_inputs_match_caddy_parse() {
    report(
        "setup-inputs",
        check(&corpus_dir().join("setup-inputs"), true),
        784,
    );
}
