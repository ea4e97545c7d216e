//! The formatter over the whole corpus: output parses to the same blocks, directives and
//! token texts (line numbers aside), and formatting is idempotent (`docs/corefile.md` §7).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::PathBuf;

use corefile::emit::{self, FormatError};
use corefile::plugin_order::PluginOrder;
use corefile::view;

type Semantic = Vec<(Vec<String>, Vec<(String, Vec<String>)>)>;

fn semantic(input: &[u8]) -> Semantic {
    view::parse_only(input, "Corefile", &PluginOrder::default())
        .unwrap()
        .into_iter()
        .map(|b| {
            let directives = b
                .directives
                .iter()
                .map(|d| {
                    (
                        d.name.to_string(),
                        b.tokens_of(d).iter().map(|t| t.text.to_string()).collect(),
                    )
                })
                .collect();
            let keys = b.raw_keys.iter().map(|k| k.to_string()).collect();
            (keys, directives)
        })
        .collect()
}

/// Every Corefile of the corpus: the full ones and the plugin setup inputs.
fn corpus_files() -> Vec<PathBuf> {
    let mut files = testdata::files("corefile", "Corefile");
    files.extend(testdata::files("corefile/setup-inputs", "Corefile"));
    files.sort();
    files
}

#[test]
fn formatting_the_corpus_keeps_its_meaning_and_is_idempotent() {
    let mut formatted_count = 0;
    let mut refused = Vec::new();
    for path in corpus_files() {
        let input = std::fs::read(&path).unwrap();
        match emit::format(&input) {
            Ok(formatted) => {
                assert_eq!(
                    semantic(formatted.as_bytes()),
                    semantic(&input),
                    "{} changed meaning:\n{formatted}",
                    path.display()
                );
                let again = emit::format(formatted.as_bytes()).unwrap();
                assert_eq!(again, formatted, "{} is not idempotent", path.display());
                formatted_count += 1;
            }
            Err(FormatError::Parse(_)) => {}
            Err(e) => refused.push(format!("{}: {e}", path.display())),
        }
    }
    eprintln!(
        "formatted {formatted_count} corpus files; refused {}:\n{}",
        refused.len(),
        refused.join("\n")
    );
    assert!(formatted_count > 1000);
}

#[test]
fn comments_survive_formatting() {
    let input = b"# head\n. {  # key line\n  # alone\n  forward . 1.1.1.1 # trailing\n\n\n  cache {\n    success 100 # nested\n  }\n}\n";
    let out = emit::format(input).unwrap();
    assert_eq!(
        out,
        "# head\n. { # key line\n    # alone\n    forward . 1.1.1.1 # trailing\n\n    cache {\n        success 100 # nested\n    }\n}\n"
    );
}
