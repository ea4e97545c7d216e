//! The `import` directive inside the parser: a snippet's or files' tokens spliced in front of
//! the rest of the input, within the parse's limits. Reading files is the
//! [resolver](crate::import)'s job.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::server_block::FileId;
use super::sources::Frame;
use super::tok::{Tok, TooLarge};
use super::{MAX_FILE_EXPANSIONS, MAX_SNIPPET_EXPANSIONS, Parser, Result};
use crate::error::{MAX_TOKENS, ParseErrorKind};
use crate::lexer;

impl Parser<'_, '_> {
    /// Replaces `import PATTERN` (the cursor is on `import`) by the tokens it names and
    /// leaves the cursor on the first of them.
    pub(super) fn do_import(&mut self) -> Result<()> {
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

    /// Adds `tokens` to the imported tokens, which must stay within [`MAX_TOKENS`].
    fn count_imported(&mut self, tokens: usize) -> Result<()> {
        self.imported_tokens = self.imported_tokens.saturating_add(tokens);
        if self.imported_tokens > MAX_TOKENS {
            return Err(self.err(ParseErrorKind::TooManyTokens));
        }
        Ok(())
    }

    /// The tokens of the files `pattern` names, each file given its id.
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
}
