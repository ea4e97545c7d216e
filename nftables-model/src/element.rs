//! Set and map elements: keys made of typed atoms (addresses, protocols, ports), verdicts as
//! map values, and an optional comment. Nothing in an element is free text.

use alloc::vec::Vec;
use core::fmt;
use core::net::IpAddr;

use iptables_model::kube::Protocol;

use crate::name::{Comment, Name};

/// One part of an element key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    /// An address (`ipv4_addr`, `ipv6_addr`).
    Ip(IpAddr),
    /// A transport protocol (`inet_proto`): `tcp`, `udp`, `sctp`.
    Protocol(Protocol),
    /// A port (`inet_service`).
    Port(u16),
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ip(ip) => write!(f, "{ip}"),
            Self::Protocol(p) => f.write_str(p.lower()),
            Self::Port(p) => write!(f, "{p}"),
        }
    }
}

/// A verdict: a verdict map's value, or the end of a rule.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// `accept`.
    Accept,
    /// `drop`.
    Drop,
    /// `return`.
    Return,
    /// `jump CHAIN`.
    Jump(Name),
    /// `goto CHAIN`.
    Goto(Name),
}

impl Verdict {
    /// The chain this verdict continues in, if any.
    pub const fn chain(&self) -> Option<&Name> {
        match self {
            Self::Jump(c) | Self::Goto(c) => Some(c),
            _ => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Accept => f.write_str("accept"),
            Self::Drop => f.write_str("drop"),
            Self::Return => f.write_str("return"),
            Self::Jump(c) => write!(f, "jump {c}"),
            Self::Goto(c) => write!(f, "goto {c}"),
        }
    }
}

/// An element of the set or map named `container`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Element {
    /// The set or map.
    pub container: Name,
    /// The key, one atom per key type.
    pub key: Vec<Atom>,
    /// The map value (`None` in a set).
    pub value: Option<Verdict>,
    /// `comment`.
    pub comment: Option<Comment>,
}

impl Element {
    /// The key as written: atoms joined by ` . `.
    pub(crate) fn write_key(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, atom) in self.key.iter().enumerate() {
            if i > 0 {
                f.write_str(" . ")?;
            }
            write!(f, "{atom}")?;
        }
        Ok(())
    }

    /// `{ KEY [comment "C"] [: VALUE] }` for `add element`.
    pub(crate) fn write_added(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(" { ")?;
        self.write_key(f)?;
        if let Some(c) = &self.comment {
            write!(f, " comment {c}")?;
        }
        if let Some(v) = &self.value {
            write!(f, " : {v}")?;
        }
        f.write_str(" }")
    }
}
