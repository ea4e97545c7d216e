//! DNS message codec (RFC 1035 and successors): zero-copy parse, encode with name compression, EDNS0.
//!
//! `#![no_std]` with `alloc`; the default `std` feature only adds conveniences.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;
