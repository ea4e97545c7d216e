//! Shared helpers of the benchmark suite and of `bench-report`.
//!
//! Naming convention, relied on by `bench-report`: every benchmark that compares
//! implementations is `GROUP/IMPL/INPUT` (criterion's `BenchmarkId::new(IMPL, INPUT)` inside a
//! group), where `IMPL` is [`OURS`] for this project's code and the peer's crate or tool name
//! otherwise. A benchmark with no peer simply has no other `IMPL` in its group.

pub mod dns;
pub mod iptables_inputs;
pub mod netns_timing;
pub mod nginx_inputs;
pub mod report;

/// The `IMPL` name of this project's implementation in every comparison group.
pub const OURS: &str = "ours";

/// A large generated Corefile for the `corefile` benchmarks: one server block per zone, with
/// the directives a cluster DNS and a node cache use.
pub fn large_corefile(blocks: usize) -> String {
    let mut out =
        String::from("(common) {\n    errors\n    log . \"{remote} {type} {name}\"\n}\n\n");
    for i in 0..blocks {
        let _ = core::fmt::Write::write_fmt(
            &mut out,
            format_args!(
                "zone{i}.example.org:53 10.{}.{}.0/24 {{\n\
             \x20   import common\n\
             \x20   bind 169.254.20.10 10.96.0.10\n\
             \x20   cache 30 {{\n\
             \x20       success 9984 30\n\
             \x20       denial 9984 5\n\
             \x20   }}\n\
             \x20   reload\n\
             \x20   loop\n\
             \x20   health 169.254.20.10:8080 # liveness\n\
             \x20   prometheus :9253\n\
             \x20   hosts /etc/hosts zone{i}.example.org {{\n\
             \x20       10.0.0.{} db.zone{i}.example.org\n\
             \x20       fallthrough\n\
             \x20   }}\n\
             \x20   forward . 10.0.0.10 tls://9.9.9.9 {{\n\
             \x20       force_tcp\n\
             \x20       max_fails 3\n\
             \x20       expire 10s\n\
             \x20       policy sequential\n\
             \x20   }}\n\
             }}\n\n",
                i / 256,
                i % 256,
                i % 250
            ),
        );
    }
    out
}
