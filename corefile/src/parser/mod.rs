//! The Corefile parser, exactly as caddy v1 `caddyfile/parse.go` (`docs/corefile.md` §2): its
//! entry point [`parse`], its options, its limits and its state. The work is in the files below.
//!
//! Go keeps every token in one slice with a cursor and splices imports into it. Here the main
//! input is lexed a batch at a time as the cursor reaches it, imports stack their tokens in
//! front of it (the same sequence, without moving the rest), and the cursor keeps the current
//! and previous token, which is all Go's parser ever looks back at. A token inside the parser
//! is a small `Copy` value: offsets into its text (never a copy of it) and what the parser
//! asks of it, found while lexing: brace or `import`, the line it ends on, whether it can hold
//! an environment reference. Its text becomes a [`Text`](crate::text::Text) only when a
//! [`Token`] is handed out.
//!
//! Directives whose tokens need nothing but appending (no import, substitution or error) are
//! taken straight from the lexed batch by a fast path; anything else goes through the
//! general, Go-shaped path, which the fast path hands over to with the cursor where the
//! general path would have left it.
//!
//! The files of this folder, one job each:
//!
//! - `server_block.rs`: what the parser hands out ([`ServerBlock`], [`Directive`],
//!   [`Token`], [`FileId`]);
//! - `tok.rs`: the parser's own small token, and how it becomes a [`Token`];
//! - `sources.rs`: where tokens come from (the main input a batch at a time, the texts the
//!   parser owns, the frames spliced in front);
//! - `cursor.rs`: Go's cursor over those sources, and errors at the current token;
//! - `substitution.rs`: environment references in a token's text;
//! - `grammar.rs`: the rules of `parse.go` (server blocks, their keys, their directives);
//! - `step.rs`: what a token does to the directive being read, the one rule of braces and
//!   new lines that both paths follow;
//! - `fast_path.rs`: the shortcut through directives that need nothing but appending;
//! - `names.rs`: directive names, their ids, and a block's tokens grouped by directive;
//! - `import.rs` and `snippets.rs`: the `import` directive, and the snippets it can expand.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::Range;

use crate::env::Env;
use crate::error::{ParseError, ParseErrorKind};
use crate::import::Resolver;
use crate::lexer::{self, Lexer};

mod cursor;
mod fast_path;
mod grammar;
mod import;
mod names;
mod server_block;
mod snippets;
mod sources;
mod step;
mod substitution;
mod tok;

use names::{AnyNames, ValidNames};
pub use server_block::{Directive, FileId, ServerBlock, Token};
pub(crate) use server_block::{tokens_in, tokens_into_owned};
use sources::{Frame, MainTokens, Texts};
use tok::{Tok, TooLarge, check_len};

/// Snippet expansions allowed in one parse (caddy's `maxSnippetExpansions`).
pub const MAX_SNIPPET_EXPANSIONS: usize = 10_000;
/// File imports allowed in one parse.
pub const MAX_FILE_EXPANSIONS: usize = 100_000;
pub use crate::error::MAX_TOKENS;

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

/// The state of one parse. Its methods are spread over the files of this folder by job
/// (see the module documentation).
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
    /// The blocks whose directives were read, which numbers them for
    /// [`Found::by_id`](names::Found::by_id).
    blocks_read: u32,
    /// Reused for [`Found::by_id`](names::Found::by_id): one entry per directive id.
    scratch_by_id: Vec<(u32, u32)>,
    /// Reused for one block's occurrences (directive index and token range), in source
    /// order.
    scratch_occurrences: Vec<(usize, Range<usize>)>,
}

/// The parser's results: the error is boxed, so that the many results it moves are no larger
/// than their values.
type Result<T> = core::result::Result<T, Box<ParseError>>;
