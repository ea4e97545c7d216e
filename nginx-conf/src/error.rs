//! Error values: what went wrong, where, and nginx's own words for it.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// A configuration that nginx would refuse to read, with the position nginx reports.
///
/// `Display` prints nginx's message followed by ` in FILE:LINE` (or ` in line LINE` when the
/// input has no file name), so it can be compared with `nginx -t` output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    line: u32,
    offset: usize,
    file: Option<String>,
}

/// What made a configuration unreadable. The `Display` text is nginx's (or lua-nginx-module's)
/// message where nginx has one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `unexpected "X"`: a `;` or `{` with no word before it, a `}` after words (a missing `;`
    /// before `}`, or a stray `}` at the top of a file), or a byte other than whitespace, `;`,
    /// `{` or `)` right after a closing quote.
    Unexpected(u8),
    /// `unexpected end of file, expecting ";" or "}"`: the input ended inside a statement.
    UnexpectedEof,
    /// `unexpected end of file, expecting "}"`: the input ended inside a block.
    UnclosedBlock,
    /// `too long parameter "XXXXXXXXXX..." started`: a word or comment filled nginx's 4096-byte
    /// read buffer. Holds the first 10 bytes of it.
    TooLongParameter(Vec<u8>),
    /// `too long parameter, probably missing terminating """ character`: a quoted word filled the
    /// buffer. Holds the quote byte.
    TooLongQuoted(u8),
    /// `unexpected end of file, expecting terminating characters for lua code block`.
    LuaUnterminated,
    /// `Lua code block missing the closing long bracket "]==]", ...`: holds the closing bracket
    /// nginx looked for within its buffer.
    LuaMissingLongBracket(Vec<u8>),
    /// `too long lua code block, probably missing terminating characters`: 4096 bytes of Lua
    /// without a lexeme nginx can stop at.
    LuaTooLong,
    /// Blocks nested deeper than [`crate::MAX_DEPTH`] (a limit of this crate, not of nginx).
    TooDeep,
    /// `open() "PATH" failed (2: No such file or directory)`: an include without glob
    /// characters named a file the resolver does not have.
    IncludeNotFound(String),
    /// More included files than [`crate::MAX_FILES`] (a limit of this crate, not of nginx).
    TooManyFiles,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, line: u32, offset: usize) -> Self {
        Self {
            kind,
            line,
            offset,
            file: None,
        }
    }

    /// Names the file the error was found in (as nginx prints it).
    #[must_use]
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The line nginx reports (1-based), counted as nginx counts it at the moment of detection.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// Byte offset in the input where the error was detected.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The file the error belongs to, when known.
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unexpected(byte) => write!(f, "unexpected \"{}\"", char::from(*byte)),
            Self::UnexpectedEof => f.write_str("unexpected end of file, expecting \";\" or \"}\""),
            Self::UnclosedBlock => f.write_str("unexpected end of file, expecting \"}\""),
            Self::TooLongParameter(start) => write!(
                f,
                "too long parameter \"{}...\" started",
                String::from_utf8_lossy(start)
            ),
            Self::TooLongQuoted(quote) => write!(
                f,
                "too long parameter, probably missing terminating \"{}\" character",
                char::from(*quote)
            ),
            Self::LuaUnterminated => f.write_str(
                "unexpected end of file, expecting terminating characters for lua code block",
            ),
            Self::LuaMissingLongBracket(closing) => write!(
                f,
                "Lua code block missing the closing long bracket \"{}\", the inlined Lua code may \
                 be too long",
                String::from_utf8_lossy(closing)
            ),
            Self::LuaTooLong => {
                f.write_str("too long lua code block, probably missing terminating characters")
            }
            Self::TooDeep => write!(
                f,
                "blocks nested deeper than {} levels are not supported",
                crate::MAX_DEPTH
            ),
            Self::IncludeNotFound(path) => {
                write!(f, "open() \"{path}\" failed (2: No such file or directory)")
            }
            Self::TooManyFiles => write!(
                f,
                "more than {} included files are not supported",
                crate::MAX_FILES
            ),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{} in {}:{}", self.kind, file, self.line),
            None => write!(f, "{} in line {}", self.kind, self.line),
        }
    }
}

impl core::error::Error for Error {}

/// Why a tree cannot be written as nginx.conf text that reads back as the same tree.
///
/// The emitter refuses rather than writes text that nginx would read differently: this is what
/// keeps a value from changing the structure of a rendered configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmitError {
    /// A value contains a NUL byte (nginx uses values as C strings).
    Nul,
    /// A word would be 4095 bytes or longer once quoted, or a comment 4095 bytes or longer:
    /// nginx's 4096-byte read buffer could not hold it. Holds the length.
    TooLong(usize),
    /// A value meant to be literal contains `$`, which nginx would expand as a variable and
    /// which has no escape.
    Dollar,
    /// Spacing is not whitespace and comments, or a comment does not end with a newline.
    InvalidTrivia,
    /// Two tokens would touch: an argument must be preceded by whitespace, and the spacing after
    /// a word may not start with a comment.
    MissingSpace,
    /// A Lua body whose braces, strings or long brackets do not balance, or with a Lua token of
    /// 2048 bytes or more (half of nginx's buffer), so it might not read back as the same body.
    LuaBody,
    /// A spelling given as raw text is not exactly one nginx word.
    NotOneWord,
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Nul => f.write_str("value contains a NUL byte, which nginx cannot read"),
            Self::TooLong(len) => write!(
                f,
                "{len} bytes do not fit in nginx's 4096-byte configuration buffer"
            ),
            Self::Dollar => f.write_str(
                "literal value contains \"$\", which nginx expands as a variable and cannot escape",
            ),
            Self::InvalidTrivia => f.write_str(
                "spacing must be whitespace and comments, each comment ending with a newline",
            ),
            Self::MissingSpace => {
                f.write_str("an argument must be separated from the previous word by whitespace")
            }
            Self::LuaBody => {
                f.write_str("Lua body does not balance or has a token of 2048 bytes or more")
            }
            Self::NotOneWord => f.write_str("raw spelling is not exactly one nginx word"),
        }
    }
}

impl core::error::Error for EmitError {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn messages_are_nginx_s_words() {
        // `docs/nginx-conf.md` §4: the texts nginx and lua-nginx-module print.
        let cases: [(ErrorKind, &str); 8] = [
            (ErrorKind::Unexpected(b'}'), "unexpected \"}\""),
            (
                ErrorKind::UnexpectedEof,
                "unexpected end of file, expecting \";\" or \"}\"",
            ),
            (
                ErrorKind::UnclosedBlock,
                "unexpected end of file, expecting \"}\"",
            ),
            (
                ErrorKind::TooLongParameter(b"xxxxxxxxxx".to_vec()),
                "too long parameter \"xxxxxxxxxx...\" started",
            ),
            (
                ErrorKind::TooLongQuoted(b'"'),
                "too long parameter, probably missing terminating \"\"\" character",
            ),
            (
                ErrorKind::LuaUnterminated,
                "unexpected end of file, expecting terminating characters for lua code block",
            ),
            (
                ErrorKind::LuaMissingLongBracket(b"]==]".to_vec()),
                "Lua code block missing the closing long bracket \"]==]\", the inlined Lua code \
                 may be too long",
            ),
            (
                ErrorKind::LuaTooLong,
                "too long lua code block, probably missing terminating characters",
            ),
        ];
        for (kind, text) in cases {
            assert_eq!(kind.to_string(), text);
        }
        let error = Error::new(ErrorKind::Unexpected(b';'), 6, 0);
        assert_eq!(error.to_string(), "unexpected \";\" in line 6");
        assert_eq!(
            error.in_file("x.conf").to_string(),
            "unexpected \";\" in x.conf:6"
        );
        assert_eq!(
            ErrorKind::IncludeNotFound("/x.conf".into()).to_string(),
            "open() \"/x.conf\" failed (2: No such file or directory)"
        );
    }
}
