#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod dispenser;
pub mod emit;
pub mod env;
pub mod error;
#[cfg(feature = "std")]
pub mod fs;
pub mod go;
pub mod import;
pub mod lexer;
pub mod overlap;
pub mod parser;
pub mod plugin_order;
pub mod plugins;
pub mod syntax;
pub mod template;
pub mod text;
pub mod view;
pub mod zone;

pub use error::{Error, ParseError, ParseErrorKind};
pub use text::Text;
pub use view::{CorefileView, load, load_with};
