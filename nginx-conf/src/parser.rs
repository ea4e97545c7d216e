//! Statements into a tree, as `ngx_conf_parse` nests them: `{` opens a block, `}` closes it,
//! each file balances its own braces, and `*_by_lua_block` bodies are scanned as Lua.

use crate::error::{Error, ErrorKind};
use crate::lexer::{End as LexEnd, Lexer, RawWord};
use crate::lua::LuaBlocks;
use crate::tree::{Arg, Block, Config, Directive, End, LuaBody};
use crate::trivia::Trivia;
use crate::word::Word;
use alloc::vec::Vec;

/// Deepest nesting of blocks accepted (nginx has no limit; this bounds recursion).
pub const MAX_DEPTH: usize = 200;

/// Parser settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options<'a> {
    /// Which directives take a raw Lua body.
    pub lua_blocks: LuaBlocks<'a>,
}

impl<'a> Options<'a> {
    /// Options with this set of Lua block directives.
    #[must_use]
    pub fn with_lua_blocks(mut self, lua_blocks: LuaBlocks<'a>) -> Self {
        self.lua_blocks = lua_blocks;
        self
    }
}

/// Parses a whole file with the default [`Options`].
///
/// # Errors
///
/// The first error nginx would report, with nginx's message and line.
pub fn parse(input: &[u8]) -> Result<Config, Error> {
    parse_with(input, &Options::default())
}

/// Parses a whole file.
///
/// # Errors
///
/// The first error nginx would report, with nginx's message and line.
pub fn parse_with(input: &[u8], options: &Options<'_>) -> Result<Config, Error> {
    let mut parser = Parser {
        lexer: Lexer::new(input),
        lua_blocks: options.lua_blocks,
        words: Vec::new(),
    };
    parser.block(0)
}

struct Parser<'a, 'o> {
    lexer: Lexer<'a>,
    lua_blocks: LuaBlocks<'o>,
    words: Vec<RawWord>,
}

impl Parser<'_, '_> {
    fn slice(&self, start: usize, end: usize) -> &[u8] {
        self.lexer.input.get(start..end).unwrap_or_default()
    }

    fn trivia(&self, start: usize, end: usize) -> Trivia {
        Trivia::from_input(self.lexer.input, start, end)
    }

    fn word(&self, word: &RawWord) -> Word {
        Word::from_input(self.lexer.input, word.start, word.end)
    }

    /// Parses statements until the end of the file (`depth` 0) or the `}` of a block.
    fn block(&mut self, depth: usize) -> Result<Block, Error> {
        let mut directives = Vec::new();
        loop {
            let before = self.lexer.pos;
            let (at, opens) = match self.lexer.statement(&mut self.words)? {
                LexEnd::FileDone if depth == 0 => {
                    return Ok(Block {
                        directives,
                        trailing: self.trivia(before, self.lexer.input.len()),
                    });
                }
                LexEnd::FileDone => return Err(self.lexer.error(ErrorKind::UnclosedBlock)),
                LexEnd::BlockDone(at) if depth > 0 => {
                    return Ok(Block {
                        directives,
                        trailing: self.trivia(before, at),
                    });
                }
                LexEnd::BlockDone(at) => {
                    return Err(Error::new(ErrorKind::Unexpected(b'}'), self.lexer.line, at));
                }
                LexEnd::Semicolon(at) => (at, false),
                LexEnd::BlockStart(at) => (at, true),
            };
            let mut directive = self.statement(before, at)?;
            if opens {
                directive.end = if self.lua_blocks.contains(&directive.name.value()) {
                    let close = self.lexer.lua_body()?;
                    End::Lua(LuaBody::from_raw(self.slice(at + 1, close)))
                } else if depth + 1 >= MAX_DEPTH {
                    return Err(Error::new(ErrorKind::TooDeep, self.lexer.line, at));
                } else {
                    End::Block(self.block(depth + 1)?)
                };
            }
            directives.push(directive);
        }
    }

    /// Builds a directive (ending with `;` for now) from the words just read.
    fn statement(&self, before: usize, at: usize) -> Result<Directive, Error> {
        let Some((first, rest)) = self.words.split_first() else {
            return Err(self.lexer.error(ErrorKind::UnexpectedEof));
        };
        let mut previous_end = first.end;
        let args = rest
            .iter()
            .map(|w| {
                let space = self.trivia(previous_end, w.start);
                previous_end = w.end;
                Arg::from_parts(space, self.word(w))
            })
            .collect();
        Ok(Directive {
            leading: self.trivia(before, first.start),
            name: self.word(first),
            args,
            before_end: self.trivia(previous_end, at),
            end: End::Semicolon,
            line: first.line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(input: &str) -> Option<(ErrorKind, u32)> {
        parse(input.as_bytes())
            .err()
            .map(|e| (e.kind().clone(), e.line()))
    }

    #[test]
    fn nesting_and_positions() {
        let config = parse(b"events {}\nhttp {\n  server { listen 80; }\n}\n").unwrap();
        assert_eq!(config.directives.len(), 2);
        let http = &config.directives[1];
        assert_eq!(http.line, 2);
        let server = &http.children().unwrap().directives[0];
        assert_eq!(server.line, 3);
        assert_eq!(
            &*server.children().unwrap().directives[0].args[0]
                .word()
                .value(),
            b"80"
        );
    }

    #[test]
    fn each_file_balances_its_braces() {
        // ngx_conf_parse: `}` at file level, EOF inside a block (line = last line + 1).
        assert_eq!(kind("events {} }"), Some((ErrorKind::Unexpected(b'}'), 1)));
        assert_eq!(
            kind("events {} http {\n"),
            Some((ErrorKind::UnclosedBlock, 2))
        );
        assert_eq!(
            kind("events {} worker_processes 1\n"),
            Some((ErrorKind::UnexpectedEof, 2))
        );
        assert_eq!(
            kind("location / {\nreturn 200\n}\n"),
            Some((ErrorKind::Unexpected(b'}'), 3))
        );
    }

    #[test]
    fn lua_blocks_are_raw() {
        let config = parse(b"set_by_lua_block $v{ return {1} }\nx;").unwrap();
        let lua = &config.directives[0];
        assert_eq!(lua.args.len(), 1);
        assert!(matches!(&lua.end, End::Lua(b) if b.as_bytes() == b" return {1} "));
        // Not in statement position or ended by `;`: not Lua.
        let config = parse(b"server_name content_by_lua_block;").unwrap();
        assert_eq!(config.directives[0].args.len(), 1);
        let quoted = parse(b"\"content_by_lua_block\" { # }").unwrap();
        assert!(matches!(&quoted.directives[0].end, End::Lua(_)));
        let off = Options::default().with_lua_blocks(LuaBlocks::Disabled);
        assert!(parse_with(b"content_by_lua_block { a; }", &off).is_ok());
    }

    #[test]
    fn lua_errors_report_lua_nginx_module_lines() {
        assert_eq!(
            kind("events {} http { server { location / { content_by_lua_block { ngx.say(1) \n"),
            Some((ErrorKind::LuaUnterminated, 1))
        );
    }

    #[test]
    fn depth_is_bounded() {
        let deep = "a {".repeat(MAX_DEPTH + 1);
        assert_eq!(kind(&deep).map(|k| k.0), Some(ErrorKind::TooDeep));
        let ok = alloc::format!(
            "{}{}",
            "a {".repeat(MAX_DEPTH - 1),
            "}".repeat(MAX_DEPTH - 1)
        );
        assert!(parse(ok.as_bytes()).is_ok());
    }
}
