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

/// Splits `line` at spaces and tabs. A double quote opens or closes a quoted run (which may
/// contain blanks); a backslash takes the next character literally.
pub(crate) fn words<'a>(
    line: &'a str,
    out: &mut Vec<Word<'a>>,
) -> Result<(), (usize, ParseErrorKind)> {
    out.clear();
    if !line.bytes().any(|b| b == b'"' || b == b'\\') {
        let mut start = None;
        for (i, b) in line
            .bytes()
            .enumerate()
            .chain(core::iter::once((line.len(), b' ')))
        {
            match (b == b' ' || b == b'\t', start) {
                (true, Some(s)) => {
                    out.push(Word {
                        text: Cow::Borrowed(line.get(s..i).unwrap_or_default()),
                        column: s + 1,
                    });
                    start = None;
                }
                (false, None) => start = Some(i),
                _ => {}
            }
        }
        return Ok(());
    }
    let mut current: Option<(String, usize)> = None;
    let mut quoted = false;
    let mut chars = line.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                let (_, next) = chars
                    .next()
                    .ok_or((i + 1, ParseErrorKind::DanglingEscape))?;
                current
                    .get_or_insert_with(|| (String::new(), i + 1))
                    .0
                    .push(next);
            }
            '"' => {
                quoted = !quoted;
                current.get_or_insert_with(|| (String::new(), i + 1));
            }
            ' ' | '\t' if !quoted => {
                if let Some((text, column)) = current.take() {
                    out.push(Word {
                        text: Cow::Owned(text),
                        column,
                    });
                }
            }
            c => current
                .get_or_insert_with(|| (String::new(), i + 1))
                .0
                .push(c),
        }
    }
    if quoted {
        return Err((line.len(), ParseErrorKind::UnterminatedQuote));
    }
    if let Some((text, column)) = current {
        out.push(Word {
            text: Cow::Owned(text),
            column,
        });
    }
    Ok(())
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
