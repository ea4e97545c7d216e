//! iptables as data: tables, chains, rules, the save/restore codec, kube-proxy rule generation and exact packet-path odds.
//!
//! `#![no_std]` with `alloc`; the default `std` feature only adds conveniences.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;
