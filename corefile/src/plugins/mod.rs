//! Typed configurations of the plugins the DNS cache serves, parsed from a directive's tokens
//! with the argument rules and error texts of each CoreDNS plugin's setup, and written back as
//! Corefile lines.
//!
//! Each config reads every occurrence of its directive in a block (CoreDNS hands setup all of
//! them) and emits one line per occurrence it represents.

use alloc::string::String;
use alloc::vec::Vec;

use crate::dispenser::{Dispenser, PluginError};
use crate::syntax::{Entry, Line, Part};
use crate::view::BlockView;

mod bind;
mod cache;
mod errors;
mod forward;
mod hosts;
mod listen;
mod log;
pub mod re2;
mod reload;
mod resolv_conf;
mod simple;

pub use bind::Bind;
pub use cache::{Cache, CacheTier, Prefetch};
pub use errors::{Consolidate, Errors};
pub use forward::{Forward, ForwardStanza, MAX_UPSTREAMS, Policy};
pub use hosts::{HostEntry, Hosts};
pub use listen::{Health, Monitor, Prometheus, Ready};
pub use log::{Log, LogRule};
pub use reload::Reload;
pub use resolv_conf::resolv_conf_upstreams;
pub use simple::{Debug, Loop, Whoami};

/// A plugin's typed configuration.
pub trait PluginConfig: Sized {
    /// The directive name.
    const NAME: &'static str;

    /// Parses every occurrence the Dispenser holds, as the plugin's setup does.
    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError>;

    /// The configuration as Corefile lines (one per occurrence).
    fn to_lines(&self) -> Vec<Line>;
}

/// The typed configuration of plugin `P` in `block`, if the block uses it. `filename` names
/// the main input in error positions.
pub fn config<P: PluginConfig>(
    block: &BlockView,
    filename: &str,
) -> Option<Result<P, PluginError>> {
    let directive = block.directives.iter().find(|d| d.name == P::NAME)?;
    let mut d = Dispenser::new(P::NAME, filename, block.tokens_of(directive), &block.files);
    Some(P::parse(&mut d))
}

/// A line of words followed, when `block` is not empty, by a nested block.
pub(crate) fn line<I, S>(words: I, block: Vec<Line>) -> Line
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut line = Line::words(words);
    if !block.is_empty() {
        line.parts
            .push(Part::Block(block.into_iter().map(Entry::Line).collect()));
    }
    line
}

/// Builds a word list starting with `first`.
pub(crate) fn words<'s>(first: &'s str, rest: impl IntoIterator<Item = &'s str>) -> Vec<&'s str> {
    core::iter::once(first).chain(rest).collect()
}

/// `plugin.ErrOnce` when a block names the plugin twice.
pub(crate) fn once(d: &Dispenser<'_>, seen: &mut bool) -> Result<(), PluginError> {
    if core::mem::replace(seen, true) {
        return Err(d.plain(crate::dispenser::ERR_ONCE));
    }
    Ok(())
}
