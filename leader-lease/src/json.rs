//! A small JSON reader and writer, just enough for the two record formats.
//!
//! The reader builds a tree of [`Value`]s, each tagged with its byte offset so errors can point
//! at the input. Nesting is limited to [`MAX_DEPTH`] levels (recursion is bounded), and memory
//! grows only with bytes actually read. Duplicate keys: the last one wins, as in Go's
//! `encoding/json`.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{DecodeError, DecodeErrorKind};

pub(crate) use crate::error::MAX_DEPTH;

/// A parsed JSON value and the byte offset where it starts.
#[derive(Debug, PartialEq)]
pub(crate) struct Node<'a> {
    pub(crate) offset: usize,
    pub(crate) value: Value<'a>,
}

/// A JSON value; numbers stay as their source text.
#[derive(Debug, PartialEq)]
pub(crate) enum Value<'a> {
    Null,
    Bool(bool),
    Number(&'a str),
    String(String),
    Array(Vec<Node<'a>>),
    Object(Vec<(String, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// The member `key` of an object (the last one if repeated); `None` for other values.
    pub(crate) fn get(&self, key: &str) -> Option<&Node<'a>> {
        match &self.value {
            Value::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Parses one JSON document (surrounding white space allowed).
pub(crate) fn parse(text: &str) -> Result<Node<'_>, DecodeError> {
    let mut reader = Reader { text, pos: 0 };
    let node = reader.value(0)?;
    reader.skip_space();
    if reader.pos != text.len() {
        return reader.fail(DecodeErrorKind::Syntax("the end of the document"));
    }
    Ok(node)
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Reader<'a> {
    fn fail<T>(&self, kind: DecodeErrorKind) -> Result<T, DecodeError> {
        Err(DecodeError {
            offset: self.pos,
            kind,
        })
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), DecodeError> {
        self.skip_space();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            self.fail(DecodeErrorKind::Syntax(what))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node<'a>, DecodeError> {
        self.skip_space();
        let offset = self.pos;
        let value = match self.peek() {
            Some(b'{' | b'[') if depth >= MAX_DEPTH => return self.fail(DecodeErrorKind::TooDeep),
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Value::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => Value::Number(self.number()?),
            _ => self.literal()?,
        };
        Ok(Node { offset, value })
    }

    fn literal(&mut self) -> Result<Value<'a>, DecodeError> {
        let rest = self.text.get(self.pos..).unwrap_or_default();
        for (word, value) in [
            ("null", Value::Null),
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
        ] {
            if rest.starts_with(word) {
                self.pos += word.len();
                return Ok(value);
            }
        }
        self.fail(DecodeErrorKind::Syntax("a JSON value"))
    }

    fn object(&mut self, depth: usize) -> Result<Value<'a>, DecodeError> {
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return self.fail(DecodeErrorKind::Syntax("a quoted member name"));
            }
            let key = self.string()?;
            self.expect(b':', "':' after the member name")?;
            members.push((key, self.value(depth + 1)?));
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                _ => return self.fail(DecodeErrorKind::Syntax("',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value<'a>, DecodeError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return self.fail(DecodeErrorKind::Syntax("',' or ']'")),
            }
        }
    }

    fn number(&mut self) -> Result<&'a str, DecodeError> {
        let start = self.pos;
        let digits = |r: &mut Self| {
            let from = r.pos;
            while matches!(r.peek(), Some(b'0'..=b'9')) {
                r.pos += 1;
            }
            r.pos > from
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        if !digits(self) {
            return self.fail(DecodeErrorKind::Syntax("a digit"));
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !digits(self) {
                return self.fail(DecodeErrorKind::Syntax("a digit after '.'"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !digits(self) {
                return self.fail(DecodeErrorKind::Syntax("a digit in the exponent"));
            }
        }
        Ok(self.text.get(start..self.pos).unwrap_or_default())
    }

    fn hex4(&mut self) -> Result<u32, DecodeError> {
        let mut value = 0u32;
        for _ in 0..4 {
            let digit = self.peek().and_then(|b| char::from(b).to_digit(16));
            match digit {
                Some(d) => value = value * 16 + d,
                None => return self.fail(DecodeErrorKind::Syntax("four hex digits after \\u")),
            }
            self.pos += 1;
        }
        Ok(value)
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            // Copy the run up to the next quote, escape or control character in one go.
            let rest = self.text.get(self.pos..).unwrap_or_default();
            let run = rest
                .find(|c| matches!(c, '"' | '\\' | '\0'..='\x1f'))
                .unwrap_or(rest.len());
            out.push_str(rest.get(..run).unwrap_or_default());
            self.pos += run;
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    out.push(self.escape()?);
                }
                Some(_) => {
                    return self.fail(DecodeErrorKind::Syntax(
                        "no raw control character in a string",
                    ));
                }
                None => return self.fail(DecodeErrorKind::Syntax("a closing '\"'")),
            }
        }
    }

    fn escape(&mut self) -> Result<char, DecodeError> {
        let simple = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                return self.unicode_escape();
            }
            _ => return self.fail(DecodeErrorKind::Syntax("a valid escape")),
        };
        self.pos += 1;
        Ok(simple)
    }

    /// `\uXXXX`, with surrogate pairs; a lone surrogate becomes U+FFFD, as Go decodes it.
    fn unicode_escape(&mut self) -> Result<char, DecodeError> {
        let first = self.hex4()?;
        if (0xD800..0xDC00).contains(&first)
            && self
                .text
                .get(self.pos..)
                .is_some_and(|r| r.starts_with("\\u"))
        {
            let save = self.pos;
            self.pos += 2;
            let second = self.hex4()?;
            if (0xDC00..0xE000).contains(&second) {
                let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                return Ok(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            self.pos = save;
        }
        Ok(char::from_u32(first).unwrap_or(char::REPLACEMENT_CHARACTER))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn value(text: &str) -> Value<'_> {
        parse(text).unwrap().value
    }

    #[test]
    fn parses_every_kind_of_value() {
        assert_eq!(value(" null "), Value::Null);
        assert_eq!(value("true"), Value::Bool(true));
        assert_eq!(value("-1.5e+3"), Value::Number("-1.5e+3"));
        assert_eq!(
            value(r#""a\"\u00e9\ud83d\ude00\ud800x""#),
            Value::String("a\"é😀\u{fffd}x".to_string())
        );
        assert_eq!(
            value("[1, []]"),
            Value::Array(vec![
                Node {
                    offset: 1,
                    value: Value::Number("1")
                },
                Node {
                    offset: 4,
                    value: Value::Array(vec![])
                },
            ])
        );
    }

    #[test]
    fn last_duplicate_key_wins() {
        let node = parse(r#"{"a":1,"a":2}"#).unwrap();
        assert_eq!(node.get("a").unwrap().value, Value::Number("2"));
        assert!(node.get("b").is_none());
    }

    #[test]
    fn errors_point_at_the_byte() {
        let e = parse(r#"{"a" 1}"#).unwrap_err();
        assert_eq!(
            (e.offset, e.kind),
            (5, DecodeErrorKind::Syntax("':' after the member name"))
        );
        assert_eq!(parse("[1,]").unwrap_err().offset, 3);
        assert_eq!(parse("\"ab").unwrap_err().offset, 3);
        assert_eq!(parse("1 2").unwrap_err().offset, 2);
        assert_eq!(parse("\"\t\"").unwrap_err().offset, 1);
        assert_eq!(parse("-").unwrap_err().offset, 1);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "[".repeat(MAX_DEPTH + 1);
        assert_eq!(
            parse(&deep).unwrap_err(),
            DecodeError {
                offset: MAX_DEPTH,
                kind: DecodeErrorKind::TooDeep
            }
        );
        let ok = alloc::format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
    }
}
