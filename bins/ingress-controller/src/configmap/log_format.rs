//! `log-format-upstream` as a typed list of fields: literal text and nginx variables. The
//! format is parsed, each variable name checked, and the list written back as one argument of
//! `log_format` (which the emitter quotes), so the key can change what is logged but never
//! become configuration.

use std::fmt;

/// One piece of an access log line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Field {
    /// Text written as it is.
    Literal(String),
    /// An nginx variable (`$name` or `${name}`), by name.
    Variable(String),
}

/// An access log format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogFormat(pub Vec<Field>);

/// Longest format accepted.
const MAX_FORMAT: usize = 4096;
/// Longest variable name accepted.
const MAX_NAME: usize = 64;

impl LogFormat {
    /// Parses a format as nginx reads one: `$name` or `${name}` are variables (names of
    /// letters, digits and `_`), everything else is literal text. Control characters are
    /// refused (a log line is one line).
    ///
    /// # Errors
    ///
    /// What is wrong and where (a byte offset).
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.len() > MAX_FORMAT {
            return Err(format!("longer than {MAX_FORMAT} bytes"));
        }
        if let Some(at) = text.find(|c: char| c.is_control()) {
            return Err(format!("control character at byte {at}"));
        }
        let mut fields = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        let mut offset = 0;
        while let Some(at) = rest.find('$') {
            literal.push_str(rest.get(..at).unwrap_or_default());
            let after = rest.get(at + 1..).unwrap_or_default();
            let (name, used) = match after.strip_prefix('{') {
                Some(braced) => {
                    let end = braced
                        .find('}')
                        .ok_or_else(|| format!("unclosed ${{ at byte {}", offset + at))?;
                    (braced.get(..end).unwrap_or_default(), end + 2)
                }
                None => {
                    let end = after
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(after.len());
                    (after.get(..end).unwrap_or_default(), end)
                }
            };
            let valid = !name.is_empty()
                && name.len() <= MAX_NAME
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !valid {
                return Err(format!(
                    "'$' at byte {} is not followed by a variable name (letters, digits, '_')",
                    offset + at
                ));
            }
            if !literal.is_empty() {
                fields.push(Field::Literal(std::mem::take(&mut literal)));
            }
            fields.push(Field::Variable(name.to_owned()));
            let consumed = at + 1 + used;
            rest = rest.get(consumed..).unwrap_or_default();
            offset += consumed;
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            fields.push(Field::Literal(literal));
        }
        Ok(Self(fields))
    }
}

/// The format as nginx's `log_format` reads it: a variable as `$name`, or as `${name}` where
/// the text that follows would otherwise extend its name.
impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut fields = self.0.iter().peekable();
        while let Some(field) = fields.next() {
            match field {
                Field::Literal(text) => f.write_str(text)?,
                Field::Variable(name) => {
                    let joins = match fields.peek() {
                        Some(Field::Literal(next)) => next
                            .chars()
                            .next()
                            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_'),
                        _ => false,
                    };
                    if joins {
                        write!(f, "${{{name}}}")?;
                    } else {
                        write!(f, "${name}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_round_trip() {
        let format =
            LogFormat::parse("$remote_addr - [${time_local}] \"$request\" $status").unwrap();
        assert_eq!(
            format.0,
            [
                Field::Variable("remote_addr".into()),
                Field::Literal(" - [".into()),
                Field::Variable("time_local".into()),
                Field::Literal("] \"".into()),
                Field::Variable("request".into()),
                Field::Literal("\" ".into()),
                Field::Variable("status".into()),
            ]
        );
        assert_eq!(
            format.to_string(),
            "$remote_addr - [$time_local] \"$request\" $status"
        );
        // Braces stay where the text that follows would extend the name.
        let joined = LogFormat::parse("${status}ms ${status}").unwrap();
        assert_eq!(joined.to_string(), "${status}ms $status");
        // JSON formats are text around variables.
        let json = r#"{"ip": "$remote_addr", "code": $status}"#;
        assert_eq!(LogFormat::parse(json).unwrap().to_string(), json);
    }

    #[test]
    fn refusals() {
        for bad in [
            "$",
            "a $ b",
            "${}",
            "${unclosed",
            "${a b}",
            "line\nbreak",
            "tab\there",
        ] {
            assert!(LogFormat::parse(bad).is_err(), "{bad:?}");
        }
        assert!(LogFormat::parse(&"x".repeat(5000)).is_err());
        // Text that looks like configuration stays text: it is one quoted argument.
        let text = LogFormat::parse("'; include /etc/passwd; $status").unwrap();
        assert_eq!(text.0.len(), 2);
    }
}
