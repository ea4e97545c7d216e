//! A JSON value and a writer that prints it exactly as Python's `json.dumps` does (ASCII only,
//! with `indent` or with crossplane's compact separators), so output can be compared byte for
//! byte with crossplane's.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

/// A JSON value; objects keep their keys in insertion order, as Python dicts do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Json {
    /// `null`.
    Null,
    /// An integer.
    Int(i64),
    /// A string.
    Str(String),
    /// An array.
    Array(Vec<Json>),
    /// An object.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Builds an object from `(key, value)` pairs.
    pub fn object<const N: usize>(pairs: [(&str, Json); N]) -> Self {
        Self::Object(
            pairs
                .into_iter()
                .map(|(k, v)| (String::from(k), v))
                .collect(),
        )
    }

    /// The value of `key` in an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Self::Object(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Prints the value as `json.dumps(value, indent=indent)` does; without `indent`, with the
    /// separators `(',', ':')` that crossplane's CLI uses.
    pub fn to_python_string(&self, indent: Option<usize>) -> String {
        let mut out = String::new();
        self.write(&mut out, indent, 0);
        out
    }

    fn write(&self, out: &mut String, indent: Option<usize>, depth: usize) {
        match self {
            Self::Null => out.push_str("null"),
            Self::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Self::Str(s) => write_str(out, s),
            Self::Array(items) => {
                write_seq(out, indent, depth, '[', ']', items, |out, item, depth| {
                    item.write(out, indent, depth);
                });
            }
            Self::Object(pairs) => {
                write_seq(out, indent, depth, '{', '}', pairs, |out, (k, v), depth| {
                    write_str(out, k);
                    out.push_str(if indent.is_some() { ": " } else { ":" });
                    v.write(out, indent, depth);
                });
            }
        }
    }
}

fn newline(out: &mut String, indent: Option<usize>, depth: usize) {
    if let Some(width) = indent {
        out.push('\n');
        for _ in 0..width * depth {
            out.push(' ');
        }
    }
}

fn write_seq<T>(
    out: &mut String,
    indent: Option<usize>,
    depth: usize,
    open: char,
    close: char,
    items: &[T],
    mut each: impl FnMut(&mut String, &T, usize),
) {
    out.push(open);
    if items.is_empty() {
        out.push(close);
        return;
    }
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline(out, indent, depth + 1);
        each(out, item, depth + 1);
    }
    newline(out, indent, depth);
    out.push(close);
}

/// A string with Python's `ensure_ascii` escapes.
fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_json_dumps_layout() {
        let value = Json::object([
            ("a", Json::Array(alloc::vec![Json::Int(1), Json::Null])),
            ("b", Json::Array(Vec::new())),
            ("c", Json::Str(String::from("é\u{1F600}\"\\\n\u{1}\u{7f}"))),
        ]);
        assert_eq!(
            value.to_python_string(None),
            r#"{"a":[1,null],"b":[],"c":"\u00e9\ud83d\ude00\"\\\n\u0001\u007f"}"#
        );
        assert_eq!(
            value.to_python_string(Some(1)),
            "{\n \"a\": [\n  1,\n  null\n ],\n \"b\": [],\n \"c\": \"\\u00e9\\ud83d\\ude00\\\"\\\\\\n\\u0001\\u007f\"\n}"
        );
    }
}
