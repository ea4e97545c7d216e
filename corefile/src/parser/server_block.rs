//! What the parser hands out: server blocks, the directives they hold, the tokens of those
//! directives, and the ids that name the file each token comes from.

use alloc::borrow::Cow;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::Range;

use crate::text::Text;

/// The file a token comes from: the main input, or an imported file of its block's
/// file table ([`ServerBlock::files`], [`crate::view::BlockView::files`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub(super) u32);

impl FileId {
    /// The main input.
    pub const MAIN: FileId = FileId(0);

    /// The absolute path of this file in `files`, its block's file table; `None` for the main
    /// input.
    pub fn path(self, files: &[Arc<str>]) -> Option<&str> {
        let at = usize::try_from(self.0.checked_sub(1)?).ok()?;
        files.get(at).map(|path| &**path)
    }

    /// How many entries of a file table this file needs (0 for the main input).
    pub(super) fn table_len(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

/// A token as the parser hands it to plugins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    /// The text, environment-substituted except for directive-name tokens. Borrowed from the
    /// main input unless lexing or substitution changed it, or it comes from an imported file.
    pub text: Text<'a>,
    /// 1-based line of its first character in its file (a parsed text is below 4 GiB, so
    /// its lines fit).
    pub line: u32,
    /// The file it came from; [`FileId::path`] names it.
    pub file: FileId,
}

impl Token<'_> {
    /// The same token, owning its text.
    pub fn into_owned(self) -> Token<'static> {
        Token {
            text: self.text.into_owned(),
            line: self.line,
            file: self.file,
        }
    }

    /// Whether `next` starts on a later line than this token ends (caddy's `isNextOnNewLine`).
    pub fn is_new_line_before(&self, next: &Token) -> bool {
        self.file != next.file || self.end_line() < next.line
    }

    /// Whether `next` is on the line this token ends on (the rule of `NextArg`).
    pub fn is_same_line_as(&self, next: &Token) -> bool {
        self.file == next.file && self.end_line() == next.line
    }

    fn end_line(&self) -> u32 {
        let newlines = self.text.bytes().filter(|&b| b == b'\n').count();
        self.line
            .saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX))
    }
}

/// One server block: its keys, its directives and one list of all their tokens.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerBlock<'a> {
    /// The keys (addresses) as written, environment-substituted, one trailing comma removed.
    pub keys: Vec<Cow<'a, str>>,
    /// Directives in order of first appearance; each name appears once.
    pub directives: Vec<Directive<'a>>,
    /// The tokens of every directive, grouped by directive in the order of `directives`
    /// (each directive's occurrences in source order); [`ServerBlock::tokens_of`] gives one
    /// directive's.
    pub tokens: Vec<Token<'a>>,
    /// The paths of the imported files its tokens came from, for [`FileId::path`]; empty when
    /// they all come from the main input.
    pub files: Vec<Arc<str>>,
}

/// All occurrences of one directive in a block, concatenated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Directive<'a> {
    /// The directive name (environment-substituted).
    pub name: Cow<'a, str>,
    /// Its tokens in its block's token list: each occurrence starts with its (raw) name
    /// token.
    pub tokens: Range<usize>,
}

impl ServerBlock<'_> {
    /// The same block, owning its text.
    pub fn into_owned(self) -> ServerBlock<'static> {
        ServerBlock {
            keys: self
                .keys
                .into_iter()
                .map(|k| Cow::Owned(k.into_owned()))
                .collect(),
            directives: self
                .directives
                .into_iter()
                .map(|d| Directive {
                    name: Cow::Owned(d.name.into_owned()),
                    tokens: d.tokens,
                })
                .collect(),
            tokens: tokens_into_owned(self.tokens),
            files: self.files,
        }
    }
}

impl<'a> ServerBlock<'a> {
    /// The directive called `name`, if the block has it.
    pub fn directive(&self, name: &str) -> Option<&Directive<'a>> {
        self.directives.iter().find(|d| d.name == name)
    }

    /// The tokens of `directive`, one of this block's.
    pub fn tokens_of(&self, directive: &Directive<'_>) -> &[Token<'a>] {
        tokens_in(&self.tokens, &directive.tokens)
    }
}

/// The tokens of `range` in a block's token list (none if it is not a range of it).
pub(crate) fn tokens_in<'t, 'a>(tokens: &'t [Token<'a>], range: &Range<usize>) -> &'t [Token<'a>] {
    tokens.get(range.clone()).unwrap_or_default()
}

/// A block's token list, owning its text.
pub(crate) fn tokens_into_owned(tokens: Vec<Token<'_>>) -> Vec<Token<'static>> {
    tokens.into_iter().map(Token::into_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_token_is_three_words() {
        assert_eq!(size_of::<Token<'_>>(), 24);
    }
}
