//! The objects of a table as knftables describes them: the table, chains (regular, or base
//! chains with a type, hook and priority), and sets and maps (with their key type, flags and
//! timeout).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use iptables_model::text::push_u32;

use crate::name::{Comment, Name};

/// The address family of a table (kube-proxy uses one table per IP family).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// `ip`: IPv4.
    #[default]
    Ip,
    /// `ip6`: IPv6.
    Ip6,
}

impl Family {
    /// The keyword (`ip`, `ip6`), also the prefix of address matches (`ip daddr`).
    pub const fn keyword(self) -> &'static str {
        match self {
            Self::Ip => "ip",
            Self::Ip6 => "ip6",
        }
    }

    /// The source address match (`ip saddr`, `ip6 saddr`), as one word.
    pub const fn saddr(self) -> &'static str {
        match self {
            Self::Ip => "ip saddr",
            Self::Ip6 => "ip6 saddr",
        }
    }

    /// The destination address match (`ip daddr`, `ip6 daddr`), as one word.
    pub const fn daddr(self) -> &'static str {
        match self {
            Self::Ip => "ip daddr",
            Self::Ip6 => "ip6 daddr",
        }
    }

    /// The address key type of the family (`ipv4_addr`, `ipv6_addr`).
    pub const fn addr_type(self) -> KeyType {
        match self {
            Self::Ip => KeyType::Ipv4Addr,
            Self::Ip6 => KeyType::Ipv6Addr,
        }
    }
}

/// The table, with its optional comment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Table {
    /// `comment`.
    pub comment: Option<Comment>,
}

/// A base chain's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChainType {
    /// `filter`.
    Filter,
    /// `nat`.
    Nat,
}

impl ChainType {
    /// The keyword.
    pub const fn keyword(self) -> &'static str {
        match self {
            Self::Filter => "filter",
            Self::Nat => "nat",
        }
    }
}

/// A netfilter hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hook {
    /// `prerouting`.
    Prerouting,
    /// `input`.
    Input,
    /// `forward`.
    Forward,
    /// `output`.
    Output,
    /// `postrouting`.
    Postrouting,
}

impl Hook {
    /// The keyword.
    pub const fn keyword(self) -> &'static str {
        match self {
            Self::Prerouting => "prerouting",
            Self::Input => "input",
            Self::Forward => "forward",
            Self::Output => "output",
            Self::Postrouting => "postrouting",
        }
    }
}

/// What makes a chain a base chain. The priority is a number, as knftables writes it after
/// resolving a named priority (`dstnat` is -100, `srcnat` 100, `filter` 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BaseChain {
    /// `type`.
    pub chain_type: ChainType,
    /// `hook`.
    pub hook: Hook,
    /// `priority`.
    pub priority: i32,
}

/// A chain: regular, or a base chain attached to a hook.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Chain {
    /// Its name.
    pub name: Name,
    /// Type, hook and priority for a base chain.
    pub base: Option<BaseChain>,
    /// `comment`.
    pub comment: Option<Comment>,
}

impl Chain {
    /// A regular chain without a comment.
    pub const fn regular(name: Name) -> Self {
        Self {
            name,
            base: None,
            comment: None,
        }
    }
}

/// A data type of a set or map key, or of a map value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyType {
    /// `ipv4_addr`.
    Ipv4Addr,
    /// `ipv6_addr`.
    Ipv6Addr,
    /// `inet_proto`.
    InetProto,
    /// `inet_service`.
    InetService,
    /// `verdict` (map values only).
    Verdict,
}

impl KeyType {
    /// The keyword.
    pub const fn keyword(self) -> &'static str {
        match self {
            Self::Ipv4Addr => "ipv4_addr",
            Self::Ipv6Addr => "ipv6_addr",
            Self::InetProto => "inet_proto",
            Self::InetService => "inet_service",
            Self::Verdict => "verdict",
        }
    }
}

/// A set or map flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SetFlag {
    /// `constant`.
    Constant,
    /// `dynamic`: updated from the packet path (`update @set { ... }`).
    Dynamic,
    /// `interval`: elements may be ranges or prefixes.
    Interval,
    /// `timeout`: elements expire.
    Timeout,
}

impl SetFlag {
    /// The keyword.
    pub const fn keyword(self) -> &'static str {
        match self {
            Self::Constant => "constant",
            Self::Dynamic => "dynamic",
            Self::Interval => "interval",
            Self::Timeout => "timeout",
        }
    }
}

/// A set (no value type) or a map (a value type, such as `verdict` for a verdict map).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Container {
    /// Its name.
    pub name: Name,
    /// The key: one type, or several concatenated (`ipv4_addr . inet_proto . inet_service`).
    pub key: Vec<KeyType>,
    /// The value type of a map; `None` for a set.
    pub value: Option<KeyType>,
    /// `flags`.
    pub flags: Vec<SetFlag>,
    /// `timeout`, in seconds.
    pub timeout: Option<u32>,
    /// `comment`.
    pub comment: Option<Comment>,
}

impl Container {
    /// Whether this is a map.
    pub const fn is_map(&self) -> bool {
        self.value.is_some()
    }

    /// `set` or `map`.
    pub const fn keyword(&self) -> &'static str {
        if self.is_map() { "map" } else { "set" }
    }

    /// The properties between braces, as knftables writes them:
    /// `{ type K [: V] ; [flags F ;] [timeout Ns ;] [comment "C" ;] }`.
    pub(crate) fn write_properties(&self, out: &mut String) {
        out.push_str(" { type ");
        for (i, k) in self.key.iter().enumerate() {
            if i > 0 {
                out.push_str(" . ");
            }
            out.push_str(k.keyword());
        }
        if let Some(v) = self.value {
            out.push_str(" : ");
            out.push_str(v.keyword());
        }
        out.push_str(" ;");
        if !self.flags.is_empty() {
            out.push_str(" flags ");
            for (i, flag) in self.flags.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(flag.keyword());
            }
            out.push_str(" ;");
        }
        if let Some(t) = self.timeout {
            out.push_str(" timeout ");
            push_u32(out, t);
            out.push_str("s ;");
        }
        if let Some(c) = &self.comment {
            out.push_str(" comment ");
            c.push_quoted(out);
            out.push_str(" ;");
        }
        out.push_str(" }");
    }
}

impl Chain {
    /// The properties between braces knftables writes for `add chain`, if any.
    pub(crate) fn write_properties(&self, out: &mut String) {
        if self.base.is_none() && self.comment.is_none() {
            return;
        }
        out.push_str(" {");
        if let Some(b) = self.base {
            let _ = write!(
                out,
                " type {} hook {} priority {} ;",
                b.chain_type.keyword(),
                b.hook.keyword(),
                b.priority
            );
        }
        if let Some(c) = &self.comment {
            out.push_str(" comment ");
            c.push_quoted(out);
            out.push_str(" ;");
        }
        out.push_str(" }");
    }
}
