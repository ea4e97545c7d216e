//! The lossless syntax tree: blocks, keys, directive lines and nested blocks in source order,
//! with comments, blank lines and quoting kept, for tools and the [emitter](crate::emit).
//!
//! The tree is built from the raw tokens of one file (no environment substitution, no import
//! expansion: `import x` is an ordinary line) with the parser's structure rules: keys up to the
//! end of the line (or a trailing comma), a `{` opens a block anywhere, a `}` at the start of a
//! body line closes it, and a directive line takes every token on its line plus nested blocks.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use crate::lexer::{self, Lexeme, RawToken};

/// Deepest nesting of blocks inside a directive the tree accepts (a crate cap).
pub const MAX_DEPTH: usize = 64;

/// A whole Corefile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyntaxTree {
    /// Top-level items in source order.
    pub items: Vec<Item>,
}

/// A top-level item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A server block or snippet definition.
    Block(Block),
    /// A comment on a line of its own (text starts with `#`).
    Comment(String),
    /// One or more empty lines.
    BlankLine,
}

/// A server block (or a snippet definition, whose only key is `(name)`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block {
    /// The keys as written (a trailing comma is part of the text).
    pub keys: Vec<Word>,
    /// The body; `None` for a block of keys alone (`example.org` at the end of the input).
    pub body: Option<Vec<Entry>>,
    /// A comment at the end of the key line.
    pub comment: Option<String>,
}

/// An entry of a block body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A directive (or, inside a nested block, an option) line.
    Line(Line),
    /// A comment on a line of its own.
    Comment(String),
    /// One or more empty lines.
    BlankLine,
}

/// A directive line: its words and nested blocks, and an end-of-line comment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Line {
    /// The parts; the first is the directive (or option) name.
    pub parts: Vec<Part>,
    /// A comment at the end of the line (after the last part, or after a nested block's `}`).
    pub comment: Option<String>,
}

/// A part of a [`Line`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// A word.
    Word(Word),
    /// A `{ ... }` block.
    Block(Vec<Entry>),
}

/// A word and whether it was quoted in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The text, as the lexer returns it (quotes removed, `\"` unescaped).
    pub text: String,
    /// Whether the source quoted it (the emitter may quote more, never less).
    pub quoted: bool,
}

impl Word {
    /// A word to be quoted only if it needs it.
    pub fn new(text: impl Into<String>) -> Self {
        Word {
            text: text.into(),
            quoted: false,
        }
    }
}

impl Line {
    /// A line of words.
    pub fn words<I, S>(words: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Line {
            parts: words
                .into_iter()
                .map(|w| Part::Word(Word::new(w)))
                .collect(),
            comment: None,
        }
    }

    /// The first word (the directive name).
    pub fn name(&self) -> Option<&str> {
        match self.parts.first() {
            Some(Part::Word(w)) => Some(&w.text),
            _ => None,
        }
    }
}

/// The tree could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SyntaxError {
    /// Blocks nest deeper than [`MAX_DEPTH`]; the line where the limit was passed.
    TooDeep {
        /// Line of the `{` that went too deep.
        line: usize,
    },
}

impl core::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TooDeep { line } => write!(
                f,
                "line {line}: blocks nest deeper than {MAX_DEPTH} levels, which this crate does not represent"
            ),
        }
    }
}

impl core::error::Error for SyntaxError {}

/// A token or comment with its position among the lexemes.
enum Lex<'a> {
    Token(RawToken<'a>),
    Comment(Cow<'a, str>, usize),
}

/// Builds the lossless tree of `input`.
pub fn parse_tree(input: &[u8]) -> Result<SyntaxTree, SyntaxError> {
    let lexemes = lexer::map_lexemes(input, |l| {
        Some(match l {
            Lexeme::Token(t) => Lex::Token(t),
            Lexeme::Comment { text, line } => Lex::Comment(text, line),
        })
    });
    TreeBuilder {
        lexemes,
        pos: 0,
        last_line: 0,
    }
    .build()
}

struct TreeBuilder<'a> {
    lexemes: Vec<Lex<'a>>,
    pos: usize,
    /// The line the previous lexeme ended on (0 before the first).
    last_line: usize,
}

fn end_line(t: &RawToken<'_>) -> usize {
    t.line
        .saturating_add(t.text.bytes().filter(|&b| b == b'\n').count())
}

impl<'a> TreeBuilder<'a> {
    fn peek(&self) -> Option<&Lex<'a>> {
        self.lexemes.get(self.pos)
    }

    fn peek_token(&self) -> Option<&RawToken<'a>> {
        match self.peek() {
            Some(Lex::Token(t)) => Some(t),
            _ => None,
        }
    }

    /// Whether a blank line separates the previous lexeme from the next one.
    fn blank_before(&self) -> bool {
        let line = match self.peek() {
            Some(Lex::Token(t)) => t.line,
            Some(Lex::Comment(_, line)) => *line,
            None => return false,
        };
        self.last_line > 0 && line > self.last_line.saturating_add(1)
    }

    fn take_token(&mut self) -> Option<RawToken<'a>> {
        match self.lexemes.get_mut(self.pos) {
            Some(Lex::Token(t)) => {
                let token = core::mem::replace(
                    t,
                    RawToken {
                        text: Cow::Borrowed(""),
                        line: 0,
                        quoted: false,
                    },
                );
                self.pos += 1;
                self.last_line = end_line(&token);
                Some(token)
            }
            _ => None,
        }
    }

    /// Takes a comment that sits on line `line` (an end-of-line comment).
    fn take_trailing_comment(&mut self, line: usize) -> Option<String> {
        match self.lexemes.get_mut(self.pos) {
            Some(Lex::Comment(text, l)) if *l == line => {
                let text = core::mem::take(text).into_owned();
                self.pos += 1;
                Some(text)
            }
            _ => None,
        }
    }

    fn take_comment(&mut self) -> Option<String> {
        match self.lexemes.get_mut(self.pos) {
            Some(Lex::Comment(text, line)) => {
                let text = core::mem::take(text).into_owned();
                self.last_line = *line;
                self.pos += 1;
                Some(text)
            }
            _ => None,
        }
    }

    fn build(mut self) -> Result<SyntaxTree, SyntaxError> {
        let mut items = Vec::new();
        while self.peek().is_some() {
            if self.blank_before() {
                items.push(Item::BlankLine);
            }
            if let Some(text) = self.take_comment() {
                items.push(Item::Comment(text));
                continue;
            }
            items.push(Item::Block(self.block()?));
        }
        Ok(SyntaxTree { items })
    }

    fn block(&mut self) -> Result<Block, SyntaxError> {
        let mut block = Block::default();
        let mut expecting_another = false;
        let mut prev_end: Option<usize> = None;
        while let Some(lexeme) = self.peek() {
            let line = match lexeme {
                Lex::Token(t) if &*t.text == "{" => break,
                Lex::Token(t) => t.line,
                Lex::Comment(_, line) => *line,
            };
            let on_new_line = prev_end.is_some_and(|end| end < line);
            if on_new_line && !expecting_another {
                break;
            }
            if let Some(text) = self.take_comment() {
                block.comment = Some(text);
                continue;
            }
            let Some(token) = self.take_token() else {
                break;
            };
            if !token.text.is_empty() {
                expecting_another = token.text.ends_with(',');
            }
            prev_end = Some(end_line(&token));
            block.keys.push(Word {
                text: token.text.into_owned(),
                quoted: token.quoted,
            });
        }
        if block.comment.is_none() {
            block.comment = self.take_trailing_comment(self.last_line);
        }
        let braced = self.peek_token().is_some_and(|t| &*t.text == "{");
        if braced {
            let open = self.take_token();
            if block.comment.is_none() {
                block.comment = open.and_then(|t| self.take_trailing_comment(t.line));
            }
        }
        if braced || self.peek().is_some() {
            block.body = Some(self.body()?);
        }
        Ok(block)
    }

    /// Reads body entries until a `}` at the start of a line (consumed) or EOF, without
    /// recursion: nested blocks are kept on an explicit stack.
    fn body(&mut self) -> Result<Vec<Entry>, SyntaxError> {
        // Each frame: the entries of an open block and, for nested ones, the line it belongs to.
        let mut frames: Vec<(Vec<Entry>, Option<Line>)> = alloc::vec![(Vec::new(), None)];
        let mut line: Option<Line> = None;
        // Whether the body (the outermost frame) holds a directive line yet: kept as a flag so
        // that a body of many comments stays linear.
        let mut has_directive = false;
        while let Some(lexeme) = self.peek() {
            let starts_line = match (lexeme, &line) {
                (_, None) => true,
                (Lex::Token(t), Some(_)) => t.line > self.last_line,
                (Lex::Comment(_, l), Some(_)) => *l > self.last_line,
            };
            if starts_line && let Some(done) = line.take() {
                has_directive |= frames.len() == 1;
                push_entry(&mut frames, Entry::Line(done));
            }
            if starts_line && self.blank_before() {
                push_entry(&mut frames, Entry::BlankLine);
            }
            if let Some(text) = self.take_comment() {
                match line.as_mut() {
                    Some(l) if !starts_line => l.comment = Some(text),
                    _ => push_entry(&mut frames, Entry::Comment(text)),
                }
                continue;
            }
            let Some(token) = self.take_token() else {
                break;
            };
            // At the start of a body, before any directive, `{` is a directive name.
            let directive_name = frames.len() == 1 && line.is_none() && !has_directive;
            match &*token.text {
                "{" if !directive_name => {
                    if frames.len() > MAX_DEPTH {
                        return Err(SyntaxError::TooDeep { line: token.line });
                    }
                    // A `{` on a later line still belongs to the directive before it.
                    let owner = line.take().or_else(|| pop_line(&mut frames));
                    frames.push((Vec::new(), Some(owner.unwrap_or_default())));
                }
                "}" if line.is_none() || frames.len() > 1 => {
                    if let Some(done) = line.take() {
                        push_entry(&mut frames, Entry::Line(done));
                    }
                    if frames.len() == 1 {
                        break;
                    }
                    if let Some((entries, owner)) = frames.pop() {
                        let mut owner = owner.unwrap_or_default();
                        owner.parts.push(Part::Block(entries));
                        owner.comment = self.take_trailing_comment(token.line);
                        line = Some(owner);
                    }
                }
                _ => {
                    let current = line.get_or_insert_with(Line::default);
                    current.parts.push(Part::Word(Word {
                        text: token.text.into_owned(),
                        quoted: token.quoted,
                    }));
                    if let Some(text) = self.take_trailing_comment(self.last_line) {
                        current.comment = Some(text);
                    }
                }
            }
        }
        if let Some(done) = line.take() {
            push_entry(&mut frames, Entry::Line(done));
        }
        // Unclosed nested blocks at EOF: close them where they stand.
        while frames.len() > 1 {
            if let Some((entries, owner)) = frames.pop() {
                let mut owner = owner.unwrap_or_default();
                owner.parts.push(Part::Block(entries));
                push_entry(&mut frames, Entry::Line(owner));
            }
        }
        Ok(frames.pop().map(|(entries, _)| entries).unwrap_or_default())
    }
}

fn push_entry(frames: &mut [(Vec<Entry>, Option<Line>)], entry: Entry) {
    if let Some((entries, _)) = frames.last_mut() {
        entries.push(entry);
    }
}

/// Takes back the line just finished in the innermost frame, if it was the last entry.
fn pop_line(frames: &mut [(Vec<Entry>, Option<Line>)]) -> Option<Line> {
    let (entries, _) = frames.last_mut()?;
    match entries.pop() {
        Some(Entry::Line(line)) => Some(line),
        Some(other) => {
            entries.push(other);
            None
        }
        None => None,
    }
}
