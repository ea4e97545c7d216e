//! `bind ADDRESS|INTERFACE... { except ADDRESS|INTERFACE... }`.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::{PluginConfig, line, words};
use crate::dispenser::{Dispenser, PluginError};
use crate::syntax::Line;

/// `bind`: the addresses (or interface names) a server block listens on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bind {
    /// Addresses or interface names, every occurrence's in order.
    pub addresses: Vec<String>,
    /// Addresses or interfaces excluded again.
    pub except: Vec<String>,
}

impl PluginConfig for Bind {
    const NAME: &'static str = "bind";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        let mut bind = Bind::default();
        while d.next_token() {
            let args = d.remaining_args();
            if args.is_empty() {
                return Err(d.plain("at least one address or interface name is expected"));
            }
            bind.addresses.extend(args.iter().map(|a| a.to_string()));
            while d.next_block() {
                if d.val() != "except" {
                    return Err(d.plain(alloc::format!("invalid option {:?}", d.val())));
                }
                let except = d.remaining_args();
                if except.is_empty() {
                    return Err(d.plain(
                        "at least one address or interface must be given to except subdirective",
                    ));
                }
                bind.except.extend(except.iter().map(|a| a.to_string()));
            }
        }
        Ok(bind)
    }

    fn to_lines(&self) -> Vec<Line> {
        let block = if self.except.is_empty() {
            Vec::new()
        } else {
            vec![Line::words(words(
                "except",
                self.except.iter().map(String::as_str),
            ))]
        };
        vec![line(
            words("bind", self.addresses.iter().map(String::as_str)),
            block,
        )]
    }
}
