//! Errors, printed exactly as CoreDNS prints them (`docs/corefile.md` §2.5, §4.3, §4.4).

use alloc::string::String;
use core::fmt;

/// Tokens allowed after import expansion (a crate cap; CoreDNS has none). Going past it is
/// [`ParseErrorKind::TooManyTokens`]; it is defined here, beside the error that prints it, so
/// that this module needs nothing of the parser's (which re-exports it).
pub const MAX_TOKENS: usize = 1_000_000;

/// A parse error: where it happened (file and line, as CoreDNS reports them) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The import file of the offending token (absolute), or the name the input was given.
    pub file: String,
    /// The line of the offending token (0 when there is none).
    pub line: usize,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

/// What went wrong while parsing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The first word of a directive line is not a known directive.
    UnknownDirective(String),
    /// The input ended inside a directive's braces or after a key with a trailing comma.
    UnexpectedEof,
    /// A `}` on a directive's line with no `{` open on it.
    UnmatchedCloseBrace,
    /// A key ended with a comma and `{` came next.
    ExpectedAnotherAddress,
    /// A snippet name was defined twice.
    SnippetRedeclared(String),
    /// Too many snippet expansions, or a snippet imports itself.
    SnippetDepth,
    /// Too many file imports.
    FileDepth,
    /// `import` without an argument; carries the current token's text.
    ImportArgMissing(String),
    /// `import` with more than one argument.
    ImportTooManyArgs,
    /// `import` whose argument is empty after substitution.
    ImportEmptyPath,
    /// The import resolver failed; carries the message CoreDNS prints.
    Import(String),
    /// A brace assertion failed: `Unexpected token 'found', expecting 'expected'`.
    Syntax {
        /// The token that was there.
        found: String,
        /// The brace that was expected.
        expected: char,
    },
    /// Environment substitution did not terminate (CoreDNS would hang); the raw token.
    EnvLoop(String),
    /// Import expansion produced more tokens than [`MAX_TOKENS`].
    TooManyTokens,
    /// The input or an imported file is 4 GiB or longer (a crate cap; CoreDNS has none).
    TooLarge,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} - ", self.file, self.line)?;
        match &self.kind {
            ParseErrorKind::Syntax { found, expected } => {
                write!(
                    f,
                    "Syntax error: Unexpected token '{found}', expecting '{expected}'"
                )
            }
            kind => write!(f, "Error during parsing: {kind}"),
        }
    }
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownDirective(name) => write!(f, "Unknown directive '{name}'"),
            Self::UnexpectedEof => f.write_str("Unexpected EOF"),
            Self::UnmatchedCloseBrace => {
                f.write_str("Unexpected '}' because no matching opening brace")
            }
            Self::ExpectedAnotherAddress => {
                f.write_str("Expected another address but had '{' - check for extra comma")
            }
            Self::SnippetRedeclared(name) => {
                write!(f, "redeclaration of previously declared snippet {name}")
            }
            Self::SnippetDepth => f.write_str("maximum snippet import depth (10000) exceeded"),
            Self::FileDepth => write!(
                f,
                "maximum number of file imports ({}) exceeded",
                crate::parser::MAX_FILE_EXPANSIONS
            ),
            Self::ImportArgMissing(val) if val == "{" => {
                f.write_str("Unexpected token '{', expecting argument")
            }
            Self::ImportArgMissing(val) => write!(
                f,
                "Wrong argument count or unexpected line ending after '{val}'"
            ),
            Self::ImportTooManyArgs => {
                f.write_str("Import takes only one argument (glob pattern or file)")
            }
            Self::ImportEmptyPath => f.write_str("Import requires a non-empty filepath"),
            Self::Import(message) => f.write_str(message),
            Self::Syntax { found, expected } => {
                write!(f, "Unexpected token '{found}', expecting '{expected}'")
            }
            Self::EnvLoop(token) => write!(
                f,
                "environment variable substitution in '{token}' does not terminate \
                 (a variable refers to itself)"
            ),
            Self::TooManyTokens => write!(f, "imports expand to more than {MAX_TOKENS} tokens"),
            Self::TooLarge => f.write_str("file is 4 GiB or larger"),
        }
    }
}

impl core::error::Error for ParseError {}

/// Any error of the CoreDNS front end: parsing, key normalization or the overlap check.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The parser rejected the input.
    Parse(ParseError),
    /// A server block key is not a valid zone address
    /// (`error inspecting server blocks: ...`).
    Normalize(crate::zone::ZoneError),
    /// Two blocks serve the same zone address (`cannot serve ...`).
    Overlap(crate::overlap::OverlapError),
}

impl Error {
    /// The stage that failed, as the corpus names it: `parse`, `normalize` or `overlap`.
    pub fn stage(&self) -> &'static str {
        match self {
            Self::Parse(_) => "parse",
            Self::Normalize(_) => "normalize",
            Self::Overlap(_) => "overlap",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Parse(e) => e.fmt(f),
            Self::Normalize(e) => write!(f, "error inspecting server blocks: {e}"),
            Self::Overlap(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for Error {}

impl From<ParseError> for Error {
    fn from(e: ParseError) -> Self {
        Self::Parse(e)
    }
}
