//! The Corefile lexer (caddy v1 `caddyfile/lexer.go`, `docs/corefile.md` §1).
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

/// One token as the scanner finds it: where its raw text lies in the input and what the
/// parser needs to know about it. Copying it copies no text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scan {
    /// Byte offset of its raw text (after the opening quote of a quoted token).
    pub(crate) start: usize,
    /// Byte offset just past its raw text (before the closing quote).
    pub(crate) end: usize,
    /// 1-based line of its first character (the opening quote for a quoted token).
    pub(crate) line: usize,
    /// The line its last character is on (a quoted token may span lines).
    pub(crate) end_line: usize,
    /// [`Scan::QUOTED`], [`Scan::REFERENCE`], [`Scan::EDITED`].
    pub(crate) flags: u8,
}

impl Scan {
    /// The token was written in quotes.
    pub(crate) const QUOTED: u8 = 1;
    /// Its text may hold a `{$` or `{%` reference: a `{` is followed by `$` or `%`, or, in
    /// a word whose CRs are dropped, by anything. Without it the text is its own
    /// substitution.
    pub(crate) const REFERENCE: u8 = 2;
    /// Its text is not its raw span: a CR outside quotes is dropped, or `\"` unescaped.
    pub(crate) const EDITED: u8 = 4;

    /// Whether `flag` is set.
    #[inline(always)]
    pub(crate) fn has(self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// The token text in `src`, the text it was scanned from: borrowed unless edited.
    #[inline(always)]
    pub(crate) fn text(self, src: &str) -> Cow<'_, str> {
        let raw = src.get(self.start..self.end).unwrap_or_default();
        if !self.has(Self::EDITED) {
            Cow::Borrowed(raw)
        } else if self.has(Self::QUOTED) {
            Cow::Owned(unescape_quotes(raw))
        } else {
            Cow::Owned(raw.replace('\r', ""))
        }
    }

    /// The token as the public lexer hands it out.
    #[inline(always)]
    fn raw_token(self, src: &str) -> RawToken<'_> {
        RawToken {
            text: self.text(src),
            line: self.line,
            quoted: self.has(Self::QUOTED),
        }
    }
}

/// Byte classes for scanning: bit flags, 0 for an ordinary byte that continues a word.
mod class {
    /// Space, TAB, VT, FF.
    pub(super) const SPACE: u8 = 1;
    /// LF.
    pub(super) const NEWLINE: u8 = 2;
    /// CR: whitespace that never ends a word.
    pub(super) const CR: u8 = 4;
    /// `#`.
    pub(super) const HASH: u8 = 8;
    /// A non-ASCII byte: the character may be Unicode whitespace.
    pub(super) const HIGH: u8 = 16;
    /// `{`.
    pub(super) const BRACE: u8 = 32;

    /// The class of every byte.
    // Evaluated at compile time: an index out of range would fail the build, not panic.
    #[allow(clippy::indexing_slicing)]
    static TABLE: [u8; 256] = {
        let mut table = [0u8; 256];
        let mut b = 0usize;
        while b < 256 {
            table[b] = match b as u8 {
                b' ' | b'\t' | 0x0B | 0x0C => SPACE,
                b'\n' => NEWLINE,
                b'\r' => CR,
                b'#' => HASH,
                b'{' => BRACE,
                0x80.. => HIGH,
                _ => 0,
            };
            b += 1;
        }
        table
    };

    /// The class of `b`.
    #[inline(always)]
    pub(super) fn of(b: u8) -> u8 {
        TABLE.get(usize::from(b)).copied().unwrap_or(0)
    }
}

/// Scanning eight bytes at a time (SWAR: a `u64` as eight lanes).
mod swar {
    use super::class;

    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;

    /// The high bit of each byte of `x` below `n` (n at most 128). Bits above the lowest
    /// one may be spurious (a borrow runs on); the lowest is exact.
    #[inline(always)]
    fn below(x: u64, n: u8) -> u64 {
        x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS
    }

    /// The high bit of each byte of `x` other than `b`, exactly.
    #[inline(always)]
    fn other_than(x: u64, b: u8) -> u64 {
        let v = x ^ (ONES * u64::from(b));
        (((v & !HIGHS) + !HIGHS) | v) & HIGHS
    }

    /// The length of the prefix of `bytes` before the first byte `found` marks, eight bytes
    /// at a time, then byte by byte with `one`.
    #[inline(always)]
    fn run(bytes: &[u8], found: impl Fn(u64) -> u64, one: impl Fn(u8) -> bool) -> usize {
        let mut at = 0;
        while let Some(chunk) = bytes.get(at..at + 8) {
            let lanes = chunk.try_into().map_or(0, u64::from_le_bytes);
            let marks = found(lanes);
            if marks != 0 {
                return at + (marks.trailing_zeros() / 8) as usize;
            }
            at += 8;
        }
        let tail = bytes.get(at..).unwrap_or_default();
        at + tail.iter().position(|&b| one(b)).unwrap_or(tail.len())
    }

    /// The offset of the first byte at or after `from` in `bytes` that is not an ordinary
    /// word byte (class 0), or the length. A cheap mask flags a superset of the stopping
    /// bytes (every byte below `$`, from `{` up, and non-ASCII); the class table decides.
    #[inline(always)]
    pub(super) fn ordinary_end(bytes: &[u8], from: usize) -> usize {
        let mut at = from;
        while let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
            let x = u64::from_le_bytes(*chunk);
            // Lanes hold at most 0x7F + 5 after the mask: the addition carries into no other.
            let from_brace = ((x & !HIGHS).wrapping_add(ONES * 5) | x) & HIGHS;
            let marks = below(x, b'$') | from_brace;
            if marks == 0 {
                at += 8;
                continue;
            }
            let first = at + (marks.trailing_zeros() / 8) as usize;
            if bytes.get(first).is_some_and(|&b| class::of(b) != 0) {
                return first;
            }
            at = first + 1;
        }
        let tail = bytes.get(at..).unwrap_or_default();
        at + tail
            .iter()
            .position(|&b| class::of(b) != 0)
            .unwrap_or(tail.len())
    }

    /// The length of the run of spaces at the start of `bytes`.
    #[inline(always)]
    pub(super) fn spaces(bytes: &[u8]) -> usize {
        run(bytes, |x| other_than(x, b' '), |b| b != b' ')
    }
}

/// An iterator over the lexemes of one text (see [`lexemes`] for bytes).
#[derive(Clone, Debug)]
pub struct Lexer<'a> {
    /// The input; token offsets are into it (a leading byte order mark is skipped).
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
        let bom = if input.starts_with('\u{FEFF}') {
            '\u{FEFF}'.len_utf8()
        } else {
            0
        };
        Lexer {
            src: input,
            pos: bom,
            line: 1,
            pending_comment: None,
        }
    }

    /// The text being lexed, which [`Scan`] offsets index.
    pub(crate) fn source(&self) -> &'a str {
        self.src
    }

    /// `src[start..end]`, or `""` if that is not a slice of it (never, by construction).
    #[inline]
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
        // Comments are lexemes here: the fast path leaves them to the general one.
        let common = common_token::<false>(self.src.as_bytes(), &mut self.pos, &mut self.line);
        if let Some(scan) = common {
            return Some(Lexeme::Token(scan.raw_token(self.src)));
        }
        self.skip_whitespace();
        let scan = match self.src.as_bytes().get(self.pos)? {
            b'#' => {
                let (line, start, end) = self.skip_line_comment();
                let text = self.slice(start, end);
                return Some(Lexeme::Comment {
                    text: without_cr(text, text.contains('\r')),
                    line,
                });
            }
            b'"' => self.quoted()?,
            _ => self.word(true),
        };
        Some(Lexeme::Token(scan.raw_token(self.src)))
    }

    /// Lexes up to `limit` more tokens, comments skipped, and appends each to `out` as
    /// `make` builds it from the token's [`Scan`]; fewer only at the end of the input.
    /// Common tokens take the fast path ([`common_token`]), the others the general one.
    #[inline(always)]
    pub(crate) fn scan_tokens<T>(
        &mut self,
        limit: usize,
        out: &mut Vec<T>,
        make: impl Fn(Scan) -> T,
    ) {
        let bytes = self.src.as_bytes();
        // The cursor stays in locals, out of reach of the writes to `out`.
        let (mut pos, mut line) = (self.pos, self.line);
        for _ in 0..limit {
            if let Some(scan) = common_token::<true>(bytes, &mut pos, &mut line) {
                out.push(make(scan));
                continue;
            }
            (self.pos, self.line) = (pos, line);
            let scan = self.general_token();
            (pos, line) = (self.pos, self.line);
            match scan {
                Some(scan) => out.push(make(scan)),
                None => break,
            }
        }
        (self.pos, self.line) = (pos, line);
    }

    /// The next token, comments skipped, by the general path that reads any token.
    pub(crate) fn general_token(&mut self) -> Option<Scan> {
        loop {
            self.skip_whitespace();
            match self.src.as_bytes().get(self.pos)? {
                b'#' => {
                    self.skip_line_comment();
                }
                b'"' => return self.quoted(),
                _ => return Some(self.word(false)),
            }
        }
    }

    /// Skips whitespace (CR included) before a token, counting lines.
    #[inline(always)]
    fn skip_whitespace(&mut self) {
        let bytes = self.src.as_bytes();
        // Most tokens follow the single space or newline that ended the previous one.
        if bytes.get(self.pos).is_some_and(|&b| class::of(b) == 0) {
            return;
        }
        loop {
            let rest = bytes.get(self.pos..).unwrap_or_default();
            self.pos += swar::spaces(rest);
            let Some(&b) = bytes.get(self.pos) else {
                return;
            };
            match class::of(b) {
                class::SPACE | class::CR => self.pos += 1,
                class::NEWLINE => {
                    self.line = self.line.saturating_add(1);
                    self.pos += 1;
                }
                class::HIGH => match self.char_at(self.pos) {
                    Some(c) if c.is_whitespace() => self.pos += c.len_utf8(),
                    _ => return,
                },
                _ => return,
            }
        }
    }

    /// Skips a comment at the start of a token: it runs to the end of the line, which it
    /// consumes. Returns its line and the offsets of its text.
    fn skip_line_comment(&mut self) -> (usize, usize, usize) {
        let start = self.pos;
        let line = self.line;
        let newline = newline_from(self.src.as_bytes(), start);
        let end = newline.unwrap_or(self.src.len());
        self.pos = end;
        if newline.is_some() {
            self.pos += 1;
            self.line = self.line.saturating_add(1);
        }
        (line, start, end)
    }

    /// A quoted token; the cursor is on the opening quote. An unterminated quote runs to EOF,
    /// where caddy returns nothing if it read no text.
    fn quoted(&mut self) -> Option<Scan> {
        let line = self.line;
        let start = self.pos + 1;
        let bytes = self.src.as_bytes();
        let mut at = start;
        let mut flags = Scan::QUOTED;
        let end = loop {
            match bytes.get(at) {
                None | Some(b'"') => break at,
                Some(b'\\') => match bytes.get(at + 1) {
                    // A backslash at EOF escapes nothing and is dropped.
                    None => break at,
                    Some(&next) => {
                        match next {
                            b'"' => flags |= Scan::EDITED,
                            // The backslash stays in the text, before the brace.
                            b'{' if opens_reference(bytes, at + 1) => flags |= Scan::REFERENCE,
                            b'\n' => self.line = self.line.saturating_add(1),
                            _ => {}
                        }
                        at += 2;
                    }
                },
                Some(b'\n') => {
                    self.line = self.line.saturating_add(1);
                    at += 1;
                }
                Some(&b) => {
                    if b == b'{' && opens_reference(bytes, at) {
                        flags |= Scan::REFERENCE;
                    }
                    at += 1;
                }
            }
        };
        let closed = bytes.get(end) == Some(&b'"');
        self.pos = if closed { end + 1 } else { bytes.len() };
        if !closed && end <= start {
            return None;
        }
        Some(Scan {
            start,
            end,
            line,
            end_line: self.line,
            flags,
        })
    }

    /// An unquoted word: it ends at whitespace (which it consumes) or EOF; CR inside it is
    /// dropped, and a `#` inside it starts a comment that ends with the word (kept as the
    /// pending comment when `keep_comment`).
    fn word(&mut self, keep_comment: bool) -> Scan {
        let line = self.line;
        let start = self.pos;
        let scan = self.scan_word(start, true);
        let (stop, stop_at) = match scan.stop {
            Stop::Comment => {
                let comment = self.scan_word(scan.end + 1, false);
                if keep_comment {
                    self.pending_comment = Some(Lexeme::Comment {
                        text: without_cr(self.slice(scan.end, comment.end), comment.cr),
                        line: self.line,
                    });
                }
                (comment.stop, comment.end)
            }
            stop => (stop, scan.end),
        };
        self.pos = match stop {
            Stop::Eof => self.src.len(),
            Stop::Space(c) => {
                if c == '\n' {
                    self.line = self.line.saturating_add(1);
                }
                stop_at + c.len_utf8()
            }
            // `scan_word` after the `#` never stops at another comment.
            Stop::Comment => stop_at,
        };
        let mut flags = 0;
        if scan.cr {
            flags |= Scan::EDITED;
        }
        // Dropping a CR can join a `{` to a `$` or `%`.
        if scan.reference || scan.brace && scan.cr {
            flags |= Scan::REFERENCE;
        }
        Scan {
            start,
            end: scan.end,
            line,
            end_line: line,
            flags,
        }
    }

    /// Finds where the word starting at `from` ends, why, and what it holds. A `#` ends it
    /// only if `hash_ends` (inside a comment it does not).
    #[inline(always)]
    fn scan_word(&self, from: usize, hash_ends: bool) -> WordScan {
        let bytes = self.src.as_bytes();
        let mut scan = WordScan {
            end: from,
            stop: Stop::Eof,
            cr: false,
            brace: false,
            reference: false,
        };
        loop {
            scan.end = swar::ordinary_end(bytes, scan.end);
            let Some(&b) = bytes.get(scan.end) else {
                return scan;
            };
            match class::of(b) {
                class::SPACE | class::NEWLINE => {
                    scan.stop = Stop::Space(char::from(b));
                    return scan;
                }
                class::HASH if hash_ends => {
                    scan.stop = Stop::Comment;
                    return scan;
                }
                // A CR belongs to the word but not to its text.
                class::CR => scan.cr = true,
                class::BRACE => {
                    scan.brace = true;
                    scan.reference |= opens_reference(bytes, scan.end);
                }
                class::HIGH => match self.char_at(scan.end) {
                    Some(c) if c.is_whitespace() => {
                        scan.stop = Stop::Space(c);
                        return scan;
                    }
                    Some(c) => scan.end += c.len_utf8() - 1,
                    None => {}
                },
                _ => {}
            }
            scan.end += 1;
        }
    }
}

/// The offset of the first `\n` at or after `from` in `bytes`: where a comment starting at
/// `from` ends.
#[inline(always)]
fn newline_from(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = bytes.get(from..).unwrap_or_default();
    rest.iter().position(|&b| b == b'\n').map(|len| from + len)
}

/// The fast path of the lexer at byte offset `pos` of `bytes` (on line `line`): after blanks
/// (spaces, TABs, VT, FF, LF), and with `SKIP_COMMENTS` after whole-line comments too, the
/// common token, a run of ordinary ASCII bytes or a lone `{` ended by one of those blanks,
/// which it consumes. Anything else (a quote, a comment it does not skip, CR, non-ASCII byte,
/// `{` inside a word, the end of the input) is left to [`Lexer::general_token`], with only
/// the blanks and comments consumed.
#[inline(always)]
fn common_token<const SKIP_COMMENTS: bool>(
    bytes: &[u8],
    pos: &mut usize,
    line: &mut usize,
) -> Option<Scan> {
    let mut b = *bytes.get(*pos)?;
    let skipped = if SKIP_COMMENTS {
        class::SPACE | class::NEWLINE | class::HASH
    } else {
        class::SPACE | class::NEWLINE
    };
    while class::of(b) & skipped != 0 {
        if SKIP_COMMENTS && b == b'#' {
            // A comment where a token would start runs to the end of its line, which it
            // consumes (as `Lexer::skip_line_comment` does). One without a newline after it
            // ends the input: the general path takes it.
            *pos = newline_from(bytes, *pos)? + 1;
            *line = line.saturating_add(1);
        } else if b == b' ' {
            // Indentation: four or eight spaces at once, as most Corefiles indent.
            let rest = bytes.get(*pos..).unwrap_or_default();
            *pos += if rest.starts_with(b"        ") {
                8
            } else if rest.starts_with(b"    ") {
                4
            } else {
                1
            };
        } else {
            if b == b'\n' {
                *line = line.saturating_add(1);
            }
            *pos += 1;
        }
        b = *bytes.get(*pos)?;
    }
    let start = *pos;
    let (end, flags) = match b {
        // A lone brace holds no reference.
        b'{' => (start + 1, 0),
        b'"' => return None,
        _ if class::of(b) == 0 => (swar::ordinary_end(bytes, start + 1), 0),
        _ => return None,
    };
    let first_line = *line;
    match class::of(*bytes.get(end)?) {
        class::SPACE => {}
        class::NEWLINE => *line = first_line.saturating_add(1),
        _ => return None,
    }
    *pos = end + 1;
    Some(Scan {
        start,
        end,
        line: first_line,
        end_line: first_line,
        flags,
    })
}

/// Where and why a word ended.
struct WordScan {
    /// The offset just past the word's text (of the character that stopped the scan).
    end: usize,
    /// Why it ended.
    stop: Stop,
    /// Whether it holds a CR.
    cr: bool,
    /// Whether it holds a `{`.
    brace: bool,
    /// Whether it holds a `{` followed by `$` or `%`.
    reference: bool,
}

/// Whether the `{` at `at` in `bytes` is followed by `$` or `%`, the start of a reference.
#[inline(always)]
fn opens_reference(bytes: &[u8], at: usize) -> bool {
    matches!(bytes.get(at + 1), Some(b'$' | b'%'))
}

/// Why a word ended.
#[derive(Clone, Copy)]
enum Stop {
    /// At the end of the input.
    Eof,
    /// At a whitespace character.
    Space(char),
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

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;

    /// What a test compares of a token: its offsets, lines and flags.
    type Found = (usize, usize, usize, usize, u8);

    fn found(scan: Scan) -> Found {
        (scan.start, scan.end, scan.line, scan.end_line, scan.flags)
    }

    /// Every token by the general path alone, and where the cursor ends.
    fn general(text: &str) -> (Vec<Found>, usize, usize) {
        let mut lexer = Lexer::new(text);
        let tokens = core::iter::from_fn(|| lexer.general_token().map(found)).collect();
        (tokens, lexer.pos, lexer.line)
    }

    /// Every token as the parser lexes them, `batch` at a time, and where the cursor ends.
    fn batched(text: &str, batch: usize) -> (Vec<Found>, usize, usize) {
        let mut lexer = Lexer::new(text);
        let mut tokens = Vec::new();
        loop {
            let before = tokens.len();
            lexer.scan_tokens(batch, &mut tokens, found);
            if tokens.len() < before.saturating_add(batch) {
                return (tokens, lexer.pos, lexer.line);
            }
        }
    }

    #[test]
    fn only_a_brace_before_a_dollar_or_percent_may_open_a_reference() {
        // `docs/corefile.md` §2.3: `{$NAME}` and `{%NAME%}` are the references; other braces
        // are text.
        let flagged = |text: &str| -> Vec<bool> {
            general(text)
                .0
                .iter()
                .map(|&(.., flags)| flags & Scan::REFERENCE != 0)
                .collect()
        };
        assert_eq!(
            flagged("{ } {x} \"{remote} {type}\" a{ {$A} x{%B%} \"{$C}\" \"\\{$D}\""),
            [false, false, false, false, false, true, true, true, true]
        );
        // Dropping the CR makes `{$E}` of `{\r$E}`.
        assert_eq!(flagged("{\r$E} {\rx}"), [true, true]);
        assert_eq!(flagged("\"{\r$F}\""), [false]);
    }

    #[test]
    fn the_fast_path_skips_whole_line_comments_as_the_general_path_does() {
        // `docs/corefile.md` §1, comments: a `#` where a token would start comments out the
        // rest of its line; at the end of the input without a newline, and inside a word, the
        // general path reads it.
        for text in [
            "a # b\nc",
            "  # one\n\t# two\n d",
            "x {\n    health :8080 # liveness\n    ready\n}",
            "x\n# last",
            "a#b c",
            "# only",
            "#\n#\n",
        ] {
            assert_eq!(batched(text, usize::MAX), general(text), "{text:?}");
            assert_eq!(batched(text, 1), general(text), "{text:?}");
        }
    }

    /// Text made of the pieces the lexer treats differently: blanks of every kind, quotes,
    /// escapes, comments, braces and the `{$VAR}` / `{%VAR%}` openers, CR, BOM, Unicode
    /// whitespace, other non-ASCII, and words longer than one eight-byte chunk.
    fn text() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(
            &[
                " ",
                "  ",
                "        ",
                "\t",
                "\x0b",
                "\x0c",
                "\n",
                "\r",
                "\r\n",
                "\"",
                "\\",
                "\\\"",
                "#",
                "{",
                "}",
                "{$",
                "{%",
                "%}",
                "$",
                "a",
                "zone0.example.org:53",
                "!",
                "|",
                "~",
                "\u{7f}",
                "\u{85}",
                "\u{a0}",
                "\u{2028}",
                "\u{3000}",
                "\u{feff}",
                "é",
                "\u{0}",
            ][..],
        );
        proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The fast path (and the batches) change nothing: the same tokens, lines and flags
        /// as the general path alone, and the cursor ends at the same place.
        #[test]
        fn the_fast_path_finds_what_the_general_path_finds(text in text(), batch in 1usize..5) {
            let expected = general(&text);
            prop_assert_eq!(batched(&text, batch), expected.clone());
            prop_assert_eq!(batched(&text, usize::MAX), expected);
        }

        /// The public lexer, which also tries the fast path first, hands out the tokens of
        /// the general path.
        #[test]
        fn the_public_tokens_are_the_general_paths(text in text()) {
            let mut lexer = Lexer::new(&text);
            let expected: Vec<RawToken<'_>> = core::iter::from_fn(|| lexer.general_token())
                .map(|scan| scan.raw_token(&text))
                .collect();
            prop_assert_eq!(tokens(text.as_bytes()), expected);
        }
    }
}
