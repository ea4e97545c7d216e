//! nginx's tokenizer, `ngx_conf_read_token` (`src/core/ngx_conf_file.c`), on bytes.
//!
//! Each call of [`Lexer::statement`] reads the words of one statement and reports how it ended,
//! exactly as nginx does, including nginx's 4096-byte read buffer: a pending word or comment
//! that fills the whole buffer is an error, so the buffer's position is simulated too.

use crate::error::{Error, ErrorKind};
use alloc::vec::Vec;

/// Size of nginx's configuration read buffer (`NGX_CONF_BUFFER`).
pub(crate) const BUFFER: usize = 4096;

/// How a statement ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// `;` at this offset.
    Semicolon(usize),
    /// `{` at this offset.
    BlockStart(usize),
    /// `}` at this offset.
    BlockDone(usize),
    /// End of input.
    FileDone,
}

/// A word as written: `start..end` covers its quotes, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawWord {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) line: u32,
}

/// Position in the input, shared by the nginx lexer and the Lua block scanner.
#[derive(Debug)]
pub(crate) struct Lexer<'a> {
    pub(crate) input: &'a [u8],
    pub(crate) pos: usize,
    pub(crate) line: u32,
    /// Offset of the end of nginx's read buffer (`b->last`), which is also how far nginx has
    /// read the file.
    pub(crate) last: usize,
}

/// Bytes that end or change an unquoted word: whitespace, `;`, `{`, `\\` and `$`.
// Evaluated at compile time: an out-of-range index would fail the build, not panic.
#[allow(clippy::indexing_slicing)]
const WORD_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let stops = b" \t\r\n;{\\$";
    let mut i = 0;
    while i < stops.len() {
        table[stops[i] as usize] = true;
        i += 1;
    }
    table
};

pub(crate) fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

/// Skips runs of eight spaces from `at` (indentation after a newline), eight bytes at a time.
fn skip_indentation(window: &[u8], mut at: usize) -> usize {
    while let Some(eight) = window.get(at..at + 8) {
        if eight != [b' '; 8] {
            break;
        }
        at += 8;
    }
    at
}

fn is_word_stop(byte: u8) -> bool {
    WORD_STOP.get(usize::from(byte)) == Some(&true)
}

/// Whether `byte`, read between words, starts a bare word (not a quote, comment, `;`, `{` or
/// `}`, which the byte-by-byte path handles).
fn starts_bare_word(byte: u8) -> bool {
    !is_space(byte) && !matches!(byte, b';' | b'{' | b'}' | b'#' | b'"' | b'\'')
}

/// Scans a bare word starting at `from` in `window` (the input up to the end of nginx's
/// buffer). Returns the offset of the byte that ends it (whitespace, `;` or `{`), or of the
/// first `\` or `$` whose meaning depends on bytes past the window, or the window's end; and
/// the number of escaped newlines before that offset.
///
/// Inside a bare word, `\` makes the next byte ordinary, and `$` makes the `{` bytes right
/// after it ordinary; every other byte that is not whitespace, `;` or `{` is ordinary.
fn bare_word_end(window: &[u8], from: usize) -> (usize, u32) {
    let mut at = from;
    let mut lines = 0u32;
    loop {
        let rest = window.get(at..).unwrap_or_default();
        at += rest
            .iter()
            .position(|&b| is_word_stop(b))
            .unwrap_or(rest.len());
        match window.get(at) {
            Some(b'\\') => match window.get(at + 1) {
                Some(&escaped) => {
                    lines = lines.saturating_add(u32::from(escaped == b'\n'));
                    at += 2;
                }
                None => return (at, lines),
            },
            Some(b'$') => {
                let braces = window
                    .get(at + 1..)
                    .unwrap_or_default()
                    .iter()
                    .take_while(|&&b| b == b'{')
                    .count();
                if at + 1 + braces >= window.len() {
                    return (at, lines);
                }
                at += 1 + braces;
            }
            _ => return (at, lines),
        }
    }
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(input: &'a [u8]) -> Self {
        Self {
            input,
            pos: 0,
            line: 1,
            last: 0,
        }
    }

    pub(crate) fn error(&self, kind: ErrorKind) -> Error {
        Error::new(kind, self.line, self.pos)
    }

    /// Reads one statement into `words` (cleared first).
    pub(crate) fn statement(&mut self, words: &mut Vec<RawWord>) -> Result<End, Error> {
        words.clear();
        let input = self.input;
        // nginx's `start`: the beginning of what must stay in the buffer.
        let mut start = self.pos;
        let mut start_line = self.line;
        let mut word = RawWord {
            start: 0,
            end: 0,
            line: 0,
        };
        let mut last_space = true;
        let mut need_space = false;
        let mut comment = false;
        let mut escaped = false;
        let mut quote: Option<u8> = None;
        let mut variable = false;

        loop {
            if self.pos >= self.last {
                if self.last >= input.len() {
                    if !words.is_empty() || !last_space {
                        return Err(self.error(ErrorKind::UnexpectedEof));
                    }
                    return Ok(End::FileDone);
                }
                if self.pos - start >= BUFFER {
                    let kind = match quote {
                        Some(q) => ErrorKind::TooLongQuoted(q),
                        None => {
                            let head = input.get(start..start + 10).unwrap_or_default();
                            ErrorKind::TooLongParameter(head.to_vec())
                        }
                    };
                    return Err(Error::new(kind, start_line, start));
                }
                self.last = input.len().min(start + BUFFER);
            }

            if last_space && !comment {
                // Fast path between words: skip whitespace, then read a bare word in one go if
                // its end is in the buffer. The state changes exactly as byte by byte.
                let window = input.get(..self.last).unwrap_or_default();
                let mut at = self.pos;
                while let Some(&b) = window.get(at) {
                    match b {
                        b'\n' => {
                            self.line = self.line.saturating_add(1);
                            at = skip_indentation(window, at + 1);
                        }
                        b' ' | b'\t' | b'\r' => at += 1,
                        _ => break,
                    }
                }
                if at > self.pos {
                    start = at - 1;
                    start_line = self.line;
                    self.pos = at;
                }
                let Some(&first) = window.get(at) else {
                    continue;
                };
                match first {
                    b';' if !words.is_empty() => {
                        self.pos = at + 1;
                        return Ok(End::Semicolon(at));
                    }
                    b'{' if !words.is_empty() => {
                        self.pos = at + 1;
                        return Ok(End::BlockStart(at));
                    }
                    b'}' if words.is_empty() => {
                        self.pos = at + 1;
                        return Ok(End::BlockDone(at));
                    }
                    _ => {}
                }
                if starts_bare_word(first) {
                    let (end, lines) = bare_word_end(window, at);
                    start = at;
                    start_line = self.line;
                    word.start = at;
                    word.line = self.line;
                    self.line = self.line.saturating_add(lines);
                    match window.get(end) {
                        Some(&stop) if is_space(stop) || stop == b';' || stop == b'{' => {
                            word.end = end;
                            words.push(word);
                            self.pos = end + 1;
                            match stop {
                                b';' => return Ok(End::Semicolon(end)),
                                b'{' => return Ok(End::BlockStart(end)),
                                b'\n' => self.line = self.line.saturating_add(1),
                                _ => {}
                            }
                        }
                        // Left to the byte-by-byte path, inside the word.
                        _ => {
                            self.pos = end;
                            last_space = false;
                        }
                    }
                    continue;
                }
            }

            // Fast paths: runs of bytes that cannot change the state, up to the buffer end.
            let run = input.get(self.pos..self.last).unwrap_or_default();
            let skip = if escaped || need_space {
                0
            } else if comment {
                run.iter().position(|&b| b == b'\n').unwrap_or(run.len())
            } else if last_space {
                0
            } else if let Some(q) = quote {
                run.iter()
                    .position(|&b| b == q || b == b'\\' || b == b'\n')
                    .unwrap_or(run.len())
            } else if variable {
                0
            } else {
                run.iter()
                    .position(|&b| is_word_stop(b))
                    .unwrap_or(run.len())
            };
            if skip > 0 {
                self.pos += skip;
                continue;
            }

            let Some(&ch) = input.get(self.pos) else {
                return Err(self.error(ErrorKind::UnexpectedEof));
            };
            self.pos += 1;

            if ch == b'\n' {
                self.line = self.line.saturating_add(1);
                comment = false;
            }
            if comment {
                continue;
            }
            if escaped {
                escaped = false;
                continue;
            }

            if need_space {
                if is_space(ch) {
                    last_space = true;
                    need_space = false;
                    continue;
                }
                match ch {
                    b';' => return Ok(End::Semicolon(self.pos - 1)),
                    b'{' => return Ok(End::BlockStart(self.pos - 1)),
                    b')' => {
                        last_space = true;
                        need_space = false;
                    }
                    _ => {
                        self.pos -= 1;
                        return Err(self.error(ErrorKind::Unexpected(ch)));
                    }
                }
            }

            if last_space {
                start = self.pos - 1;
                start_line = self.line;
                if is_space(ch) {
                    continue;
                }
                match ch {
                    b';' | b'{' if words.is_empty() => {
                        self.pos -= 1;
                        return Err(self.error(ErrorKind::Unexpected(ch)));
                    }
                    b';' => return Ok(End::Semicolon(self.pos - 1)),
                    b'{' => return Ok(End::BlockStart(self.pos - 1)),
                    b'}' if !words.is_empty() => {
                        self.pos -= 1;
                        return Err(self.error(ErrorKind::Unexpected(ch)));
                    }
                    b'}' => return Ok(End::BlockDone(self.pos - 1)),
                    b'#' => {
                        comment = true;
                        continue;
                    }
                    b'\\' => escaped = true,
                    b'"' | b'\'' => {
                        start += 1;
                        quote = Some(ch);
                    }
                    b'$' => variable = true,
                    _ => {}
                }
                last_space = false;
                word.start = self.pos - 1;
                word.line = self.line;
                continue;
            }

            if ch == b'{' && variable {
                continue;
            }
            variable = false;
            match ch {
                b'\\' => {
                    escaped = true;
                    continue;
                }
                b'$' => {
                    variable = true;
                    continue;
                }
                _ => {}
            }
            let found = match quote {
                Some(q) if ch == q => {
                    quote = None;
                    need_space = true;
                    self.pos
                }
                Some(_) => continue,
                None if is_space(ch) || ch == b';' || ch == b'{' => {
                    last_space = true;
                    self.pos - 1
                }
                None => continue,
            };
            word.end = found;
            words.push(word);
            match ch {
                b';' => return Ok(End::Semicolon(self.pos - 1)),
                b'{' => return Ok(End::BlockStart(self.pos - 1)),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn statement(input: &[u8]) -> Result<(Vec<&[u8]>, End), ErrorKind> {
        let mut lexer = Lexer::new(input);
        let mut words = Vec::new();
        let end = lexer.statement(&mut words).map_err(|e| e.kind().clone())?;
        Ok((words.iter().map(|w| &input[w.start..w.end]).collect(), end))
    }

    #[test]
    fn whitespace_is_only_sp_tab_cr_lf() {
        // ngx_conf_file.c: only ' ', '\t', CR and LF separate words; FF and VT are bytes.
        assert_eq!(
            statement(b"return\x0c200;"),
            Ok((vec![&b"return\x0c200"[..]], End::Semicolon(10)))
        );
        assert_eq!(
            statement(b"a\r\n\tb ;"),
            Ok((vec![&b"a"[..], b"b"], End::Semicolon(6)))
        );
    }

    #[test]
    fn brace_hash_quote_inside_a_word_are_ordinary() {
        assert_eq!(statement(b"a}b;").unwrap().0, vec![&b"a}b"[..]]);
        assert_eq!(statement(b"a#b;").unwrap().0, vec![&b"a#b"[..]]);
        assert_eq!(statement(b"a\"b\"c;").unwrap().0, vec![&b"a\"b\"c"[..]]);
    }

    #[test]
    fn dollar_brace_does_not_end_a_word() {
        assert_eq!(statement(b"a${b}c;").unwrap().0, vec![&b"a${b}c"[..]]);
        assert_eq!(
            statement(b"return 200 $a{b};"),
            Ok((vec![&b"return"[..], b"200", b"$a"], End::BlockStart(13)))
        );
    }

    #[test]
    fn after_a_closing_quote_only_space_semicolon_brace_or_paren() {
        assert_eq!(statement(b"\"a\"b;"), Err(ErrorKind::Unexpected(b'b')));
        assert_eq!(statement(b"\"x\"#c\n;"), Err(ErrorKind::Unexpected(b'#')));
        assert_eq!(
            statement(b"if ($x = \"a\") {"),
            Ok((
                vec![&b"if"[..], b"($x", b"=", b"\"a\"", b")"],
                End::BlockStart(14)
            ))
        );
    }

    #[test]
    fn backslash_protects_the_next_byte() {
        assert_eq!(statement(b"a\\ b\\;c;").unwrap().0, vec![&b"a\\ b\\;c"[..]]);
        assert_eq!(
            statement(b"\"a\\\"b\";").unwrap().0,
            vec![&b"\"a\\\"b\""[..]]
        );
    }

    #[test]
    fn stray_terminators_are_unexpected() {
        assert_eq!(statement(b";"), Err(ErrorKind::Unexpected(b';')));
        assert_eq!(statement(b"{"), Err(ErrorKind::Unexpected(b'{')));
        assert_eq!(statement(b"a }"), Err(ErrorKind::Unexpected(b'}')));
        assert_eq!(statement(b" }"), Ok((vec![], End::BlockDone(1))));
    }

    #[test]
    fn end_of_file_inside_a_statement() {
        assert_eq!(statement(b"a"), Err(ErrorKind::UnexpectedEof));
        assert_eq!(statement(b"\"a"), Err(ErrorKind::UnexpectedEof));
        assert_eq!(statement(b"# only a comment"), Ok((vec![], End::FileDone)));
    }

    #[test]
    fn words_and_comments_must_fit_the_4096_byte_buffer() {
        let mut long = vec![b'x'; 5000];
        long.push(b';');
        assert_eq!(
            statement(&long),
            Err(ErrorKind::TooLongParameter(b"xxxxxxxxxx".to_vec()))
        );
        let mut quoted = vec![b'"'; 1];
        quoted.extend(vec![b'x'; 5000]);
        assert_eq!(statement(&quoted), Err(ErrorKind::TooLongQuoted(b'"')));
        let mut comment = vec![b'#'; 1];
        comment.extend(vec![b'c'; 5000]);
        comment.extend(b"\na;");
        assert_eq!(
            statement(&comment),
            Err(ErrorKind::TooLongParameter(b"#ccccccccc".to_vec()))
        );
        let mut fits = vec![b'x'; 4000];
        fits.push(b';');
        assert!(statement(&fits).is_ok());
    }
}
