#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod crossplane;
mod emit;
mod error;
#[cfg(feature = "std")]
mod fs;
mod glob;
mod include;
mod lexer;
mod lua;
mod parser;
mod small;
mod tree;
mod trivia;
mod word;

pub use error::{EmitError, Error, ErrorKind};
#[cfg(feature = "std")]
pub use fs::FsResolver;
pub use glob::{is_glob, matches_component};
pub use include::{File, Files, Include, Resolver};
pub use lua::{LUA_NGINX_MODULE, LuaBlocks};
pub use parser::{MAX_DEPTH, Options, parse, parse_with};
pub use tree::{Arg, Args, Block, Config, Directive, End, LuaBody};
pub use trivia::{MAX_COMMENT, Piece, Pieces, Trivia};
pub use word::{MAX_WORD, Quote, Word};

/// Most files one include expansion reads (a limit of this crate; nginx has none).
pub const MAX_FILES: usize = 4096;
