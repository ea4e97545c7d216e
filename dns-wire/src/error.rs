//! Errors: every failure is a value with the byte offset where it was found.

use core::fmt;

/// What went wrong while reading or writing DNS wire data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The bytes end before the item being read (`what`) is complete.
    UnexpectedEnd {
        /// The item being read.
        what: &'static str,
    },
    /// A label is longer than 63 octets (RFC 1035 §2.3.4).
    LabelTooLong,
    /// A name is longer than 255 octets in wire form (RFC 1035 §2.3.4).
    NameTooLong,
    /// A length byte uses a reserved label type, 0x40 or 0x80 (RFC 1035 §4.1.4, RFC 6891 §5).
    ReservedLabelType(u8),
    /// A compression pointer does not point strictly backwards (self, forward or loop).
    BadPointer {
        /// The offset the pointer names.
        target: usize,
    },
    /// A name follows more compression pointers than the hop cap allows.
    TooManyPointers,
    /// A compression pointer appears where names must not be compressed.
    UnexpectedPointer,
    /// RDATA does not have the layout its type requires (`what` says which part).
    BadRdata {
        /// The part of the RDATA that is wrong.
        what: &'static str,
    },
    /// Typed RDATA parsing did not consume exactly RDLENGTH bytes.
    RdataLengthMismatch,
    /// The message is longer than 65,535 bytes, the most a TCP length prefix can carry.
    MessageTooLong,
    /// Bytes follow the last record that the header counts.
    TrailingBytes,
    /// More than one OPT record (RFC 6891 §6.1.1).
    DuplicateOpt,
    /// An OPT record outside the additional section, or with an owner other than the root.
    MisplacedOpt,
    /// An EDNS option runs past the end of the OPT RDATA.
    BadEdnsOption,
    /// The output buffer or size budget is too small for what must be written.
    NoSpace,
    /// A question or record was added after a later section (the encoder writes in wire order).
    OutOfOrder,
    /// A section would hold more than 65,535 entries.
    CountOverflow,
    /// The response's question differs from the query's (0x20 case copy).
    QuestionMismatch,
    /// Presentation-format text that cannot be read (`what` says why).
    BadText {
        /// Why the text was rejected.
        what: &'static str,
    },
}

/// An error with the byte offset (or, for text, the character index) where it was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    offset: usize,
}

impl Error {
    /// An error of `kind` found at byte `offset`.
    pub const fn new(kind: ErrorKind, offset: usize) -> Self {
        Self { kind, offset }
    }

    /// What went wrong.
    pub const fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The byte offset in the message (or the index in the text) where it went wrong.
    pub const fn offset(&self) -> usize {
        self.offset
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnexpectedEnd { what } => write!(f, "message ends inside {what}"),
            Self::LabelTooLong => f.write_str("label longer than 63 octets"),
            Self::NameTooLong => f.write_str("name longer than 255 octets"),
            Self::ReservedLabelType(b) => {
                write!(
                    f,
                    "reserved label type 0x{:02x} (only 0x00 and 0xC0 exist)",
                    b & 0xC0
                )
            }
            Self::BadPointer { target } => write!(
                f,
                "compression pointer to offset {target} does not point strictly backwards"
            ),
            Self::TooManyPointers => f.write_str("name follows too many compression pointers"),
            Self::UnexpectedPointer => {
                f.write_str("compression pointer in a name that must not be compressed")
            }
            Self::BadRdata { what } => write!(f, "malformed RDATA: {what}"),
            Self::RdataLengthMismatch => f.write_str("RDATA contents do not match RDLENGTH"),
            Self::MessageTooLong => f.write_str("message longer than 65535 bytes"),
            Self::TrailingBytes => f.write_str("bytes after the last record the header counts"),
            Self::DuplicateOpt => f.write_str("more than one OPT record (RFC 6891 §6.1.1)"),
            Self::MisplacedOpt => {
                f.write_str("OPT record outside the additional section or not owned by the root")
            }
            Self::BadEdnsOption => f.write_str("EDNS option runs past the end of the OPT RDATA"),
            Self::NoSpace => f.write_str("output buffer or size budget exhausted"),
            Self::OutOfOrder => f.write_str("questions and sections must be written in wire order"),
            Self::CountOverflow => f.write_str("more than 65535 entries in one section"),
            Self::QuestionMismatch => f.write_str("response question differs from the query's"),
            Self::BadText { what } => write!(f, "bad presentation text: {what}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at offset {}", self.kind, self.offset)
    }
}

impl core::error::Error for Error {}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;
