//! CoreDNS Corefile lexer, parser, emitter, zone normalisation and typed plugin configs.
//!
//! `#![no_std]` with `alloc`; the default `std` feature only adds conveniences.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;
