//! Prints the CoreDNS view of a Corefile as JSON (the corpus's `expected.json` format).
//!
//! `cargo run -p corefile --example corefile-json -- [--parse-only] PATH`
//!
//! Exits 0 when CoreDNS would accept the file, 1 when it would reject it, 2 on usage or I/O
//! errors. `--parse-only` runs the plain caddy parse (any directive, no CoreDNS stages).
//!
//! As CoreDNS run as `coredns -conf NAME` in the file's directory (how the corpus was made):
//! `import` reads files relative to the Corefile, `{$NAME}` and `{%NAME%}` take this
//! process's environment, and errors name the file without its directory.

#[path = "support/view_json.rs"]
mod view_json;

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut parse_only = false;
    let mut path = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--parse-only" => parse_only = true,
            _ => path = Some(arg),
        }
    }
    let Some(path) = path else {
        eprintln!("usage: corefile-json [--parse-only] PATH");
        return ExitCode::from(2);
    };
    let input = match std::fs::read(&path) {
        Ok(input) => input,
        Err(e) => {
            eprintln!("corefile-json: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let path = std::path::Path::new(&path);
    let filename = path
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Err(e) = std::env::set_current_dir(dir)
    {
        eprintln!("corefile-json: {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let env = |name: &str| std::env::var(name).ok();
    let context = view_json::Context {
        env: &env,
        resolver: &mut corefile::fs::FsResolver,
    };
    let (json, ok) = view_json::view_json(&input, &filename, parse_only, context);
    print!("{}", json.to_pretty());
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
