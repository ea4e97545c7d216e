//! The Corefile lexer (caddy v1 `caddyfile/lexer.go`, spec section 1).
//!
//! Bytes are decoded rune by rune with Go's `ReadRune` rules (one U+FFFD per invalid byte), a
//! leading BOM is dropped, whitespace is Unicode White_Space, CR outside quotes is skipped
//! without ending a token, `#` outside quotes starts a comment, and inside quotes a backslash
//! escapes only `"`.

use alloc::string::String;
use alloc::sync::Arc;

/// One lexeme: a token, or a comment (kept for the lossless tree and the formatter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lexeme {
    /// A word, quoted or not.
    Token(RawToken),
    /// A comment: the text from `#` to the end of its line (CR removed), on line `line`.
    Comment {
        /// The comment text, starting with `#`.
        text: String,
        /// The 1-based line it sits on.
        line: usize,
    },
}

/// A token as the lexer produces it, before environment substitution or import splicing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawToken {
    /// The token text: quotes removed, `\"` unescaped, CR outside quotes removed. Shared,
    /// so the parser's copies cost no allocation.
    pub text: Arc<str>,
    /// 1-based line of the token's first character (the opening quote for a quoted token).
    pub line: usize,
    /// Whether the token was written in quotes. Parsing never looks at this.
    pub quoted: bool,
}

/// Decodes one rune at the start of `bytes` with Go's `utf8.DecodeRune` rules: an invalid or
/// truncated sequence yields U+FFFD and a width of one byte.
pub(crate) fn decode_rune(bytes: &[u8]) -> Option<(char, usize)> {
    let first = *bytes.first()?;
    if first < 0x80 {
        return Some((char::from(first), 1));
    }
    let width = match first {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return Some((char::REPLACEMENT_CHARACTER, 1)),
    };
    let decoded = bytes
        .get(..width)
        .and_then(|seq| core::str::from_utf8(seq).ok())
        .and_then(|s| s.chars().next());
    Some(match decoded {
        Some(c) => (c, width),
        None => (char::REPLACEMENT_CHARACTER, 1),
    })
}

/// Decodes bytes to a string with Go's rules (one U+FFFD per invalid byte).
pub fn decode_lossy(bytes: &[u8]) -> String {
    if let Ok(s) = core::str::from_utf8(bytes) {
        return String::from(s);
    }
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some((c, width)) = decode_rune(rest) {
        out.push(c);
        rest = rest.get(width..).unwrap_or_default();
    }
    out
}

/// An iterator over the lexemes of one file.
#[derive(Clone, Debug)]
pub struct Lexer<'a> {
    /// The whole input as text when it is valid UTF-8 (so ASCII runs slice without checks).
    text: Option<&'a str>,
    rest: &'a [u8],
    line: usize,
    pending_comment: Option<(String, usize)>,
    /// The text of the token being read, reused across tokens.
    buf: String,
}

impl<'a> Lexer<'a> {
    /// Starts lexing `input`; one leading byte order mark is skipped.
    pub fn new(input: &'a [u8]) -> Self {
        let rest = input.strip_prefix("\u{FEFF}".as_bytes()).unwrap_or(input);
        Lexer {
            text: core::str::from_utf8(rest).ok(),
            rest,
            line: 1,
            pending_comment: None,
            buf: String::new(),
        }
    }

    fn next_rune(&mut self) -> Option<char> {
        let (c, width) = decode_rune(self.rest)?;
        self.rest = self.rest.get(width..).unwrap_or_default();
        Some(c)
    }

    /// Reads one token or comment. Mirrors caddy's `next`: a comment that starts inside a word
    /// only lasts until that word ends at whitespace.
    fn lex(&mut self) -> Option<Lexeme> {
        if let Some((text, line)) = self.pending_comment.take() {
            return Some(Lexeme::Comment { text, line });
        }
        self.skip_plain_whitespace();
        let mut line = self.line;
        let mut val = core::mem::take(&mut self.buf);
        val.clear();
        // Fast path: a run of printable ASCII that ends at plain whitespace or EOF.
        let run = self
            .rest
            .iter()
            .take_while(|&&b| b.is_ascii_graphic() && b != b'#' && b != b'"')
            .count();
        if run > 0 {
            let (word, rest) = self.rest.split_at(run);
            let word = match self.text {
                Some(text) => {
                    let start = text.len() - self.rest.len();
                    text.get(start..start + run).unwrap_or_default()
                }
                None => core::str::from_utf8(word).unwrap_or_default(),
            };
            val.push_str(word);
            self.rest = rest;
            if matches!(rest.first(), None | Some(b' ' | b'\t' | b'\n')) {
                return Some(self.token(val, line, false));
            }
        }
        let mut quoted = false;
        let mut escaped = false;
        let mut comment: Option<(String, usize)> = None;
        loop {
            let Some(ch) = self.next_rune() else {
                if !val.is_empty() {
                    self.pending_comment = comment;
                    return Some(self.token(val, line, quoted));
                }
                return comment.map(|(text, line)| Lexeme::Comment { text, line });
            };
            if quoted {
                if !escaped {
                    if ch == '\\' {
                        escaped = true;
                        continue;
                    }
                    if ch == '"' {
                        return Some(self.token(val, line, true));
                    }
                }
                if ch == '\n' {
                    self.line = self.line.saturating_add(1);
                }
                if escaped && ch != '"' {
                    val.push('\\');
                }
                val.push(ch);
                escaped = false;
                continue;
            }
            if ch.is_whitespace() {
                if ch == '\r' {
                    continue;
                }
                let newline = ch == '\n';
                if newline {
                    self.line = self.line.saturating_add(1);
                }
                if !val.is_empty() {
                    self.pending_comment = comment;
                    return Some(self.token(val, line, false));
                }
                match comment.as_mut() {
                    Some(_) if newline => {
                        return comment.map(|(text, line)| Lexeme::Comment { text, line });
                    }
                    Some((text, _)) => text.push(ch),
                    None => {}
                }
                continue;
            }
            if let Some((text, _)) = comment.as_mut() {
                text.push(ch);
                continue;
            }
            if ch == '#' {
                comment = Some((String::from("#"), self.line));
                continue;
            }
            if val.is_empty() {
                line = self.line;
                if ch == '"' {
                    quoted = true;
                    continue;
                }
            }
            val.push(ch);
        }
    }
}

impl Lexer<'_> {
    /// Skips spaces, tabs and newlines (counting lines) before a token.
    fn skip_plain_whitespace(&mut self) {
        let mut skipped = 0;
        for &b in self.rest {
            match b {
                b' ' | b'\t' => {}
                b'\n' => self.line = self.line.saturating_add(1),
                _ => break,
            }
            skipped += 1;
        }
        self.rest = self.rest.get(skipped..).unwrap_or_default();
    }

    /// Makes a token of `val` and keeps its buffer for the next one.
    fn token(&mut self, val: String, line: usize, quoted: bool) -> Lexeme {
        let text = Arc::from(val.as_str());
        self.buf = val;
        Lexeme::Token(RawToken { text, line, quoted })
    }
}

impl Iterator for Lexer<'_> {
    type Item = Lexeme;

    fn next(&mut self) -> Option<Lexeme> {
        self.lex()
    }
}

/// Lexes `input` and returns only its tokens (comments dropped), as CoreDNS sees them.
pub fn tokens(input: &[u8]) -> impl Iterator<Item = RawToken> + '_ {
    Lexer::new(input).filter_map(|lexeme| match lexeme {
        Lexeme::Token(token) => Some(token),
        Lexeme::Comment { .. } => None,
    })
}
