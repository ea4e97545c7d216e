//! The Dispenser: the cursor over one directive's tokens that CoreDNS plugins' setup code
//! walks (caddy v1 `caddyfile/dispenser.go`, `docs/corefile.md` §3).

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use crate::parser::Token;

/// An error of a plugin's setup, printed as CoreDNS prints it: `plugin/NAME: ...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginError {
    /// The plugin (`forward`, `cache`, ...).
    pub plugin: &'static str,
    /// Where, when the plugin reports a position: file and line.
    pub position: Option<(String, usize)>,
    /// The message.
    pub message: String,
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plugin/{}: ", self.plugin)?;
        if let Some((file, line)) = &self.position {
            write!(f, "{file}:{line} - Error during parsing: ")?;
        }
        f.write_str(&self.message)
    }
}

impl core::error::Error for PluginError {}

/// The message of `plugin.ErrOnce`.
pub const ERR_ONCE: &str = "this plugin can only be used once per Server Block";

/// A cursor over one directive's tokens (all its occurrences in a block).
#[derive(Clone, Debug)]
pub struct Dispenser<'a> {
    plugin: &'static str,
    filename: &'a str,
    tokens: &'a [Token<'a>],
    files: &'a [Arc<str>],
    /// Go's cursor: `None` before the first token.
    cursor: Option<usize>,
    nesting: usize,
}

impl<'a> Dispenser<'a> {
    /// A cursor before the first token of `tokens`; `filename` names the main input in
    /// errors and `files` (the tokens' block's file table) the imported files.
    pub fn new(
        plugin: &'static str,
        filename: &'a str,
        tokens: &'a [Token<'a>],
        files: &'a [Arc<str>],
    ) -> Self {
        Dispenser {
            plugin,
            filename,
            tokens,
            files,
            cursor: None,
            nesting: 0,
        }
    }

    fn token(&self) -> Option<&'a Token<'a>> {
        self.tokens.get(self.cursor?)
    }

    fn following(&self) -> Option<&'a Token<'a>> {
        match self.cursor {
            None => self.tokens.first(),
            Some(c) => self.tokens.get(c.checked_add(1)?),
        }
    }

    /// Advances to the next token, whatever its line.
    pub fn next_token(&mut self) -> bool {
        if self.following().is_none() {
            return false;
        }
        self.cursor = Some(self.cursor.map_or(0, |c| c.saturating_add(1)));
        true
    }

    /// Advances only if the next token is on the current token's line.
    pub fn next_arg(&mut self) -> bool {
        let same_line = match (self.token(), self.following()) {
            (None, Some(_)) => self.cursor.is_none(),
            (Some(cur), Some(next)) => cur.is_same_line_as(next),
            _ => false,
        };
        same_line && self.next_token()
    }

    fn back(&mut self) {
        self.cursor = self.cursor.and_then(|c| c.checked_sub(1));
    }

    /// The current token's text (`""` when there is none).
    pub fn val(&self) -> &'a str {
        self.token().map_or("", |t| &*t.text)
    }

    /// The rest of the line, stopping before a `{`.
    pub fn remaining_args(&mut self) -> Vec<&'a str> {
        let mut args = Vec::new();
        while self.next_arg() {
            if self.val() == "{" {
                self.back();
                break;
            }
            args.push(self.val());
        }
        args
    }

    /// Steps through one level of `{ ... }` opened on the current line: true on each token
    /// inside, false at the closing `}`, for `{` `}` closed at once, and at EOF.
    pub fn next_block(&mut self) -> bool {
        if self.nesting > 0 {
            if !self.next_token() {
                return false;
            }
            if self.val() == "}" {
                self.nesting -= 1;
                return false;
            }
            return true;
        }
        if !self.next_arg() {
            return false;
        }
        if self.val() != "{" {
            self.back();
            return false;
        }
        if !self.next_token() || self.val() == "}" {
            return false;
        }
        self.nesting += 1;
        true
    }

    /// The file and line of the current token (line 0 when there is none).
    fn position(&self) -> (String, usize) {
        self.token().map_or((String::from(self.filename), 0), |t| {
            (
                String::from(t.file.path(self.files).unwrap_or(self.filename)),
                t.line as usize,
            )
        })
    }

    /// An error at the current token: `FILE:LINE - Error during parsing: MESSAGE`.
    pub fn err(&self, message: impl Into<String>) -> PluginError {
        PluginError {
            plugin: self.plugin,
            position: Some(self.position()),
            message: message.into(),
        }
    }

    /// Caddy's `SyntaxErr`: `FILE:LINE - Syntax error: Unexpected token 'VAL', expecting
    /// 'EXPECTED'`.
    pub fn syntax_err(&self, expected: &str) -> PluginError {
        let (file, line) = self.position();
        self.plain(format!(
            "{file}:{line} - Syntax error: Unexpected token '{}', expecting '{expected}'",
            self.val()
        ))
    }

    /// Caddy's `ArgErr`: wrong argument count at the current token.
    pub fn arg_err(&self) -> PluginError {
        if self.val() == "{" {
            return self.err("Unexpected token '{', expecting argument");
        }
        self.err(format!(
            "Wrong argument count or unexpected line ending after '{}'",
            self.val()
        ))
    }

    /// An error without a position (plugins' own `fmt.Errorf`).
    pub fn plain(&self, message: impl Into<String>) -> PluginError {
        PluginError {
            plugin: self.plugin,
            position: None,
            message: message.into(),
        }
    }
}
