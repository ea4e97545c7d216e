//! The emitter: writes a [`SyntaxTree`] as Corefile text (`docs/corefile.md` §7), and the
//! canonical formatter built on it.
//!
//! Output: keys separated by spaces, `{` at the end of the key or directive line, every
//! closing `}` on its own line, one level of indentation per block, comments kept, runs of
//! blank lines collapsed to one. A value is quoted only when it must be; a value that no
//! quoting can carry through CoreDNS's lexer is an error, never silently altered. So is a
//! value that would keep its text but stand where CoreDNS's parser gives it a meaning of its
//! own (`import` starting a line, a lone `(NAME)` key, a key that is empty or ends in `,`),
//! unless the caller says the tree means exactly that ([`EmitOptions::allow_caddy_syntax`]).

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
    /// Allow the words CoreDNS's parser acts on where they stand: `import` as a block's first
    /// key or a line's first word (the import directive, quoted or not), a block's only key
    /// written `(NAME)` (a snippet definition), and keys that are empty (dropped) or end in
    /// `,` (the comma is taken as a separator). A tree built from data should leave this off,
    /// so that no value becomes an import or a snippet; the formatter turns it on because its
    /// tree was read from Corefile text, where those words already had that meaning.
    pub allow_caddy_syntax: bool,
}

impl Default for EmitOptions<'_> {
    fn default() -> Self {
        EmitOptions {
            indent: "    ",
            allow_env_references: false,
            allow_caddy_syntax: false,
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
    /// A server block key CoreDNS would not keep as written, empty (dropped) or ending in `,`
    /// (read as a separator), and [`EmitOptions::allow_caddy_syntax`] is off.
    AlteredKey(String),
    /// A block's only key has the form `(NAME)`, which CoreDNS reads as a snippet definition,
    /// and [`EmitOptions::allow_caddy_syntax`] is off.
    SnippetKey(String),
    /// A block's first key or a line's first word is `import`, which CoreDNS runs as the
    /// import directive however it is quoted, and [`EmitOptions::allow_caddy_syntax`] is off.
    Import(String),
    /// A block without a body (which CoreDNS reads up to the end of the input) is followed
    /// by another block; the error carries its first key.
    UnbracedBlock(String),
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
            Self::AlteredKey(k) if k.is_empty() => write!(
                f,
                "the server block key {k:?} is empty, and CoreDNS drops empty keys"
            ),
            Self::AlteredKey(k) => write!(
                f,
                "the server block key {k:?} ends in ',', which CoreDNS reads as a separator \
                 (the key loses it and the key list goes on)"
            ),
            Self::SnippetKey(k) => write!(
                f,
                "the key {k:?} is its block's only key and has the form (NAME), so CoreDNS \
                 would read the block as a snippet definition, not a server block"
            ),
            Self::Import(v) => write!(
                f,
                "the value {v:?} starts a key list or a line, where CoreDNS runs it as the \
                 import directive however it is quoted"
            ),
            Self::UnbracedBlock(k) => write!(
                f,
                "the block with the key {k:?} has no body but other blocks follow it, and \
                 CoreDNS would read their keys as its directives"
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
        allow_caddy_syntax: true,
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
    let last_block = tree
        .items
        .iter()
        .rposition(|item| matches!(item, Item::Block(_)));
    let mut blank_pending = false;
    for (i, item) in tree.items.iter().enumerate() {
        match item {
            Item::BlankLine => blank_pending = !w.out.is_empty(),
            Item::Comment(text) => {
                w.blank(&mut blank_pending);
                w.comment_line(0, text)?;
            }
            Item::Block(block) => {
                w.blank(&mut blank_pending);
                w.block(block, Some(i) == last_block)?;
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
        // CoreDNS's lexer drops one U+FEFF at the very start of the text as a byte order
        // mark; behind a quote it is text.
        let must_quote = self.out.is_empty() && word.text.starts_with('\u{feff}');
        let text = render(&word.text, self.options.allow_env_references, must_quote)?;
        self.out.push_str(&text);
        Ok(())
    }

    /// Refuses keys CoreDNS's parser would not read as this block's literal keys (caddy's
    /// `addresses` and the snippet check of `parseOne`).
    fn check_keys(&self, keys: &[Word]) -> Result<(), EmitError> {
        if self.options.allow_caddy_syntax {
            return Ok(());
        }
        if let Some(key) = keys
            .iter()
            .find(|k| k.text.is_empty() || k.text.ends_with(','))
        {
            return Err(EmitError::AlteredKey(key.text.clone()));
        }
        match keys {
            [first, ..] if first.text == IMPORT => Err(EmitError::Import(first.text.clone())),
            [only] if is_snippet_key(&only.text) => Err(EmitError::SnippetKey(only.text.clone())),
            _ => Ok(()),
        }
    }

    /// Writes a block; `last` says whether no block follows it.
    fn block(&mut self, block: &Block, last: bool) -> Result<(), EmitError> {
        let Some(first) = block.keys.first() else {
            return Err(EmitError::NoKeys);
        };
        // Without braces a block runs to the end of the input: the keys of the blocks
        // after it would be read as its directives.
        if block.body.is_none() && !last {
            return Err(EmitError::UnbracedBlock(first.text.clone()));
        }
        self.check_keys(&block.keys)?;
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
        if !self.options.allow_caddy_syntax
            && let Some(name) = line.name().filter(|name| *name == IMPORT)
        {
            return Err(EmitError::Import(String::from(name)));
        }
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

/// The word CoreDNS's parser runs as the import directive at the start of a line.
const IMPORT: &str = "import";

/// Whether `key`, as a block's only key, makes the block a snippet definition.
fn is_snippet_key(key: &str) -> bool {
    key.strip_prefix('(')
        .is_some_and(|rest| rest.ends_with(')'))
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
    render(text, allow_env_references, false)
}

/// [`render_value`], quoting also when `must_quote` says the place needs it.
fn render(
    text: &str,
    allow_env_references: bool,
    must_quote: bool,
) -> Result<Cow<'_, str>, EmitError> {
    if text == "{" || text == "}" {
        return Err(EmitError::BraceValue(String::from(text)));
    }
    if !allow_env_references && has_env_reference(text) {
        return Err(EmitError::EnvReference(String::from(text)));
    }
    let needs_quotes = must_quote
        || text.is_empty()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin_order::PluginOrder;
    use alloc::string::ToString;
    use alloc::vec;
    use alloc::vec::Vec;

    fn block(keys: &[&str], lines: Vec<Line>) -> Item {
        Item::Block(Block {
            keys: keys.iter().map(|k| Word::new(*k)).collect(),
            body: Some(lines.into_iter().map(Entry::Line).collect()),
            comment: None,
        })
    }

    fn tree(items: Vec<Item>) -> SyntaxTree {
        SyntaxTree { items }
    }

    fn emit_default(tree: &SyntaxTree) -> Result<String, EmitError> {
        emit(tree, &EmitOptions::default())
    }

    /// The error, and that its message quotes the value it names.
    fn refusal(tree: &SyntaxTree, value: &str) -> EmitError {
        let error = emit_default(tree).unwrap_err();
        assert!(
            error.to_string().contains(&alloc::format!("{value:?}")),
            "{error}"
        );
        error
    }

    #[test]
    fn an_empty_key_is_refused() {
        let t = tree(vec![block(&["example.org", ""], vec![])]);
        assert_eq!(refusal(&t, ""), EmitError::AlteredKey(String::new()));
    }

    #[test]
    fn a_key_ending_in_a_comma_is_refused() {
        let t = tree(vec![block(&["a.org", "b.org,"], vec![])]);
        assert_eq!(
            refusal(&t, "b.org,"),
            EmitError::AlteredKey("b.org,".to_string())
        );
    }

    #[test]
    fn a_lone_snippet_shaped_key_is_refused() {
        let t = tree(vec![block(&["(name)"], vec![Line::words(["log"])])]);
        assert_eq!(
            refusal(&t, "(name)"),
            EmitError::SnippetKey("(name)".to_string())
        );
        // Beside another key it is an ordinary key.
        let t = tree(vec![block(&["(name)", "b.org"], vec![])]);
        assert_eq!(emit_default(&t).unwrap(), "(name) b.org {\n}\n");
    }

    #[test]
    fn import_as_the_first_key_is_refused() {
        let t = tree(vec![block(&["import", "b.org"], vec![])]);
        assert_eq!(
            refusal(&t, "import"),
            EmitError::Import("import".to_string())
        );
        // Later on the key line it is an ordinary key.
        let t = tree(vec![block(&["b.org", "import"], vec![])]);
        assert_eq!(emit_default(&t).unwrap(), "b.org import {\n}\n");
    }

    #[test]
    fn import_as_a_directive_name_at_any_depth_is_refused() {
        let top = tree(vec![block(&["."], vec![Line::words(["import", "x"])])]);
        assert_eq!(
            refusal(&top, "import"),
            EmitError::Import("import".to_string())
        );
        let mut outer = Line::words(["forward", "."]);
        outer
            .parts
            .push(Part::Block(vec![Entry::Line(Line::words(["import", "x"]))]));
        let nested = tree(vec![block(&["."], vec![outer])]);
        assert_eq!(
            refusal(&nested, "import"),
            EmitError::Import("import".to_string())
        );
        // As an argument it is an ordinary value.
        let arg = tree(vec![block(&["."], vec![Line::words(["log", "import"])])]);
        assert_eq!(emit_default(&arg).unwrap(), ". {\n    log import\n}\n");
    }

    #[test]
    fn caddy_syntax_is_written_when_allowed() {
        let options = EmitOptions {
            allow_caddy_syntax: true,
            ..EmitOptions::default()
        };
        let t = tree(vec![
            block(&["(snip)"], vec![Line::words(["log"])]),
            block(
                &["a.org,", "b.org", ""],
                vec![Line::words(["import", "snip"])],
            ),
        ]);
        assert_eq!(
            emit(&t, &options).unwrap(),
            "(snip) {\n    log\n}\na.org, b.org \"\" {\n    import snip\n}\n"
        );
    }

    #[test]
    fn a_block_without_a_body_must_be_the_last() {
        let bare = |key: &str| {
            Item::Block(Block {
                keys: vec![Word::new(key)],
                body: None,
                comment: None,
            })
        };
        let t = tree(vec![bare("a.org"), block(&["b.org"], vec![])]);
        assert_eq!(
            refusal(&t, "a.org"),
            EmitError::UnbracedBlock("a.org".to_string())
        );
        let t = tree(vec![
            block(&["b.org"], vec![]),
            bare("a.org"),
            Item::Comment("# end".to_string()),
        ]);
        assert_eq!(emit_default(&t).unwrap(), "b.org {\n}\na.org\n# end\n");
    }

    #[test]
    fn a_byte_order_mark_starting_the_text_is_quoted() {
        let t = tree(vec![
            Item::BlankLine,
            block(&["\u{feff}a.org", "\u{feff}b.org"], vec![]),
        ]);
        let text = emit_default(&t).unwrap();
        assert_eq!(text, "\"\u{feff}a.org\" \u{feff}b.org {\n}\n");
        let blocks =
            view::parse_only(text.as_bytes(), "Corefile", &PluginOrder::default()).unwrap();
        let keys: Vec<&str> = blocks[0].raw_keys.iter().map(|k| &**k).collect();
        assert_eq!(keys, ["\u{feff}a.org", "\u{feff}b.org"]);
        // After a comment it is not at the start of the text.
        let t = tree(vec![
            Item::Comment("# c".to_string()),
            block(&["\u{feff}a.org"], vec![]),
        ]);
        assert_eq!(emit_default(&t).unwrap(), "# c\n\u{feff}a.org {\n}\n");
    }
}
