#![doc = include_str!("../README.md")]

mod backend;
mod detect;
mod error;
mod iptables;
mod nft;
mod process;

pub use backend::Backend;
pub use detect::detect;
pub use error::ExecError;
pub use iptables::Iptables;
pub use nft::Nft;
