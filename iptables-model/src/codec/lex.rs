//! Splitting a line into words the way iptables-restore does.
//!
//! Almost every word of a real ruleset is either plain (`-A`, `KUBE-SVC-…`) or one double-quoted
//! run without escapes (`"ns1/svc1:p80 cluster IP"`): both are borrowed from the line after one
//! byte scan. Only words that mix quotes and text, or carry backslashes, are rebuilt.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::byte_set;
use super::scan::{below, block_flags, equal, find, line_end};
use crate::error::{Failure, ParseErrorKind, fail};

/// A word of a line and its 1-based column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Word<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) column: usize,
}

/// The bytes that end a quoted run: the closing quote and escapes (and, when lines end at
/// `\n`, the end of the line).
const QUOTED_STOP: [bool; 256] = byte_set(b"\"\\");
const QUOTED_STOP_IN_TEXT: [bool; 256] = byte_set(b"\"\\\n");

/// The end of a quoted run starting at `from`: the first quote or backslash (or `\n`).
fn quoted_end<const TO_NEWLINE: bool>(bytes: &[u8], from: usize) -> usize {
    if TO_NEWLINE {
        let stops = |c| equal(c, b'"') | equal(c, b'\\') | equal(c, b'\n');
        find(bytes, from, stops, &QUOTED_STOP_IN_TEXT)
    } else {
        find(
            bytes,
            from,
            |c| equal(c, b'"') | equal(c, b'\\'),
            &QUOTED_STOP,
        )
    }
}

/// Whether a word ends before `bytes[i]`: at a blank or the end of the line (with
/// `TO_NEWLINE`, a `\n` or the `\r` of a `\r\n` end it too).
fn ends_word<const TO_NEWLINE: bool>(bytes: &[u8], i: usize) -> bool {
    match bytes.get(i) {
        None | Some(b' ' | b'\t') => true,
        Some(b'\n') => TO_NEWLINE,
        Some(b'\r') => TO_NEWLINE && matches!(bytes.get(i + 1), None | Some(b'\n')),
        Some(_) => false,
    }
}

/// The end of the line ending at `newline` (a `\n` or the end of the text) that starts at
/// `from`: before the `\r` of a `\r\n`, as `iptables-restore` reads a line.
fn content_end(bytes: &[u8], from: usize, newline: usize) -> usize {
    if newline > from && bytes.get(newline - 1) == Some(&b'\r') {
        newline - 1
    } else {
        newline
    }
}

/// What a byte the block scan flagged means to the splitter.
enum Flagged {
    /// A space or a tab: the end of a word.
    Blank,
    /// `"` or `\`: the word needs [`quoted_word`].
    Quote,
    /// The end of the line (when lines end at `\n`).
    Newline,
    /// A byte flagged by the mask's approximation (`!`, controls): part of the word.
    Other,
}

impl Flagged {
    /// The class of a flagged byte other than a space.
    #[inline(never)]
    fn of<const TO_NEWLINE: bool>(byte: Option<u8>) -> Self {
        match byte {
            Some(b' ' | b'\t') => Self::Blank,
            Some(b'"' | b'\\') => Self::Quote,
            Some(b'\n') if TO_NEWLINE => Self::Newline,
            _ => Self::Other,
        }
    }
}

/// Splits `line` at spaces and tabs. A double quote opens or closes a quoted run (which may
/// contain blanks); a backslash takes the next character literally.
pub(crate) fn words<'a>(line: &'a str, out: &mut Vec<Word<'a>>) -> Result<(), Failure> {
    split::<false>(line, 0, out).map(|_| ())
}

/// Splits the line of `text` that starts at `from` as [`words`] does, in the same pass that
/// finds where the line ends: returns the index of its `\n` (or the length of `text`). A `\r`
/// before the `\n` is not part of the line; columns count from `from`.
pub(crate) fn line_words<'a>(
    text: &'a str,
    from: usize,
    out: &mut Vec<Word<'a>>,
) -> Result<usize, Failure> {
    split::<true>(text, from, out)
}

/// The one pass behind [`words`] and [`line_words`], a block of 64 bytes at a time: it flags
/// the blanks, quotes, backslashes (and `\n`) of the block in one mask and visits the flagged
/// bytes; a word between two blanks is borrowed as is, a word with a quote or a backslash
/// goes to [`quoted_word`]. Returns where the line ends.
fn split<'a, const TO_NEWLINE: bool>(
    text: &'a str,
    from: usize,
    out: &mut Vec<Word<'a>>,
) -> Result<usize, Failure> {
    out.clear();
    let bytes = text.as_bytes();
    let word = |start: usize, end: usize| Word {
        text: Cow::Borrowed(text.get(start..end).unwrap_or_default()),
        column: start - from + 1,
    };
    // The start of the word being read (equal to the scan position between words).
    let mut start = from;
    let mut at = from;
    'blocks: while at < bytes.len() {
        // Blanks, `"` and `\n` are below `#`; the byte test drops the others (`!`, controls).
        let (mut mask, real) = block_flags(bytes, at, |c| below(c, b'#') | equal(c, b'\\'));
        while mask != 0 {
            let i = at + mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let byte = bytes.get(i).copied();
            // Nearly every flagged byte is a space: one compare, a branch the predictor
            // learns. The other bytes are told apart out of line, so that the compiler does
            // not merge the two tests into a jump through a table on every byte.
            let class = if byte == Some(b' ') {
                Flagged::Blank
            } else {
                Flagged::of::<TO_NEWLINE>(byte)
            };
            match class {
                Flagged::Blank => {
                    if start < i {
                        out.push(word(start, i));
                    }
                    start = i + 1;
                }
                Flagged::Quote => {
                    let (end, text) = quoted_word::<TO_NEWLINE>(text, from, start)?;
                    out.push(Word {
                        text,
                        column: start - from + 1,
                    });
                    start = end;
                    at = end;
                    continue 'blocks;
                }
                Flagged::Newline => {
                    let end = content_end(bytes, from, i);
                    if start < end {
                        out.push(word(start, end));
                    }
                    return Ok(i);
                }
                Flagged::Other => {}
            }
        }
        at += real;
    }
    let end = if TO_NEWLINE {
        content_end(bytes, from, bytes.len())
    } else {
        bytes.len()
    };
    if start < end {
        out.push(word(start, end));
    }
    Ok(bytes.len())
}

/// The word starting at `start` (in the line that starts at `from`) that has a quote or a
/// backslash: its end and its text. `"…"` with no escape, followed by a blank or the end of
/// the line, is the inside, borrowed; any other is rebuilt from the line.
fn quoted_word<const TO_NEWLINE: bool>(
    text: &str,
    from: usize,
    start: usize,
) -> Result<(usize, Cow<'_, str>), Failure> {
    let bytes = text.as_bytes();
    if bytes.get(start) == Some(&b'"') {
        let close = quoted_end::<TO_NEWLINE>(bytes, start + 1);
        if bytes.get(close) == Some(&b'"') && ends_word::<TO_NEWLINE>(bytes, close + 1) {
            return Ok((
                close + 1,
                Cow::Borrowed(text.get(start + 1..close).unwrap_or_default()),
            ));
        }
    }
    let end = if TO_NEWLINE {
        content_end(bytes, from, line_end(bytes, start))
    } else {
        bytes.len()
    };
    let line = text.get(from..end).unwrap_or_default();
    let (word_end, word) = general(line, start - from)?;
    Ok((from + word_end, word))
}

/// The word starting at `start` with quotes and escapes anywhere: its end and its text.
fn general(line: &str, start: usize) -> Result<(usize, Cow<'_, str>), Failure> {
    let bytes = line.as_bytes();
    let mut i = start;
    let mut quoted = false;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => {
                let escaped = line.get(i + 1..).and_then(|rest| rest.chars().next());
                let escaped = escaped.ok_or((i + 1, ParseErrorKind::DanglingEscape))?;
                i += 1 + escaped.len_utf8();
                continue;
            }
            b'"' => quoted = !quoted,
            b' ' | b'\t' if !quoted => break,
            _ => {}
        }
        i += 1;
    }
    if quoted {
        return Err(fail(line.len(), ParseErrorKind::UnterminatedQuote));
    }
    Ok((
        i,
        Cow::Owned(unquote(line.get(start..i).unwrap_or_default())),
    ))
}

/// Removes quotes and escapes from one word (already checked to be well formed).
fn unquote(raw: &str) -> String {
    let mut text = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.extend(chars.next()),
            '"' => {}
            c => text.push(c),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn split(line: &str) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        words(line, &mut out).unwrap();
        out.into_iter()
            .map(|w| (w.text.into_owned(), w.column))
            .collect()
    }

    /// Every word through the general path only (the reference for the borrowed fast paths).
    fn split_general(line: &str) -> Result<Vec<(String, usize)>, Failure> {
        let bytes = line.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            if b == b' ' || b == b'\t' {
                i += 1;
                continue;
            }
            let (end, text) = general(line, i)?;
            out.push((text.into_owned(), i + 1));
            i = end;
        }
        Ok(out)
    }

    #[test]
    fn quotes_group_blanks_and_escapes_are_literal() {
        assert_eq!(
            split("-A X  -j Y"),
            [
                ("-A".into(), 1),
                ("X".into(), 4),
                ("-j".into(), 7),
                ("Y".into(), 10)
            ]
        );
        assert_eq!(
            split(r#"--comment "a b" x"#),
            [
                ("--comment".into(), 1),
                ("a b".into(), 11),
                ("x".into(), 17)
            ]
        );
        assert_eq!(split(r#"--comment "say \"hi\"""#)[1].0, r#"say "hi""#);
        assert_eq!(split(r#"--comment """#)[1].0, "");
        assert_eq!(split(r#"a"b c"d e"#)[0].0, "ab cd");
        assert_eq!(split(r#""a b"c"#)[0].0, "a bc");
        assert_eq!(split("a\\é b")[0].0, "aé");
        let mut out = Vec::new();
        assert!(matches!(
            words("\"open", &mut out).map_err(Failure::into_parts),
            Err((_, ParseErrorKind::UnterminatedQuote))
        ));
        assert!(matches!(
            words("a\\", &mut out).map_err(Failure::into_parts),
            Err((_, ParseErrorKind::DanglingEscape))
        ));
    }

    #[test]
    fn plain_and_simply_quoted_words_are_borrowed() {
        let mut out = Vec::new();
        words(r#"-A KUBE-SVC-X --comment "ns/a cluster IP" -j"#, &mut out).unwrap();
        assert!(out.iter().all(|w| matches!(w.text, Cow::Borrowed(_))));
        assert_eq!(out[3].text, "ns/a cluster IP");
    }

    proptest! {
        /// The borrowed fast paths split exactly as the general path does, errors included:
        /// on mixed short lines, and on long lines of plain words (blocks of 64 bytes, words
        /// across their edges, a short last block).
        #[test]
        fn fast_paths_agree_with_the_general_path(
            line in prop_oneof![
                proptest::string::string_regex(r#"[ a\t"\\é!-]{0,150}"#).unwrap(),
                proptest::string::string_regex(r#"([a-z!-]{1,14}[ \t]{1,3}){0,40}"?[a-z ]{0,9}"?"#).unwrap(),
            ]
        ) {
            let mut out = Vec::new();
            let fast = words(&line, &mut out)
                .map(|()| out.iter().map(|w| (String::from(&*w.text), w.column)).collect::<Vec<_>>());
            prop_assert_eq!(fast, split_general(&line));
        }

        /// Splitting a line where it stands in the text gives what splitting the line alone
        /// gives (without its `\r\n`), errors included, and ends where the line ends.
        #[test]
        fn lines_split_in_place_as_alone(
            text in proptest::string::string_regex(r#"[ a\t"\\\r\né!-]{0,200}"#).unwrap()
        ) {
            let mut from = 0;
            for raw in text.split('\n') {
                let line = raw.strip_suffix('\r').unwrap_or(raw);
                let mut alone = Vec::new();
                let expected = words(line, &mut alone).map(|()| alone);
                let mut in_place = Vec::new();
                let got = line_words(&text, from, &mut in_place).map(|end| (end, in_place));
                match (expected, got) {
                    (Ok(alone), Ok((end, in_place))) => {
                        prop_assert_eq!(end, from + raw.len());
                        prop_assert_eq!(alone, in_place);
                    }
                    (expected, got) => prop_assert_eq!(expected.err(), got.err()),
                }
                from += raw.len() + 1;
            }
        }
    }
}
