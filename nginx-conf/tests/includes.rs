//! `include` through a caller-supplied resolver (ngx_conf_include in ngx_conf_file.c, and
//! crossplane's payload layout): paths relative to the main file's folder, sorted glob
//! matches, no match is fine, a missing explicit file is an error, each file parsed once.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
#![allow(clippy::std_instead_of_alloc, clippy::std_instead_of_core)]

use nginx_conf::crossplane::{Options, payload};
use nginx_conf::{ErrorKind, Files, Resolver, matches_component};
use std::collections::BTreeMap;

/// Files held in memory; globs match one path component at a time, as glob(3) does.
struct Memory(BTreeMap<String, Vec<u8>>);

impl Memory {
    fn new(files: &[(&str, &str)]) -> Self {
        Self(
            files
                .iter()
                .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
                .collect(),
        )
    }
}

impl Resolver for Memory {
    fn read(&mut self, path: &str) -> Option<Vec<u8>> {
        self.0.get(path).cloned()
    }

    fn glob(&mut self, pattern: &str) -> Vec<String> {
        let parts: Vec<&str> = pattern.split('/').collect();
        self.0
            .keys()
            .rev() // the crate sorts; hand them out of order
            .filter(|path| {
                let names: Vec<&str> = path.split('/').collect();
                names.len() == parts.len()
                    && parts
                        .iter()
                        .zip(&names)
                        .all(|(p, n)| matches_component(p.as_bytes(), n.as_bytes()))
            })
            .cloned()
            .collect()
    }
}

fn load(files: &[(&str, &str)]) -> Files {
    let mut memory = Memory::new(files);
    Files::load(files[0].0, &mut memory, &Default::default()).unwrap()
}

#[test]
fn relative_paths_resolve_against_the_main_files_folder() {
    // nginx: relative to the conf prefix (the -c file's folder), also inside included files.
    let files = load(&[
        ("/etc/nginx/nginx.conf", "http { include conf.d/a.conf; }"),
        ("/etc/nginx/conf.d/a.conf", "include b.conf;"),
        ("/etc/nginx/b.conf", "server { }"),
    ]);
    let paths: Vec<&str> = files.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/etc/nginx/nginx.conf",
            "/etc/nginx/conf.d/a.conf",
            "/etc/nginx/b.conf"
        ]
    );
    assert_eq!(files.files[0].includes[0].at, [0, 0]);
    assert_eq!(files.files[0].includes[0].files, [1]);
}

#[test]
fn globs_are_sorted_and_may_match_nothing() {
    let files = load(&[
        ("nginx.conf", "include sites/*.conf; include none/*.conf;"),
        ("sites/b.conf", "b;"),
        ("sites/a.conf", "a;"),
        ("sites/.hidden.conf", "h;"),
        ("sites/c.txt", "c;"),
    ]);
    let paths: Vec<&str> = files.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["nginx.conf", "sites/a.conf", "sites/b.conf"]);
    assert!(files.files[0].includes[1].files.is_empty());
    assert!(files.files[0].includes[1].error.is_none());
}

#[test]
fn a_missing_explicit_file_is_nginx_s_open_error() {
    let files = load(&[(
        "nginx.conf",
        "events {}\nhttp {\n    include\n        x.conf;\n}\n",
    )]);
    let error = files.files[0].includes[0].error.clone().unwrap();
    assert_eq!(error.kind(), &ErrorKind::IncludeNotFound("x.conf".into()));
    // nginx reports the line of the `;`.
    assert_eq!(
        error.to_string(),
        "open() \"x.conf\" failed (2: No such file or directory) in nginx.conf:4"
    );
    let json = payload(&files, Options::default()).to_python_string(None);
    assert!(json.contains(
        r#"{"file":"nginx.conf","error":"[Errno 2] No such file or directory: 'x.conf'","line":3}"#
    ));
}

#[test]
fn each_file_is_parsed_once_even_when_included_twice_or_recursively() {
    let files = load(&[
        ("nginx.conf", "include a.conf; http { include a.conf; }"),
        ("a.conf", "include nginx.conf; x;"),
    ]);
    assert_eq!(files.files.len(), 2);
    assert_eq!(files.files[0].includes[1].files, [1]);
    assert_eq!(files.files[1].includes[0].files, [0]);
    // combine inlines includes but stops at cycles.
    let combined = payload(&files, Options::default().with_combine(true)).to_python_string(None);
    assert!(combined.contains(r#""file":"a.conf","directive":"x""#));
}

#[test]
fn errors_belong_to_their_file() {
    let files = load(&[("nginx.conf", "include bad.conf;"), ("bad.conf", "a {")]);
    assert!(files.files[0].config.is_ok());
    let error = files.files[1].config.clone().unwrap_err();
    assert_eq!(
        error.to_string(),
        "unexpected end of file, expecting \"}\" in bad.conf:1"
    );
    let json = payload(&files, Options::default()).to_python_string(None);
    assert!(json.starts_with(r#"{"status":"failed","errors":[{"file":"bad.conf","error":"unexpected end of file, expecting \"}\" in bad.conf:1","line":1}]"#));
}

#[test]
fn comments_and_single_file_options() {
    let files = load(&[
        ("nginx.conf", "# top\ninclude a.conf; # after\n"),
        ("a.conf", ""),
    ]);
    let with = payload(&files, Options::default().with_comments(true)).to_python_string(None);
    assert!(with.contains(r##"{"directive":"#","line":1,"args":[],"comment":" top"}"##));
    assert!(with.contains(r##"{"directive":"#","line":2,"args":[],"comment":" after"}"##));
    let without = payload(&files, Options::default()).to_python_string(None);
    assert!(!without.contains("comment"));
    let single = Files::main_only("nginx.conf", b"include a.conf;", &Default::default());
    let json = payload(&single, Options::default().with_single(true)).to_python_string(None);
    assert!(!json.contains("includes"));
}
