//! Why a manifest file was rejected, and where.

use std::fmt;
use std::path::PathBuf;

/// A line and column in a manifest file, both counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// The line, from 1.
    pub line: u64,
    /// The column (in characters), from 1.
    pub column: u64,
}

/// A manifest file that could not be read or parsed; the objects of its last good version stay.
///
/// Displays as `PATH:LINE:COLUMN: FIELD: MESSAGE`, the position and field when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// The file.
    pub path: PathBuf,
    /// Where in the file, when known.
    pub position: Option<Position>,
    /// The field's path (`spec.ports[0].port`), empty when the error is not about one field.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl ManifestError {
    /// An error about the whole file (it cannot be read, it is not UTF-8, …).
    pub(crate) fn file(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            position: None,
            field: String::new(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(Position { line, column }) = self.position {
            write!(f, ":{line}:{column}")?;
        }
        if !self.field.is_empty() {
            write!(f, ": {}", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ManifestError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_like_a_compiler() {
        let error = ManifestError {
            path: "dir/svc.yaml".into(),
            position: Some(Position {
                line: 12,
                column: 13,
            }),
            field: "spec.ports[0].port".into(),
            message: "invalid type: string \"http\", expected i32".into(),
        };
        assert_eq!(
            error.to_string(),
            "dir/svc.yaml:12:13: spec.ports[0].port: invalid type: string \"http\", expected i32"
        );
        let unreadable = ManifestError::file("x.yaml", "not UTF-8");
        assert_eq!(unreadable.to_string(), "x.yaml: not UTF-8");
    }
}
