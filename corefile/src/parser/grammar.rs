//! The grammar of caddy's `parse.go`: server blocks, their keys, and the directives of a
//! block with their tokens (what each token does to a directive is [`step`]'s to say).

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::names::{Found, directive_id, group_by_directive};
use super::server_block::{FileId, ServerBlock, Token};
use super::snippets::snippet_name;
use super::step::{Step, step};
use super::tok::{Kind, output};
use super::{Parser, Result};
use crate::error::ParseErrorKind;

impl<'i> Parser<'_, 'i> {
    /// Every server block of the input; a snippet definition yields none.
    pub(super) fn parse_all(&mut self) -> Result<Vec<ServerBlock<'i>>> {
        let mut blocks = Vec::new();
        while self.next() {
            let block = self.begin()?;
            if !block.keys.is_empty() {
                blocks.push(block);
            }
        }
        Ok(blocks)
    }

    /// One server block, the cursor on its first key: its keys, then a snippet's body or
    /// the block's directives.
    fn begin(&mut self) -> Result<ServerBlock<'i>> {
        let mut block = ServerBlock {
            keys: self.addresses()?,
            ..ServerBlock::default()
        };
        if self.eof {
            return Ok(block);
        }
        if let Some(name) = snippet_name(&block.keys) {
            self.define_snippet(String::from(name))?;
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

    /// The keys of a block: they end at a `{`, or at a new line unless the last one ends with
    /// a comma.
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

    /// The directives of a block, between braces or, without a `{`, up to the end.
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

    /// Reads the directives of a block into it, up to its `}` or the end of the input.
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
            // A successful `next` always leaves a current token.
            let Some(cur) = self.cur else {
                break;
            };
            match step(&cur, self.is_new_line(), &mut nesting) {
                Step::End => {
                    self.back();
                    break;
                }
                Step::UnmatchedClose => return Err(self.err(ParseErrorKind::UnmatchedCloseBrace)),
                Step::Import => {
                    self.do_import()?;
                    self.back();
                }
                Step::Take | Step::Substitute => {
                    tokens.push(output(&cur, self.substituted(&cur)?));
                }
            }
        }
        if nesting > 0 {
            return Err(self.err(ParseErrorKind::UnexpectedEof));
        }
        Ok(())
    }
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
