//! JSON string literals written the way Go's `encoding/json` writes them.

use core::fmt;

/// Whether `c` must be escaped: JSON's rules, plus `<`, `>`, `&`, U+2028 and U+2029, which Go
/// escapes for HTML and JavaScript safety (both forms decode the same).
fn needs_escape(c: char) -> bool {
    matches!(
        c,
        '"' | '\\' | '\0'..='\x1f' | '<' | '>' | '&' | '\u{2028}' | '\u{2029}'
    )
}

/// Writes `value` as a JSON string literal.
pub(crate) fn write_string(out: &mut impl fmt::Write, value: &str) -> fmt::Result {
    out.write_char('"')?;
    let mut rest = value;
    while let Some(at) = rest.find(needs_escape) {
        out.write_str(rest.get(..at).unwrap_or_default())?;
        let mut tail = rest.get(at..).unwrap_or_default().chars();
        match tail.next() {
            Some('"') => out.write_str("\\\"")?,
            Some('\\') => out.write_str("\\\\")?,
            Some('\n') => out.write_str("\\n")?,
            Some('\r') => out.write_str("\\r")?,
            Some('\t') => out.write_str("\\t")?,
            Some(c) => write!(out, "\\u{:04x}", u32::from(c))?,
            None => {}
        }
        rest = tail.as_str();
    }
    out.write_str(rest)?;
    out.write_char('"')
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::{String, ToString};

    #[test]
    fn written_strings_read_back() {
        let original = "a\"\\\n\u{1}<é>\u{2028}";
        let mut out = String::new();
        write_string(&mut out, original).unwrap();
        assert_eq!(out, r#""a\"\\\n\u0001\u003cé\u003e\u2028""#);
        assert_eq!(
            crate::json::parse(&out).unwrap().value,
            crate::json::Value::String(original.to_string())
        );
    }
}
