//! Snippets and file imports (`docs/corefile.md` §2.4) through the resolver traits.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
#![allow(clippy::std_instead_of_alloc)] // a std test: its collections come from std

use std::collections::BTreeMap;

use corefile::env::NoEnv;
use corefile::fs::FsResolver;
use corefile::import::{ImportedFile, Resolver, check_glob, has_wildcard};
use corefile::plugin_order::PluginOrder;
use corefile::view::{self, Options};

/// An in-memory file system keyed by absolute path; patterns are joined to `/etc/coredns`.
struct MemFiles(BTreeMap<&'static str, &'static str>);

impl Resolver for MemFiles {
    fn resolve(&mut self, pattern: &str, _from: &str) -> Result<Vec<ImportedFile>, String> {
        let path = if pattern.starts_with('/') {
            pattern.to_string()
        } else {
            format!("/etc/coredns/{pattern}")
        };
        check_glob(&path)?;
        let prefix = path.trim_end_matches('*');
        let found: Vec<ImportedFile> = self
            .0
            .iter()
            .filter(|(p, _)| {
                if path.ends_with('*') {
                    p.starts_with(prefix)
                } else {
                    **p == path
                }
            })
            .map(|(p, c)| ImportedFile {
                path: p.to_string(),
                contents: c.as_bytes().to_vec(),
            })
            .collect();
        if found.is_empty() && !has_wildcard(&path) {
            return Err(format!("File to import not found: {pattern}"));
        }
        Ok(found)
    }
}

fn load<'a>(
    input: &'a str,
    files: &[(&'static str, &'static str)],
) -> Result<view::CorefileView<'a>, String> {
    let mut resolver = MemFiles(files.iter().copied().collect());
    view::load_with(
        input.as_bytes(),
        Options {
            filename: "Corefile",
            order: PluginOrder::default(),
            dns_port: "53",
            env: &NoEnv,
            resolver: &mut resolver,
        },
    )
    .map_err(|e| e.to_string())
}

#[test]
fn file_import_tokens_carry_their_file_and_own_lines() {
    let v = load(
        ". {\n    import extra.conf\n    log\n}\n",
        &[("/etc/coredns/extra.conf", "\n\nwhoami\n")],
    )
    .unwrap();
    let block = &v.blocks[0];
    let whoami = &block.tokens_of(block.directive("whoami").unwrap())[0];
    assert_eq!(whoami.line, 3);
    assert_eq!(
        whoami.file.path(&block.files),
        Some("/etc/coredns/extra.conf")
    );
}

#[test]
fn tokens_from_different_files_are_never_on_one_line() {
    // `log` on line 1 of the import and `errors` on line 1 of the main file stay apart.
    let v = load(
        "import a.conf\n",
        &[("/etc/coredns/a.conf", ". {\nlog\n}\n")],
    )
    .unwrap();
    assert_eq!(v.blocks[0].raw_keys, ["."]);
}

#[test]
fn import_errors_read_like_coredns() {
    assert_eq!(
        load(". {\n    import\n}\n", &[]).unwrap_err(),
        "Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'import'"
    );
    assert_eq!(
        load(". {\n    import a b\n}\n", &[]).unwrap_err(),
        "Corefile:2 - Error during parsing: Import takes only one argument (glob pattern or file)"
    );
    assert_eq!(
        load(". {\n    import \"\"\n}\n", &[]).unwrap_err(),
        "Corefile:2 - Error during parsing: Import requires a non-empty filepath"
    );
    assert_eq!(
        load(". {\n    import missing.conf\n}\n", &[]).unwrap_err(),
        "Corefile:2 - Error during parsing: File to import not found: missing.conf"
    );
    assert_eq!(
        load(". {\n    import *.conf*\n}\n", &[]).unwrap_err(),
        "Corefile:2 - Error during parsing: Glob pattern may only contain one wildcard (*), but has others: /etc/coredns/*.conf*"
    );
    // A glob that matches nothing imports nothing.
    assert!(load(". {\n    import none*\n    log\n}\n", &[]).is_ok());
}

#[test]
fn snippet_rules() {
    assert_eq!(
        load("(s) {\n log\n}\n(s) {\n log\n}\n", &[]).unwrap_err(),
        "Corefile:4 - Error during parsing: redeclaration of previously declared snippet s"
    );
    assert_eq!(
        load("(s) {\n import s\n}\n", &[]).unwrap_err(),
        "Corefile:3 - Error during parsing: maximum snippet import depth (10000) exceeded"
    );
    assert_eq!(
        load(
            "(a) {\n import b\n}\n(b) {\n import a\n}\n. {\n import a\n}\n",
            &[]
        )
        .unwrap_err(),
        "Corefile:5 - Error during parsing: maximum snippet import depth (10000) exceeded"
    );
    // Snippet tokens keep their own line numbers.
    let v = load("(s) {\n    log\n}\n. {\n    import s\n}\n", &[]).unwrap();
    let block = &v.blocks[0];
    assert_eq!(block.tokens_of(&block.directives[0])[0].line, 2);
}

/// Go splices an import's tokens into its token slice and steps the cursor back; when the
/// import brings nothing and ends the input, the cursor lands on the token before `import`.
#[test]
fn an_empty_import_at_the_end_leaves_the_cursor_on_the_token_before_it() {
    assert_eq!(
        load("(e) {\n}\na {\n  import e", &[]).unwrap_err(),
        "Corefile:3 - Syntax error: Unexpected token '{', expecting '}'"
    );
    assert_eq!(
        load("(e) {\n}\na {\n  log\n  import e", &[]).unwrap_err(),
        "Corefile:4 - Syntax error: Unexpected token 'log', expecting '}'"
    );
    assert_eq!(
        load("(e) {\n}\na {\n  log {\n  import e", &[]).unwrap_err(),
        "Corefile:4 - Error during parsing: Unexpected EOF"
    );
    // In key position the block simply ends: no keys, so the default Corefile is used.
    let view = load("(e) {\n}\nimport e", &[]).unwrap();
    assert!(view.used_default_input);
    // Followed by more input, the import vanishes and the next token follows on.
    let view = load("(e) {\n}\na {\n  import e\n  log\n}\n", &[]).unwrap();
    assert_eq!(view.blocks[0].directives[0].name, "log");
}

#[test]
fn a_file_that_imports_itself_hits_a_cap() {
    let err = load(
        "import loop.conf\n",
        &[("/etc/coredns/loop.conf", "import loop.conf\n")],
    )
    .unwrap_err();
    assert!(
        err.ends_with("maximum number of file imports (100000) exceeded"),
        "{err}"
    );
}

#[test]
fn fs_resolver_reads_globs_and_refuses_directories() {
    let dir = std::env::temp_dir().join(format!("corefile-imports-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("conf.d/sub")).unwrap();
    std::fs::write(dir.join("conf.d/b.conf"), "errors\n").unwrap();
    std::fs::write(dir.join("conf.d/a.conf"), "log\n").unwrap();
    let main = dir.join("Corefile");
    let main_name = main.to_str().unwrap().to_string();
    let run = |text: &'static str| {
        view::load_with(
            text.as_bytes(),
            Options {
                filename: &main_name,
                order: PluginOrder::default(),
                dns_port: "53",
                env: &NoEnv,
                resolver: &mut FsResolver,
            },
        )
        .map_err(|e| e.to_string())
    };
    let v = run(". {\n    import conf.d/*.conf\n}\n").unwrap();
    let names: Vec<&str> = v.blocks[0].directives.iter().map(|d| &*d.name).collect();
    assert_eq!(names, ["errors", "log"]);
    let block = &v.blocks[0];
    let log = &block.tokens_of(&block.directives[1])[0];
    assert_eq!(
        log.file.path(&block.files),
        dir.join("conf.d/a.conf").to_str()
    );
    let err = run(". {\n    import conf.d/sub\n}\n").unwrap_err();
    assert!(err.ends_with("conf.d/sub: is a directory"), "{err}");
    assert!(run(". {\n    import nothing/*.conf\n    log\n}\n").is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}
