//! A rule: criteria in written order, then an optional target.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::matches::owned;
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
/// recent module before it that accepts it. Interface names and option text borrow from the
/// parsed input for `'a` ([`Spec::into_owned`] detaches them).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Spec<'a> {
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
        name: Cow<'a, str>,
    },
    /// `[!] -o INTERFACE`.
    OutInterface {
        /// `!`.
        negated: bool,
        /// The interface.
        name: Cow<'a, str>,
    },
    /// `[!] -f`: second and later fragments.
    Fragment {
        /// `!`.
        negated: bool,
    },
    /// `-m NAME`.
    Module(Module),
    /// An option of a module loaded earlier in the rule.
    Option(MatchOption<'a>),
}

impl Spec<'_> {
    /// This criterion with its text copied out of the parsed input.
    pub fn into_owned(self) -> Spec<'static> {
        match self {
            Self::Protocol { negated, protocol } => Spec::Protocol { negated, protocol },
            Self::Source { negated, address } => Spec::Source { negated, address },
            Self::Destination { negated, address } => Spec::Destination { negated, address },
            Self::InInterface { negated, name } => Spec::InInterface {
                negated,
                name: owned(name),
            },
            Self::OutInterface { negated, name } => Spec::OutInterface {
                negated,
                name: owned(name),
            },
            Self::Fragment { negated } => Spec::Fragment { negated },
            Self::Module(module) => Spec::Module(module),
            Self::Option(option) => Spec::Option(option.into_owned()),
        }
    }
}

/// A rule: its criteria (all must match) and its target. A rule without a target only counts.
///
/// A parsed rule borrows its free text (comments, interfaces, NAT addresses, unknown
/// options' words) from the input for `'a`; [`Rule::into_owned`] gives an [`OwnedRule`] that
/// outlives the input. Rules built in code with owned text are `OwnedRule`s too.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rule<'a> {
    /// `[packets:bytes]` written before the command (restores with `--counters`).
    pub counters: Option<Counters>,
    /// The criteria, in written order.
    pub specs: Vec<Spec<'a>>,
    /// `-j`/`-g`, when present.
    pub target: Option<Target<'a>>,
}

/// A rule that owns all its text.
pub type OwnedRule = Rule<'static>;

impl<'a> Rule<'a> {
    /// This rule with its text copied out of the parsed input.
    pub fn into_owned(self) -> OwnedRule {
        Rule {
            counters: self.counters,
            specs: self.specs.into_iter().map(Spec::into_owned).collect(),
            target: self.target.map(Target::into_owned),
        }
    }

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
    pub fn with(mut self, spec: Spec<'a>) -> Self {
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
    pub fn option(self, option: MatchOption<'a>) -> Self {
        self.with(Spec::Option(option))
    }

    /// Adds `-m comment --comment TEXT`.
    #[must_use]
    pub fn comment(self, text: impl Into<Cow<'a, str>>) -> Self {
        self.module(Module::Comment)
            .option(MatchOption::Comment(text.into()))
    }

    /// Sets the target.
    #[must_use]
    pub fn target(mut self, target: Target<'a>) -> Self {
        self.target = Some(target);
        self
    }

    /// The module options, in written order.
    pub fn options(&self) -> impl Iterator<Item = &MatchOption<'a>> {
        self.specs.iter().filter_map(|s| match s {
            Spec::Option(o) => Some(o),
            _ => None,
        })
    }

    /// The first `--comment`.
    pub fn comment_text(&self) -> Option<&str> {
        self.options().find_map(|o| match o {
            MatchOption::Comment(c) => Some(&**c),
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
