//! The Corefile lexer (caddy v1 `caddyfile/lexer.go`, spec section 1).
//!
//! Input bytes are read with Go's `ReadRune` rules (one U+FFFD per invalid byte), a leading
//! BOM is dropped, whitespace is Unicode White_Space, CR outside quotes is skipped without
//! ending a token, `#` outside quotes starts a comment, and inside quotes a backslash escapes
//! only `"`.
//!
//! Tokens borrow from the input: a token's text is a slice of it unless the lexer had to change
//! it (a CR dropped, `\"` unescaped, an invalid byte replaced), so lexing valid input allocates
//! only the token list.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

/// One lexeme: a token, or a comment (kept for the lossless tree and the formatter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lexeme<'a> {
    /// A word, quoted or not.
    Token(RawToken<'a>),
    /// A comment: the text from `#` to the end of its line (CR removed), on line `line`.
    Comment {
        /// The comment text, starting with `#`.
        text: Cow<'a, str>,
        /// The 1-based line it sits on.
        line: usize,
    },
}

impl Lexeme<'_> {
    /// The same lexeme, owning its text.
    pub fn into_owned(self) -> Lexeme<'static> {
        match self {
            Lexeme::Token(token) => Lexeme::Token(token.into_owned()),
            Lexeme::Comment { text, line } => Lexeme::Comment {
                text: Cow::Owned(text.into_owned()),
                line,
            },
        }
    }
}

/// A token as the lexer produces it, before environment substitution or import splicing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawToken<'a> {
    /// The token text: quotes removed, `\"` unescaped, CR outside quotes removed. Borrowed
    /// from the input unless one of those changed it.
    pub text: Cow<'a, str>,
    /// 1-based line of the token's first character (the opening quote for a quoted token).
    pub line: usize,
    /// Whether the token was written in quotes. Parsing never looks at this.
    pub quoted: bool,
}

impl RawToken<'_> {
    /// The same token, owning its text.
    pub fn into_owned(self) -> RawToken<'static> {
        RawToken {
            text: Cow::Owned(self.text.into_owned()),
            line: self.line,
            quoted: self.quoted,
        }
    }
}

/// Decodes bytes to a string with Go's rules (one U+FFFD per invalid byte).
pub fn decode_lossy(bytes: &[u8]) -> Cow<'_, str> {
    let mut rest = match core::str::from_utf8(bytes) {
        Ok(text) => return Cow::Borrowed(text),
        Err(_) => bytes,
    };
    let mut out = String::with_capacity(bytes.len().saturating_add(16));
    while !rest.is_empty() {
        match core::str::from_utf8(rest) {
            Ok(valid) => {
                out.push_str(valid);
                break;
            }
            Err(error) => {
                let (valid, after) = rest.split_at(error.valid_up_to());
                out.push_str(core::str::from_utf8(valid).unwrap_or_default());
                // Go replaces each byte of an invalid or truncated sequence on its own.
                out.push(char::REPLACEMENT_CHARACTER);
                rest = after.get(1..).unwrap_or_default();
            }
        }
    }
    Cow::Owned(out)
}

/// An iterator over the lexemes of one text (see [`lexemes`] for bytes).
#[derive(Clone, Debug)]
pub struct Lexer<'a> {
    /// The input, after the byte order mark.
    src: &'a str,
    /// Byte offset of the next unread character.
    pos: usize,
    /// The 1-based line of `pos`.
    line: usize,
    /// A comment that started inside the word just returned.
    pending_comment: Option<Lexeme<'a>>,
}

impl<'a> Lexer<'a> {
    /// Starts lexing `input`; one leading byte order mark is skipped.
    pub fn new(input: &'a str) -> Self {
        Lexer {
            src: input.strip_prefix('\u{FEFF}').unwrap_or(input),
            pos: 0,
            line: 1,
            pending_comment: None,
        }
    }

    fn rest(&self) -> &'a [u8] {
        self.src.as_bytes().get(self.pos..).unwrap_or_default()
    }

    /// `src[start..end]`, or `""` if that is not a slice of it (never, by construction).
    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.src.get(start..end).unwrap_or_default()
    }

    /// The character at byte offset `at` (which starts one).
    fn char_at(&self, at: usize) -> Option<char> {
        self.src.get(at..).and_then(|s| s.chars().next())
    }

    /// Reads one token or comment. Mirrors caddy's `next`: a comment that starts inside a word
    /// only lasts until that word ends at whitespace.
    fn lex(&mut self) -> Option<Lexeme<'a>> {
        if let Some(comment) = self.pending_comment.take() {
            return Some(comment);
        }
        self.skip_whitespace();
        match self.rest().first()? {
            b'#' => Some(self.line_comment()),
            b'"' => self.quoted(),
            _ => Some(self.word()),
        }
    }

    /// Skips whitespace (CR included) before a token, counting lines.
    fn skip_whitespace(&mut self) {
        let bytes = self.src.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            match b {
                b'\n' => self.line = self.line.saturating_add(1),
                b' ' | b'\t' | b'\r' | 0x0B | 0x0C => {}
                0x80.. => match self.char_at(self.pos) {
                    Some(c) if c.is_whitespace() => {
                        self.pos += c.len_utf8();
                        continue;
                    }
                    _ => return,
                },
                _ => return,
            }
            self.pos += 1;
        }
    }

    /// A comment at the start of a token: it runs to the end of the line, which it consumes.
    fn line_comment(&mut self) -> Lexeme<'a> {
        let start = self.pos;
        let line = self.line;
        let rest = self.rest();
        let len = rest.iter().position(|&b| b == b'\n');
        let end = start + len.unwrap_or(rest.len());
        self.pos = end;
        if len.is_some() {
            self.pos += 1;
            self.line = self.line.saturating_add(1);
        }
        let text = self.slice(start, end);
        Lexeme::Comment {
            text: without_cr(text, text.contains('\r')),
            line,
        }
    }

    /// A quoted token; the cursor is on the opening quote. An unterminated quote runs to EOF,
    /// where caddy returns nothing if it read no text.
    fn quoted(&mut self) -> Option<Lexeme<'a>> {
        let line = self.line;
        let start = self.pos + 1;
        let bytes = self.src.as_bytes();
        let mut at = start;
        let mut unescape = false;
        let end = loop {
            match bytes.get(at) {
                None => break at,
                Some(b'"') => break at,
                Some(b'\\') => match bytes.get(at + 1) {
                    // A backslash at EOF escapes nothing and is dropped.
                    None => break at,
                    Some(&next) => {
                        unescape |= next == b'"';
                        if next == b'\n' {
                            self.line = self.line.saturating_add(1);
                        }
                        at += 2;
                    }
                },
                Some(b'\n') => {
                    self.line = self.line.saturating_add(1);
                    at += 1;
                }
                Some(_) => at += 1,
            }
        };
        let closed = bytes.get(end) == Some(&b'"');
        self.pos = if closed { end + 1 } else { bytes.len() };
        let raw = self.slice(start, end);
        if !closed && raw.is_empty() {
            return None;
        }
        let text = if unescape {
            Cow::Owned(unescape_quotes(raw))
        } else {
            Cow::Borrowed(raw)
        };
        Some(Lexeme::Token(RawToken {
            text,
            line,
            quoted: true,
        }))
    }

    /// An unquoted word: it ends at whitespace (which it consumes) or EOF; CR inside it is
    /// dropped, and a `#` inside it starts a comment that ends with the word.
    fn word(&mut self) -> Lexeme<'a> {
        let line = self.line;
        let start = self.pos;
        let (end, stop, cr) = self.scan_word(start, true);
        let text = without_cr(self.slice(start, end), cr);
        let stop = match stop {
            Stop::Comment => {
                let (comment_end, stop, cr) = self.scan_word(end + 1, false);
                self.pending_comment = Some(Lexeme::Comment {
                    text: without_cr(self.slice(end, comment_end), cr),
                    line: self.line,
                });
                stop
            }
            stop => stop,
        };
        self.pos = match stop {
            Stop::Eof(at) => at,
            Stop::Space(at, c) => {
                if c == '\n' {
                    self.line = self.line.saturating_add(1);
                }
                at + c.len_utf8()
            }
            // `scan_word` after the `#` never stops at another comment.
            Stop::Comment => end,
        };
        Lexeme::Token(RawToken {
            text,
            line,
            quoted: false,
        })
    }

    /// Finds where the word starting at `from` ends: its end offset, why, and whether it
    /// holds a CR. A `#` ends it only if `hash_ends` (inside a comment it does not).
    fn scan_word(&self, from: usize, hash_ends: bool) -> (usize, Stop, bool) {
        let bytes = self.src.as_bytes();
        let mut at = from;
        let mut cr = false;
        loop {
            let Some(&b) = bytes.get(at) else {
                return (at, Stop::Eof(at), cr);
            };
            match b {
                b'\n' | b' ' | b'\t' | 0x0B | 0x0C => {
                    return (at, Stop::Space(at, char::from(b)), cr);
                }
                b'#' if hash_ends => return (at, Stop::Comment, cr),
                // A CR belongs to the word but not to its text.
                b'\r' => {
                    cr = true;
                    at += 1;
                }
                0x80.. => match self.char_at(at) {
                    Some(c) if c.is_whitespace() => return (at, Stop::Space(at, c), cr),
                    Some(c) => at += c.len_utf8(),
                    None => at += 1,
                },
                _ => at += 1,
            }
        }
    }
}

/// Why a word ended.
enum Stop {
    /// At the end of the input (its length).
    Eof(usize),
    /// At a whitespace character, at this offset.
    Space(usize, char),
    /// At a `#`.
    Comment,
}

/// `text` without its carriage returns; `cr` tells whether it has any.
#[inline]
fn without_cr(text: &str, cr: bool) -> Cow<'_, str> {
    if cr {
        Cow::Owned(text.replace('\r', ""))
    } else {
        Cow::Borrowed(text)
    }
}

/// The text of a quoted token: a backslash before `"` is dropped, any other is kept.
fn unescape_quotes(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut escaped = false;
    for c in raw.chars() {
        if escaped {
            if c != '"' {
                out.push('\\');
            }
            out.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else {
            out.push(c);
        }
    }
    out
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Lexeme<'a>;

    fn next(&mut self) -> Option<Lexeme<'a>> {
        self.lex()
    }
}

/// Lexes `input` (decoded with Go's rules when it is not valid UTF-8) and maps each lexeme
/// through `f`. Tokens of valid input borrow from it; those of invalid input own their text.
pub(crate) fn map_lexemes<'a, T>(
    input: &'a [u8],
    mut f: impl FnMut(Lexeme<'a>) -> Option<T>,
) -> Vec<T> {
    // About one token per eight bytes in typical Corefiles.
    let mut out = Vec::with_capacity(input.len() / 8);
    match decode_lossy(input) {
        Cow::Borrowed(text) => out.extend(Lexer::new(text).filter_map(f)),
        Cow::Owned(text) => out.extend(Lexer::new(&text).filter_map(|l| f(l.into_owned()))),
    }
    out
}

/// Lexes `input` into tokens and comments (invalid UTF-8 is decoded with Go's rules).
pub fn lexemes(input: &[u8]) -> Vec<Lexeme<'_>> {
    map_lexemes(input, Some)
}

/// Lexes `input` and returns only its tokens (comments dropped), as CoreDNS sees them.
pub fn tokens(input: &[u8]) -> Vec<RawToken<'_>> {
    map_lexemes(input, |lexeme| match lexeme {
        Lexeme::Token(token) => Some(token),
        Lexeme::Comment { .. } => None,
    })
}
