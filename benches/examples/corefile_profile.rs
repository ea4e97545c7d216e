//! Runs one stage of the `corefile` pipeline on the benchmark's generated Corefile, for
//! instruction counts: `valgrind --tool=callgrind target/release/examples/corefile_profile parse`.
//! Stages: `gen` (only generate the input, to subtract), `lex`, `parse`, `load`, `format`,
//! and `time` (the best wall time of 50 parses, each with the drop of its result, for quick
//! A/B comparisons); an optional second argument sets the block count or names a Corefile to
//! read instead.

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
    let parse = || {
        parser::parse(
            input,
            ParseOptions {
                filename: "Corefile",
                directives: Some(V1_14_7.names),
                env: &corefile::env::NoEnv,
                resolver: &mut NoFiles,
            },
        )
    };
    match stage.as_str() {
        "gen" => println!("{} bytes", input.len()),
        "lex" => println!("{} tokens", corefile::lexer::tokens(input).len()),
        "parse" => println!("{} blocks", parse().map_or(0, |b| b.len())),
        "time" => {
            let best = (0..50)
                .map(|_| {
                    let start = std::time::Instant::now();
                    drop(black_box(parse()));
                    start.elapsed()
                })
                .min()
                .unwrap_or_default();
            let rate = input.len() as f64 / best.as_secs_f64() / 1e6;
            println!("best of 50: {best:?} per parse, {rate:.0} MB/s");
        }
        "load" => println!("{:?}", corefile::load(input).map(|v| v.blocks.len())),
        "format" => println!("{:?}", corefile::emit::format(input).map(|f| f.len())),
        other => eprintln!("unknown stage {other}"),
    }
}
