//! The parser's own token ([`Tok`]): a small `Copy` value holding offsets into its text and
//! what the parser asks of it, and the [`Token`] it becomes when it is handed out.

use alloc::borrow::Cow;

use super::server_block::{FileId, Token};
use crate::lexer;
use crate::text::Text;

/// What the parser knows about a token's text without comparing strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// Exactly `{`.
    Open,
    /// Exactly `}`.
    Close,
    /// Exactly `import`.
    Import,
    /// Anything else.
    Word,
}

impl Kind {
    /// The kind of the token `scan` found in `src`, whose text the lexer edited.
    #[cold]
    #[inline(never)]
    fn of_edited(scan: lexer::Scan, src: &str) -> Kind {
        Kind::of(scan.text(src).as_bytes())
    }

    /// The kind of a token whose text is `text`.
    #[inline]
    fn of(text: &[u8]) -> Kind {
        match text {
            b"{" => Kind::Open,
            b"}" => Kind::Close,
            b"import" => Kind::Import,
            _ => Kind::Word,
        }
    }
}

/// Which text a token's offsets point into: the main input, or
/// [`Texts::owned`](super::sources::Texts::owned)`[n - 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TextId(pub(super) u32);

impl TextId {
    /// The main input, borrowed for the whole parse.
    pub(super) const MAIN: TextId = TextId(0);
}

/// A token inside the parser: where its text lies, its file, and facts found while lexing.
/// It is small and `Copy`: moving it through the cursor, the snippets and the frames copies
/// no text. Offsets and lines fit `u32` because [`check_len`] refuses longer texts.
///
/// Its 26 bytes are padded to 32, so that a copy moves two separate 16-byte halves. At 28
/// bytes the two halves overlap, and the next copy of a token just copied has to wait until
/// both stores are done (the CPU cannot forward one load from two stores): 10-15 % of the
/// parser's profile samples sat on those loads.
#[derive(Clone, Copy, Debug)]
#[repr(align(8))]
pub(super) struct Tok {
    /// Byte offset of its raw text in `text`.
    pub(super) start: u32,
    /// Byte offset just past its raw text.
    pub(super) end: u32,
    /// 1-based line of its first character.
    pub(super) line: u32,
    /// The line its last character is on (a quoted token may span lines).
    pub(super) end_line: u32,
    /// The text the offsets index.
    pub(super) text: TextId,
    /// Its file: `FileId(n)` is `Parser::files[n - 1]`.
    pub(super) file: FileId,
    /// Brace, `import` or any other word.
    pub(super) kind: Kind,
    /// The lexer's flags ([`lexer::Scan::REFERENCE`], [`lexer::Scan::EDITED`], ...).
    pub(super) flags: u8,
}

impl Tok {
    /// The token `scan` found in `src`, text `text` of file `file` (which [`check_len`]
    /// accepted).
    #[inline(always)]
    pub(super) fn new(scan: lexer::Scan, src: &str, text: TextId, file: FileId) -> Tok {
        let kind = if scan.has(lexer::Scan::EDITED) {
            Kind::of_edited(scan, src)
        } else {
            // Only a token of one or six bytes can be a brace or `import`.
            match scan.end.wrapping_sub(scan.start) {
                1 | 6 => Kind::of(src.as_bytes().get(scan.start..scan.end).unwrap_or_default()),
                _ => Kind::Word,
            }
        };
        // Lossless: `check_len` bounds every offset and line.
        Tok {
            start: scan.start as u32,
            end: scan.end as u32,
            line: scan.line as u32,
            end_line: scan.end_line as u32,
            text,
            file,
            kind,
            flags: scan.flags,
        }
    }

    /// Whether `next` is on the line this token ends on (the rule of `NextArg`).
    #[inline]
    pub(super) fn is_same_line_as(&self, next: &Tok) -> bool {
        self.file == next.file && self.end_line == next.line
    }

    /// Whether `next` starts on a later line than this token ends (caddy's
    /// `isNextOnNewLine`), as [`Token::is_new_line_before`] tells for handed-out tokens.
    #[inline]
    pub(super) fn is_new_line_before(&self, next: &Tok) -> bool {
        self.file != next.file || self.end_line < next.line
    }

    /// Its 1-based line, as tokens and errors report it.
    #[inline(always)]
    pub(super) fn line(&self) -> usize {
        self.line as usize
    }

    /// Its span of `source`, when the lexer did not edit its text (a dropped CR, an
    /// unescaped quote).
    #[inline(always)]
    pub(super) fn unedited<'t>(&self, source: &'t str) -> Option<&'t str> {
        (self.flags & lexer::Scan::EDITED == 0).then(|| {
            source
                .get(self.start as usize..self.end as usize)
                .unwrap_or_default()
        })
    }

    /// The lexer's view of this token, to read its text.
    pub(super) fn scan(&self) -> lexer::Scan {
        lexer::Scan {
            start: self.start as usize,
            end: self.end as usize,
            line: self.line(),
            end_line: self.end_line as usize,
            flags: self.flags,
        }
    }
}

/// A text too long for the parser's `u32` offsets (4 GiB or more).
#[derive(Debug)]
pub(super) struct TooLarge;

/// Whether the parser's `u32` offsets and lines can index a text of `len` bytes.
pub(super) fn check_len(len: usize) -> core::result::Result<(), TooLarge> {
    // Lines never exceed the length plus one, so both fit when the length does.
    match u32::try_from(len) {
        Ok(len) if len < u32::MAX => Ok(()),
        _ => Err(TooLarge),
    }
}

/// The token handed out for `token`, a lexed token of the main input `main` whose text
/// needs no substitution: built in place, without the detour through a `Cow`.
#[inline(always)]
pub(super) fn main_output<'i>(main: &'i str, token: &Tok) -> Token<'i> {
    let text = match token.unedited(main) {
        Some(raw) => Text::borrowed(raw),
        None => edited_text(main, token),
    };
    Token {
        text,
        line: token.line,
        file: FileId::MAIN,
    }
}

/// The text of `token`, a token of the main input `main` that the lexer edited.
#[cold]
#[inline(never)]
fn edited_text<'i>(main: &'i str, token: &Tok) -> Text<'i> {
    Text::from(token.scan().text(main).into_owned())
}

/// The token handed out for `token`, with text `text`.
#[inline(always)]
pub(super) fn output<'i>(token: &Tok, text: Cow<'i, str>) -> Token<'i> {
    Token {
        text: Text::from(text),
        line: token.line,
        file: token.file,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_up_to_u32_max_minus_one_bytes_fit_the_token_offsets() {
        let max = usize::try_from(u32::MAX).unwrap();
        assert!(check_len(0).is_ok());
        assert!(check_len(max - 1).is_ok());
        assert!(check_len(max).is_err());
        assert!(check_len(usize::MAX).is_err());
    }
}
