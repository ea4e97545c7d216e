//! Runs one stage of the `corefile` pipeline on the benchmark's generated Corefile, for
//! instruction counts: `valgrind --tool=callgrind target/release/examples/corefile_profile parse`.
//! Stages: `gen` (only generate the input, to subtract), `lex`, `parse`, `load`, `format`; an optional second argument sets the block count or names a
//! Corefile to read instead.

use std::hint::black_box;

use benches::large_corefile;
use corefile::import::NoFiles;
use corefile::parser::{self, ParseOptions};
use corefile::plugin_order::V1_14_7;

fn main() {
    let mut args = std::env::args().skip(1);
    let stage = args.next().unwrap_or_else(|| String::from("parse"));
    let size = args.next();
    let input = match size.as_deref().map(str::parse) {
        Some(Ok(blocks)) => large_corefile(blocks),
        // Anything else names a file to use instead.
        Some(Err(_)) => std::fs::read_to_string(size.unwrap_or_default()).unwrap_or_default(),
        None => large_corefile(4000),
    };
    let input = black_box(input.as_bytes());
    match stage.as_str() {
        "gen" => println!("{} bytes", input.len()),
        "lex" => println!("{} tokens", corefile::lexer::tokens(input).len()),
        "parse" => {
            let blocks = parser::parse(
                input,
                ParseOptions {
                    filename: "Corefile",
                    directives: Some(V1_14_7.names),
                    env: &corefile::env::NoEnv,
                    resolver: &mut NoFiles,
                },
            );
            println!("{} blocks", blocks.map_or(0, |b| b.len()));
        }
        "load" => println!("{:?}", corefile::load(input).map(|v| v.blocks.len())),
        "format" => println!("{:?}", corefile::emit::format(input).map(|f| f.len())),
        other => eprintln!("unknown stage {other}"),
    }
}
