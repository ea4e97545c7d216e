//! Plugins without arguments: `whoami`, `debug`, `loop`.

use alloc::vec;
use alloc::vec::Vec;

use super::PluginConfig;
use crate::dispenser::{Dispenser, PluginError};
use crate::syntax::Line;

macro_rules! no_argument_plugin {
    ($(#[$doc:meta])* $ty:ident, $name:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $ty;

        impl PluginConfig for $ty {
            const NAME: &'static str = $name;

            fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
                while d.next_token() {
                    if d.next_arg() {
                        return Err(d.arg_err());
                    }
                }
                Ok($ty)
            }

            fn to_lines(&self) -> Vec<Line> {
                vec![Line::words([$name])]
            }
        }
    };
}

no_argument_plugin!(
    /// `whoami`: answers with the client's address. Takes no arguments.
    Whoami,
    "whoami"
);
no_argument_plugin!(
    /// `debug`: disables panic recovery. Takes no arguments.
    Debug,
    "debug"
);
no_argument_plugin!(
    /// `loop`: detects forwarding loops at startup. Takes no arguments.
    Loop,
    "loop"
);
