//! The Corefile parser, exactly as caddy v1 `caddyfile/parse.go` (spec section 2).
//!
//! The token stream is kept as Go's slice-and-cursor, split around the cursor so that an
//! import splices in place in time proportional to what it imports.

use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use crate::env::{self, Env};
use crate::error::{ParseError, ParseErrorKind};
use crate::import::Resolver;
use crate::lexer;

/// Snippet expansions allowed in one parse (caddy's `maxSnippetExpansions`).
pub const MAX_SNIPPET_EXPANSIONS: usize = 10_000;
/// File imports allowed in one parse.
pub const MAX_FILE_EXPANSIONS: usize = 100_000;
/// Tokens allowed after import expansion (a crate cap; CoreDNS has none).
pub const MAX_TOKENS: usize = 1_000_000;

/// A token as the parser hands it to plugins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    /// The text, environment-substituted except for directive-name tokens. Borrowed from the
    /// main input unless lexing or substitution changed it, or it comes from an imported file.
    pub text: Cow<'a, str>,
    /// 1-based line of its first character in its file.
    pub line: usize,
    /// The absolute path of the imported file it came from; `None` for the main input.
    pub file: Option<Arc<str>>,
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

/// One server block: its keys and, per directive name, every token of every occurrence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerBlock<'a> {
    /// The keys (addresses) as written, environment-substituted, one trailing comma removed.
    pub keys: Vec<Cow<'a, str>>,
    /// Directives in order of first appearance; each name appears once.
    pub directives: Vec<Directive<'a>>,
}

/// All occurrences of one directive in a block, concatenated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Directive<'a> {
    /// The directive name (environment-substituted).
    pub name: Cow<'a, str>,
    /// Its tokens: each occurrence starts with its (raw) name token.
    pub tokens: Vec<Token<'a>>,
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
                .map(Directive::into_owned)
                .collect(),
        }
    }

    /// The directive called `name`, if the block has it.
    pub fn directive(&self, name: &str) -> Option<&Directive<'_>> {
        self.directives.iter().find(|d| d.name == name)
    }
}

impl Directive<'_> {
    /// The same directive, owning its text.
    pub fn into_owned(self) -> Directive<'static> {
        Directive {
            name: Cow::Owned(self.name.into_owned()),
            tokens: self.tokens.into_iter().map(Token::into_owned).collect(),
        }
    }
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
    let mut after = tokens_of(input, None);
    after.reverse();
    let valid = options.directives.map(|names| {
        let mut sorted = names.to_vec();
        sorted.sort_unstable_by_key(|&name| by_length(name));
        sorted
    });
    let mut parser = Parser {
        valid,
        before: Vec::with_capacity(after.len()),
        cur: None,
        after,
        opts: options,
        snippets: BTreeMap::new(),
        scratch_tokens: Vec::new(),
        scratch_directives: Vec::new(),
        snippet_expansions: 0,
        file_expansions: 0,
        total_tokens: 0,
        eof: false,
    };
    parser.total_tokens = parser.after.len();
    parser.parse_all()
}

/// The tokens of one file, from `file` (`None` for the main input).
fn tokens_of<'i>(input: &'i [u8], file: Option<&Arc<str>>) -> Vec<Token<'i>> {
    lexer::map_lexemes(input, |lexeme| match lexeme {
        lexer::Lexeme::Token(t) => Some(Token {
            text: t.text,
            line: t.line,
            file: file.cloned(),
        }),
        lexer::Lexeme::Comment { .. } => None,
    })
}

struct Parser<'a, 'i> {
    /// The accepted directive names, sorted by [`by_length`] for binary search.
    valid: Option<Vec<&'a str>>,
    /// `tokens[..cursor]`.
    before: Vec<Token<'i>>,
    /// `tokens[cursor]`; `None` when the cursor is out of range.
    cur: Option<Token<'i>>,
    /// `tokens[cursor + 1..]`, reversed.
    after: Vec<Token<'i>>,
    opts: ParseOptions<'a>,
    snippets: BTreeMap<String, Vec<Token<'i>>>,
    snippet_expansions: usize,
    file_expansions: usize,
    total_tokens: usize,
    eof: bool,
    /// Reused buffers for one directive's tokens and one block's directives, so the lists
    /// handed out are allocated once at their final size.
    scratch_tokens: Vec<Token<'i>>,
    scratch_directives: Vec<Directive<'i>>,
}

type Result<T> = core::result::Result<T, ParseError>;

impl<'i> Parser<'_, 'i> {
    // --- Dispenser primitives -----------------------------------------------------------

    fn next(&mut self) -> bool {
        let Some(next) = self.after.pop() else {
            return false;
        };
        if let Some(cur) = self.cur.replace(next) {
            self.before.push(cur);
        }
        true
    }

    fn back(&mut self) {
        if let Some(cur) = self.cur.take() {
            self.after.push(cur);
        }
        self.cur = self.before.pop();
    }

    fn next_arg(&mut self) -> bool {
        match (&self.cur, self.after.last()) {
            (None, Some(_)) if self.before.is_empty() => self.next(),
            (Some(cur), Some(next)) if cur.is_same_line_as(next) => self.next(),
            _ => false,
        }
    }

    fn is_new_line(&self) -> bool {
        match (self.before.last(), &self.cur) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(prev), Some(cur)) => prev.is_new_line_before(cur),
        }
    }

    fn val(&self) -> &str {
        self.cur.as_ref().map_or("", |t| &t.text)
    }

    fn err(&self, kind: ParseErrorKind) -> ParseError {
        let (file, line) = match &self.cur {
            Some(t) => (t.file.as_deref().unwrap_or(self.opts.filename), t.line),
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

    fn substitute(&self, text: &str) -> Result<String> {
        env::substitute(text, self.opts.env)
            .map(Cow::into_owned)
            .map_err(|e| self.err(ParseErrorKind::EnvLoop(e.token)))
    }

    /// The current token's text, environment-substituted, still borrowed when nothing changed.
    fn substituted_val(&self) -> Result<Cow<'i, str>> {
        let Some(cur) = &self.cur else {
            return Ok(Cow::Borrowed(""));
        };
        self.substituted(&cur.text)
    }

    fn substituted(&self, text: &Cow<'i, str>) -> Result<Cow<'i, str>> {
        if !env::has_reference(text) {
            return Ok(text.clone());
        }
        let substituted = match text {
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
            directives: Vec::new(),
        };
        if self.eof {
            return Ok(block);
        }
        if let Some(name) = snippet_name(&block.keys) {
            let name = String::from(name);
            if self.snippets.contains_key(&name) {
                return Err(self.err(ParseErrorKind::SnippetRedeclared(name)));
            }
            let tokens = self.snippet_tokens()?;
            if imports_itself(&tokens, &name, self.opts.env) {
                return Err(self.err(ParseErrorKind::SnippetDepth));
            }
            self.snippets.insert(name, tokens);
            block.keys.clear();
            return Ok(block);
        }
        self.block_contents(&mut block)?;
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
        let braced = self.val() == "{";
        if !braced {
            self.back();
        }
        self.directives(block)?;
        if braced && self.val() != "}" {
            return Err(self.syntax_err('}'));
        }
        Ok(())
    }

    fn directives(&mut self, block: &mut ServerBlock<'i>) -> Result<()> {
        let mut directives = core::mem::take(&mut self.scratch_directives);
        directives.clear();
        while self.next() {
            match self.val() {
                "}" => break,
                "import" => {
                    self.do_import()?;
                    self.back();
                }
                _ => self.directive(&mut directives)?,
            }
        }
        block.directives.append(&mut directives);
        self.scratch_directives = directives;
        Ok(())
    }

    fn directive(&mut self, directives: &mut Vec<Directive<'i>>) -> Result<()> {
        let name = self.substituted_val()?;
        if let Some(valid) = &self.valid
            && valid
                .binary_search_by_key(&by_length(&name), |&valid| by_length(valid))
                .is_err()
        {
            return Err(self.err(ParseErrorKind::UnknownDirective(name.into_owned())));
        }
        let slot = match directives.iter().position(|d| d.name == name) {
            Some(slot) => slot,
            None => {
                directives.push(Directive {
                    name,
                    tokens: Vec::new(),
                });
                directives.len().saturating_sub(1)
            }
        };
        let mut tokens = core::mem::take(&mut self.scratch_tokens);
        tokens.clear();
        if let Some(cur) = &self.cur {
            tokens.push(cur.clone());
        }
        let mut nesting = 0usize;
        while self.next() {
            let new_line = self.is_new_line();
            match self.val() {
                "{" => nesting = nesting.saturating_add(1),
                _ if new_line && nesting == 0 => {
                    self.back();
                    break;
                }
                "}" if nesting > 0 => nesting -= 1,
                "}" => return Err(self.err(ParseErrorKind::UnmatchedCloseBrace)),
                "import" if new_line => {
                    self.do_import()?;
                    self.back();
                    continue;
                }
                _ => {}
            }
            if let Some(cur) = &self.cur {
                tokens.push(Token {
                    text: self.substituted(&cur.text)?,
                    line: cur.line,
                    file: cur.file.clone(),
                });
            }
        }
        if nesting > 0 {
            return Err(self.err(ParseErrorKind::UnexpectedEof));
        }
        if let Some(directive) = directives.get_mut(slot) {
            directive.tokens.append(&mut tokens);
        }
        self.scratch_tokens = tokens;
        Ok(())
    }

    /// Replaces `import PATTERN` (the cursor is on `import`) by the tokens it names and
    /// leaves the cursor on the first of them.
    fn do_import(&mut self) -> Result<()> {
        if !self.next_arg() {
            return Err(self.err(ParseErrorKind::ImportArgMissing(String::from(self.val()))));
        }
        let pattern = self.substitute(self.val())?;
        if pattern.is_empty() {
            return Err(self.err(ParseErrorKind::ImportEmptyPath));
        }
        if self.next_arg() {
            return Err(self.err(ParseErrorKind::ImportTooManyArgs));
        }
        let imported = match self.snippets.get(&pattern) {
            Some(tokens) => {
                if self.snippet_expansions >= MAX_SNIPPET_EXPANSIONS {
                    return Err(self.err(ParseErrorKind::SnippetDepth));
                }
                self.snippet_expansions += 1;
                tokens.clone()
            }
            None => self.import_files(&pattern)?,
        };
        self.total_tokens = self.total_tokens.saturating_add(imported.len());
        if self.total_tokens > MAX_TOKENS {
            return Err(self.err(ParseErrorKind::TooManyTokens));
        }
        // Splice out `import` (the previous token) and the pattern (the current one).
        self.before.pop();
        self.cur = None;
        self.after.extend(imported.into_iter().rev());
        self.cur = self.after.pop();
        Ok(())
    }

    fn import_files(&mut self, pattern: &str) -> Result<Vec<Token<'i>>> {
        if self.file_expansions >= MAX_FILE_EXPANSIONS {
            return Err(self.err(ParseErrorKind::FileDepth));
        }
        self.file_expansions += 1;
        let from = self
            .cur
            .as_ref()
            .and_then(|t| t.file.as_deref())
            .unwrap_or(self.opts.filename);
        let files = self
            .opts
            .resolver
            .resolve(pattern, from)
            .map_err(|message| self.err(ParseErrorKind::Import(message)))?;
        let mut tokens = Vec::new();
        for file in files {
            let path: Arc<str> = Arc::from(file.path.as_str());
            let imported = tokens_of(&file.contents, Some(&path));
            tokens.extend(imported.into_iter().map(Token::into_owned));
            if tokens.len() > MAX_TOKENS {
                return Err(self.err(ParseErrorKind::TooManyTokens));
            }
        }
        Ok(tokens)
    }

    fn snippet_tokens(&mut self) -> Result<Vec<Token<'i>>> {
        if self.val() != "{" {
            return Err(self.syntax_err('{'));
        }
        let mut depth = 1usize;
        let mut tokens = Vec::new();
        while self.next() {
            match self.val() {
                "}" => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                "{" => depth = depth.saturating_add(1),
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

/// A sort key for names that compares lengths first (cheaper than comparing bytes).
fn by_length(name: &str) -> (usize, &str) {
    (name.len(), name)
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
fn imports_itself(tokens: &[Token<'_>], name: &str, env: &dyn Env) -> bool {
    tokens.windows(2).enumerate().any(|(i, pair)| {
        let [import, arg] = pair else { return false };
        let at_line_start = i == 0
            || tokens
                .get(i - 1)
                .is_some_and(|prev| prev.file != import.file || prev.line != import.line);
        &*import.text == "import"
            && at_line_start
            && env::substitute(&arg.text, env).is_ok_and(|p| p == name)
    })
}
