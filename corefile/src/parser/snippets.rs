//! Snippets: a block keyed `(name)` defines tokens that `import name` splices in later.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::sources::Texts;
use super::tok::{Kind, Tok};
use super::{Parser, Result};
use crate::env::{self, Env};
use crate::error::ParseErrorKind;

impl Parser<'_, '_> {
    /// Defines the snippet `name` from the block the cursor is on (at its `{`), whose tokens
    /// `import name` splices in from then on.
    pub(super) fn define_snippet(&mut self, name: String) -> Result<()> {
        if self.snippet_names.contains_key(&name) {
            return Err(self.err(ParseErrorKind::SnippetRedeclared(name)));
        }
        let tokens = self.snippet_tokens()?;
        if imports_itself(&tokens, &self.texts, &name, self.opts.env) {
            return Err(self.err(ParseErrorKind::SnippetDepth));
        }
        self.snippet_names.insert(name, self.snippets.len());
        self.snippets.push(tokens);
        Ok(())
    }

    /// The body of a snippet, the cursor on its `{`: the tokens up to the matching `}`.
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

/// The snippet name of a block whose only key is `(name)`.
pub(super) fn snippet_name<'k>(keys: &'k [Cow<'_, str>]) -> Option<&'k str> {
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
