//! `*_by_lua_block` bodies, scanned as lua-nginx-module does
//! (`ngx_http_lua_conf_lua_block_parse` and `ngx_http_lua_conf_read_lua_token` in
//! `src/ngx_http_lua_directive.c`, lexemes from `util/gen-lexer-c`).
//!
//! After the `{` that opens the block, the module searches its read buffer for the leftmost
//! Lua lexeme: `{`, `}`, a long string `[=*[`, a long comment `--[=*[`, a stray `]=*]`, a line
//! comment `--...`, or a string quoted with `"` or `'` that closes on the same line. Braces
//! are counted; the body is every byte up to the `}` that balances the opening one. The
//! search sees at most nginx's 4096-byte buffer, which is simulated here as in the lexer.

use crate::error::{Error, ErrorKind};
use crate::lexer::{BUFFER, Lexer};
use alloc::vec::Vec;

/// Which directives take a raw Lua body instead of an nginx block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum LuaBlocks<'a> {
    /// The 19 `*_by_lua_block` directives of lua-nginx-module ([`LUA_NGINX_MODULE`]) and
    /// `preread_by_lua_block` of stream-lua-nginx-module.
    #[default]
    Module,
    /// Every directive whose name ends with `_by_lua_block`.
    AnySuffix,
    /// Exactly these names.
    Names(&'a [&'a [u8]]),
    /// None: every block is an nginx block.
    Disabled,
}

/// The `*_by_lua_block` directives of lua-nginx-module (`src/ngx_http_lua_module.c`).
pub const LUA_NGINX_MODULE: [&str; 19] = [
    "access_by_lua_block",
    "balancer_by_lua_block",
    "body_filter_by_lua_block",
    "content_by_lua_block",
    "exit_worker_by_lua_block",
    "header_filter_by_lua_block",
    "init_by_lua_block",
    "init_worker_by_lua_block",
    "log_by_lua_block",
    "precontent_by_lua_block",
    "proxy_ssl_certificate_by_lua_block",
    "proxy_ssl_verify_by_lua_block",
    "rewrite_by_lua_block",
    "server_rewrite_by_lua_block",
    "set_by_lua_block",
    "ssl_certificate_by_lua_block",
    "ssl_client_hello_by_lua_block",
    "ssl_session_fetch_by_lua_block",
    "ssl_session_store_by_lua_block",
];

/// The stream-lua-nginx-module directive that ingress-nginx uses in its stream section.
const STREAM_PREREAD: &str = "preread_by_lua_block";

impl LuaBlocks<'_> {
    /// Whether a directive with this (decoded) name takes a Lua body.
    pub fn contains(&self, name: &[u8]) -> bool {
        match self {
            Self::Module => {
                name == STREAM_PREREAD.as_bytes()
                    || LUA_NGINX_MODULE.iter().any(|n| n.as_bytes() == name)
            }
            Self::AnySuffix => name.ends_with(b"_by_lua_block"),
            Self::Names(names) => names.contains(&name),
            Self::Disabled => false,
        }
    }
}

/// A Lua lexeme, as lua-nginx-module's lexer reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lexeme {
    Open,
    Close,
    /// A long string or long comment: `[`, `level` × `=`, `[`; must be closed in the buffer.
    LongBracket {
        level: usize,
    },
    /// Anything else that stops the search (strings, line comments, stray `]]`).
    Other,
}

/// Bytes that may begin a Lua lexeme: `{`, `}`, `[`, `]`, `-`, `"` and `'`.
// Evaluated at compile time: an out-of-range index would fail the build, not panic.
#[allow(clippy::indexing_slicing)]
const LEXEME_START: [bool; 256] = {
    let mut table = [false; 256];
    let starts = b"{}[]-\"'";
    let mut i = 0;
    while i < starts.len() {
        table[starts[i] as usize] = true;
        i += 1;
    }
    table
};

fn may_start_lexeme(byte: u8) -> bool {
    LEXEME_START.get(usize::from(byte)) == Some(&true)
}

/// Matches a long bracket `[=*[` at `at`, returning its level and end.
fn long_open(input: &[u8], at: usize, limit: usize) -> Option<(usize, usize)> {
    let window = input.get(at..limit)?;
    let (&first, rest) = window.split_first()?;
    if first != b'[' {
        return None;
    }
    let level = rest.iter().take_while(|&&b| b == b'=').count();
    (rest.get(level) == Some(&b'[')).then_some((level, at + level + 2))
}

/// Matches a quoted string at `at` (the quote byte), which must close before a newline.
fn quoted_end(input: &[u8], at: usize, limit: usize) -> Option<usize> {
    let window = input.get(at..limit)?;
    let (&quote, rest) = window.split_first()?;
    let mut i = 0;
    while let Some(&b) = rest.get(i) {
        match b {
            b'\n' => return None,
            b'\\' => match rest.get(i + 1) {
                Some(&next) if next != b'\n' => i += 2,
                _ => return None,
            },
            _ if b == quote => return Some(at + i + 2),
            _ => i += 1,
        }
    }
    None
}

/// The leftmost lexeme in `input[from..limit]`: its kind, start and end.
fn find_lexeme(input: &[u8], from: usize, limit: usize) -> Option<(Lexeme, usize, usize)> {
    let window = input.get(from..limit)?;
    let mut offset = 0;
    while let Some(found) = window
        .get(offset..)
        .and_then(|rest| rest.iter().position(|&b| may_start_lexeme(b)))
    {
        let at = from + offset + found;
        offset += found + 1;
        let rest = input.get(at..limit).unwrap_or_default();
        match rest {
            [b'{', ..] => return Some((Lexeme::Open, at, at + 1)),
            [b'}', ..] => return Some((Lexeme::Close, at, at + 1)),
            [b'[', ..] => {
                if let Some((level, end)) = long_open(input, at, limit) {
                    return Some((Lexeme::LongBracket { level }, at, end));
                }
            }
            [b'-', b'-', ..] => {
                if let Some((level, end)) = long_open(input, at + 2, limit) {
                    return Some((Lexeme::LongBracket { level }, at, end));
                }
                let len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                return Some((Lexeme::Other, at, at + len));
            }
            [b']', tail @ ..] => {
                let level = tail.iter().take_while(|&&b| b == b'=').count();
                if tail.get(level) == Some(&b']') {
                    return Some((Lexeme::Other, at, at + level + 2));
                }
            }
            [b'"' | b'\'', ..] => {
                if let Some(end) = quoted_end(input, at, limit) {
                    return Some((Lexeme::Other, at, end));
                }
            }
            _ => {}
        }
    }
    None
}

/// The closing long bracket of `level` in `input[from..limit]`: the offset just after it.
fn long_close(input: &[u8], from: usize, limit: usize, level: usize) -> Option<usize> {
    let window = input.get(from..limit)?;
    let len = level + 2;
    window
        .windows(len)
        .position(|w| {
            w.first() == Some(&b']')
                && w.last() == Some(&b']')
                && w.get(1..len - 1)
                    .is_some_and(|eq| eq.iter().all(|&b| b == b'='))
        })
        .map(|i| from + i + len)
}

fn closing_bracket(level: usize) -> Vec<u8> {
    let mut closing = Vec::with_capacity(level + 2);
    closing.push(b']');
    closing.resize(level + 1, b'=');
    closing.push(b']');
    closing
}

fn count_lines(bytes: &[u8]) -> u32 {
    let count = bytes.iter().filter(|&&b| b == b'\n').count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

impl Lexer<'_> {
    /// Scans a Lua body starting right after its `{`; returns the offset of the closing `}`.
    pub(crate) fn lua_body(&mut self) -> Result<usize, Error> {
        let input = self.input;
        let len = input.len();
        let mut level = 1usize;
        // The line of the last `{`, which nginx reports when the file ends.
        let mut block_line = self.line;
        loop {
            let token_line = self.line;
            // nginx's `start`: where the current token began in its buffer.
            let mut start = self.pos;
            let mut refilled = false;
            let lexeme = loop {
                if self.pos >= self.last || (self.last - self.pos < BUFFER / 2 && self.last < len) {
                    if self.last >= len {
                        return Err(Error::new(ErrorKind::LuaUnterminated, block_line, self.pos));
                    }
                    if self.last - start >= BUFFER {
                        return Err(Error::new(ErrorKind::LuaTooLong, token_line, start));
                    }
                    self.last = len.min(start + BUFFER);
                }
                match find_lexeme(input, self.pos, self.last) {
                    Some((Lexeme::LongBracket { level }, at, open_end)) => {
                        self.line = self.line.saturating_add(count_lines(
                            input.get(self.pos..at).unwrap_or_default(),
                        ));
                        self.pos = at;
                        let Some(end) = long_close(input, open_end, self.last, level) else {
                            let kind = ErrorKind::LuaMissingLongBracket(closing_bracket(level));
                            return Err(self.error(kind));
                        };
                        break (Lexeme::Other, end);
                    }
                    Some((lexeme, _, end)) => break (lexeme, end),
                    None => {
                        if self.last >= len {
                            return Err(Error::new(
                                ErrorKind::LuaUnterminated,
                                block_line,
                                self.pos,
                            ));
                        }
                        // A second refill would drop the start of the token from nginx's
                        // buffer and corrupt the Lua code: refuse, as a too long block.
                        if self.last - self.pos >= BUFFER || refilled {
                            return Err(Error::new(ErrorKind::LuaTooLong, token_line, start));
                        }
                        refilled = true;
                        start = self.pos;
                        self.pos = self.last;
                        self.last = len.min(start + BUFFER);
                    }
                }
            };
            let (lexeme, end) = lexeme;
            self.line = self
                .line
                .saturating_add(count_lines(input.get(self.pos..end).unwrap_or_default()));
            self.pos = end;
            match lexeme {
                Lexeme::Open => {
                    block_line = self.line;
                    level += 1;
                }
                Lexeme::Close => {
                    level -= 1;
                    if level == 0 {
                        return Ok(end - 1);
                    }
                }
                Lexeme::LongBracket { .. } | Lexeme::Other => {}
            }
        }
    }
}

/// Checks that `body` reads back as the same Lua body wherever it is written: its lexemes
/// balance as lua-nginx-module counts them, and each token (the text before a lexeme and the
/// lexeme) is shorter than half of nginx's buffer, which lua-nginx-module always has in view
/// before it searches, so the result does not depend on where the body falls in the buffer.
pub(crate) fn body_reads_back(body: &[u8]) -> bool {
    let mut text = Vec::with_capacity(body.len() + 1);
    text.extend_from_slice(body);
    text.push(b'}');
    let len = text.len();
    let mut pos = 0;
    let mut level = 1usize;
    loop {
        let Some((lexeme, _, end)) = find_lexeme(&text, pos, len) else {
            return false;
        };
        let end = match lexeme {
            Lexeme::LongBracket { level } => match long_close(&text, end, len, level) {
                Some(close) => close,
                None => return false,
            },
            _ => end,
        };
        if end - pos >= BUFFER / 2 {
            return false;
        }
        pos = end;
        match lexeme {
            Lexeme::Open => level += 1,
            Lexeme::Close => {
                level -= 1;
                if level == 0 {
                    return end == len;
                }
            }
            Lexeme::LongBracket { .. } | Lexeme::Other => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(input: &[u8]) -> Result<&[u8], ErrorKind> {
        let mut lexer = Lexer::new(input);
        let end = lexer.lua_body().map_err(|e| e.kind().clone())?;
        Ok(&input[..end])
    }

    #[test]
    fn braces_nest_and_strings_hide_them() {
        // lua-nginx-module: `{` and `}` are counted outside strings and comments.
        assert_eq!(body(b" t = { a = {} } }x"), Ok(&b" t = { a = {} } "[..]));
        assert_eq!(body(b" say(\"}\") }"), Ok(&b" say(\"}\") "[..]));
        assert_eq!(body(b" say('a\\'}') }"), Ok(&b" say('a\\'}') "[..]));
    }

    #[test]
    fn long_brackets_and_comments() {
        assert_eq!(body(b" s = [[ } ]] }"), Ok(&b" s = [[ } ]] "[..]));
        assert_eq!(
            body(b" s = [==[ }]] ]==] }"),
            Ok(&b" s = [==[ }]] ]==] "[..])
        );
        // `--[[` is a long comment, not a line comment (earlier pattern wins).
        assert_eq!(body(b" --[[ } ]] x }"), Ok(&b" --[[ } ]] x "[..]));
        assert_eq!(body(b" -- }\n x }"), Ok(&b" -- }\n x "[..]));
        assert_eq!(
            body(b" s = [=[ ]] }"),
            Err(ErrorKind::LuaMissingLongBracket(b"]=]".to_vec()))
        );
    }

    #[test]
    fn an_unclosed_quote_is_not_a_string() {
        // `-- it's` : the quote has no partner on its line, so scanning goes on.
        assert_eq!(
            body(b" a = 1 -- it's\n b }"),
            Ok(&b" a = 1 -- it's\n b "[..])
        );
        assert_eq!(body(b" x = \"{\n }\n }"), Ok(&b" x = \"{\n }\n "[..]));
    }

    #[test]
    fn hash_is_lua_length_not_a_comment() {
        assert_eq!(body(b" n = #t }"), Ok(&b" n = #t "[..]));
    }

    #[test]
    fn unterminated_and_too_long() {
        assert_eq!(body(b" x = 1"), Err(ErrorKind::LuaUnterminated));
        let mut long = alloc::vec![b'x'; 6000];
        long.push(b'}');
        assert_eq!(body(&long), Err(ErrorKind::LuaTooLong));
        let mut fits = alloc::vec![b'x'; 4000];
        fits.push(b'}');
        assert!(body(&fits).is_ok());
    }

    #[test]
    fn builder_bodies_must_read_back_anywhere() {
        assert!(body_reads_back(b" ngx.say([[ } ]]) "));
        assert!(!body_reads_back(b" ngx.say(1) } "));
        assert!(!body_reads_back(b" t = { "));
        assert!(!body_reads_back(b" s = [[ "));
        assert!(!body_reads_back(&alloc::vec![b'x'; 2048]));
        assert!(body_reads_back(&alloc::vec![b'x'; 2000]));
    }

    #[test]
    fn configurable_names() {
        assert!(LuaBlocks::Module.contains(b"server_rewrite_by_lua_block"));
        assert!(LuaBlocks::Module.contains(b"preread_by_lua_block"));
        assert!(!LuaBlocks::Module.contains(b"foo_by_lua_block"));
        assert!(LuaBlocks::AnySuffix.contains(b"foo_by_lua_block"));
        assert!(!LuaBlocks::Disabled.contains(b"content_by_lua_block"));
        assert!(LuaBlocks::Names(&[b"x"]).contains(b"x"));
    }
}
