//! Match modules (`-m NAME`) and their typed options.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::net::IpAddr;

use super::name::ShortText;

/// A match module loaded with `-m NAME`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Module {
    /// `comment`.
    Comment,
    /// `tcp`.
    Tcp,
    /// `udp`.
    Udp,
    /// `sctp`.
    Sctp,
    /// `conntrack`.
    Conntrack,
    /// `state` (the older spelling of conntrack's state match).
    State,
    /// `mark`.
    Mark,
    /// `statistic`.
    Statistic,
    /// `recent`.
    Recent,
    /// `addrtype`.
    AddrType,
    /// `multiport`.
    Multiport,
    /// `nfacct`.
    Nfacct,
    /// Any other module, kept verbatim with its options.
    Other(String),
}

impl Module {
    /// The module for `name` (`-m name`).
    pub fn from_name(name: &str) -> Self {
        match name {
            "comment" => Self::Comment,
            "tcp" => Self::Tcp,
            "udp" => Self::Udp,
            "sctp" => Self::Sctp,
            "conntrack" => Self::Conntrack,
            "state" => Self::State,
            "mark" => Self::Mark,
            "statistic" => Self::Statistic,
            "recent" => Self::Recent,
            "addrtype" => Self::AddrType,
            "multiport" => Self::Multiport,
            "nfacct" => Self::Nfacct,
            other => Self::Other(other.into()),
        }
    }

    /// The name written after `-m`.
    pub fn name(&self) -> &str {
        match self {
            Self::Comment => "comment",
            Self::Tcp => "tcp",
            Self::Udp => "udp",
            Self::Sctp => "sctp",
            Self::Conntrack => "conntrack",
            Self::State => "state",
            Self::Mark => "mark",
            Self::Statistic => "statistic",
            Self::Recent => "recent",
            Self::AddrType => "addrtype",
            Self::Multiport => "multiport",
            Self::Nfacct => "nfacct",
            Self::Other(name) => name,
        }
    }

    /// The match `-p PROTOCOL` loads by itself for an option that no `-m` module before it
    /// takes: iptables reads `-p tcp --dport 80` as `-p tcp -m tcp --dport 80`, but only once
    /// `-p` has been read (an option written before `-p` is unknown there).
    pub fn implicit(protocol: &str) -> Option<Self> {
        match protocol {
            "tcp" => Some(Self::Tcp),
            "udp" => Some(Self::Udp),
            "sctp" => Some(Self::Sctp),
            _ => None,
        }
    }

    /// Whether this module owns options spelled `--option` (typed options only; unknown
    /// options attach to the most recent module, see [`MatchOption::Unknown`]).
    pub fn accepts(&self, option: &str) -> bool {
        let names: &[&str] = match self {
            Self::Comment => &["--comment"],
            Self::Tcp | Self::Udp | Self::Sctp => {
                &["--dport", "--destination-port", "--sport", "--source-port"]
            }
            Self::Conntrack => &["--ctstate"],
            Self::State => &["--state"],
            Self::Mark => &["--mark"],
            Self::Statistic => &["--mode", "--probability", "--every", "--packet"],
            Self::Recent => &[
                "--name",
                "--set",
                "--rcheck",
                "--update",
                "--remove",
                "--seconds",
                "--reap",
                "--hitcount",
                "--rttl",
                "--mask",
                "--rsource",
                "--rdest",
            ],
            Self::AddrType => &[
                "--src-type",
                "--dst-type",
                "--limit-iface-in",
                "--limit-iface-out",
            ],
            Self::Multiport => &[
                "--dports",
                "--destination-ports",
                "--sports",
                "--source-ports",
                "--ports",
            ],
            Self::Nfacct => &["--nfacct-name"],
            Self::Other(_) => &[],
        };
        names.contains(&option)
    }
}

/// An inclusive port range, `80` or `8000:8080`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PortRange {
    /// First port.
    pub start: u16,
    /// Last port (equal to `start` for a single port).
    pub end: u16,
}

impl PortRange {
    /// A single port.
    pub const fn single(port: u16) -> Self {
        Self {
            start: port,
            end: port,
        }
    }

    /// Whether `port` is in the range.
    pub const fn contains(&self, port: u16) -> bool {
        self.start <= port && port <= self.end
    }
}

impl fmt::Display for PortRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}:{}", self.start, self.end)
        }
    }
}

/// A conntrack state (`--ctstate`, `--state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CtState {
    /// `INVALID`.
    Invalid,
    /// `NEW`: the first packet of a flow.
    New,
    /// `ESTABLISHED`.
    Established,
    /// `RELATED`.
    Related,
    /// `UNTRACKED`.
    Untracked,
    /// `SNAT`: the flow's source was translated.
    Snat,
    /// `DNAT`: the flow's destination was translated.
    Dnat,
}

impl CtState {
    /// Every state, with its name.
    pub const ALL: [(Self, &'static str); 7] = [
        (Self::Invalid, "INVALID"),
        (Self::New, "NEW"),
        (Self::Established, "ESTABLISHED"),
        (Self::Related, "RELATED"),
        (Self::Untracked, "UNTRACKED"),
        (Self::Snat, "SNAT"),
        (Self::Dnat, "DNAT"),
    ];

    /// The state's name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(s, _)| *s == self)
            .map_or("", |(_, n)| n)
    }
}

/// An address type of the `addrtype` match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)] // the kernel's own names, listed in `AddrType::ALL`
pub enum AddrType {
    Unspec,
    Unicast,
    Local,
    Broadcast,
    Anycast,
    Multicast,
    Blackhole,
    Unreachable,
    Prohibit,
    Throw,
    Nat,
    Xresolve,
}

impl AddrType {
    /// Every type, with its name.
    pub const ALL: [(Self, &'static str); 12] = [
        (Self::Unspec, "UNSPEC"),
        (Self::Unicast, "UNICAST"),
        (Self::Local, "LOCAL"),
        (Self::Broadcast, "BROADCAST"),
        (Self::Anycast, "ANYCAST"),
        (Self::Multicast, "MULTICAST"),
        (Self::Blackhole, "BLACKHOLE"),
        (Self::Unreachable, "UNREACHABLE"),
        (Self::Prohibit, "PROHIBIT"),
        (Self::Throw, "THROW"),
        (Self::Nat, "NAT"),
        (Self::Xresolve, "XRESOLVE"),
    ];

    /// The type's name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(s, _)| *s == self)
            .map_or("", |(_, n)| n)
    }
}

/// A mark value with an optional mask, `0x4000` or `0x4000/0x4000`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MarkValue {
    /// The value.
    pub value: u32,
    /// The mask, when written.
    pub mask: Option<u32>,
}

impl fmt::Display for MarkValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.value)?;
        match self.mask {
            Some(m) => write!(f, "/{m:#x}"),
            None => Ok(()),
        }
    }
}

/// `statistic --mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatisticMode {
    /// `random`: match with `--probability`.
    Random,
    /// `nth`: match every `--every`-th packet.
    Nth,
}

/// A `--probability` value, kept exactly as written (`0.3333333333`), so the evaluator can
/// use both the decimal value and the kernel's 31-bit threshold
/// ([`crate::probability::kernel_threshold`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Probability(ShortText);

impl Probability {
    /// Validates `text`: a decimal number between 0 and 1 (`1`, `0.5`, `.25`, `0.3333333333`).
    pub fn new(text: &str) -> Option<Self> {
        let (int, frac) = crate::codec::split_once_ascii(text, b'.').unwrap_or((text, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        let well_formed = (!int.is_empty() || !frac.is_empty())
            && digits(int)
            && digits(frac)
            && text.len() <= 64;
        let int_value = int.trim_start_matches('0');
        let in_range =
            int_value.is_empty() || (int_value == "1" && frac.bytes().all(|b| b == b'0'));
        (well_formed && in_range).then(|| Self(ShortText::new(text)))
    }

    /// The text as written.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

/// Which ports a `multiport` option matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MultiportKind {
    /// `--sports`.
    Source,
    /// `--dports`.
    Destination,
    /// `--ports` (either).
    Either,
}

/// An option of the `recent` match.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RecentOption {
    /// `--name LIST`.
    Name(String),
    /// `--set`: add the address to the list.
    Set,
    /// `--rcheck`: match if the address is on the list.
    Rcheck,
    /// `--update`: like `--rcheck`, refreshing the entry.
    Update,
    /// `--remove`.
    Remove,
    /// `--seconds N`.
    Seconds(u32),
    /// `--reap`.
    Reap,
    /// `--hitcount N`.
    HitCount(u32),
    /// `--rttl`.
    Rttl,
    /// `--mask ADDRESS`.
    Mask(IpAddr),
    /// `--rsource`.
    Rsource,
    /// `--rdest`.
    Rdest,
}

/// A typed option of a match module; `negated` is a preceding `!`.
///
/// Its free text (a comment, an unknown option) borrows from the parsed input for `'a`;
/// [`MatchOption::into_owned`] detaches it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MatchOption<'a> {
    /// `--comment TEXT`.
    Comment(Cow<'a, str>),
    /// `[!] --sport PORT[:PORT]` (tcp, udp, sctp).
    SourcePort {
        /// `!`.
        negated: bool,
        /// The ports.
        ports: PortRange,
    },
    /// `[!] --dport PORT[:PORT]` (tcp, udp, sctp).
    DestinationPort {
        /// `!`.
        negated: bool,
        /// The ports.
        ports: PortRange,
    },
    /// `[!] --ctstate STATES` (conntrack).
    CtState {
        /// `!`.
        negated: bool,
        /// The states, in written order.
        states: Vec<CtState>,
    },
    /// `[!] --state STATES` (the `state` module).
    State {
        /// `!`.
        negated: bool,
        /// The states, in written order.
        states: Vec<CtState>,
    },
    /// `[!] --mark VALUE[/MASK]`.
    Mark {
        /// `!`.
        negated: bool,
        /// Value and mask.
        mark: MarkValue,
    },
    /// `--mode random|nth`.
    StatisticMode(StatisticMode),
    /// `[!] --probability P`.
    Probability {
        /// `!`.
        negated: bool,
        /// The probability as written.
        probability: Probability,
    },
    /// `[!] --every N`.
    Every {
        /// `!`.
        negated: bool,
        /// N.
        every: u32,
    },
    /// `--packet P`.
    Packet(u32),
    /// An option of `recent`; `negated` inverts `--set/--rcheck/--update/--remove`.
    Recent {
        /// `!`.
        negated: bool,
        /// The option.
        option: RecentOption,
    },
    /// `[!] --src-type TYPES`.
    SrcType {
        /// `!`.
        negated: bool,
        /// The types.
        types: Vec<AddrType>,
    },
    /// `[!] --dst-type TYPES`.
    DstType {
        /// `!`.
        negated: bool,
        /// The types.
        types: Vec<AddrType>,
    },
    /// `--limit-iface-in`.
    LimitIfaceIn,
    /// `--limit-iface-out`.
    LimitIfaceOut,
    /// `[!] --dports|--sports|--ports LIST`.
    Multiport {
        /// Which ports.
        kind: MultiportKind,
        /// `!`.
        negated: bool,
        /// The ports.
        ports: Vec<PortRange>,
    },
    /// `--nfacct-name NAME`.
    NfacctName(String),
    /// Any other option, kept verbatim: `[!] --name ARGS...` (boxed: rare, and so every
    /// criterion stays 40 bytes).
    Unknown(Box<UnknownOption<'a>>),
}

/// An option this crate does not type, kept verbatim: `[!] --name ARGS...`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UnknownOption<'a> {
    /// `!`.
    pub negated: bool,
    /// The option, with its dashes.
    pub name: Cow<'a, str>,
    /// Its arguments.
    pub args: Vec<Cow<'a, str>>,
}

impl<'a> MatchOption<'a> {
    /// The option `[!] NAME ARGS...` that this crate does not type.
    pub fn unknown(negated: bool, name: Cow<'a, str>, args: Vec<Cow<'a, str>>) -> Self {
        Self::Unknown(Box::new(UnknownOption {
            negated,
            name,
            args,
        }))
    }

    /// This option with its text copied out of the parsed input.
    pub fn into_owned(self) -> MatchOption<'static> {
        match self {
            Self::Comment(text) => MatchOption::Comment(owned(text)),
            Self::Unknown(option) => {
                let UnknownOption {
                    negated,
                    name,
                    args,
                } = *option;
                MatchOption::unknown(negated, owned(name), args.into_iter().map(owned).collect())
            }
            Self::SourcePort { negated, ports } => MatchOption::SourcePort { negated, ports },
            Self::DestinationPort { negated, ports } => {
                MatchOption::DestinationPort { negated, ports }
            }
            Self::CtState { negated, states } => MatchOption::CtState { negated, states },
            Self::State { negated, states } => MatchOption::State { negated, states },
            Self::Mark { negated, mark } => MatchOption::Mark { negated, mark },
            Self::StatisticMode(mode) => MatchOption::StatisticMode(mode),
            Self::Probability {
                negated,
                probability,
            } => MatchOption::Probability {
                negated,
                probability,
            },
            Self::Every { negated, every } => MatchOption::Every { negated, every },
            Self::Packet(packet) => MatchOption::Packet(packet),
            Self::Recent { negated, option } => MatchOption::Recent { negated, option },
            Self::SrcType { negated, types } => MatchOption::SrcType { negated, types },
            Self::DstType { negated, types } => MatchOption::DstType { negated, types },
            Self::LimitIfaceIn => MatchOption::LimitIfaceIn,
            Self::LimitIfaceOut => MatchOption::LimitIfaceOut,
            Self::Multiport {
                kind,
                negated,
                ports,
            } => MatchOption::Multiport {
                kind,
                negated,
                ports,
            },
            Self::NfacctName(name) => MatchOption::NfacctName(name),
        }
    }

    /// The option's spelling (`--dport`, `--comment`...).
    pub fn name(&self) -> &str {
        match self {
            Self::Comment(_) => "--comment",
            Self::SourcePort { .. } => "--sport",
            Self::DestinationPort { .. } => "--dport",
            Self::CtState { .. } => "--ctstate",
            Self::State { .. } => "--state",
            Self::Mark { .. } => "--mark",
            Self::StatisticMode(_) => "--mode",
            Self::Probability { .. } => "--probability",
            Self::Every { .. } => "--every",
            Self::Packet(_) => "--packet",
            Self::Recent { option, .. } => match option {
                RecentOption::Name(_) => "--name",
                RecentOption::Set => "--set",
                RecentOption::Rcheck => "--rcheck",
                RecentOption::Update => "--update",
                RecentOption::Remove => "--remove",
                RecentOption::Seconds(_) => "--seconds",
                RecentOption::Reap => "--reap",
                RecentOption::HitCount(_) => "--hitcount",
                RecentOption::Rttl => "--rttl",
                RecentOption::Mask(_) => "--mask",
                RecentOption::Rsource => "--rsource",
                RecentOption::Rdest => "--rdest",
            },
            Self::SrcType { .. } => "--src-type",
            Self::DstType { .. } => "--dst-type",
            Self::LimitIfaceIn => "--limit-iface-in",
            Self::LimitIfaceOut => "--limit-iface-out",
            Self::Multiport { kind, .. } => match kind {
                MultiportKind::Source => "--sports",
                MultiportKind::Destination => "--dports",
                MultiportKind::Either => "--ports",
            },
            Self::NfacctName(_) => "--nfacct-name",
            Self::Unknown(option) => &option.name,
        }
    }
}

/// `text` with its own storage (a borrowed text is copied; an owned one moves).
pub(crate) fn owned(text: Cow<'_, str>) -> Cow<'static, str> {
    Cow::Owned(text.into_owned())
}
