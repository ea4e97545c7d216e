//! The fast paths: whole directives, and the plain tokens of the current one, appended
//! straight from the main input's lexed batch while they need nothing more than appending.
//! What they cannot finish is left to the [grammar](super::grammar), with the cursor where
//! it would have been.

use alloc::borrow::Cow;
use alloc::vec::Vec;
use core::ops::Range;

use super::Parser;
use super::names::{Found, directive_id};
use super::server_block::{FileId, Token};
use super::sources::Texts;
use super::step::{Step, step};
use super::tok::{Kind, Tok, main_output, output};
use crate::lexer;

impl<'i> Parser<'_, 'i> {
    /// The fast path of [`Parser::directives`], between two directives when the cursor
    /// reads the main input: takes whole directives straight from its token list while each
    /// is a known name followed by tokens that need nothing more (see [`step`]), and leaves
    /// the cursor on the last token taken. What it cannot finish (an import, a
    /// substitution, an error, the end of the lexed batch) is left to the general path.
    // Called from grammar.rs, which may be compiled in another codegen unit: without the hint
    // it stays a call there, and a parse takes about 7 % more instructions.
    #[inline]
    pub(super) fn plain_directives(
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

    /// Moves the cursor over the first `n` tokens of [`MainTokens::lexed`](super::sources::MainTokens::lexed), which the fast
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

    /// The fast path of [`Parser::directive_tokens`], when the cursor reads the main input:
    /// appends the tokens that follow straight from its list, as long as each needs nothing
    /// more (no end of the directive, import, substitution or error, which the caller
    /// handles), and leaves the cursor on the last one taken.
    #[inline(always)]
    pub(super) fn plain_directive_tokens(
        &mut self,
        tokens: &mut Vec<Token<'i>>,
        nesting: &mut usize,
    ) {
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
            // An import, a substitution or an error: the general path's.
            _ => return None,
        }
    }
    None
}
