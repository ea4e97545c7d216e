//! Shared helpers of the benchmark suite and of `bench-report`.
//!
//! Naming convention, relied on by `bench-report`: every benchmark that compares
//! implementations is `GROUP/IMPL/INPUT` (criterion's `BenchmarkId::new(IMPL, INPUT)` inside a
//! group), where `IMPL` is [`OURS`] for this project's code and the peer's crate or tool name
//! otherwise. A benchmark with no peer simply has no other `IMPL` in its group.

pub mod dns;
pub mod report;

/// The `IMPL` name of this project's implementation in every comparison group.
pub const OURS: &str = "ours";
