//! What a token does to the directive being read: the rule of braces and new lines, written
//! once for the general path ([grammar](super::grammar)) and the
//! [fast paths](super::fast_path).

use super::tok::{Kind, Tok};
use crate::lexer;

/// What a token does to the directive being read. [`step`] decides it, for the general
/// path ([`Parser::directive_tokens`](super::Parser::directive_tokens)) and the fast paths
/// alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Belongs to the directive, its text as lexed (a brace is counted in `nesting`).
    Take,
    /// Belongs to the directive, its text to be substituted first: a word that may hold an
    /// environment reference.
    Substitute,
    /// Ends the directive before it: it starts a line outside the directive's braces.
    End,
    /// An `import` at the start of a line inside the braces: replaced by what it imports.
    Import,
    /// A `}` with no `{` open: an error.
    UnmatchedClose,
}

/// The rule of braces and new lines for the directive being read, written once: a `{`
/// opens a level of `nesting` wherever it stands, a token starting a line ends the
/// directive unless a `{` is open, and a `}` closes the innermost level. `new_line` tells
/// whether `token` starts a line.
#[inline(always)]
pub(super) fn step(token: &Tok, new_line: bool, nesting: &mut usize) -> Step {
    match token.kind {
        Kind::Open => {
            *nesting = nesting.saturating_add(1);
            Step::Take
        }
        _ if new_line && *nesting == 0 => Step::End,
        Kind::Close if *nesting > 0 => {
            *nesting -= 1;
            Step::Take
        }
        Kind::Close => Step::UnmatchedClose,
        Kind::Import if new_line => Step::Import,
        // `{` and `}` hold no reference; a word may.
        Kind::Word if token.flags & lexer::Scan::REFERENCE != 0 => Step::Substitute,
        Kind::Import | Kind::Word => Step::Take,
    }
}
