//! The emitter: writes a [`SyntaxTree`] as Corefile text (`docs/corefile.md` §7), and the
//! canonical formatter built on it.
//!
//! Output: keys separated by spaces, `{` at the end of the key or directive line, every
//! closing `}` on its own line, one level of indentation per block, comments kept, runs of
//! blank lines collapsed to one. A value is quoted only when it must be; a value that no
//! quoting can carry through CoreDNS's lexer is an error, never silently altered.

use alloc::borrow::Cow;
use alloc::string::String;
use core::fmt;

use crate::syntax::{self, Block, Entry, Item, Line, MAX_DEPTH, Part, SyntaxTree, Word};
use crate::view;

/// How to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmitOptions<'a> {
    /// One level of indentation.
    pub indent: &'a str,
    /// Allow `{$NAME}` / `{%NAME%}` in values. CoreDNS substitutes them in any value, quoted
    /// or not, so text containing one cannot be written literally; the formatter allows them
    /// because they were references in its input.
    pub allow_env_references: bool,
}

impl Default for EmitOptions<'_> {
    fn default() -> Self {
        EmitOptions {
            indent: "    ",
            allow_env_references: false,
        }
    }
}

/// A tree that cannot be written as a Corefile that reads back the same.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmitError {
    /// A value is exactly `{` or `}`, which CoreDNS would read as a brace.
    BraceValue(String),
    /// A value ends in, or has before a `"`, an odd run of backslashes: no quoting keeps it.
    Unquotable(String),
    /// A value contains an environment reference and [`EmitOptions::allow_env_references`]
    /// is off.
    EnvReference(String),
    /// A comment does not start with `#` or spans lines.
    BadComment(String),
    /// A server block has no key.
    NoKeys,
    /// Blocks nest deeper than [`MAX_DEPTH`].
    TooDeep,
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BraceValue(v) => write!(f, "the value '{v}' would be read as a brace"),
            Self::Unquotable(v) => write!(
                f,
                "the value {v:?} needs quotes but ends in (or has before a quote) an odd run of \
                 backslashes, which CoreDNS's quoting cannot carry"
            ),
            Self::EnvReference(v) => write!(
                f,
                "the value {v:?} contains an environment reference that CoreDNS would substitute"
            ),
            Self::BadComment(c) => write!(
                f,
                "the comment {c:?} must start with '#' and fit on one line"
            ),
            Self::NoKeys => f.write_str("a server block needs at least one key"),
            Self::TooDeep => write!(f, "blocks nest deeper than {MAX_DEPTH} levels"),
        }
    }
}

impl core::error::Error for EmitError {}

/// Why formatting failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormatError {
    /// CoreDNS's parser rejects the input.
    Parse(crate::ParseError),
    /// The tree could not be built.
    Syntax(syntax::SyntaxError),
    /// A value cannot be written back.
    Emit(EmitError),
    /// The canonical layout would change what CoreDNS reads.
    NotPreserved,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Parse(e) => e.fmt(f),
            Self::Syntax(e) => e.fmt(f),
            Self::Emit(e) => e.fmt(f),
            Self::NotPreserved => f.write_str(
                "the input relies on a layout the canonical form cannot keep \
                 (e.g. a key `import` after a block's `}` on the same line)",
            ),
        }
    }
}

impl core::error::Error for FormatError {}

/// Formats a Corefile canonically. The input must parse (any directive name is accepted);
/// the output parses to the same server blocks, directives and token texts.
///
/// The output is checked: if it would not read back the same (a layout quirk the canonical
/// form cannot express, such as a key `import` on the line of the previous block's `}`), the
/// result is [`FormatError::NotPreserved`] rather than altered text.
pub fn format(input: &[u8]) -> Result<String, FormatError> {
    let before = view::parse_any_directive(input, "Corefile").map_err(FormatError::Parse)?;
    let tree = syntax::parse_tree(input).map_err(FormatError::Syntax)?;
    let options = EmitOptions {
        allow_env_references: true,
        ..EmitOptions::default()
    };
    let text = emit(&tree, &options).map_err(FormatError::Emit)?;
    match view::parse_any_directive(text.as_bytes(), "Corefile") {
        Ok(after) if view::same_meaning(&before, &after) => Ok(text),
        _ => Err(FormatError::NotPreserved),
    }
}

/// Writes `tree` as Corefile text.
pub fn emit(tree: &SyntaxTree, options: &EmitOptions<'_>) -> Result<String, EmitError> {
    let mut w = Writer {
        out: String::new(),
        options,
    };
    let mut blank_pending = false;
    for item in &tree.items {
        match item {
            Item::BlankLine => blank_pending = !w.out.is_empty(),
            Item::Comment(text) => {
                w.blank(&mut blank_pending);
                w.comment_line(0, text)?;
            }
            Item::Block(block) => {
                w.blank(&mut blank_pending);
                w.block(block)?;
            }
        }
    }
    Ok(w.out)
}

struct Writer<'o, 'a> {
    out: String,
    options: &'o EmitOptions<'a>,
}

impl Writer<'_, '_> {
    fn blank(&mut self, pending: &mut bool) {
        if core::mem::take(pending) {
            self.out.push('\n');
        }
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str(self.options.indent);
        }
    }

    fn comment_line(&mut self, depth: usize, text: &str) -> Result<(), EmitError> {
        check_comment(text)?;
        self.indent(depth);
        self.out.push_str(text);
        self.out.push('\n');
        Ok(())
    }

    fn trailing_comment(&mut self, comment: Option<&String>) -> Result<(), EmitError> {
        if let Some(text) = comment {
            check_comment(text)?;
            self.out.push(' ');
            self.out.push_str(text);
        }
        self.out.push('\n');
        Ok(())
    }

    fn word(&mut self, word: &Word) -> Result<(), EmitError> {
        let text = render_value(&word.text, self.options.allow_env_references)?;
        self.out.push_str(&text);
        Ok(())
    }

    fn block(&mut self, block: &Block) -> Result<(), EmitError> {
        if block.keys.is_empty() {
            return Err(EmitError::NoKeys);
        }
        for (i, key) in block.keys.iter().enumerate() {
            if i > 0 {
                self.out.push(' ');
            }
            self.word(key)?;
        }
        match &block.body {
            None => self.trailing_comment(block.comment.as_ref()),
            Some(entries) => {
                self.out.push_str(" {");
                self.trailing_comment(block.comment.as_ref())?;
                self.entries(entries, 1)?;
                self.out.push_str("}\n");
                Ok(())
            }
        }
    }

    fn entries(&mut self, entries: &[Entry], depth: usize) -> Result<(), EmitError> {
        if depth > MAX_DEPTH + 1 {
            return Err(EmitError::TooDeep);
        }
        let mut blank_pending = false;
        for entry in entries {
            match entry {
                Entry::BlankLine => blank_pending = true,
                Entry::Comment(text) => {
                    self.blank(&mut blank_pending);
                    self.comment_line(depth, text)?;
                }
                Entry::Line(line) => {
                    self.blank(&mut blank_pending);
                    self.line(line, depth)?;
                }
            }
        }
        Ok(())
    }

    fn line(&mut self, line: &Line, depth: usize) -> Result<(), EmitError> {
        self.indent(depth);
        let mut at_start = true;
        for part in &line.parts {
            if !at_start {
                self.out.push(' ');
            }
            at_start = false;
            match part {
                Part::Word(word) => self.word(word)?,
                Part::Block(entries) => {
                    self.out.push_str("{\n");
                    self.entries(entries, depth + 1)?;
                    self.indent(depth);
                    self.out.push('}');
                }
            }
        }
        self.trailing_comment(line.comment.as_ref())
    }
}

fn check_comment(text: &str) -> Result<(), EmitError> {
    if text.starts_with('#') && !text.contains(['\n', '\r']) {
        Ok(())
    } else {
        Err(EmitError::BadComment(String::from(text)))
    }
}

/// Whether `text` contains a `{$NAME}` or `{%NAME%}` reference CoreDNS would substitute.
pub fn has_env_reference(text: &str) -> bool {
    let refers = |start: &str, end: &str| {
        text.match_indices(start).any(|(i, _)| {
            text.get(i + start.len()..)
                .and_then(|rest| rest.find(end))
                .is_some_and(|len| len > 0)
        })
    };
    refers("{%", "%}") || refers("{$", "}")
}

/// Renders one value as a Corefile word: bare when CoreDNS's lexer reads it back unchanged,
/// quoted (with `"` escaped) otherwise, or an error when neither works.
pub fn render_value(text: &str, allow_env_references: bool) -> Result<Cow<'_, str>, EmitError> {
    if text == "{" || text == "}" {
        return Err(EmitError::BraceValue(String::from(text)));
    }
    if !allow_env_references && has_env_reference(text) {
        return Err(EmitError::EnvReference(String::from(text)));
    }
    let needs_quotes = text.is_empty()
        || text.starts_with('"')
        || text.chars().any(|c| c.is_whitespace() || c == '#');
    if !needs_quotes {
        return Ok(Cow::Borrowed(text));
    }
    let mut run = 0usize;
    for c in text.chars() {
        match c {
            '\\' => run += 1,
            '"' if run % 2 == 1 => return Err(EmitError::Unquotable(String::from(text))),
            _ => run = 0,
        }
    }
    if run % 2 == 1 {
        return Err(EmitError::Unquotable(String::from(text)));
    }
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        if c == '"' {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    Ok(Cow::Owned(quoted))
}
