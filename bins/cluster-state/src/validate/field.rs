//! The error type of validation, field paths, and the API server's message forms.
//!
//! Messages take the forms an operator knows from `kubectl` (`Required value`, `Invalid value:
//! "VALUE": WHY`, …). Every value and map key taken from the object is printed escaped (a line
//! break becomes `\n`) and cut after [`MAX_SHOWN_CHARS`] characters, so that a hostile value
//! can neither forge a log line nor flood one.

use std::fmt;

/// How many characters of a value a message shows before cutting it with `…`.
const MAX_SHOWN_CHARS: usize = 64;

/// One field's error.
///
/// Displays as `FIELD: MESSAGE`, for example
/// `spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field's path in the object, as the API server writes it (`spec.ports[0].name`,
    /// `metadata.labels`, `data[tls.crt]`); empty when the error is about the whole object.
    pub field: String,
    /// What is wrong, one printable line in the API server's form.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

/// Why an object is invalid: every field error, in the order the API server lists them.
///
/// Displays as its errors joined by `; `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The field errors, never empty.
    pub errors: Vec<FieldError>,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, error) in self.errors.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Invalid {}

/// `value` escaped as Rust's `{:?}` escapes a string's characters (no quotes), cut after
/// [`MAX_SHOWN_CHARS`] characters with `…`.
pub(super) fn escaped(value: &str) -> String {
    let mut shown = String::new();
    for (count, c) in value.chars().enumerate() {
        if count == MAX_SHOWN_CHARS {
            shown.push('…');
            break;
        }
        shown.extend(c.escape_debug());
    }
    shown
}

/// `value` quoted for a message: `"…"`, escaped and cut as [`escaped`] does.
pub(super) fn quoted(value: &str) -> String {
    format!("\"{}\"", escaped(value))
}

/// The path of the element `index` of the list at `path`: `path[index]`.
pub(super) fn index(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

/// The path of the entry `key` of the map at `path`: `path[key]`, the key escaped.
pub(super) fn key(path: &str, key: &str) -> String {
    format!("{path}[{}]", escaped(key))
}

/// The field errors found so far in one object, with constructors in the API server's forms.
#[derive(Debug, Default)]
pub(super) struct Errors(Vec<FieldError>);

impl Errors {
    fn push(&mut self, field: &str, message: String) {
        self.0.push(FieldError {
            field: field.to_owned(),
            message,
        });
    }

    /// `Required value`, with `detail` when it is not empty.
    pub(super) fn required(&mut self, field: &str, detail: &str) {
        let message = if detail.is_empty() {
            "Required value".to_owned()
        } else {
            format!("Required value: {detail}")
        };
        self.push(field, message);
    }

    /// `Invalid value: "VALUE": WHY`.
    pub(super) fn invalid(&mut self, field: &str, value: &str, why: &str) {
        self.push(field, format!("Invalid value: {}: {why}", quoted(value)));
    }

    /// `Invalid value: NUMBER: WHY`.
    pub(super) fn invalid_number(&mut self, field: &str, value: i64, why: &str) {
        self.push(field, format!("Invalid value: {value}: {why}"));
    }

    /// `Unsupported value: "VALUE": supported values: "A", "B"`.
    pub(super) fn unsupported(&mut self, field: &str, value: &str, supported: &[&str]) {
        let supported: Vec<String> = supported.iter().map(|s| format!("\"{s}\"")).collect();
        let message = format!(
            "Unsupported value: {}: supported values: {}",
            quoted(value),
            supported.join(", ")
        );
        self.push(field, message);
    }

    /// `Duplicate value: "VALUE"`.
    pub(super) fn duplicate(&mut self, field: &str, value: &str) {
        self.push(field, format!("Duplicate value: {}", quoted(value)));
    }

    /// `Too long: may not be more than MAX bytes`.
    pub(super) fn too_long(&mut self, field: &str, max: usize) {
        self.push(field, format!("Too long: may not be more than {max} bytes"));
    }

    /// `Too many: ACTUAL: must have at most MAX items`.
    pub(super) fn too_many(&mut self, field: &str, actual: usize, max: usize) {
        let message = format!("Too many: {actual}: must have at most {max} items");
        self.push(field, message);
    }

    /// `Forbidden: WHY`.
    pub(super) fn forbidden(&mut self, field: &str, why: &str) {
        self.push(field, format!("Forbidden: {why}"));
    }

    /// Every message of a name or format check (`messages`) as `Invalid value` of `value`.
    pub(super) fn invalid_each(&mut self, field: &str, value: &str, messages: Vec<String>) {
        for message in messages {
            self.invalid(field, value, &message);
        }
    }

    /// The errors as the result of a validation.
    pub(super) fn finish(self) -> Result<(), Invalid> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(Invalid { errors: self.0 })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_and_cut() {
        assert_eq!(quoted("a\nb\"c"), r#""a\nb\"c""#);
        assert_eq!(quoted("\u{1b}[31m\r\t\0"), r#""\u{1b}[31m\r\t\0""#);
        let long = "x".repeat(100);
        assert_eq!(quoted(&long), format!("\"{}…\"", "x".repeat(64)));
        assert_eq!(key("data", "a\nb"), r"data[a\nb]");
    }

    #[test]
    fn displays_as_the_api_server_lists_errors() {
        let mut errors = Errors::default();
        errors.required("spec.ports", "");
        errors.invalid_number(
            "spec.ports[0].port",
            0,
            "must be between 1 and 65535, inclusive",
        );
        errors.unsupported("spec.ports[0].protocol", "HTTP", &["SCTP", "TCP", "UDP"]);
        let invalid = errors.finish().unwrap_err();
        assert_eq!(
            invalid.to_string(),
            "spec.ports: Required value; \
             spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive; \
             spec.ports[0].protocol: Unsupported value: \"HTTP\": supported values: \
             \"SCTP\", \"TCP\", \"UDP\""
        );
        assert_eq!(Errors::default().finish(), Ok(()));
    }
}
