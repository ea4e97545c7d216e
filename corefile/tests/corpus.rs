//! Every corpus Corefile gives exactly its expected CoreDNS view (`docs/corefile.md` §9).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

#[path = "../examples/support/view_json.rs"]
#[allow(dead_code)]
mod view_json;

/// Compares every `.Corefile` of `testdata/<corpus>` with its `.expected.json`.
fn check(corpus: &str, parse_only: bool) -> (usize, Vec<String>) {
    let files = testdata::files(corpus, "Corefile");
    let mut mismatches = Vec::new();
    for path in &files {
        let input = std::fs::read(path).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        let expected_path = path.with_extension("expected.json");
        let expected = std::fs::read_to_string(&expected_path).unwrap();
        // The corpus was made by CoreDNS with no environment and no files to import.
        let context = view_json::Context {
            env: &corefile::env::NoEnv,
            resolver: &mut corefile::import::NoFiles,
        };
        let (json, _) = view_json::view_json(&input, name, parse_only, context);
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
    report("full", check("corefile", false), 283);
}

#[test]
fn setup_inputs_match_caddy_parse() {
    report("setup-inputs", check("corefile/setup-inputs", true), 784);
}
