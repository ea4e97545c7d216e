//! Rule targets (`-j` / `-g`).

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::vec::Vec;

use super::ChainName;
use super::matches::owned;

/// How `-j MARK` changes the packet mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MarkAction {
    /// `--set-xmark VALUE/MASK`: `mark = (mark & !mask) ^ value` (the form `iptables-save` prints).
    SetXmark {
        /// Value.
        value: u32,
        /// Mask (`None` when written without one, meaning all ones).
        mask: Option<u32>,
    },
    /// `--set-mark VALUE[/MASK]`: `mark = (mark & !mask) | value`.
    SetMark {
        /// Value.
        value: u32,
        /// Mask (`None` when written without one, meaning all ones).
        mask: Option<u32>,
    },
    /// `--or-mark BITS`.
    OrMark(u32),
    /// `--xor-mark BITS`.
    XorMark(u32),
    /// `--and-mark BITS`.
    AndMark(u32),
}

impl MarkAction {
    /// The equivalent `--set-xmark VALUE/MASK` pair, as `iptables-save` prints it.
    pub const fn as_xmark(self) -> (u32, u32) {
        match self {
            Self::SetXmark { value, mask } => (
                value,
                match mask {
                    Some(m) => m,
                    None => u32::MAX,
                },
            ),
            Self::SetMark { value, mask } => (
                value,
                value
                    | match mask {
                        Some(m) => m,
                        None => u32::MAX,
                    },
            ),
            Self::OrMark(bits) => (bits, bits),
            Self::XorMark(bits) => (bits, 0),
            Self::AndMark(bits) => (0, !bits),
        }
    }

    /// The mark after applying this action to `mark`.
    pub const fn apply(self, mark: u32) -> u32 {
        let (value, mask) = self.as_xmark();
        (mark & !mask) ^ value
    }
}

/// What a matching rule does. Option values borrow from the parsed input for `'a`
/// ([`Target::into_owned`] detaches them).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target<'a> {
    /// `-j ACCEPT`.
    Accept,
    /// `-j DROP`.
    Drop,
    /// `-j RETURN`.
    Return,
    /// `-j CHAIN`: call a user chain.
    Jump(ChainName),
    /// `-g CHAIN`: continue in a user chain without returning here.
    Goto(ChainName),
    /// `-j REJECT [--reject-with TYPE]`.
    Reject {
        /// The ICMP type, when written.
        with: Option<Cow<'a, str>>,
    },
    /// `-j DNAT --to-destination ADDR[:PORT]`.
    Dnat {
        /// The destination, as written (`10.180.0.1:80`, `[fd00::1]:80`).
        to: Option<Cow<'a, str>>,
        /// `--random`.
        random: bool,
        /// `--persistent`.
        persistent: bool,
    },
    /// `-j SNAT --to-source ADDR[:PORT]`.
    Snat {
        /// The source, as written.
        to: Option<Cow<'a, str>>,
        /// `--random`.
        random: bool,
        /// `--random-fully`.
        random_fully: bool,
        /// `--persistent`.
        persistent: bool,
    },
    /// `-j MASQUERADE`.
    Masquerade {
        /// `--to-ports`, as written.
        to_ports: Option<Cow<'a, str>>,
        /// `--random`.
        random: bool,
        /// `--random-fully`.
        random_fully: bool,
    },
    /// `-j MARK ...`.
    Mark(MarkAction),
    /// `-j NOTRACK`.
    Notrack,
    /// Any other target extension, kept verbatim (`-j LOG --log-prefix x`); boxed, so the
    /// common targets keep a rule small.
    Other(Box<OtherTarget<'a>>),
}

/// A target extension this crate does not type, kept verbatim: `-j NAME ARGS...`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OtherTarget<'a> {
    /// The target name.
    pub name: ChainName,
    /// Its arguments.
    pub args: Vec<Cow<'a, str>>,
}

/// Target extensions that take no options and so could be mistaken for chain names.
pub(crate) const OPTIONLESS_EXTENSIONS: &[&str] = &[
    "LOG",
    "NFLOG",
    "TRACE",
    "CT",
    "CONNMARK",
    "NFQUEUE",
    "QUEUE",
    "AUDIT",
    "CHECKSUM",
    "CLASSIFY",
    "REDIRECT",
    "NETMAP",
    "TCPMSS",
    "SECMARK",
    "CONNSECMARK",
    "SYNPROXY",
];

impl<'a> Target<'a> {
    /// This target with its option values copied out of the parsed input.
    pub fn into_owned(self) -> Target<'static> {
        match self {
            Self::Accept => Target::Accept,
            Self::Drop => Target::Drop,
            Self::Return => Target::Return,
            Self::Jump(chain) => Target::Jump(chain),
            Self::Goto(chain) => Target::Goto(chain),
            Self::Reject { with } => Target::Reject {
                with: with.map(owned),
            },
            Self::Dnat {
                to,
                random,
                persistent,
            } => Target::Dnat {
                to: to.map(owned),
                random,
                persistent,
            },
            Self::Snat {
                to,
                random,
                random_fully,
                persistent,
            } => Target::Snat {
                to: to.map(owned),
                random,
                random_fully,
                persistent,
            },
            Self::Masquerade {
                to_ports,
                random,
                random_fully,
            } => Target::Masquerade {
                to_ports: to_ports.map(owned),
                random,
                random_fully,
            },
            Self::Mark(action) => Target::Mark(action),
            Self::Notrack => Target::Notrack,
            Self::Other(other) => {
                let OtherTarget { name, args } = *other;
                Target::other(name, args.into_iter().map(owned).collect())
            }
        }
    }

    /// The target extension `-j NAME ARGS...` that this crate does not type.
    pub fn other(name: ChainName, args: Vec<Cow<'a, str>>) -> Self {
        Self::Other(Box::new(OtherTarget { name, args }))
    }

    /// The name written after `-j`/`-g`.
    pub fn name(&self) -> &str {
        match self {
            Self::Accept => "ACCEPT",
            Self::Drop => "DROP",
            Self::Return => "RETURN",
            Self::Jump(c) | Self::Goto(c) => c,
            Self::Reject { .. } => "REJECT",
            Self::Dnat { .. } => "DNAT",
            Self::Snat { .. } => "SNAT",
            Self::Masquerade { .. } => "MASQUERADE",
            Self::Mark(_) => "MARK",
            Self::Notrack => "NOTRACK",
            Self::Other(other) => &other.name,
        }
    }

    /// The user chain this target calls (`-j CHAIN` or `-g CHAIN`).
    pub fn chain(&self) -> Option<&str> {
        match self {
            Self::Jump(c) | Self::Goto(c) => Some(c),
            _ => None,
        }
    }
}
