//! Why a record did not decode: a byte offset into the input and a cause.

use core::fmt;

use crate::micro_time::TimeError;
use crate::text::TEXT_CAPACITY;

/// Deepest JSON nesting the record reader accepts; records are two levels deep, whole Lease
/// objects four.
pub(crate) const MAX_DEPTH: usize = 32;

/// A record that could not be decoded, with the byte offset of the problem in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset into the decoded text.
    pub offset: usize,
    /// What was wrong there.
    pub kind: DecodeErrorKind,
}

/// The cause of a [`DecodeError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// Not valid JSON: the text says what was expected.
    Syntax(&'static str),
    /// Arrays and objects nest deeper than the reader allows.
    TooDeep,
    /// A field has the wrong JSON type.
    WrongType {
        /// The field's JSON name.
        field: &'static str,
        /// The type it must have.
        expected: &'static str,
    },
    /// An integer field is fractional or does not fit an `int32`.
    OutOfRange {
        /// The field's JSON name.
        field: &'static str,
    },
    /// A string field is longer than a record can hold ([`TEXT_CAPACITY`] bytes).
    TooLong {
        /// The field's JSON name.
        field: &'static str,
        /// Its length in bytes.
        len: usize,
    },
    /// A time field is not RFC 3339.
    Time {
        /// The field's JSON name.
        field: &'static str,
        /// The timestamp's own error (its offset is inside the string).
        error: TimeError,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: ", self.offset)?;
        match self.kind {
            DecodeErrorKind::Syntax(expected) => write!(f, "invalid JSON: expected {expected}"),
            DecodeErrorKind::TooDeep => write!(f, "JSON nests deeper than {MAX_DEPTH} levels"),
            DecodeErrorKind::WrongType { field, expected } => {
                write!(f, "field \"{field}\" must be {expected}")
            }
            DecodeErrorKind::OutOfRange { field } => {
                write!(
                    f,
                    "field \"{field}\" must be a whole number from -2147483648 to 2147483647"
                )
            }
            DecodeErrorKind::TooLong { field, len } => write!(
                f,
                "field \"{field}\" is {len} bytes long; a record holds at most {TEXT_CAPACITY}"
            ),
            DecodeErrorKind::Time { field, error } => write!(
                f,
                "field \"{field}\": invalid RFC 3339 timestamp: expected {} (like 2026-11-30T10:00:00.123456Z)",
                error.expected
            ),
        }
    }
}

impl core::error::Error for DecodeError {}
