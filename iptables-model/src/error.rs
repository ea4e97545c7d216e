//! Typed errors, each with a position and a message a person can act on.

use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;

/// A position in restore/save text: 1-based line and column (in characters of the line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column of the offending token (1 when the whole line is at fault).
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// What went wrong while parsing iptables-save / iptables-restore text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A quoted string was not closed before the end of the line.
    UnterminatedQuote,
    /// A backslash was the last character of the line.
    DanglingEscape,
    /// A rule or chain line appeared before any `*table` line.
    OutsideTable,
    /// `*name` names a table iptables does not have.
    UnknownTable(String),
    /// A new `*table` started (or the input ended) before `COMMIT`.
    MissingCommit,
    /// A line that is neither a table, chain, command, comment nor `COMMIT`.
    UnknownLine(String),
    /// A chain name that is empty, too long (more than 28 characters), holds blanks or quotes, or
    /// starts with `-`, `!`, `[`, `:`, `*` or `#`.
    InvalidChainName(String),
    /// A chain line whose policy is not `ACCEPT`, `DROP` or `-`.
    InvalidPolicy(String),
    /// `[packets:bytes]` counters that are not two decimal numbers.
    InvalidCounters(String),
    /// An option that needs a value came last.
    MissingValue(String),
    /// An option iptables does not know in this position: no module loaded before it accepts
    /// it (`-m` modules, and the match of a `-p tcp|udp|sctp` written before it).
    UnknownOption(String),
    /// A word that belongs to no option.
    UnexpectedWord(String),
    /// A value that does not parse for its option (address, port, number, state...).
    InvalidValue {
        /// The option whose value is wrong.
        option: String,
        /// The value as written.
        value: String,
    },
    /// `!` not followed by something that can be negated.
    MisplacedNegation,
    /// The same general option twice in one rule (`-p tcp -p udp`).
    DuplicateOption(String),
    /// A second `-j`/`-g` in one rule.
    DuplicateTarget,
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnterminatedQuote => {
                f.write_str("unterminated double quote; close it on the same line")
            }
            Self::DanglingEscape => f.write_str("backslash at the end of the line escapes nothing"),
            Self::OutsideTable => f.write_str(
                "rule or chain outside a table; start the table with `*filter`, `*nat`, ...",
            ),
            Self::UnknownTable(t) => write!(
                f,
                "unknown table `{t}` (expected filter, nat, mangle, raw or security)"
            ),
            Self::MissingCommit => f.write_str("table not closed with `COMMIT`"),
            Self::UnknownLine(l) => write!(f, "cannot parse line starting with `{l}`"),
            Self::InvalidChainName(n) => write!(
                f,
                "invalid chain name `{n}` (1 to 28 characters without blanks or quotes, not starting with `-`, `!`, `[`, `:`, `*` or `#`)"
            ),
            Self::InvalidPolicy(p) => {
                write!(f, "invalid chain policy `{p}` (expected ACCEPT, DROP or -)")
            }
            Self::InvalidCounters(c) => {
                write!(f, "invalid counters `{c}` (expected [packets:bytes])")
            }
            Self::MissingValue(o) => write!(f, "option `{o}` needs a value"),
            Self::UnknownOption(o) => {
                write!(
                    f,
                    "unknown option `{o}`: load its module with `-m` (or give `-p`) before it"
                )
            }
            Self::UnexpectedWord(w) => write!(
                f,
                "unexpected word `{w}` (quote values that contain spaces)"
            ),
            Self::InvalidValue { option, value } => {
                write!(f, "invalid value `{value}` for `{option}`")
            }
            Self::MisplacedNegation => {
                f.write_str("`!` must precede an option that can be negated")
            }
            Self::DuplicateOption(o) => write!(f, "option `{o}` given twice"),
            Self::DuplicateTarget => f.write_str("a rule has at most one `-j`/`-g`"),
        }
    }
}

/// An error in iptables-save / iptables-restore text, with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Where the problem is.
    pub position: Position,
    /// What the problem is.
    pub kind: ParseErrorKind,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.position, self.kind)
    }
}

impl core::error::Error for ParseError {}

/// A parse failure at a column of its line (the parser adds the line number), boxed: failures
/// are rare, and a small error keeps every `Result` the parser moves around small. Shared by
/// the lexer, the option readers and the parser of [`codec`](crate::codec).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Failure(Box<(usize, ParseErrorKind)>);

impl Failure {
    /// The column and what went wrong.
    pub(crate) fn into_parts(self) -> (usize, ParseErrorKind) {
        *self.0
    }
}

impl From<(usize, ParseErrorKind)> for Failure {
    #[cold]
    fn from(failure: (usize, ParseErrorKind)) -> Self {
        Self(Box::new(failure))
    }
}

/// A failure of `kind` at `column`.
#[cold]
pub(crate) fn fail(column: usize, kind: ParseErrorKind) -> Failure {
    Failure::from((column, kind))
}

/// Why a restore could not be applied to a [`Ruleset`](crate::Ruleset), as the kernel would
/// refuse it; `line` is the 1-based line of the command (0 when the table's `COMMIT` failed).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RestoreError {
    /// A command names a chain that does not exist.
    NoSuchChain {
        /// Line of the command.
        line: usize,
        /// The missing chain.
        chain: String,
    },
    /// `-N` of a chain that exists.
    ChainExists {
        /// Line of the command.
        line: usize,
        /// The chain.
        chain: String,
    },
    /// `-X` of a built-in chain, or of a chain that still has rules or is still jumped to.
    ChainBusy {
        /// Line of the command.
        line: usize,
        /// The chain.
        chain: String,
        /// Why it cannot be deleted.
        reason: &'static str,
    },
    /// `-D` / `-I` with a rule or position that does not exist.
    NoSuchRule {
        /// Line of the command.
        line: usize,
        /// The chain.
        chain: String,
    },
    /// A policy on a user-defined chain, or `-` policy change on a built-in chain.
    BadPolicy {
        /// Line of the chain declaration.
        line: usize,
        /// The chain.
        chain: String,
    },
    /// A rule jumps to a chain that does not exist when the table is committed.
    MissingJumpTarget {
        /// The chain holding the rule.
        chain: String,
        /// The missing target.
        target: String,
    },
    /// A target used in a table that does not allow it (DNAT in filter, REJECT in nat...).
    TargetNotAllowed {
        /// The table.
        table: &'static str,
        /// The target.
        target: &'static str,
    },
    /// The jumps between chains form a loop (the kernel rejects the table).
    Loop {
        /// A chain on the loop.
        chain: String,
    },
}

impl fmt::Display for RestoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchChain { line, chain } => write!(
                f,
                "line {line}: chain `{chain}` does not exist; declare it with `:{chain} - [0:0]`"
            ),
            Self::ChainExists { line, chain } => {
                write!(f, "line {line}: chain `{chain}` already exists")
            }
            Self::ChainBusy {
                line,
                chain,
                reason,
            } => write!(f, "line {line}: cannot delete chain `{chain}`: {reason}"),
            Self::NoSuchRule { line, chain } => {
                write!(f, "line {line}: no such rule in chain `{chain}`")
            }
            Self::BadPolicy { line, chain } => write!(
                f,
                "line {line}: chain `{chain}` cannot take this policy (only built-in chains have ACCEPT/DROP)"
            ),
            Self::MissingJumpTarget { chain, target } => write!(
                f,
                "COMMIT: a rule in `{chain}` jumps to `{target}`, which is neither a chain nor a target"
            ),
            Self::TargetNotAllowed { table, target } => {
                write!(f, "COMMIT: target {target} is not valid in table {table}")
            }
            Self::Loop { chain } => write!(f, "COMMIT: jumps loop through chain `{chain}`"),
        }
    }
}

impl core::error::Error for RestoreError {}

/// Why a packet could not be traced.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TraceError {
    /// Chains call each other deeper than the limit (a jump loop, or absurd nesting).
    TooDeep {
        /// The chain being entered.
        chain: String,
        /// The limit.
        limit: usize,
    },
    /// The trace needed more rule evaluations than its budget (too many random branches).
    BudgetExhausted {
        /// The budget, in rule evaluations.
        budget: usize,
    },
    /// A rule jumps to a chain that does not exist.
    NoSuchChain {
        /// The chain holding the rule.
        chain: String,
        /// The missing target chain.
        target: String,
    },
    /// A match or target the evaluator cannot decide (an unknown module or target).
    Unsupported {
        /// The chain holding the rule.
        chain: String,
        /// 1-based position of the rule in its chain.
        rule: usize,
        /// The module, option or target.
        what: String,
    },
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooDeep { chain, limit } => write!(
                f,
                "entering `{chain}` exceeds {limit} nested chains; check for a jump loop"
            ),
            Self::BudgetExhausted { budget } => write!(
                f,
                "gave up after {budget} rule evaluations; the ruleset branches too much"
            ),
            Self::NoSuchChain { chain, target } => {
                write!(f, "a rule in `{chain}` jumps to missing chain `{target}`")
            }
            Self::Unsupported { chain, rule, what } => write!(
                f,
                "rule {rule} of `{chain}` uses `{what}`, which the evaluator cannot decide"
            ),
        }
    }
}

impl core::error::Error for TraceError {}

/// Which value of the model an [`EmitError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Field {
    /// A chain name: `:NAME`, `-A NAME`, `-j NAME`, `-g NAME`, `-N`/`-X`/`-F`/`-D`/`-I NAME`.
    Chain,
    /// `-p PROTOCOL` (a protocol this crate does not type).
    Protocol,
    /// `-i INTERFACE`.
    InInterface,
    /// `-o INTERFACE`.
    OutInterface,
    /// `-m NAME` (a module this crate does not type).
    Module,
    /// `--comment TEXT`.
    Comment,
    /// `--name LIST` of the `recent` match.
    RecentName,
    /// `--nfacct-name NAME`.
    NfacctName,
    /// The name of an option this crate does not type.
    OptionName,
    /// An argument of an option this crate does not type.
    OptionArgument,
    /// The name of a target extension this crate does not type (`-j NAME`).
    TargetName,
    /// An argument of a target extension this crate does not type.
    TargetArgument,
    /// `--reject-with TYPE`.
    RejectWith,
    /// `--to-destination ADDRESS`.
    ToDestination,
    /// `--to-source ADDRESS`.
    ToSource,
    /// `--to-ports PORTS`.
    ToPorts,
    /// A Service's `metadata.namespace` (kube-proxy's rules carry it in comments).
    ServiceNamespace,
    /// A Service's `metadata.name`.
    ServiceName,
    /// The `name` of a Service's port.
    ServicePortName,
}

impl Field {
    /// How the value is spelled in the restore text or the Kubernetes object.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Chain => "chain name",
            Self::Protocol => "-p",
            Self::InInterface => "-i",
            Self::OutInterface => "-o",
            Self::Module => "-m",
            Self::Comment => "--comment",
            Self::RecentName => "--name",
            Self::NfacctName => "--nfacct-name",
            Self::OptionName => "option name",
            Self::OptionArgument => "option argument",
            Self::TargetName => "target name",
            Self::TargetArgument => "target argument",
            Self::RejectWith => "--reject-with",
            Self::ToDestination => "--to-destination",
            Self::ToSource => "--to-source",
            Self::ToPorts => "--to-ports",
            Self::ServiceNamespace => "metadata.namespace",
            Self::ServiceName => "metadata.name",
            Self::ServicePortName => "spec.ports[].name",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A value that restore text cannot hold: it has a control character (a line break, a NUL, a
/// tab...), which would end or split the line it is written on, or it is a chain or target
/// name that iptables does not accept (blanks, quotes, a leading `-`...), which would not stay
/// one name. Nothing is escaped instead: `iptables-restore` has no escape for a line break,
/// so the value is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitError {
    /// Which value.
    pub field: Field,
    /// The value.
    pub value: String,
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if has_control(&self.value) {
            write!(
                f,
                "{}: {:?} holds a control character, which restore text cannot carry",
                self.field, self.value
            )
        } else {
            write!(
                f,
                "{}: {:?} is not a name iptables accepts (1 to 28 characters without blanks or quotes, not starting with `-`, `!`, `[`, `:`, `*` or `#`)",
                self.field, self.value
            )
        }
    }
}

impl core::error::Error for EmitError {}

/// Whether `text` has a control character (`char::is_control`: C0, DEL and C1).
#[inline]
pub(crate) fn has_control(text: &str) -> bool {
    // Printable ASCII, the usual case, is one range test per byte.
    !text.bytes().all(|b| (0x20..0x7f).contains(&b)) && text.chars().any(char::is_control)
}

/// `text` as the value of `field`, or the error refusing it.
///
/// # Errors
///
/// [`EmitError`] when `text` has a control character.
#[inline]
pub(crate) fn check_value(field: Field, text: &str) -> Result<(), EmitError> {
    if has_control(text) {
        return Err(refuse(field, text));
    }
    Ok(())
}

#[cold]
fn refuse(field: Field, text: &str) -> EmitError {
    EmitError {
        field,
        value: text.into(),
    }
}
