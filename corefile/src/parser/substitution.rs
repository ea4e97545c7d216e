//! Environment substitution of a token's text, done only for tokens the lexer flagged as
//! possibly holding a reference.

use alloc::borrow::Cow;

use super::tok::Tok;
use super::{Parser, Result};
use crate::env;
use crate::error::ParseErrorKind;
use crate::lexer;

impl<'i> Parser<'_, 'i> {
    /// The current token's text, environment-substituted, still borrowed when nothing changed.
    #[inline]
    pub(super) fn substituted_val(&self) -> Result<Cow<'i, str>> {
        match &self.cur {
            Some(cur) => self.substituted(cur),
            None => Ok(Cow::Borrowed("")),
        }
    }

    #[inline(always)]
    pub(super) fn substituted(&self, token: &Tok) -> Result<Cow<'i, str>> {
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
}
