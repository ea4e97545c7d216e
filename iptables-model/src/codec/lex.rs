//! Splitting a line into words the way iptables-restore does.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::ParseErrorKind;

/// A word of a line and its 1-based column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Word<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) column: usize,
}

/// The bytes that end a plain run: blanks, quotes and escapes.
#[allow(clippy::indexing_slicing)] // evaluated at compile time: an error fails the build
const STOP: [bool; 256] = {
    let mut table = [false; 256];
    table[b' ' as usize] = true;
    table[b'\t' as usize] = true;
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Splits `line` at spaces and tabs. A double quote opens or closes a quoted run (which may
/// contain blanks); a backslash takes the next character literally.
pub(crate) fn words<'a>(
    line: &'a str,
    out: &mut Vec<Word<'a>>,
) -> Result<(), (usize, ParseErrorKind)> {
    out.clear();
    // Words without quotes or escapes are borrowed; only the others are rebuilt.
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if let Some(b' ' | b'\t') = bytes.get(i) {
            i += 1;
            continue;
        }
        let start = i;
        // Most words have no quote or escape: skip to the first byte that matters.
        while bytes
            .get(i)
            .is_some_and(|b| !STOP.get(usize::from(*b)).copied().unwrap_or(true))
        {
            i += 1;
        }
        let mut quoted = false;
        let mut plain = true;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'\\' => {
                    plain = false;
                    let escaped = line.get(i + 1..).and_then(|rest| rest.chars().next());
                    let escaped = escaped.ok_or((i + 1, ParseErrorKind::DanglingEscape))?;
                    i += 1 + escaped.len_utf8();
                    continue;
                }
                b'"' => {
                    plain = false;
                    quoted = !quoted;
                }
                b' ' | b'\t' if !quoted => break,
                _ => {}
            }
            i += 1;
        }
        if quoted {
            return Err((line.len(), ParseErrorKind::UnterminatedQuote));
        }
        let raw = line.get(start..i).unwrap_or_default();
        let text = if plain {
            Cow::Borrowed(raw)
        } else {
            Cow::Owned(unquote(raw))
        };
        out.push(Word {
            text,
            column: start + 1,
        });
    }
    Ok(())
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
    use super::*;

    fn split(line: &str) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        words(line, &mut out).unwrap();
        out.into_iter()
            .map(|w| (w.text.into_owned(), w.column))
            .collect()
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
}
