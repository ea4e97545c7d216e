//! Trivia: the whitespace and `#` comments between tokens, kept byte for byte.

use crate::error::EmitError;
use crate::lexer::is_space;
use crate::small::SmallBytes;
use core::fmt;

/// Longest comment, `#` included: nginx keeps a comment whole in its 4096-byte buffer.
pub const MAX_COMMENT: usize = 4095;

/// Whitespace (SP, TAB, CR, LF) and `#` comments, exactly as written.
///
/// Every comment ends with a newline, except possibly the last one of a file's trailing trivia
/// (a file may end inside a comment).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Trivia {
    raw: SmallBytes,
}

/// A piece of trivia.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A run of SP, TAB, CR and LF.
    Space(&'a [u8]),
    /// A comment: the bytes after `#`, without the newline that ends it.
    Comment(&'a [u8]),
}

impl Trivia {
    pub(crate) fn from_raw(raw: &[u8]) -> Self {
        Self {
            raw: SmallBytes::new(raw),
        }
    }

    /// The trivia `input[start..end]` of a parsed file.
    pub(crate) fn from_input(input: &[u8], start: usize, end: usize) -> Self {
        Self {
            raw: SmallBytes::from_input(input, start, end),
        }
    }

    /// No trivia at all.
    pub fn empty() -> Self {
        Self::default()
    }

    /// One space.
    pub fn space() -> Self {
        Self::from_raw(b" ")
    }

    /// Checks and wraps `raw`: only whitespace and comments, each comment ending with a newline
    /// and shorter than [`MAX_COMMENT`] bytes.
    ///
    /// # Errors
    ///
    /// [`EmitError::InvalidTrivia`], [`EmitError::TooLong`] or [`EmitError::Nul`].
    pub fn new(raw: impl AsRef<[u8]>) -> Result<Self, EmitError> {
        let raw = raw.as_ref();
        if raw.contains(&0) {
            return Err(EmitError::Nul);
        }
        let trivia = Self::from_raw(raw);
        trivia.check(false)?;
        Ok(trivia)
    }

    /// Trivia holding a single comment line `#text` and a newline. `text` may not contain a
    /// newline.
    ///
    /// # Errors
    ///
    /// As [`Trivia::new`].
    pub fn comment(text: impl AsRef<[u8]>) -> Result<Self, EmitError> {
        let text = text.as_ref();
        if text.contains(&0) {
            return Err(EmitError::Nul);
        }
        let mut raw = alloc::vec::Vec::with_capacity(text.len() + 2);
        raw.push(b'#');
        raw.extend_from_slice(text);
        raw.push(b'\n');
        let trivia = Self {
            raw: SmallBytes::from(raw),
        };
        trivia.check(false)?;
        Ok(trivia)
    }

    /// Verifies the structure (NUL bytes are only refused in new trivia: a parsed comment may
    /// hold them, nginx discards comments); `at_end_of_file` allows a final comment without a
    /// newline.
    pub(crate) fn check(&self, at_end_of_file: bool) -> Result<(), EmitError> {
        let mut rest: &[u8] = &self.raw;
        while let Some((&first, tail)) = rest.split_first() {
            if is_space(first) {
                rest = tail;
                continue;
            }
            if first != b'#' {
                return Err(EmitError::InvalidTrivia);
            }
            let end = tail.iter().position(|&b| b == b'\n');
            let len = end.map_or(tail.len(), |e| e + 1);
            if len > MAX_COMMENT {
                return Err(EmitError::TooLong(len));
            }
            match end {
                Some(e) => rest = tail.get(e + 1..).unwrap_or_default(),
                None if at_end_of_file => return Ok(()),
                None => return Err(EmitError::InvalidTrivia),
            }
        }
        Ok(())
    }

    /// The trivia as written.
    pub fn as_bytes(&self) -> &[u8] {
        &self.raw
    }

    /// Whether there is no trivia at all.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// Whether it begins with whitespace (required after a word, unless a `;` or `{` follows).
    pub(crate) fn starts_with_space(&self) -> bool {
        self.raw.first().is_some_and(|&b| is_space(b))
    }

    /// The whitespace runs and comments, in order.
    pub fn pieces(&self) -> Pieces<'_> {
        Pieces { rest: &self.raw }
    }

    /// The comments, without `#` and newline.
    pub fn comments(&self) -> impl Iterator<Item = &[u8]> {
        self.pieces().filter_map(|p| match p {
            Piece::Comment(text) => Some(text),
            Piece::Space(_) => None,
        })
    }
}

/// Iterator over the [`Piece`]s of a [`Trivia`].
#[derive(Clone, Debug)]
pub struct Pieces<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Pieces<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        let rest = self.rest;
        let first = *rest.first()?;
        if first == b'#' {
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            self.rest = rest.get(end..).unwrap_or_default();
            Some(Piece::Comment(rest.get(1..end).unwrap_or_default()))
        } else {
            let end = rest.iter().position(|&b| b == b'#').unwrap_or(rest.len());
            self.rest = rest.get(end..).unwrap_or_default();
            Some(Piece::Space(rest.get(..end).unwrap_or_default()))
        }
    }
}

impl fmt::Debug for Trivia {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Trivia({:?})", self.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn pieces_split_space_and_comments() {
        let t = Trivia::new(" \n# a\n\t#b\n").unwrap();
        let pieces: Vec<Piece<'_>> = t.pieces().collect();
        assert_eq!(
            pieces,
            [
                Piece::Space(b" \n"),
                Piece::Comment(b" a"),
                Piece::Space(b"\n\t"),
                Piece::Comment(b"b"),
                Piece::Space(b"\n"),
            ]
        );
    }

    #[test]
    fn invariant() {
        assert!(Trivia::new(" x").is_err());
        assert!(Trivia::new("#unterminated").is_err());
        assert!(Trivia::from_raw(b"#end").check(true).is_ok());
        assert!(Trivia::comment("a\nb").is_err());
        assert_eq!(Trivia::comment(" c").unwrap().as_bytes(), b"# c\n");
    }
}
