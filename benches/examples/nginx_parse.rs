//! Parses a generated config `ITERS` times, for instruction counts under `perf stat` or
//! `valgrind --tool=callgrind`:
//!
//! `cargo run --release -p benches --example nginx_parse -- plain|ingress [SERVERS] [ITERS]`
//!
//! With `ITERS` 0 it writes the config to stdout instead.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use benches::nginx_inputs::{ingress, plain};
use std::hint::black_box;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let kind = args.first().map_or("plain", String::as_str);
    let count = |i: usize, default: usize| {
        args.get(i)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let text = match kind {
        "plain" => plain(count(1, 10_000)),
        "ingress" => ingress(count(1, 2_000)),
        other => panic!("unknown input {other:?}: plain or ingress"),
    };
    let iters = count(2, 1);
    if iters == 0 {
        print!("{text}");
        return;
    }
    let mut directives = 0;
    for _ in 0..iters {
        let config = nginx_conf::parse(black_box(text.as_bytes())).expect("the config parses");
        directives += config.directives.len();
    }
    eprintln!(
        "{kind}: {} bytes, {iters} parse(s), {directives} top-level directives",
        text.len()
    );
}
