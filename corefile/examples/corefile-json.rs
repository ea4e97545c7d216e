//! Prints the CoreDNS view of a Corefile as JSON (the corpus's `expected.json` format).
//!
//! `cargo run -p corefile --example corefile-json -- [--parse-only] PATH`
//!
//! Exits 0 when CoreDNS would accept the file, 1 when it would reject it, 2 on usage or I/O
//! errors. `--parse-only` runs the plain caddy parse (any directive, no CoreDNS stages).

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
    let filename = std::path::Path::new(&path)
        .file_name()
        .map_or(path.clone(), |n| n.to_string_lossy().into_owned());
    let (json, ok) = view_json::view_json(&input, &filename, parse_only);
    print!("{}", json.to_pretty());
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
