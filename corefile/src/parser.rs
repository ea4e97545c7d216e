//! The Corefile parser, exactly as caddy v1 `caddyfile/parse.go` (spec section 2).
//!
//! Go keeps every token in one slice with a cursor and splices imports into it. Here the main
//! input is lexed as the cursor reaches it, imports stack their tokens in front of it (the
//! same sequence, without moving the rest), and the cursor keeps the current and previous
//! token, which is all Go's parser ever looks back at. Each token carries what the parser
//! asks of it, found while lexing: brace or `import`, the line it ends on, whether it can hold
//! an environment reference.

use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::Range;

use crate::env::{self, Env};
use crate::error::{ParseError, ParseErrorKind};
use crate::import::Resolver;
use crate::lexer::{self, Lexer};

/// Snippet expansions allowed in one parse (caddy's `maxSnippetExpansions`).
pub const MAX_SNIPPET_EXPANSIONS: usize = 10_000;
/// File imports allowed in one parse.
pub const MAX_FILE_EXPANSIONS: usize = 100_000;
/// Tokens allowed after import expansion (a crate cap; CoreDNS has none).
pub const MAX_TOKENS: usize = 1_000_000;

/// The file a token comes from: the main input, or an imported file of its block's
/// file table ([`ServerBlock::files`], [`crate::view::BlockView::files`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(u32);

impl FileId {
    /// The main input.
    pub const MAIN: FileId = FileId(0);

    /// The absolute path of this file in `files`, its block's file table; `None` for the main
    /// input.
    pub fn path(self, files: &[Arc<str>]) -> Option<&str> {
        let at = usize::try_from(self.0.checked_sub(1)?).ok()?;
        files.get(at).map(|path| &**path)
    }

    /// How many entries of a file table this file needs (0 for the main input).
    fn table_len(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

/// A token as the parser hands it to plugins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    /// The text, environment-substituted except for directive-name tokens. Borrowed from the
    /// main input unless lexing or substitution changed it, or it comes from an imported file.
    pub text: Cow<'a, str>,
    /// 1-based line of its first character in its file.
    pub line: usize,
    /// The file it came from; [`FileId::path`] names it.
    pub file: FileId,
}

impl Token<'_> {
    /// The same token, owning its text.
    pub fn into_owned(self) -> Token<'static> {
        Token {
            text: Cow::Owned(self.text.into_owned()),
            line: self.line,
            file: self.file,
        }
    }

    /// Whether `next` starts on a later line than this token ends (caddy's `isNextOnNewLine`).
    pub fn is_new_line_before(&self, next: &Token) -> bool {
        self.file != next.file || self.end_line() < next.line
    }

    /// Whether `next` is on the line this token ends on (the rule of `NextArg`).
    pub fn is_same_line_as(&self, next: &Token) -> bool {
        self.file == next.file && self.end_line() == next.line
    }

    fn end_line(&self) -> usize {
        self.line
            .saturating_add(self.text.bytes().filter(|&b| b == b'\n').count())
    }
}

/// One server block: its keys, its directives and one list of all their tokens.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerBlock<'a> {
    /// The keys (addresses) as written, environment-substituted, one trailing comma removed.
    pub keys: Vec<Cow<'a, str>>,
    /// Directives in order of first appearance; each name appears once.
    pub directives: Vec<Directive<'a>>,
    /// The tokens of every directive, grouped by directive in the order of `directives`
    /// (each directive's occurrences in source order); [`ServerBlock::tokens_of`] gives one
    /// directive's.
    pub tokens: Vec<Token<'a>>,
    /// The paths of the imported files its tokens came from, for [`FileId::path`]; empty when
    /// they all come from the main input.
    pub files: Vec<Arc<str>>,
}

/// All occurrences of one directive in a block, concatenated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Directive<'a> {
    /// The directive name (environment-substituted).
    pub name: Cow<'a, str>,
    /// Its tokens in its block's token list: each occurrence starts with its (raw) name
    /// token.
    pub tokens: Range<usize>,
}

impl ServerBlock<'_> {
    /// The same block, owning its text.
    pub fn into_owned(self) -> ServerBlock<'static> {
        ServerBlock {
            keys: self
                .keys
                .into_iter()
                .map(|k| Cow::Owned(k.into_owned()))
                .collect(),
            directives: self
                .directives
                .into_iter()
                .map(|d| Directive {
                    name: Cow::Owned(d.name.into_owned()),
                    tokens: d.tokens,
                })
                .collect(),
            tokens: tokens_into_owned(self.tokens),
            files: self.files,
        }
    }
}

impl<'a> ServerBlock<'a> {
    /// The directive called `name`, if the block has it.
    pub fn directive(&self, name: &str) -> Option<&Directive<'a>> {
        self.directives.iter().find(|d| d.name == name)
    }

    /// The tokens of `directive`, one of this block's.
    pub fn tokens_of(&self, directive: &Directive<'_>) -> &[Token<'a>] {
        tokens_in(&self.tokens, &directive.tokens)
    }
}

/// The tokens of `range` in a block's token list (none if it is not a range of it).
pub(crate) fn tokens_in<'t, 'a>(tokens: &'t [Token<'a>], range: &Range<usize>) -> &'t [Token<'a>] {
    tokens.get(range.clone()).unwrap_or_default()
}

/// A block's token list, owning its text.
pub(crate) fn tokens_into_owned(tokens: Vec<Token<'_>>) -> Vec<Token<'static>> {
    tokens.into_iter().map(Token::into_owned).collect()
}

/// What the parser needs from its caller.
pub struct ParseOptions<'a> {
    /// The name errors print for the main input (CoreDNS: the `-conf` value, `Corefile`).
    pub filename: &'a str,
    /// The accepted directive names; `None` accepts any (caddy's `validDirectives == nil`).
    pub directives: Option<&'a [&'a str]>,
    /// Environment variables.
    pub env: &'a dyn Env,
    /// File imports.
    pub resolver: &'a mut dyn Resolver,
}

impl core::fmt::Debug for ParseOptions<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ParseOptions")
            .field("filename", &self.filename)
            .field("directives", &self.directives)
            .finish_non_exhaustive()
    }
}

/// Parses `input` into server blocks, which borrow their text from it where they can.
pub fn parse<'i>(input: &'i [u8], options: ParseOptions<'_>) -> Result<Vec<ServerBlock<'i>>> {
    let (main, frames) = match core::str::from_utf8(input) {
        Ok(text) => (Lexer::new(text), Vec::new()),
        // Invalid UTF-8 decodes to a new string, so its tokens own their text.
        Err(_) => (
            Lexer::new(""),
            alloc::vec![Frame::Tokens(lex_owned(input, FileId::MAIN).into_iter())],
        ),
    };
    let valid = options.directives.map(ValidNames::new);
    let mut parser = Parser {
        valid,
        main,
        frames,
        cur: None,
        prev: None,
        replay: false,
        opts: options,
        files: Vec::new(),
        file_ids: BTreeMap::new(),
        snippet_names: BTreeMap::new(),
        snippets: Vec::new(),
        scratch_tokens: Vec::new(),
        scratch_names: Vec::new(),
        scratch_occurrences: Vec::new(),
        snippet_expansions: 0,
        file_expansions: 0,
        imported_tokens: 0,
        eof: false,
    };
    parser.parse_all()
}

/// What the parser knows about a token's text without comparing strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Exactly `{`.
    Open,
    /// Exactly `}`.
    Close,
    /// Exactly `import`.
    Import,
    /// Anything else.
    Word,
}

impl Kind {
    #[inline]
    fn of(text: &str) -> Kind {
        match text.as_bytes() {
            b"{" => Kind::Open,
            b"}" => Kind::Close,
            b"import" => Kind::Import,
            _ => Kind::Word,
        }
    }
}

/// A token inside the parser: its text and line, plus facts found while lexing.
#[derive(Clone, Debug)]
struct Tok<'i> {
    text: Cow<'i, str>,
    line: usize,
    /// The line its text ends on (a quoted token may span lines).
    end_line: usize,
    /// Its file: `FileId(n)` is `Parser::files[n - 1]`.
    file: FileId,
    kind: Kind,
    /// Whether the text may hold an environment reference (it has a `{`).
    brace: bool,
}

impl<'i> Tok<'i> {
    #[inline]
    fn new(scanned: lexer::Scanned<'i>, file: FileId) -> Self {
        let kind = Kind::of(&scanned.token.text);
        Tok {
            text: scanned.token.text,
            line: scanned.token.line,
            end_line: scanned.end_line,
            file,
            kind,
            brace: scanned.brace,
        }
    }

    /// The token handed out for this one, with text `text`.
    #[inline]
    fn token(&self, text: Cow<'i, str>) -> Token<'i> {
        Token {
            text,
            line: self.line,
            file: self.file,
        }
    }

    fn into_owned(self) -> Tok<'static> {
        Tok {
            text: Cow::Owned(self.text.into_owned()),
            ..self
        }
    }

    /// Whether `next` is on the line this token ends on (the rule of `NextArg`).
    #[inline]
    fn is_same_line_as(&self, next: &Tok<'_>) -> bool {
        self.file == next.file && self.end_line == next.line
    }
}

/// Lexes a whole file into tokens that own their text.
fn lex_owned(input: &[u8], file: FileId) -> Vec<Tok<'static>> {
    let text = lexer::decode_lossy(input);
    let mut lexer = Lexer::new(&text);
    let mut tokens = Vec::new();
    while let Some(scanned) = lexer.next_token() {
        tokens.push(Tok::new(scanned, file).into_owned());
    }
    tokens
}

/// A source of tokens spliced in front of the rest of the input (Go splices a token slice; a
/// stack of sources is the same sequence without moving the rest).
enum Frame<'i> {
    /// Tokens of their own: an imported file, or input that is not UTF-8.
    Tokens(alloc::vec::IntoIter<Tok<'i>>),
    /// A defined snippet's tokens, from this position on.
    Snippet { id: usize, at: usize },
    /// One token put back.
    Pending(Tok<'i>),
}

/// The accepted directive names, grouped by length for cheap lookups.
struct ValidNames<'a> {
    /// The names sorted by length, then bytes.
    names: Vec<&'a str>,
    /// `starts[len]`: the index of the first name of length `len` or more.
    starts: Vec<usize>,
}

impl<'a> ValidNames<'a> {
    fn new(names: &[&'a str]) -> Self {
        let mut names = names.to_vec();
        names.sort_unstable_by_key(|&name| (name.len(), name));
        let longest = names.last().map_or(0, |n| n.len());
        let starts = (0..=longest + 1)
            .map(|len| names.partition_point(|n| n.len() < len))
            .collect();
        ValidNames { names, starts }
    }

    /// The position of `name` in the sorted list: a small id for equality.
    #[inline]
    fn id(&self, name: &str) -> Option<usize> {
        let start = *self.starts.get(name.len())?;
        let end = *self.starts.get(name.len() + 1)?;
        let same_length = self.names.get(start..end)?;
        // A byte loop: names are short and most differ in their first byte.
        same_length
            .iter()
            .position(|&valid| valid.bytes().zip(name.bytes()).all(|(a, b)| a == b))
            .map(|at| start + at)
    }
}

struct Parser<'a, 'i> {
    /// The accepted directive names; `None` accepts any.
    valid: Option<ValidNames<'a>>,
    /// The main input, lexed as it is read.
    main: Lexer<'i>,
    /// Token sources in front of what is left of `main`, the innermost import last.
    frames: Vec<Frame<'i>>,
    /// Go's `tokens[cursor]`; `None` before the first token, or past the end after an
    /// import that spliced in nothing.
    cur: Option<Tok<'i>>,
    /// Go's `tokens[cursor - 1]`.
    prev: Option<Tok<'i>>,
    /// The cursor was moved back: the next [`Parser::next`] stays on `cur`.
    replay: bool,
    opts: ParseOptions<'a>,
    /// The absolute paths of imported files; a token's `file` indexes it from 1.
    files: Vec<Arc<str>>,
    /// Each path's index (from 1), so tokens of one file share it however often it is
    /// imported (Go compares file names).
    file_ids: BTreeMap<Arc<str>, FileId>,
    /// Snippet ids by name.
    snippet_names: BTreeMap<String, usize>,
    /// Snippet bodies, by id.
    snippets: Vec<Vec<Tok<'i>>>,
    snippet_expansions: usize,
    file_expansions: usize,
    imported_tokens: usize,
    eof: bool,
    /// Reused buffers for one block's tokens, its directive names (with each one's id in
    /// `valid`) and its occurrences (directive index and token range), in source order, so
    /// the lists handed out are allocated once at their final size.
    scratch_tokens: Vec<Token<'i>>,
    scratch_names: Vec<(Cow<'i, str>, Option<usize>)>,
    scratch_occurrences: Vec<(usize, Range<usize>)>,
}

type Result<T> = core::result::Result<T, ParseError>;

impl<'i> Parser<'_, 'i> {
    // --- Dispenser primitives -----------------------------------------------------------

    /// The next token of the spliced sequence.
    #[inline(always)]
    fn pull(&mut self) -> Option<Tok<'i>> {
        if self.frames.is_empty() {
            return self.main.next_token().map(|s| Tok::new(s, FileId::MAIN));
        }
        self.pull_spliced()
    }

    /// The next token when imports are in front of the main input.
    fn pull_spliced(&mut self) -> Option<Tok<'i>> {
        loop {
            let Some(frame) = self.frames.last_mut() else {
                return self.main.next_token().map(|s| Tok::new(s, FileId::MAIN));
            };
            let token = match frame {
                Frame::Tokens(tokens) => tokens.next(),
                Frame::Snippet { id, at } => {
                    let token = self
                        .snippets
                        .get(*id)
                        .and_then(|body| body.get(*at))
                        .cloned();
                    *at += 1;
                    token
                }
                Frame::Pending(_) => match self.frames.pop() {
                    Some(Frame::Pending(token)) => return Some(token),
                    _ => None,
                },
            };
            if token.is_some() {
                return token;
            }
            self.frames.pop();
        }
    }

    /// Puts a token back at the front of the sequence.
    fn unpull(&mut self, token: Tok<'i>) {
        self.frames.push(Frame::Pending(token));
    }

    #[inline]
    fn next(&mut self) -> bool {
        if core::mem::take(&mut self.replay) {
            return true;
        }
        let Some(next) = self.pull() else {
            return false;
        };
        self.prev = self.cur.replace(next);
        true
    }

    /// Go's `cursor--`. Always followed by [`Parser::next`], which then lands where the
    /// cursor was (or, past the end, fails and leaves the cursor on the last token).
    fn back(&mut self) {
        if self.cur.is_some() {
            self.replay = true;
        } else {
            self.cur = self.prev.take();
        }
    }

    fn next_arg(&mut self) -> bool {
        if self.cur.is_none() {
            return false;
        }
        let Some(next) = self.pull() else {
            return false;
        };
        let same_line = self
            .cur
            .as_ref()
            .is_some_and(|cur| cur.is_same_line_as(&next));
        if same_line {
            self.prev = self.cur.replace(next);
        } else {
            self.unpull(next);
        }
        same_line
    }

    #[inline]
    fn is_new_line(&self) -> bool {
        match (&self.prev, &self.cur) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(prev), Some(cur)) => prev.file != cur.file || prev.end_line < cur.line,
        }
    }

    fn val(&self) -> &str {
        self.cur.as_ref().map_or("", |t| &t.text)
    }

    fn kind(&self) -> Option<Kind> {
        self.cur.as_ref().map(|t| t.kind)
    }

    fn file_name(&self, file: FileId) -> &str {
        file.path(&self.files).unwrap_or(self.opts.filename)
    }

    fn err(&self, kind: ParseErrorKind) -> ParseError {
        let (file, line) = match &self.cur {
            Some(t) => (self.file_name(t.file), t.line),
            None => (self.opts.filename, 0),
        };
        ParseError {
            file: String::from(file),
            line,
            kind,
        }
    }

    fn syntax_err(&self, expected: char) -> ParseError {
        self.err(ParseErrorKind::Syntax {
            found: String::from(self.val()),
            expected,
        })
    }

    /// The current token's text, environment-substituted, still borrowed when nothing changed.
    #[inline]
    fn substituted_val(&self) -> Result<Cow<'i, str>> {
        match &self.cur {
            Some(cur) => self.substituted(cur),
            None => Ok(Cow::Borrowed("")),
        }
    }

    #[inline(always)]
    fn substituted(&self, token: &Tok<'i>) -> Result<Cow<'i, str>> {
        if !token.brace {
            return Ok(token.text.clone());
        }
        self.substituted_slow(token)
    }

    fn substituted_slow(&self, token: &Tok<'i>) -> Result<Cow<'i, str>> {
        if !env::has_reference(&token.text) {
            return Ok(token.text.clone());
        }
        let substituted = match &token.text {
            Cow::Borrowed(text) => env::substitute(text, self.opts.env),
            Cow::Owned(text) => {
                env::substitute(text, self.opts.env).map(|s| Cow::Owned(s.into_owned()))
            }
        };
        substituted.map_err(|e| self.err(ParseErrorKind::EnvLoop(e.token)))
    }

    // --- parse.go ---------------------------------------------------------------------

    fn parse_all(&mut self) -> Result<Vec<ServerBlock<'i>>> {
        let mut blocks = Vec::new();
        while self.next() {
            let block = self.begin()?;
            if !block.keys.is_empty() {
                blocks.push(block);
            }
        }
        Ok(blocks)
    }

    fn begin(&mut self) -> Result<ServerBlock<'i>> {
        let mut block = ServerBlock {
            keys: self.addresses()?,
            ..ServerBlock::default()
        };
        if self.eof {
            return Ok(block);
        }
        if let Some(name) = snippet_name(&block.keys) {
            let name = String::from(name);
            if self.snippet_names.contains_key(&name) {
                return Err(self.err(ParseErrorKind::SnippetRedeclared(name)));
            }
            let tokens = self.snippet_tokens()?;
            if imports_itself(&tokens, &name, self.opts.env) {
                return Err(self.err(ParseErrorKind::SnippetDepth));
            }
            self.snippet_names.insert(name, self.snippets.len());
            self.snippets.push(tokens);
            block.keys.clear();
            return Ok(block);
        }
        self.block_contents(&mut block)?;
        if !self.files.is_empty() {
            // File ids count up as files are first imported: the table's prefix up to the
            // block's highest id names all of its files.
            let needed = block.tokens.iter().map(|t| t.file).max();
            let needed = needed.map_or(0, FileId::table_len);
            block.files = self.files.get(..needed).unwrap_or_default().to_vec();
        }
        Ok(block)
    }

    fn addresses(&mut self) -> Result<Vec<Cow<'i, str>>> {
        let mut keys = Vec::new();
        let mut expecting_another = false;
        loop {
            let mut key = self.substituted_val()?;
            if key == "import" && self.is_new_line() {
                self.do_import()?;
                continue;
            }
            if key == "{" {
                if expecting_another {
                    return Err(self.err(ParseErrorKind::ExpectedAnotherAddress));
                }
                break;
            }
            if !key.is_empty() {
                expecting_another = key.ends_with(',');
                if expecting_another {
                    key = without_last_comma(key);
                }
                keys.push(key);
            }
            let has_next = self.next();
            if expecting_another && !has_next {
                return Err(self.err(ParseErrorKind::UnexpectedEof));
            }
            if !has_next {
                self.eof = true;
                break;
            }
            if !expecting_another && self.is_new_line() {
                break;
            }
        }
        Ok(keys)
    }

    fn block_contents(&mut self, block: &mut ServerBlock<'i>) -> Result<()> {
        let braced = self.kind() == Some(Kind::Open);
        if !braced {
            self.back();
        }
        self.directives(block)?;
        if braced && self.kind() != Some(Kind::Close) {
            return Err(self.syntax_err('}'));
        }
        Ok(())
    }

    fn directives(&mut self, block: &mut ServerBlock<'i>) -> Result<()> {
        let mut tokens = core::mem::take(&mut self.scratch_tokens);
        let mut names = core::mem::take(&mut self.scratch_names);
        let mut occurrences = core::mem::take(&mut self.scratch_occurrences);
        tokens.clear();
        names.clear();
        occurrences.clear();
        while self.next() {
            match self.kind() {
                Some(Kind::Close) => break,
                Some(Kind::Import) => {
                    self.do_import()?;
                    self.back();
                }
                _ => {
                    let slot = self.directive_slot(&mut names)?;
                    let start = tokens.len();
                    self.directive_tokens(&mut tokens)?;
                    occurrences.push((slot, start..tokens.len()));
                }
            }
        }
        (block.directives, block.tokens) =
            group_by_directive(&mut tokens, &mut names, &mut occurrences);
        self.scratch_tokens = tokens;
        self.scratch_names = names;
        self.scratch_occurrences = occurrences;
        Ok(())
    }

    /// The index in `names` of the directive the cursor names, added if it is new.
    fn directive_slot(&self, names: &mut Vec<(Cow<'i, str>, Option<usize>)>) -> Result<usize> {
        let name = self.substituted_val()?;
        let id = match &self.valid {
            Some(valid) => match valid.id(&name) {
                Some(id) => Some(id),
                None => return Err(self.err(ParseErrorKind::UnknownDirective(name.into_owned()))),
            },
            None => None,
        };
        let known = names
            .iter()
            .position(|(known, known_id)| match (known_id, id) {
                (Some(known_id), Some(id)) => *known_id == id,
                _ => *known == name,
            });
        Ok(known.unwrap_or_else(|| {
            names.push((name, id));
            names.len().saturating_sub(1)
        }))
    }

    /// Appends the tokens of the directive occurrence the cursor is on to `tokens`.
    fn directive_tokens(&mut self, tokens: &mut Vec<Token<'i>>) -> Result<()> {
        if let Some(cur) = &self.cur {
            tokens.push(cur.token(cur.text.clone()));
        }
        let mut nesting = 0usize;
        while self.next() {
            let new_line = self.is_new_line();
            match self.kind() {
                Some(Kind::Open) => nesting = nesting.saturating_add(1),
                _ if new_line && nesting == 0 => {
                    self.back();
                    break;
                }
                Some(Kind::Close) if nesting > 0 => nesting -= 1,
                Some(Kind::Close) => return Err(self.err(ParseErrorKind::UnmatchedCloseBrace)),
                Some(Kind::Import) if new_line => {
                    self.do_import()?;
                    self.back();
                    continue;
                }
                _ => {}
            }
            if let Some(cur) = &self.cur {
                tokens.push(cur.token(self.substituted(cur)?));
            }
        }
        if nesting > 0 {
            return Err(self.err(ParseErrorKind::UnexpectedEof));
        }
        Ok(())
    }

    /// Replaces `import PATTERN` (the cursor is on `import`) by the tokens it names and
    /// leaves the cursor on the first of them.
    fn do_import(&mut self) -> Result<()> {
        // Go's `tokens[cursor - 1]` once the two import tokens are spliced out.
        let before = self.prev.take();
        if !self.next_arg() {
            return Err(self.err(ParseErrorKind::ImportArgMissing(String::from(self.val()))));
        }
        let pattern = self.substituted_val()?;
        if pattern.is_empty() {
            return Err(self.err(ParseErrorKind::ImportEmptyPath));
        }
        if self.next_arg() {
            return Err(self.err(ParseErrorKind::ImportTooManyArgs));
        }
        let frame = match self.snippet_names.get(&*pattern) {
            Some(&id) => {
                if self.snippet_expansions >= MAX_SNIPPET_EXPANSIONS {
                    return Err(self.err(ParseErrorKind::SnippetDepth));
                }
                self.snippet_expansions += 1;
                let len = self.snippets.get(id).map_or(0, Vec::len);
                self.count_imported(len)?;
                Frame::Snippet { id, at: 0 }
            }
            None => {
                let tokens = self.import_files(&pattern)?;
                self.count_imported(tokens.len())?;
                Frame::Tokens(tokens.into_iter())
            }
        };
        self.frames.push(frame);
        self.cur = self.pull();
        self.prev = before;
        Ok(())
    }

    fn count_imported(&mut self, tokens: usize) -> Result<()> {
        self.imported_tokens = self.imported_tokens.saturating_add(tokens);
        if self.imported_tokens > MAX_TOKENS {
            return Err(self.err(ParseErrorKind::TooManyTokens));
        }
        Ok(())
    }

    fn import_files(&mut self, pattern: &str) -> Result<Vec<Tok<'i>>> {
        if self.file_expansions >= MAX_FILE_EXPANSIONS {
            return Err(self.err(ParseErrorKind::FileDepth));
        }
        self.file_expansions += 1;
        let from = self.cur.as_ref().map_or(FileId::MAIN, |t| t.file);
        let from = String::from(self.file_name(from));
        let files = self
            .opts
            .resolver
            .resolve(pattern, &from)
            .map_err(|message| self.err(ParseErrorKind::Import(message)))?;
        let mut tokens = Vec::new();
        for file in files {
            let id = match self.file_ids.get(file.path.as_str()) {
                Some(&id) => id,
                None => {
                    // At most MAX_FILE_EXPANSIONS files are ever imported.
                    let id = FileId(u32::try_from(self.files.len() + 1).unwrap_or(u32::MAX));
                    let path: Arc<str> = Arc::from(file.path.as_str());
                    self.files.push(Arc::clone(&path));
                    self.file_ids.insert(path, id);
                    id
                }
            };
            tokens.extend(lex_owned(&file.contents, id));
            if tokens.len() > MAX_TOKENS {
                return Err(self.err(ParseErrorKind::TooManyTokens));
            }
        }
        Ok(tokens)
    }

    fn snippet_tokens(&mut self) -> Result<Vec<Tok<'i>>> {
        if self.kind() != Some(Kind::Open) {
            return Err(self.syntax_err('{'));
        }
        let mut depth = 1usize;
        let mut tokens = Vec::new();
        while self.next() {
            match self.kind() {
                Some(Kind::Close) => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Some(Kind::Open) => depth = depth.saturating_add(1),
                _ => {}
            }
            if let Some(cur) = &self.cur {
                tokens.push(cur.clone());
            }
        }
        if depth != 0 {
            return Err(self.syntax_err('}'));
        }
        Ok(tokens)
    }
}

/// The block's directives and its token list, built from `scratch` (its occurrences' tokens
/// in source order, at the ranges of `occurrences`, whose indices point into `names`) with
/// each directive's occurrences regrouped into one range. Both lists are allocated at their
/// final size; tokens are reordered only when a directive occurs twice.
fn group_by_directive<'i>(
    scratch: &mut Vec<Token<'i>>,
    names: &mut Vec<(Cow<'i, str>, Option<usize>)>,
    occurrences: &mut [(usize, Range<usize>)],
) -> (Vec<Directive<'i>>, Vec<Token<'i>>) {
    let mut directives: Vec<Directive<'i>> = names
        .drain(..)
        .map(|(name, _)| Directive { name, tokens: 0..0 })
        .collect();
    // New names take the next index, so without repeats occurrence `i` is directive `i`.
    if occurrences.len() == directives.len() {
        for (directive, (_, range)) in directives.iter_mut().zip(occurrences.iter()) {
            directive.tokens = range.clone();
        }
        // Moved at once into a list of the final size; `scratch` keeps its capacity.
        let mut tokens = Vec::with_capacity(scratch.len());
        tokens.append(scratch);
        return (directives, tokens);
    }
    occurrences.sort_by_key(|(slot, _)| *slot);
    let mut source: Vec<Option<Token<'i>>> = scratch.drain(..).map(Some).collect();
    let mut tokens = Vec::with_capacity(source.len());
    for (slot, range) in occurrences.iter() {
        let start = tokens.len();
        let moved = source.get_mut(range.clone()).unwrap_or_default();
        tokens.extend(moved.iter_mut().filter_map(Option::take));
        if let Some(directive) = directives.get_mut(*slot) {
            // Every occurrence has its name token: an empty range is a directive not seen yet.
            let from = if directive.tokens.is_empty() {
                start
            } else {
                directive.tokens.start
            };
            directive.tokens = from..tokens.len();
        }
    }
    (directives, tokens)
}

/// `key` without its last character, a comma.
fn without_last_comma(key: Cow<'_, str>) -> Cow<'_, str> {
    match key {
        Cow::Borrowed(key) => Cow::Borrowed(key.strip_suffix(',').unwrap_or(key)),
        Cow::Owned(mut key) => {
            key.pop();
            Cow::Owned(key)
        }
    }
}

/// The snippet name of a block whose only key is `(name)`.
fn snippet_name<'k>(keys: &'k [Cow<'_, str>]) -> Option<&'k str> {
    match keys {
        [key] => key.strip_prefix('(').and_then(|k| k.strip_suffix(')')),
        _ => None,
    }
}

/// caddy's guard: a snippet body with `import NAME` of itself at a line start.
fn imports_itself(tokens: &[Tok<'_>], name: &str, env: &dyn Env) -> bool {
    tokens.windows(2).enumerate().any(|(i, pair)| {
        let [import, arg] = pair else { return false };
        let at_line_start = i == 0
            || tokens
                .get(i - 1)
                .is_some_and(|prev| prev.file != import.file || prev.line != import.line);
        import.kind == Kind::Import
            && at_line_start
            && env::substitute(&arg.text, env).is_ok_and(|p| p == name)
    })
}
