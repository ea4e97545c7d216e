//! Where the parser's tokens come from: the main input, lexed a batch at a time; the texts
//! the tokens point into; and the frames that splice imported tokens in front of the rest.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::server_block::FileId;
use super::tok::{TextId, Tok, TooLarge, check_len};
use crate::lexer::Lexer;

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
pub(super) struct MainTokens<'i> {
    lexer: Lexer<'i>,
    /// The current batch; `batch[at..]` is still to be read.
    batch: Vec<Tok>,
    at: usize,
}

impl<'i> MainTokens<'i> {
    /// Tokens per batch (32 bytes each).
    const BATCH: usize = 2048;

    pub(super) fn new(lexer: Lexer<'i>) -> Self {
        MainTokens {
            lexer,
            batch: Vec::new(),
            at: 0,
        }
    }

    /// The next token.
    #[inline(always)]
    pub(super) fn next(&mut self) -> Option<Tok> {
        if self.at == self.batch.len() {
            self.refill();
        }
        let token = self.batch.get(self.at).copied()?;
        self.at += 1;
        Some(token)
    }

    /// The tokens lexed but not read yet (possibly none while more follow).
    #[inline(always)]
    pub(super) fn lexed(&self) -> &[Tok] {
        self.batch.get(self.at..).unwrap_or_default()
    }

    /// Puts `token` back in front of [`MainTokens::lexed`] if it is the last one read.
    pub(super) fn unread(&mut self, token: &Tok) -> bool {
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
    pub(super) fn skip(&mut self, n: usize) {
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
pub(super) struct Texts<'i> {
    /// The main input (empty when it is not UTF-8).
    pub(super) main: &'i str,
    /// Decoded texts, each lexed once.
    pub(super) owned: Vec<String>,
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
    pub(super) fn text(&self, token: &Tok) -> Cow<'i, str> {
        match token.unedited(self.main) {
            Some(raw) if token.text == TextId::MAIN => Cow::Borrowed(raw),
            _ => Cow::Owned(self.view(token).into_owned()),
        }
    }

    /// The lexed text of `token`, borrowed from these texts unless the lexer edited it.
    pub(super) fn view(&self, token: &Tok) -> Cow<'_, str> {
        token.scan().text(self.source(token.text))
    }

    /// Lexes `text`, which becomes one of these texts, into tokens of file `file`.
    pub(super) fn lex(
        &mut self,
        text: String,
        file: FileId,
    ) -> core::result::Result<Vec<Tok>, TooLarge> {
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
pub(super) enum Frame {
    /// Tokens of their own: an imported file, or input that is not UTF-8.
    Tokens(alloc::vec::IntoIter<Tok>),
    /// A defined snippet's tokens, from this position on.
    Snippet { id: usize, at: usize },
    /// One token put back.
    Pending(Tok),
}
