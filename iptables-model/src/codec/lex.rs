//! Splitting a line into words the way iptables-restore does.
//!
//! Almost every word of a real ruleset is either plain (`-A`, `KUBE-SVC-…`) or one double-quoted
//! run without escapes (`"ns1/svc1:p80 cluster IP"`): both are borrowed from the line after one
//! byte scan. Only words that mix quotes and text, or carry backslashes, are rebuilt.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::byte_set;
use super::scan::{below, equal, find};
use crate::error::ParseErrorKind;

/// A word of a line and its 1-based column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Word<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) column: usize,
}

/// The bytes that end a quoted run: the closing quote and escapes.
const QUOTED_STOP: [bool; 256] = byte_set(b"\"\\");

/// The end of a quoted run starting at `from`: the first quote or backslash.
fn quoted_end(bytes: &[u8], from: usize) -> usize {
    find(
        bytes,
        from,
        |c| equal(c, b'"') | equal(c, b'\\'),
        &QUOTED_STOP,
    )
}

fn is_blank(b: Option<&u8>) -> bool {
    matches!(b, None | Some(b' ' | b'\t'))
}

/// The eight bytes at `at` as a little-endian chunk, the missing ones past the end read as
/// `a` (which ends no word), and how many of them are real.
fn chunk_at(bytes: &[u8], at: usize) -> (u64, usize) {
    let rest = bytes.get(at..).unwrap_or_default();
    if let Some(chunk) = rest.first_chunk::<8>() {
        return (u64::from_le_bytes(*chunk), 8);
    }
    let mut padded = [b'a'; 8];
    if let Some(head) = padded.get_mut(..rest.len()) {
        head.copy_from_slice(rest);
    }
    (u64::from_le_bytes(padded), rest.len())
}

/// Splits `line` at spaces and tabs. A double quote opens or closes a quoted run (which may
/// contain blanks); a backslash takes the next character literally.
///
/// One pass eight bytes at a time flags the blanks, quotes and backslashes; a word between
/// two blanks is borrowed as is. A word with a quote or a backslash goes to [`quoted_word`].
pub(crate) fn words<'a>(
    line: &'a str,
    out: &mut Vec<Word<'a>>,
) -> Result<(), (usize, ParseErrorKind)> {
    out.clear();
    let bytes = line.as_bytes();
    // The start of the word being read (equal to the scan position between words).
    let mut start = 0;
    let mut at = 0;
    'chunks: while at < bytes.len() {
        let (chunk, real) = chunk_at(bytes, at);
        // Blanks and `"` are below `#`; the byte test drops the others (`!`, controls).
        let mut mask = below(chunk, b'#') | equal(chunk, b'\\');
        while mask != 0 {
            let i = at + (mask.trailing_zeros() / 8) as usize;
            mask &= mask - 1;
            match bytes.get(i) {
                Some(b' ' | b'\t') => {
                    if start < i {
                        out.push(Word {
                            text: Cow::Borrowed(line.get(start..i).unwrap_or_default()),
                            column: start + 1,
                        });
                    }
                    start = i + 1;
                }
                Some(b'"' | b'\\') => {
                    let (end, text) = quoted_word(line, start)?;
                    out.push(Word {
                        text,
                        column: start + 1,
                    });
                    start = end;
                    at = end;
                    continue 'chunks;
                }
                _ => {}
            }
        }
        at += real;
    }
    if start < bytes.len() {
        out.push(Word {
            text: Cow::Borrowed(line.get(start..).unwrap_or_default()),
            column: start + 1,
        });
    }
    Ok(())
}

/// The word starting at `start` that has a quote or a backslash: its end and its text.
/// `"…"` with no escape, followed by a blank, is the inside, borrowed; any other is rebuilt.
fn quoted_word(line: &str, start: usize) -> Result<(usize, Cow<'_, str>), (usize, ParseErrorKind)> {
    let bytes = line.as_bytes();
    if bytes.get(start) == Some(&b'"') {
        let close = quoted_end(bytes, start + 1);
        if bytes.get(close) == Some(&b'"') && is_blank(bytes.get(close + 1)) {
            return Ok((
                close + 1,
                Cow::Borrowed(line.get(start + 1..close).unwrap_or_default()),
            ));
        }
    }
    general(line, start)
}

/// The word starting at `start` with quotes and escapes anywhere: its end and its text.
fn general(line: &str, start: usize) -> Result<(usize, Cow<'_, str>), (usize, ParseErrorKind)> {
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
        return Err((line.len(), ParseErrorKind::UnterminatedQuote));
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
    fn split_general(line: &str) -> Result<Vec<(String, usize)>, (usize, ParseErrorKind)> {
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
            words("\"open", &mut out),
            Err((_, ParseErrorKind::UnterminatedQuote))
        ));
        assert!(matches!(
            words("a\\", &mut out),
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
        /// The borrowed fast paths split exactly as the general path does, errors included.
        #[test]
        fn fast_paths_agree_with_the_general_path(
            line in proptest::string::string_regex(r#"[ a\t"\\é-]{0,40}"#).unwrap()
        ) {
            let mut out = Vec::new();
            let fast = words(&line, &mut out)
                .map(|()| out.iter().map(|w| (String::from(&*w.text), w.column)).collect::<Vec<_>>());
            prop_assert_eq!(fast, split_general(&line));
        }
    }
}
