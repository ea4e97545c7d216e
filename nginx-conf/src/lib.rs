//! nginx.conf lexer, parser and emitter with lossless round trip, comments and *_by_lua_block bodies.
//!
//! `#![no_std]` with `alloc`; the default `std` feature only adds conveniences.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;
