//! Proof that the pure crates are `no_std` + `alloc`.
//!
//! Built by `scripts/test` as `cargo build -p nostd-proof --features proof`. With the `proof`
//! feature this crate defines its own `#[panic_handler]`; the standard library defines one too,
//! so if any pure crate (or any of its dependencies, with default features off) links `std`,
//! rustc stops with "found duplicate lang item `panic_impl`".
#![no_std]

extern crate corefile;
extern crate dns_wire;
extern crate iptables_model;
extern crate leader_lease;
extern crate nftables_model;
extern crate nginx_conf;

/// Panic handler of a freestanding program: spin, as there is nothing to report to.
#[cfg(feature = "proof")]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
