//! Every config of the nginx corpus (`testdata/nginx/`) parses (nginx 1.22.1 rejects none of
//! them lexically) and writes back byte for byte; formatting reads back as the same words.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
#![allow(clippy::std_instead_of_alloc, clippy::std_instead_of_core)]

mod common;

use nginx_conf::{Block, End, parse};

/// Names and decoded arguments of every statement, depth first, for comparing structures.
fn shape(block: &Block, out: &mut Vec<Vec<Vec<u8>>>) {
    for d in &block.directives {
        let mut words = vec![d.name.value().into_owned()];
        words.extend(d.arg_words().map(|w| w.value().into_owned()));
        match &d.end {
            End::Semicolon => words.push(b";".to_vec()),
            End::Lua(body) => words.push(body.as_bytes().to_vec()),
            End::Block(inner) => {
                words.push(b"{".to_vec());
                out.push(words);
                shape(inner, out);
                out.push(vec![b"}".to_vec()]);
                continue;
            }
        }
        out.push(words);
    }
}

const EOF_IN_STATEMENT: &str = "unexpected end of file, expecting \";\" or \"}\" in line 3";

#[test]
fn every_corpus_file_round_trips_losslessly() {
    let files = common::all_conf_files();
    // Some fixtures of crossplane are invalid on purpose, and nginx says so: one is not nginx
    // syntax, the others are include-tree decoys that must never be read.
    let invalid = [
        ("quote-behavior/nginx.conf", "unexpected \"-\" in line 1"),
        // nginx reports a missing `;` on the line of the `}` (crossplane: the line before).
        ("broken-above.conf", "unexpected \"}\" in line 5"),
        ("broken-below.conf", "unexpected \"}\" in line 8"),
    ];
    let mut checked = 0;
    for path in &files {
        let text = std::fs::read(path).unwrap();
        if let Some((_, message)) = invalid.iter().find(|(name, _)| path.ends_with(name)) {
            assert_eq!(parse(&text).unwrap_err().to_string(), *message);
            continue;
        }
        if text.starts_with(b"# this file should never be included\n") {
            assert_eq!(parse(&text).unwrap_err().to_string(), EOF_IN_STATEMENT);
            continue;
        }
        let config = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(config.to_bytes().unwrap(), text, "{}", path.display());
        let formatted = config.format();
        let reparsed = parse(&formatted).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        shape(&config, &mut a);
        shape(&reparsed, &mut b);
        assert_eq!(a, b, "{}: formatting changed the structure", path.display());
        checked += 1;
    }
    assert!(checked >= 492 + 10 + 20, "only {checked} files checked");
}

/// nginx 1.22.1's `-t` verdicts (`nginx-tests.nginx-t.tsv`): a file is lexically rejected by
/// nginx exactly when we reject it. The corpus has no lexical failure, so all must parse.
#[test]
fn lexical_verdicts_agree_with_nginx() {
    let tsv = testdata::read_to_string("nginx", "nginx-tests.nginx-t.tsv");
    let mut rows = 0;
    for line in tsv.lines().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        let (test, class) = (fields[0], fields[2]);
        let dir = common::corpus().join("nginx-tests").join(test);
        let mut resolver = nginx_conf::FsResolver::in_dir(&dir);
        let files =
            nginx_conf::Files::load("nginx.conf", &mut resolver, &Default::default()).unwrap();
        let rejected = files.files.iter().any(|f| f.config.is_err());
        assert_eq!(rejected, class == "lexical", "{test}: nginx says {class}");
        rows += 1;
    }
    assert_eq!(rows, 492);
}
