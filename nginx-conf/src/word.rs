//! Words: how nginx spells an argument and what value it reads from that spelling.

use crate::error::EmitError;
use crate::lexer::{End, Lexer};
use crate::small::SmallBytes;
use alloc::borrow::Cow;
use alloc::vec::Vec;
use core::fmt;

/// Longest spelling the emitter writes. nginx keeps a word and the byte after it in its
/// 4096-byte buffer, so 4094 bytes is the most that reads back wherever the word falls.
pub const MAX_WORD: usize = 4094;

/// How a word is quoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quote {
    /// Bare.
    None,
    /// `"..."`.
    Double,
    /// `'...'`.
    Single,
}

/// One word of a statement, kept as written (quotes and backslashes included).
///
/// [`Word::value`] decodes it as nginx does. A `Word` always holds exactly one nginx word: the
/// parser produces them from input, [`Word::new`] quotes a value safely, and
/// [`Word::from_spelling`] checks a hand-written spelling.
#[derive(Clone, PartialEq, Eq)]
pub struct Word {
    raw: SmallBytes,
}

/// Whether `value` may be written bare: it reads back as itself and cannot be mistaken for
/// anything but one word. A final `$` is quoted too: a `{` right after it would not end the
/// word (`${`).
fn bare_is_safe(value: &[u8]) -> bool {
    match value.first() {
        None | Some(b'"' | b'\'' | b'#') => false,
        Some(_) if value.ends_with(b"$") => false,
        Some(_) => !value
            .iter()
            .any(|&b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b';' | b'{' | b'}' | b'\\')),
    }
}

/// Decodes a spelling as `ngx_conf_read_token` does after collecting a word: the quotes go,
/// `\"`, `\'` and `\\` lose their backslash, `\t`, `\r`, `\n` become TAB, CR, LF, and any other
/// `\X` stays as the two bytes.
fn decode(raw: &[u8]) -> Cow<'_, [u8]> {
    let inner = match raw {
        [q @ (b'"' | b'\''), inner @ .., last] if last == q => inner,
        _ => raw,
    };
    if !inner.contains(&b'\\') {
        return Cow::Borrowed(inner);
    }
    let mut out = Vec::with_capacity(inner.len());
    let mut bytes = inner.iter();
    while let Some(&b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.clone().next() {
            Some(&c @ (b'"' | b'\'' | b'\\')) => {
                out.push(c);
                bytes.next();
            }
            Some(b't') => {
                out.push(b'\t');
                bytes.next();
            }
            Some(b'r') => {
                out.push(b'\r');
                bytes.next();
            }
            Some(b'n') => {
                out.push(b'\n');
                bytes.next();
            }
            _ => out.push(b),
        }
    }
    Cow::Owned(out)
}

impl Word {
    pub(crate) fn from_raw(raw: &[u8]) -> Self {
        Self {
            raw: SmallBytes::new(raw),
        }
    }

    /// The word `input[start..end]` of a parsed file.
    pub(crate) fn from_input(input: &[u8], start: usize, end: usize) -> Self {
        Self {
            raw: SmallBytes::from_input(input, start, end),
        }
    }

    /// A word whose value is `value`, written bare when that is safe and double-quoted
    /// otherwise (`"` and `\` escaped). Whatever the bytes (`;`, braces, quotes, `#`, newlines),
    /// the word reads back as exactly one word with exactly this value.
    ///
    /// `$` is kept: nginx expands variables in many directives, and `$` has no escape. Use
    /// [`Word::literal`] for text that must not expand.
    ///
    /// # Errors
    ///
    /// [`EmitError::Nul`] for a NUL byte, [`EmitError::TooLong`] when the spelling would exceed
    /// [`MAX_WORD`] bytes.
    pub fn new(value: impl AsRef<[u8]>) -> Result<Self, EmitError> {
        let value = value.as_ref();
        if value.contains(&0) {
            return Err(EmitError::Nul);
        }
        let word = if bare_is_safe(value) {
            Self::from_raw(value)
        } else {
            let mut raw = Vec::with_capacity(value.len() + 2);
            raw.push(b'"');
            for &b in value {
                if b == b'"' || b == b'\\' {
                    raw.push(b'\\');
                }
                raw.push(b);
            }
            raw.push(b'"');
            Self {
                raw: SmallBytes::from(raw),
            }
        };
        if word.raw.len() > MAX_WORD {
            return Err(EmitError::TooLong(word.raw.len()));
        }
        Ok(word)
    }

    /// Like [`Word::new`], but refuses `$` so that nginx cannot expand a variable in the value.
    ///
    /// # Errors
    ///
    /// [`EmitError::Dollar`] if `value` contains `$`, and the errors of [`Word::new`].
    pub fn literal(value: impl AsRef<[u8]>) -> Result<Self, EmitError> {
        let value = value.as_ref();
        if value.contains(&b'$') {
            return Err(EmitError::Dollar);
        }
        Self::new(value)
    }

    /// A word written exactly as `spelling` (for example `'single quoted'` or `a\ b`), after
    /// checking that nginx reads it as exactly one word.
    ///
    /// # Errors
    ///
    /// [`EmitError::NotOneWord`] if it is not one word, [`EmitError::Nul`] or
    /// [`EmitError::TooLong`] as for [`Word::new`].
    pub fn from_spelling(spelling: impl AsRef<[u8]>) -> Result<Self, EmitError> {
        let spelling = spelling.as_ref();
        if spelling.contains(&0) {
            return Err(EmitError::Nul);
        }
        if spelling.len() > MAX_WORD {
            return Err(EmitError::TooLong(spelling.len()));
        }
        let mut text = Vec::with_capacity(spelling.len() + 1);
        text.extend_from_slice(spelling);
        text.push(b';');
        let mut words = Vec::new();
        match Lexer::new(&text).statement(&mut words) {
            Ok(End::Semicolon(at))
                if at == spelling.len()
                    && matches!(words.as_slice(), [w] if w.start == 0 && w.end == spelling.len()) =>
            {
                Ok(Self::from_raw(spelling))
            }
            _ => Err(EmitError::NotOneWord),
        }
    }

    /// The word as written, quotes and backslashes included.
    pub fn spelling(&self) -> &[u8] {
        &self.raw
    }

    /// The value nginx reads: quotes removed, escapes decoded (see the crate docs).
    pub fn value(&self) -> Cow<'_, [u8]> {
        decode(&self.raw)
    }

    /// Whether a `{` written right after the word would be taken into it (`${`): the word is
    /// bare and ends with an unescaped `$`.
    pub(crate) fn absorbs_brace(&self) -> bool {
        self.quote() == Quote::None
            && self.raw.ends_with(b"$")
            && self
                .raw
                .iter()
                .rev()
                .skip(1)
                .take_while(|&&b| b == b'\\')
                .count()
                % 2
                == 0
    }

    /// How the word is quoted.
    pub fn quote(&self) -> Quote {
        match self.raw.first() {
            Some(b'"') => Quote::Double,
            Some(b'\'') => Quote::Single,
            _ => Quote::None,
        }
    }

    /// The value crossplane 0.5.8 reports: quotes removed, and only the escaped quote
    /// character itself unescaped inside quotes; other escapes stay as written.
    pub fn crossplane_value(&self) -> Cow<'_, [u8]> {
        let quote = match self.quote() {
            Quote::None => return Cow::Borrowed(&self.raw),
            Quote::Double => b'"',
            Quote::Single => b'\'',
        };
        let inner = self.raw.get(1..self.raw.len() - 1).unwrap_or_default();
        if !inner.contains(&b'\\') {
            return Cow::Borrowed(inner);
        }
        let mut out = Vec::with_capacity(inner.len());
        let mut bytes = inner.iter();
        while let Some(&b) = bytes.next() {
            if b != b'\\' {
                out.push(b);
                continue;
            }
            match bytes.next() {
                Some(&c) if c == quote => out.push(c),
                Some(&c) => out.extend_from_slice(&[b, c]),
                None => out.push(b),
            }
        }
        Cow::Owned(out)
    }
}

impl fmt::Debug for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Word({:?})", self.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_follows_ngx_conf_read_token() {
        // ngx_conf_file.c: \" \' \\ lose the backslash, \t \r \n decode, other \X stay.
        assert_eq!(&*decode(br"a\tb\\c\d"), b"a\tb\\c\\d");
        assert_eq!(&*decode(br#""t\tn\nq\"s\\x\d""#), b"t\tn\nq\"s\\x\\d");
        assert_eq!(&*decode(br"'it\'s'"), b"it's");
        assert_eq!(&*decode(br"a\ b"), b"a\\ b");
        assert_eq!(&*decode(br#""""#), b"");
    }

    #[test]
    fn new_quotes_only_when_needed() {
        assert_eq!(Word::new("80").unwrap().spelling(), b"80");
        assert_eq!(Word::new("$host").unwrap().spelling(), b"$host");
        assert_eq!(Word::new("").unwrap().spelling(), b"\"\"");
        assert_eq!(Word::new("a b").unwrap().spelling(), b"\"a b\"");
        assert_eq!(Word::new("^/a{2}$").unwrap().spelling(), b"\"^/a{2}$\"");
        assert_eq!(Word::new("#x").unwrap().spelling(), b"\"#x\"");
        assert_eq!(Word::new(r#"a"\"#).unwrap().spelling(), br#""a\"\\""#);
    }

    #[test]
    fn hostile_values_read_back_exactly() {
        for value in [
            &b"http://x/#;\n}}}ssl_engine foo;"[..],
            b"\\",
            b"\"",
            b"'",
            b"\\t",
            b"a\\\"b",
            b"${x}",
            b"}",
        ] {
            let word = Word::new(value).unwrap();
            assert_eq!(&*word.value(), value);
            assert_eq!(Word::from_spelling(word.spelling()).unwrap(), word);
        }
    }

    #[test]
    fn refusals() {
        assert_eq!(Word::new("a\0b"), Err(EmitError::Nul));
        assert_eq!(
            Word::new(alloc::vec![b'x'; MAX_WORD + 1]),
            Err(EmitError::TooLong(MAX_WORD + 1))
        );
        assert_eq!(Word::literal("$x"), Err(EmitError::Dollar));
        assert_eq!(Word::from_spelling("a b"), Err(EmitError::NotOneWord));
        assert_eq!(Word::from_spelling("\"a\"b"), Err(EmitError::NotOneWord));
        assert_eq!(Word::from_spelling(""), Err(EmitError::NotOneWord));
        assert_eq!(Word::from_spelling("a;"), Err(EmitError::NotOneWord));
    }

    #[test]
    fn crossplane_keeps_escapes_raw() {
        assert_eq!(
            &*Word::from_raw(br#""t\tn\nq\"s\\x\d""#).crossplane_value(),
            br"t\tn\nq"
                .iter()
                .chain(br#""s\\x\d"#)
                .copied()
                .collect::<Vec<u8>>()
                .as_slice()
        );
        assert_eq!(
            &*Word::from_raw(br"\#arg\ 1").crossplane_value(),
            br"\#arg\ 1"
        );
    }
}
