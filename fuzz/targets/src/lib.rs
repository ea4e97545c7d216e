//! Fuzz target bodies, one function per target, each `fn(&[u8])`.
//!
//! `fuzz/fuzz_targets/NAME.rs` is a one-line cargo-fuzz wrapper around the function registered
//! here under `NAME`, and `tests/replay.rs` runs every file of `fuzz/corpus/NAME/` through the
//! same function on stable Rust, so an input that once crashed stays fixed. A target signals a
//! bug by panicking (an assertion on a round trip, or a panic inside the crate under test).
//!
//! Structured targets take their input through [`arbitrary::Unstructured`], so raw corpus bytes
//! replay exactly as libFuzzer fed them.

pub mod corefile;
pub mod dns_wire;
pub mod iptables_model;
pub mod leader_lease;
pub mod nginx_conf;

/// A fuzz target: its name (the file name under `fuzz/fuzz_targets/` and the corpus folder
/// under `fuzz/corpus/`) and its body.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// Name shared by the cargo-fuzz binary and the corpus folder.
    pub name: &'static str,
    /// Runs one input; panics on a bug.
    pub run: fn(&[u8]),
}

/// Every registered fuzz target, across all crates.
pub fn all() -> impl Iterator<Item = &'static Target> {
    [
        dns_wire::TARGETS,
        corefile::TARGETS,
        nginx_conf::TARGETS,
        iptables_model::TARGETS,
        leader_lease::TARGETS,
    ]
    .into_iter()
    .flatten()
}

/// The target registered under `name`.
pub fn find(name: &str) -> Option<&'static Target> {
    all().find(|t| t.name == name)
}
