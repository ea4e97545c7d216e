//! The Corefile parser, exactly as caddy v1 `caddyfile/parse.go` (spec section 2).
//!
//! Go keeps every token in one slice with a cursor and splices imports into it. Here the main
//! input is lexed a batch at a time as the cursor reaches it, imports stack their tokens in
//! front of it (the same sequence, without moving the rest), and the cursor keeps the current
//! and previous token, which is all Go's parser ever looks back at. A token inside the parser
//! is a small `Copy` value: offsets into its text (never a copy of it) and what the parser
//! asks of it, found while lexing: brace or `import`, the line it ends on, whether it can hold
//! an environment reference. Its text becomes a [`Text`] only when a [`Token`] is handed out.
//!
//! Directives whose tokens need nothing but appending (no import, substitution or error) are
//! taken straight from the lexed batch by a fast path; anything else goes through the
//! general, Go-shaped path, which the fast path hands over to with the cursor where the
//! general path would have left it.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::Range;

use crate::env::{self, Env};
use crate::error::{ParseError, ParseErrorKind};
use crate::import::Resolver;
use crate::lexer::{self, Lexer};
use crate::text::Text;

/// Snippet expansions allowed in one parse (caddy's `maxSnippetExpansions`).
pub const MAX_SNIPPET_EXPANSIONS: usize = 10_000;
/// File imports allowed in one parse.
pub const MAX_FILE_EXPANSIONS: usize = 100_000;
pub use crate::error::MAX_TOKENS;

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
    pub text: Text<'a>,
    /// 1-based line of its first character in its file (a parsed text is below 4 GiB, so
    /// its lines fit).
    pub line: u32,
    /// The file it came from; [`FileId::path`] names it.
    pub file: FileId,
}

impl Token<'_> {
    /// The same token, owning its text.
    pub fn into_owned(self) -> Token<'static> {
        Token {
            text: self.text.into_owned(),
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

    fn end_line(&self) -> u32 {
        let newlines = self.text.bytes().filter(|&b| b == b'\n').count();
        self.line
            .saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX))
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
pub fn parse<'i>(
    input: &'i [u8],
    options: ParseOptions<'_>,
) -> core::result::Result<Vec<ServerBlock<'i>>, ParseError> {
    let mut texts = Texts {
        main: "",
        owned: Vec::new(),
    };
    let too_large = |TooLarge| ParseError {
        file: String::from(options.filename),
        line: 0,
        kind: ParseErrorKind::TooLarge,
    };
    let (main, frames) = match core::str::from_utf8(input) {
        Ok(text) => {
            check_len(text.len()).map_err(too_large)?;
            texts.main = text;
            (MainTokens::new(Lexer::new(text)), Vec::new())
        }
        // Invalid UTF-8 decodes to a new string, so its tokens own their text.
        Err(_) => {
            let text = lexer::decode_lossy(input).into_owned();
            let tokens = texts.lex(text, FileId::MAIN).map_err(too_large)?;
            let frames = alloc::vec![Frame::Tokens(tokens.into_iter())];
            (MainTokens::new(Lexer::new("")), frames)
        }
    };
    let valid = options.directives.map(ValidNames::new);
    let by_id = alloc::vec![(0, 0); valid.as_ref().map_or(0, |v| v.names.len())];
    let mut parser = Parser {
        valid,
        main,
        texts,
        frames,
        cur: None,
        prev: None,
        replay: false,
        opts: options,
        files: Vec::new(),
        file_ids: BTreeMap::new(),
        snippet_names: BTreeMap::new(),
        snippets: Vec::new(),
        block_tokens: 0,
        block_directives: 0,
        any_names: AnyNames::default(),
        blocks_read: 0,
        scratch_by_id: by_id,
        scratch_occurrences: Vec::new(),
        snippet_expansions: 0,
        file_expansions: 0,
        imported_tokens: 0,
        eof: false,
    };
    parser.parse_all().map_err(|e| *e)
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
    /// The kind of the token `scan` found in `src`, whose text the lexer edited.
    #[cold]
    #[inline(never)]
    fn of_edited(scan: lexer::Scan, src: &str) -> Kind {
        Kind::of(scan.text(src).as_bytes())
    }

    #[inline]
    fn of(text: &[u8]) -> Kind {
        match text {
            b"{" => Kind::Open,
            b"}" => Kind::Close,
            b"import" => Kind::Import,
            _ => Kind::Word,
        }
    }
}

/// Which text a token's offsets point into: the main input, or [`Texts::owned`]`[n - 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TextId(u32);

impl TextId {
    /// The main input, borrowed for the whole parse.
    const MAIN: TextId = TextId(0);
}

/// A token inside the parser: where its text lies, its file, and facts found while lexing.
/// It is small and `Copy`: moving it through the cursor, the snippets and the frames copies
/// no text. Offsets and lines fit `u32` because [`check_len`] refuses longer texts.
///
/// Its 26 bytes are padded to 32, so that a copy moves two separate 16-byte halves. At 28
/// bytes the two halves overlap, and the next copy of a token just copied has to wait until
/// both stores are done (the CPU cannot forward one load from two stores): 10-15 % of the
/// parser's profile samples sat on those loads.
#[derive(Clone, Copy, Debug)]
#[repr(align(8))]
struct Tok {
    /// Byte offset of its raw text in `text`.
    start: u32,
    /// Byte offset just past its raw text.
    end: u32,
    /// 1-based line of its first character.
    line: u32,
    /// The line its last character is on (a quoted token may span lines).
    end_line: u32,
    /// The text the offsets index.
    text: TextId,
    /// Its file: `FileId(n)` is `Parser::files[n - 1]`.
    file: FileId,
    kind: Kind,
    /// The lexer's flags ([`lexer::Scan::REFERENCE`], [`lexer::Scan::EDITED`], ...).
    flags: u8,
}

impl Tok {
    /// The token `scan` found in `src`, text `text` of file `file` (which [`check_len`]
    /// accepted).
    #[inline(always)]
    fn new(scan: lexer::Scan, src: &str, text: TextId, file: FileId) -> Tok {
        let kind = if scan.has(lexer::Scan::EDITED) {
            Kind::of_edited(scan, src)
        } else {
            // Only a token of one or six bytes can be a brace or `import`.
            match scan.end.wrapping_sub(scan.start) {
                1 | 6 => Kind::of(src.as_bytes().get(scan.start..scan.end).unwrap_or_default()),
                _ => Kind::Word,
            }
        };
        // Lossless: `check_len` bounds every offset and line.
        Tok {
            start: scan.start as u32,
            end: scan.end as u32,
            line: scan.line as u32,
            end_line: scan.end_line as u32,
            text,
            file,
            kind,
            flags: scan.flags,
        }
    }

    /// Whether `next` is on the line this token ends on (the rule of `NextArg`).
    #[inline]
    fn is_same_line_as(&self, next: &Tok) -> bool {
        self.file == next.file && self.end_line == next.line
    }

    /// Its 1-based line, as tokens and errors report it.
    #[inline(always)]
    fn line(&self) -> usize {
        self.line as usize
    }

    /// Its span of `source`, when the lexer did not edit its text (a dropped CR, an
    /// unescaped quote).
    #[inline(always)]
    fn unedited<'t>(&self, source: &'t str) -> Option<&'t str> {
        (self.flags & lexer::Scan::EDITED == 0).then(|| {
            source
                .get(self.start as usize..self.end as usize)
                .unwrap_or_default()
        })
    }

    /// The lexer's view of this token, to read its text.
    fn scan(&self) -> lexer::Scan {
        lexer::Scan {
            start: self.start as usize,
            end: self.end as usize,
            line: self.line(),
            end_line: self.end_line as usize,
            flags: self.flags,
        }
    }
}

/// A text too long for the parser's `u32` offsets (4 GiB or more).
#[derive(Debug)]
struct TooLarge;

/// Whether the parser's `u32` offsets and lines can index a text of `len` bytes.
fn check_len(len: usize) -> core::result::Result<(), TooLarge> {
    // Lines never exceed the length plus one, so both fit when the length does.
    match u32::try_from(len) {
        Ok(len) if len < u32::MAX => Ok(()),
        _ => Err(TooLarge),
    }
}

/// Lexes up to `limit` more tokens of `lexer` (over text `text` of file `file`, which
/// [`check_len`] accepted) into `out`.
#[inline(always)]
fn lex_into(lexer: &mut Lexer<'_>, text: TextId, file: FileId, out: &mut Vec<Tok>, limit: usize) {
    let src = lexer.source();
    lexer.scan_tokens(limit, out, |scan| Tok::new(scan, src, text, file));
}

/// The main input's tokens, lexed a batch at a time: the lexer runs in a tight loop, and
/// the batch stays small (below the size at which freeing it makes the allocator
/// consolidate).
struct MainTokens<'i> {
    lexer: Lexer<'i>,
    /// The current batch; `batch[at..]` is still to be read.
    batch: Vec<Tok>,
    at: usize,
}

impl<'i> MainTokens<'i> {
    /// Tokens per batch (32 bytes each).
    const BATCH: usize = 2048;

    fn new(lexer: Lexer<'i>) -> Self {
        MainTokens {
            lexer,
            batch: Vec::new(),
            at: 0,
        }
    }

    /// The next token.
    #[inline(always)]
    fn next(&mut self) -> Option<Tok> {
        if self.at == self.batch.len() {
            self.refill();
        }
        let token = self.batch.get(self.at).copied()?;
        self.at += 1;
        Some(token)
    }

    /// The tokens lexed but not read yet (possibly none while more follow).
    #[inline(always)]
    fn lexed(&self) -> &[Tok] {
        self.batch.get(self.at..).unwrap_or_default()
    }

    /// Puts `token` back in front of [`MainTokens::lexed`] if it is the last one read.
    fn unread(&mut self, token: &Tok) -> bool {
        let Some(last) = self.at.checked_sub(1) else {
            return false;
        };
        let same = self
            .batch
            .get(last)
            .is_some_and(|t| t.text == token.text && t.start == token.start);
        if same {
            self.at = last;
        }
        same
    }

    /// Marks the first `n` of [`MainTokens::lexed`] as read.
    #[inline(always)]
    fn skip(&mut self, n: usize) {
        self.at = self.at.saturating_add(n).min(self.batch.len());
    }

    fn refill(&mut self) {
        // Filled as a local, whose length the compiler can keep in a register.
        let mut batch = core::mem::take(&mut self.batch);
        batch.clear();
        self.at = 0;
        let (text, file) = (TextId::MAIN, FileId::MAIN);
        lex_into(&mut self.lexer, text, file, &mut batch, Self::BATCH);
        self.batch = batch;
    }
}

/// The texts tokens point into: the main input and the texts the parser owns (imported
/// files, input that is not UTF-8).
struct Texts<'i> {
    /// The main input (empty when it is not UTF-8).
    main: &'i str,
    /// Decoded texts, each lexed once.
    owned: Vec<String>,
}

impl<'i> Texts<'i> {
    /// The whole text `id` names.
    fn source(&self, id: TextId) -> &str {
        match id {
            TextId::MAIN => self.main,
            TextId(n) => {
                let at = usize::try_from(n).unwrap_or(usize::MAX).wrapping_sub(1);
                self.owned.get(at).map_or("", String::as_str)
            }
        }
    }

    /// The lexed text of `token`: borrowed from the main input when the lexer did not edit
    /// it, owned otherwise.
    #[inline(always)]
    fn text(&self, token: &Tok) -> Cow<'i, str> {
        match token.unedited(self.main) {
            Some(raw) if token.text == TextId::MAIN => Cow::Borrowed(raw),
            _ => Cow::Owned(self.view(token).into_owned()),
        }
    }

    /// The lexed text of `token`, borrowed from these texts unless the lexer edited it.
    fn view(&self, token: &Tok) -> Cow<'_, str> {
        token.scan().text(self.source(token.text))
    }

    /// Lexes `text`, which becomes one of these texts, into tokens of file `file`.
    fn lex(&mut self, text: String, file: FileId) -> core::result::Result<Vec<Tok>, TooLarge> {
        check_len(text.len())?;
        let id = TextId(u32::try_from(self.owned.len() + 1).unwrap_or(u32::MAX));
        let mut tokens = Vec::new();
        lex_into(&mut Lexer::new(&text), id, file, &mut tokens, usize::MAX);
        self.owned.push(text);
        Ok(tokens)
    }
}

/// A source of tokens spliced in front of the rest of the input (Go splices a token slice; a
/// stack of sources is the same sequence without moving the rest).
enum Frame {
    /// Tokens of their own: an imported file, or input that is not UTF-8.
    Tokens(alloc::vec::IntoIter<Tok>),
    /// A defined snippet's tokens, from this position on.
    Snippet { id: usize, at: usize },
    /// One token put back.
    Pending(Tok),
}

/// The accepted directive names in an open-addressing hash table: a lookup hashes the
/// length and the first and last bytes, and compares one name or two.
struct ValidNames<'a> {
    /// Each distinct name once; its index is its id.
    names: Vec<&'a str>,
    /// A power-of-two table, at most a quarter full: a name's id plus one, 0 for a free slot.
    slots: Vec<usize>,
}

impl<'a> ValidNames<'a> {
    fn new(all: &[&'a str]) -> Self {
        let size = all.len().saturating_mul(4).max(8).next_power_of_two();
        let mut valid = ValidNames {
            names: Vec::with_capacity(all.len()),
            slots: alloc::vec![0; size],
        };
        for &name in all {
            if let Err(free) = valid.find(name)
                && let Some(slot) = valid.slots.get_mut(free)
            {
                valid.names.push(name);
                *slot = valid.names.len();
            }
        }
        valid
    }

    /// The slot of `name`: `Ok` with its id if it is there, `Err` with the free slot it
    /// would take.
    #[inline]
    fn find(&self, name: &str) -> core::result::Result<usize, usize> {
        let bytes = name.as_bytes();
        let first = usize::from(bytes.first().copied().unwrap_or(0));
        let last = usize::from(bytes.last().copied().unwrap_or(0));
        let mask = self.slots.len() - 1;
        let mut at = (first.wrapping_mul(31) ^ last.wrapping_mul(7) ^ bytes.len()) & mask;
        // The table always has free slots, so a probe ends within one lap.
        for _ in 0..self.slots.len() {
            match self.slots.get(at).copied().unwrap_or(0) {
                0 => return Err(at),
                n => {
                    if self
                        .names
                        .get(n - 1)
                        .is_some_and(|&known| same_name(known, name))
                    {
                        return Ok(n - 1);
                    }
                }
            }
            at = (at + 1) & mask;
        }
        Err(at)
    }

    /// The id of `name`, a small number for equality, if it is accepted.
    #[inline]
    fn id(&self, name: &str) -> Option<usize> {
        self.find(name).ok()
    }
}

/// `a == b` for short texts such as directive names, compared in place (a call to `memcmp`
/// costs more than the few bytes it would compare): from 4 to 16 bytes, as two words that
/// overlap in the middle.
#[inline(always)]
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    match a.len() {
        0..4 => a.iter().zip(b).all(|(x, y)| x == y),
        4..8 => {
            a.first_chunk::<4>() == b.first_chunk::<4>()
                && a.last_chunk::<4>() == b.last_chunk::<4>()
        }
        8..=16 => {
            a.first_chunk::<8>() == b.first_chunk::<8>()
                && a.last_chunk::<8>() == b.last_chunk::<8>()
        }
        _ => a == b,
    }
}

struct Parser<'a, 'i> {
    /// The accepted directive names; `None` accepts any.
    valid: Option<ValidNames<'a>>,
    /// When any name is accepted, an id for each name met so far.
    any_names: AnyNames<'i>,
    /// What is left of the main input's tokens.
    main: MainTokens<'i>,
    /// The texts tokens point into.
    texts: Texts<'i>,
    /// Token sources in front of what is left of `main`, the innermost import last.
    frames: Vec<Frame>,
    /// Go's `tokens[cursor]`; `None` before the first token, or past the end after an
    /// import that spliced in nothing.
    cur: Option<Tok>,
    /// Go's `tokens[cursor - 1]`.
    prev: Option<Tok>,
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
    snippets: Vec<Vec<Tok>>,
    snippet_expansions: usize,
    file_expansions: usize,
    imported_tokens: usize,
    eof: bool,
    /// The previous block's token count: the next block's list starts with that capacity.
    block_tokens: usize,
    /// The previous block's directive count, likewise.
    block_directives: usize,
    /// The blocks whose directives were read, which numbers them for [`Found::by_id`].
    blocks_read: u32,
    /// Reused for [`Found::by_id`]: one entry per directive id.
    scratch_by_id: Vec<(u32, u32)>,
    /// Reused for one block's occurrences (directive index and token range), in source
    /// order.
    scratch_occurrences: Vec<(usize, Range<usize>)>,
}

/// The parser's results: the error is boxed, so that the many results it moves are no larger
/// than their values.
type Result<T> = core::result::Result<T, Box<ParseError>>;

impl<'i> Parser<'_, 'i> {
    // --- Dispenser primitives -----------------------------------------------------------

    /// The next token of the spliced sequence.
    #[inline(always)]
    fn pull(&mut self) -> Option<Tok> {
        if self.frames.is_empty() {
            return self.pull_main();
        }
        self.pull_spliced()
    }

    /// The next token of the main input.
    #[inline(always)]
    fn pull_main(&mut self) -> Option<Tok> {
        self.main.next()
    }

    /// The next token when imports are in front of the main input.
    fn pull_spliced(&mut self) -> Option<Tok> {
        loop {
            let Some(frame) = self.frames.last_mut() else {
                return self.pull_main();
            };
            let token = match frame {
                Frame::Tokens(tokens) => tokens.next(),
                Frame::Snippet { id, at } => {
                    let token = self
                        .snippets
                        .get(*id)
                        .and_then(|body| body.get(*at))
                        .copied();
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
    fn unpull(&mut self, token: Tok) {
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

    /// The current token's text (Go's `Val`).
    fn val(&self) -> Cow<'_, str> {
        self.cur
            .as_ref()
            .map_or(Cow::Borrowed(""), |t| self.texts.view(t))
    }

    fn kind(&self) -> Option<Kind> {
        self.cur.as_ref().map(|t| t.kind)
    }

    fn file_name(&self, file: FileId) -> &str {
        file.path(&self.files).unwrap_or(self.opts.filename)
    }

    fn err(&self, kind: ParseErrorKind) -> Box<ParseError> {
        let (file, line) = match &self.cur {
            Some(t) => (self.file_name(t.file), t.line()),
            None => (self.opts.filename, 0),
        };
        Box::new(ParseError {
            file: String::from(file),
            line,
            kind,
        })
    }

    fn syntax_err(&self, expected: char) -> Box<ParseError> {
        self.err(ParseErrorKind::Syntax {
            found: self.val().into_owned(),
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
    fn substituted(&self, token: &Tok) -> Result<Cow<'i, str>> {
        let text = self.texts.text(token);
        if token.flags & lexer::Scan::REFERENCE == 0 {
            return Ok(text);
        }
        self.substituted_slow(text)
    }

    fn substituted_slow(&self, text: Cow<'i, str>) -> Result<Cow<'i, str>> {
        if !env::has_reference(&text) {
            return Ok(text);
        }
        let substituted = match &text {
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
            if imports_itself(&tokens, &self.texts, &name, self.opts.env) {
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
        // Blocks tend to look alike: the previous one's size is the first guess.
        let mut tokens = Vec::with_capacity(self.block_tokens);
        // Never saturates: a block takes two bytes of the main input (which `check_len`
        // keeps below `u32::MAX`) or tokens of an import (at most `MAX_TOKENS`).
        self.blocks_read = self.blocks_read.saturating_add(1);
        let mut names = Found {
            directives: Vec::with_capacity(self.block_directives),
            by_id: core::mem::take(&mut self.scratch_by_id),
            block: self.blocks_read,
        };
        let mut occurrences = core::mem::take(&mut self.scratch_occurrences);
        occurrences.clear();
        loop {
            self.plain_directives(&mut tokens, &mut names, &mut occurrences);
            if !self.next() {
                break;
            }
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
        self.block_tokens = tokens.len();
        self.block_directives = names.directives.len();
        let directives;
        (directives, self.scratch_by_id) = (names.directives, names.by_id);
        (block.directives, block.tokens) = group_by_directive(tokens, directives, &mut occurrences);
        self.scratch_occurrences = occurrences;
        Ok(())
    }

    /// The index in `names` of the directive the cursor names, added if it is new.
    fn directive_slot(&mut self, names: &mut Found<'i>) -> Result<usize> {
        let name = self.substituted_val()?;
        match directive_id(&self.valid, &mut self.any_names, &name) {
            Some(id) => Ok(names.slot(name, id)),
            None => Err(self.err(ParseErrorKind::UnknownDirective(name.into_owned()))),
        }
    }

    /// The fast path of [`Parser::directives`], between two directives when the cursor
    /// reads the main input: takes whole directives straight from its token list while each
    /// is a known name followed by tokens that need nothing more (see [`step`]), and leaves
    /// the cursor on the last token taken. What it cannot finish (an import, a
    /// substitution, an error, the end of the lexed batch) is left to the general path.
    fn plain_directives(
        &mut self,
        tokens: &mut Vec<Token<'i>>,
        names: &mut Found<'i>,
        occurrences: &mut Vec<(usize, Range<usize>)>,
    ) {
        if !self.frames.is_empty() {
            return;
        }
        let Some(cur) = self.cur else {
            return;
        };
        // The previous directive usually ends by moving the cursor back onto the next name:
        // read that name again from the batch.
        let reread = self.replay;
        if reread && !self.main.unread(&cur) {
            return;
        }
        let rest = self.main.lexed();
        let mut at = 0usize;
        while let Some(name) = rest.get(at) {
            // Without a reference, the name is its own substitution.
            if name.kind != Kind::Word || name.flags & lexer::Scan::REFERENCE != 0 {
                break;
            }
            let text = self.texts.text(name);
            let Some(id) = directive_id(&self.valid, &mut self.any_names, &text) else {
                break;
            };
            let start = tokens.len();
            let Some(end) = take_directive(rest, at, text.clone(), &self.texts, tokens) else {
                tokens.truncate(start);
                break;
            };
            let slot = names.slot(text, id);
            occurrences.push((slot, start..tokens.len()));
            at = end;
        }
        if reread {
            if at == 0 {
                // Nothing taken: the cursor stays as it was.
                self.main.skip(1);
                return;
            }
            self.replay = false;
            // The token before the re-read name.
            self.cur = self.prev;
        }
        self.took(at);
    }

    /// Moves the cursor over the first `n` tokens of [`MainTokens::lexed`], which the fast
    /// paths consumed.
    #[inline(always)]
    fn took(&mut self, n: usize) {
        let Some(last) = n.checked_sub(1) else {
            return;
        };
        let rest = self.main.lexed();
        self.prev = match last.checked_sub(1) {
            Some(before) => rest.get(before).copied(),
            None => self.cur,
        };
        self.cur = rest.get(last).copied();
        self.main.skip(n);
    }

    /// Appends the tokens of the directive occurrence the cursor is on to `tokens`.
    fn directive_tokens(&mut self, tokens: &mut Vec<Token<'i>>) -> Result<()> {
        if let Some(cur) = &self.cur {
            tokens.push(output(cur, self.texts.text(cur)));
        }
        let mut nesting = 0usize;
        loop {
            self.plain_directive_tokens(tokens, &mut nesting);
            if !self.next() {
                break;
            }
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
                tokens.push(output(cur, self.substituted(cur)?));
            }
        }
        if nesting > 0 {
            return Err(self.err(ParseErrorKind::UnexpectedEof));
        }
        Ok(())
    }

    /// The fast path of [`Parser::directive_tokens`], when the cursor reads the main input:
    /// appends the tokens that follow straight from its list, as long as each needs nothing
    /// more (no end of the directive, import, substitution or error, which the caller
    /// handles), and leaves the cursor on the last one taken.
    #[inline(always)]
    fn plain_directive_tokens(&mut self, tokens: &mut Vec<Token<'i>>, nesting: &mut usize) {
        if self.replay || !self.frames.is_empty() {
            return;
        }
        let Some(cur) = self.cur else {
            return;
        };
        let (rest, main) = (self.main.lexed(), self.texts.main);
        // The main input's tokens are all of one file: a token of another is on another
        // line than any of them.
        let mut end_line = if cur.file == FileId::MAIN {
            cur.end_line
        } else {
            0
        };
        let mut taken = 0usize;
        for token in rest {
            if step(token, end_line < token.line, nesting) != Step::Take {
                break;
            }
            tokens.push(main_output(main, token));
            end_line = token.end_line;
            taken += 1;
        }
        self.took(taken);
    }

    /// Replaces `import PATTERN` (the cursor is on `import`) by the tokens it names and
    /// leaves the cursor on the first of them.
    fn do_import(&mut self) -> Result<()> {
        // Go's `tokens[cursor - 1]` once the two import tokens are spliced out.
        let before = self.prev.take();
        if !self.next_arg() {
            return Err(self.err(ParseErrorKind::ImportArgMissing(self.val().into_owned())));
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

    fn import_files(&mut self, pattern: &str) -> Result<Vec<Tok>> {
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
            let text = lexer::decode_lossy(&file.contents).into_owned();
            let lexed = self.texts.lex(text, id);
            tokens.extend(lexed.map_err(|TooLarge| self.err(ParseErrorKind::TooLarge))?);
            if tokens.len() > MAX_TOKENS {
                return Err(self.err(ParseErrorKind::TooManyTokens));
            }
        }
        Ok(tokens)
    }

    fn snippet_tokens(&mut self) -> Result<Vec<Tok>> {
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
            if let Some(cur) = self.cur {
                tokens.push(cur);
            }
        }
        if depth != 0 {
            return Err(self.syntax_err('}'));
        }
        Ok(tokens)
    }
}

/// What [`Parser::directive_tokens`] does with a token, as far as the fast paths go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Appends it (counting braces in `nesting`).
    Take,
    /// Ends the directive before it.
    End,
    /// Anything else: an import, a substitution or an error, for the general path.
    Other,
}

/// The step for `token`, in the order of the cases of [`Parser::directive_tokens`];
/// `new_line` tells whether it starts a line, `nesting` counts the open braces.
#[inline(always)]
fn step(token: &Tok, new_line: bool, nesting: &mut usize) -> Step {
    match token.kind {
        Kind::Open => {
            *nesting = nesting.saturating_add(1);
            Step::Take
        }
        _ if new_line && *nesting == 0 => Step::End,
        Kind::Close if *nesting > 0 => {
            *nesting -= 1;
            Step::Take
        }
        Kind::Import if !new_line => Step::Take,
        // `{` and `}` hold no reference; a word may.
        Kind::Word if token.flags & lexer::Scan::REFERENCE == 0 => Step::Take,
        _ => Step::Other,
    }
}

/// Appends to `out` the directive whose name is `tokens[name]`, with text `text`, where
/// `tokens` are lexed tokens of the main input; returns where it ends (the index of the token
/// after it), if all its tokens are in `tokens` and each is a [`Step::Take`]. Otherwise it
/// returns `None`, with some of its tokens appended.
#[inline(always)]
fn take_directive<'i>(
    tokens: &[Tok],
    name: usize,
    text: Cow<'i, str>,
    texts: &Texts<'i>,
    out: &mut Vec<Token<'i>>,
) -> Option<usize> {
    let first = tokens.get(name)?;
    out.push(output(first, text));
    // The main input's tokens are all of one file: only lines tell a new line.
    let (main, mut end_line) = (texts.main, first.end_line);
    let mut nesting = 0usize;
    for (at, token) in tokens.iter().enumerate().skip(name + 1) {
        match step(token, end_line < token.line, &mut nesting) {
            Step::Take => {
                out.push(main_output(main, token));
                end_line = token.end_line;
            }
            Step::End => return Some(at),
            Step::Other => return None,
        }
    }
    None
}

/// The id of the directive `name`: its index among the `valid` names, or, when any name is
/// accepted, its id in `any`; `None` for a name that is not valid. Equal names have equal
/// ids.
#[inline(always)]
// `name` is a `Cow` so that a new name keeps its borrow in `any`.
#[allow(clippy::ptr_arg)]
fn directive_id<'i>(
    valid: &Option<ValidNames<'_>>,
    any: &mut AnyNames<'i>,
    name: &Cow<'i, str>,
) -> Option<usize> {
    match valid {
        Some(valid) => valid.id(name),
        None => Some(any.id(name)),
    }
}

/// Directive ids when any name is accepted: each new name takes the next id. The first
/// names are found by a scan (a Corefile names a few dozen plugins at most), any more in a
/// map, so that a block of many distinct names stays `O(n log n)`.
#[derive(Default)]
struct AnyNames<'i> {
    /// The first [`AnyNames::FEW`] names, by id.
    few: Vec<Cow<'i, str>>,
    /// The others, with their ids.
    many: BTreeMap<Cow<'i, str>, usize>,
}

impl<'i> AnyNames<'i> {
    /// How many names are found by a scan.
    const FEW: usize = 32;

    /// The id of `name`, added if it is new.
    #[inline(never)]
    #[allow(clippy::ptr_arg)] // As in `directive_id`.
    fn id(&mut self, name: &Cow<'i, str>) -> usize {
        if let Some(id) = self.few.iter().position(|known| same_name(known, name)) {
            return id;
        }
        if let Some(&id) = self.many.get(&**name) {
            return id;
        }
        if self.few.len() < Self::FEW {
            self.few.push(name.clone());
            return self.few.len() - 1;
        }
        let id = Self::FEW + self.many.len();
        self.many.insert(name.clone(), id);
        id
    }
}

/// The directives of one block, in order of first appearance, each with its id
/// ([`directive_id`]).
struct Found<'i> {
    /// Their names; the token ranges are set once the block is read.
    directives: Vec<Directive<'i>>,
    /// By id: the number of the last block that named that directive, and its index in
    /// that block's `directives`. Entries of earlier blocks are stale, so the table serves
    /// every block without being cleared.
    by_id: Vec<(u32, u32)>,
    /// The number of this block (from 1).
    block: u32,
}

impl<'i> Found<'i> {
    /// The index of the directive `name` (with id `id`), added if it is new.
    #[inline(always)]
    fn slot(&mut self, name: Cow<'i, str>, id: usize) -> usize {
        match self.by_id.get(id).copied() {
            Some((block, slot)) if block == self.block => slot as usize,
            _ => self.add(name, id),
        }
    }

    /// Adds the directive `name` (with id `id`) and returns its index.
    #[inline(always)]
    fn add(&mut self, name: Cow<'i, str>, id: usize) -> usize {
        let slot = self.directives.len();
        self.directives.push(Directive { name, tokens: 0..0 });
        if self.by_id.len() <= id {
            // Ids of names met during the parse (when any is accepted) grow past the table.
            self.by_id.resize(id.saturating_add(1), (0, 0));
        }
        if let Some(entry) = self.by_id.get_mut(id) {
            // Fewer directives than bytes of text, which `check_len` keeps below `u32::MAX`.
            *entry = (self.block, slot as u32);
        }
        slot
    }
}

/// The block's directives and its token list, built from `scratch` (its occurrences' tokens
/// in source order, at the ranges of `occurrences`, whose indices point into `directives`)
/// with each directive's occurrences regrouped into one range. Without a repeated directive
/// `scratch` is the list; otherwise tokens are moved into a new list of the final size.
/// A list less than half full is trimmed.
fn group_by_directive<'i>(
    mut scratch: Vec<Token<'i>>,
    mut directives: Vec<Directive<'i>>,
    occurrences: &mut [(usize, Range<usize>)],
) -> (Vec<Directive<'i>>, Vec<Token<'i>>) {
    if directives.capacity() / 2 > directives.len() {
        directives.shrink_to_fit();
    }
    // New names take the next index, so without repeats occurrence `i` is directive `i`.
    if occurrences.len() == directives.len() {
        for (directive, (_, range)) in directives.iter_mut().zip(occurrences.iter()) {
            directive.tokens = range.clone();
        }
        if scratch.capacity() / 2 > scratch.len() {
            scratch.shrink_to_fit();
        }
        return (directives, scratch);
    }
    occurrences.sort_by_key(|(slot, _)| *slot);
    let mut source: Vec<Option<Token<'i>>> = scratch.into_iter().map(Some).collect();
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
fn imports_itself(tokens: &[Tok], texts: &Texts<'_>, name: &str, env: &dyn Env) -> bool {
    tokens.windows(2).enumerate().any(|(i, pair)| {
        let [import, arg] = pair else { return false };
        let at_line_start = i == 0
            || tokens
                .get(i - 1)
                .is_some_and(|prev| prev.file != import.file || prev.line != import.line);
        import.kind == Kind::Import
            && at_line_start
            && env::substitute(&texts.view(arg), env).is_ok_and(|p| p == name)
    })
}

/// The token handed out for `token`, a lexed token of the main input `main` whose text
/// needs no substitution: built in place, without the detour through a `Cow`.
#[inline(always)]
fn main_output<'i>(main: &'i str, token: &Tok) -> Token<'i> {
    let text = match token.unedited(main) {
        Some(raw) => Text::borrowed(raw),
        None => edited_text(main, token),
    };
    Token {
        text,
        line: token.line,
        file: FileId::MAIN,
    }
}

/// The text of `token`, a token of the main input `main` that the lexer edited.
#[cold]
#[inline(never)]
fn edited_text<'i>(main: &'i str, token: &Tok) -> Text<'i> {
    Text::from(token.scan().text(main).into_owned())
}

/// The token handed out for `token`, with text `text`.
#[inline(always)]
fn output<'i>(token: &Tok, text: Cow<'i, str>) -> Token<'i> {
    Token {
        text: Text::from(text),
        line: token.line,
        file: token.file,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_up_to_u32_max_minus_one_bytes_fit_the_token_offsets() {
        let max = usize::try_from(u32::MAX).unwrap();
        assert!(check_len(0).is_ok());
        assert!(check_len(max - 1).is_ok());
        assert!(check_len(max).is_err());
        assert!(check_len(usize::MAX).is_err());
    }

    #[test]
    fn with_any_name_accepted_each_distinct_name_is_one_directive() {
        // Past the 32 names found by a scan, names are found in a map: both must merge
        // repeats (caddy groups a block's occurrences of a directive).
        let mut input = String::from(". {\n");
        for i in 0..100 {
            input.push_str(&alloc::format!("    n{i}\n"));
        }
        input.push_str("    n7 again\n    n70 again\n}\n");
        let blocks = parse(
            input.as_bytes(),
            ParseOptions {
                filename: "Corefile",
                directives: None,
                env: &crate::env::NoEnv,
                resolver: &mut crate::import::NoFiles,
            },
        )
        .unwrap();
        let block = &blocks[0];
        assert_eq!(block.directives.len(), 100);
        for name in ["n7", "n70"] {
            let texts: Vec<&str> = block
                .tokens_of(block.directive(name).unwrap())
                .iter()
                .map(|t| &*t.text)
                .collect();
            assert_eq!(texts, [name, name, "again"]);
        }
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_token_is_three_words() {
        assert_eq!(size_of::<Token<'_>>(), 24);
    }

    #[test]
    fn names_compare_equal_exactly_when_their_bytes_do() {
        // Every length of each way of comparing, and a difference at every position.
        for len in 0..=20 {
            let name: String = (0..len).map(|i| char::from(b'a' + i as u8)).collect();
            assert!(same_name(&name, &name.clone()));
            for at in 0..len {
                let mut other = name.clone().into_bytes();
                other[at] = b'-';
                let other = String::from_utf8(other).unwrap();
                assert!(!same_name(&name, &other), "{name} vs {other}");
            }
            assert!(!same_name(&name, &alloc::format!("{name}x")));
        }
    }

    #[test]
    fn directive_names_are_found_by_hash_including_duplicates_and_misses() {
        let valid = ValidNames::new(&["log", "errors", "log", "loop", "", "whoami"]);
        assert_eq!(valid.names, ["log", "errors", "loop", "", "whoami"]);
        for (id, name) in valid.names.iter().enumerate() {
            assert_eq!(valid.id(name), Some(id));
        }
        assert_eq!(valid.id("lo"), None);
        assert_eq!(valid.id("logs"), None);
        assert_eq!(ValidNames::new(&[]).id("log"), None);
    }
}
