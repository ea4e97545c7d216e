//! Runs one operation of `benches/dns_wire.rs` a given number of times, for instruction counts
//! under `valgrind --tool=callgrind` (two runs with different counts; the difference divided
//! by the extra iterations is the cost of one, start-up excluded).
//!
//! `cargo run --release -p benches --example dns_count -- OP MESSAGE ITERATIONS` with OP one of
//! `walk-ours`, `walk-domain`, `owned-ours`, `owned-hickory`, `encode-ours`, `encode-simple`
//! and MESSAGE one of `query`, `response`, `large`.

use std::hint::black_box;

use benches::dns::{INPUTS, walk_domain, walk_ours};
use dns_wire::OwnedMessage;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, op, message, iterations] = args.as_slice() else {
        panic!("usage: dns_count OP MESSAGE ITERATIONS");
    };
    let (_, wire) = INPUTS
        .iter()
        .find(|(name, _)| name == message)
        .expect("message: query, response or large");
    let iterations: usize = iterations.parse().expect("iterations");
    let ours = OwnedMessage::parse(wire).expect("valid");
    let simple = simple_dns::Packet::parse(wire).expect("valid");
    let mut buf = vec![0u8; 65_535];
    let mut n = 0usize;
    for _ in 0..iterations {
        let w = black_box(*wire);
        n = n.wrapping_add(match op.as_str() {
            "walk-ours" => walk_ours(w),
            "walk-domain" => walk_domain(w),
            "owned-ours" => OwnedMessage::parse(w).expect("valid").answers.len(),
            "owned-hickory" => hickory_proto::op::Message::from_vec(w)
                .expect("valid")
                .answers
                .len(),
            "encode-ours" => black_box(&ours).encode(&mut buf).expect("fits"),
            "encode-simple" => black_box(&simple)
                .build_bytes_vec_compressed()
                .expect("encodes")
                .len(),
            _ => panic!("unknown op {op}"),
        });
    }
    black_box(n);
}
