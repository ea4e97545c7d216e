//! A rule: criteria in written order, then an optional target.

use alloc::string::String;
use alloc::vec::Vec;

use super::{Counters, MatchOption, Module, Target};
use crate::addr::Cidr;

/// The protocol of `-p`, in lower case: the usual ones without an allocation, any other
/// name or number as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IpProtocol {
    /// `tcp`.
    Tcp,
    /// `udp`.
    Udp,
    /// `sctp`.
    Sctp,
    /// `icmp`.
    Icmp,
    /// `all`.
    All,
    /// Any other name or number (`icmpv6`, `6`), in lower case.
    Other(String),
}

impl IpProtocol {
    /// The protocol called `name`, whatever its case (`-p TCP` is `-p tcp`).
    pub fn from_name(name: &str) -> Self {
        // The lower-case spelling every tool writes, then any other case.
        match name {
            "tcp" => Self::Tcp,
            "udp" => Self::Udp,
            "sctp" => Self::Sctp,
            "icmp" => Self::Icmp,
            "all" => Self::All,
            _ => [Self::Tcp, Self::Udp, Self::Sctp, Self::Icmp, Self::All]
                .into_iter()
                .find(|p| p.name().eq_ignore_ascii_case(name))
                .unwrap_or_else(|| Self::Other(name.to_ascii_lowercase())),
        }
    }

    /// The name written after `-p`.
    pub fn name(&self) -> &str {
        match self {
            Self::Tcp => "tcp",
            Self::Udp => "udp",
            Self::Sctp => "sctp",
            Self::Icmp => "icmp",
            Self::All => "all",
            Self::Other(name) => name,
        }
    }
}

impl From<&str> for IpProtocol {
    fn from(name: &str) -> Self {
        Self::from_name(name)
    }
}

/// One criterion of a rule, in the order it was written.
///
/// Module options are separate items because iptables lets them follow other criteria
/// (kube-proxy writes `-m tcp -p tcp -d IP --dport 80`); each option belongs to the most
/// recent module before it that accepts it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Spec {
    /// `[!] -p PROTOCOL` (lower case).
    Protocol {
        /// `!`.
        negated: bool,
        /// The protocol name or number.
        protocol: IpProtocol,
    },
    /// `[!] -s ADDRESS[/PREFIX]`.
    Source {
        /// `!`.
        negated: bool,
        /// The address.
        address: Cidr,
    },
    /// `[!] -d ADDRESS[/PREFIX]`.
    Destination {
        /// `!`.
        negated: bool,
        /// The address.
        address: Cidr,
    },
    /// `[!] -i INTERFACE` (`+` suffix is a wildcard).
    InInterface {
        /// `!`.
        negated: bool,
        /// The interface.
        name: String,
    },
    /// `[!] -o INTERFACE`.
    OutInterface {
        /// `!`.
        negated: bool,
        /// The interface.
        name: String,
    },
    /// `[!] -f`: second and later fragments.
    Fragment {
        /// `!`.
        negated: bool,
    },
    /// `-m NAME`.
    Module(Module),
    /// An option of a module loaded earlier in the rule.
    Option(MatchOption),
}

/// A rule: its criteria (all must match) and its target. A rule without a target only counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rule {
    /// `[packets:bytes]` written before the command (restores with `--counters`).
    pub counters: Option<Counters>,
    /// The criteria, in written order.
    pub specs: Vec<Spec>,
    /// `-j`/`-g`, when present.
    pub target: Option<Target>,
}

impl Rule {
    /// A rule with no criteria and no target (with room for a typical rule's criteria).
    pub fn new() -> Self {
        Self {
            counters: None,
            specs: Vec::with_capacity(8),
            target: None,
        }
    }

    /// Adds a criterion.
    #[must_use]
    pub fn with(mut self, spec: Spec) -> Self {
        self.specs.push(spec);
        self
    }

    /// Adds `-m module`.
    #[must_use]
    pub fn module(self, module: Module) -> Self {
        self.with(Spec::Module(module))
    }

    /// Adds a module option.
    #[must_use]
    pub fn option(self, option: MatchOption) -> Self {
        self.with(Spec::Option(option))
    }

    /// Adds `-m comment --comment TEXT`.
    #[must_use]
    pub fn comment(self, text: impl Into<String>) -> Self {
        self.module(Module::Comment)
            .option(MatchOption::Comment(text.into()))
    }

    /// Sets the target.
    #[must_use]
    pub fn target(mut self, target: Target) -> Self {
        self.target = Some(target);
        self
    }

    /// The module options, in written order.
    pub fn options(&self) -> impl Iterator<Item = &MatchOption> {
        self.specs.iter().filter_map(|s| match s {
            Spec::Option(o) => Some(o),
            _ => None,
        })
    }

    /// The first `--comment`.
    pub fn comment_text(&self) -> Option<&str> {
        self.options().find_map(|o| match o {
            MatchOption::Comment(c) => Some(c.as_str()),
            _ => None,
        })
    }

    /// The `-p` protocol, if any (ignoring negation).
    pub fn protocol(&self) -> Option<&str> {
        self.specs.iter().find_map(|s| match s {
            Spec::Protocol { protocol, .. } => Some(protocol.name()),
            _ => None,
        })
    }
}
