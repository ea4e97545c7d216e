//! The cursor: Go's token slice and index, over the sources spliced in front of the main
//! input, with the current and previous token, and the errors that point at the current one.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;

use super::Parser;
use super::server_block::FileId;
use super::sources::Frame;
use super::tok::{Kind, Tok};
use crate::error::{ParseError, ParseErrorKind};

impl Parser<'_, '_> {
    /// The next token of the spliced sequence.
    #[inline(always)]
    pub(super) fn pull(&mut self) -> Option<Tok> {
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

    /// Moves to the next token, whatever its line (Go's `Next`); false at the end.
    #[inline]
    pub(super) fn next(&mut self) -> bool {
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
    pub(super) fn back(&mut self) {
        if self.cur.is_some() {
            self.replay = true;
        } else {
            self.cur = self.prev.take();
        }
    }

    /// Moves to the next token only if it is on the current token's line (Go's `NextArg`).
    pub(super) fn next_arg(&mut self) -> bool {
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

    /// Whether the current token starts a line (Go's `isNewLine`): true for the first.
    #[inline]
    pub(super) fn is_new_line(&self) -> bool {
        match (&self.prev, &self.cur) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(prev), Some(cur)) => prev.is_new_line_before(cur),
        }
    }

    /// The current token's text (Go's `Val`).
    pub(super) fn val(&self) -> Cow<'_, str> {
        self.cur
            .as_ref()
            .map_or(Cow::Borrowed(""), |t| self.texts.view(t))
    }

    /// The current token's kind.
    pub(super) fn kind(&self) -> Option<Kind> {
        self.cur.as_ref().map(|t| t.kind)
    }

    /// The name errors print for `file`: its path, or the main input's name.
    pub(super) fn file_name(&self, file: FileId) -> &str {
        file.path(&self.files).unwrap_or(self.opts.filename)
    }

    /// An error at the current token's file and line.
    pub(super) fn err(&self, kind: ParseErrorKind) -> Box<ParseError> {
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

    /// Go's `SyntaxErr`: the current token where the brace `expected` should be.
    pub(super) fn syntax_err(&self, expected: char) -> Box<ParseError> {
        self.err(ParseErrorKind::Syntax {
            found: self.val().into_owned(),
            expected,
        })
    }
}
