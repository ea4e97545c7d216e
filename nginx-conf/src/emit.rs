//! Writing trees back as text: losslessly (every byte of trivia and spelling as stored), or
//! canonically formatted in nginx's own style.

use crate::error::EmitError;
use crate::tree::{Block, Directive, End};
use crate::trivia::{Piece, Trivia};
use crate::word::Quote;
use alloc::vec::Vec;

impl Block {
    /// Writes the tree as nginx.conf text, every word and every piece of trivia as stored.
    /// For a parsed, unedited file this is the input, byte for byte.
    ///
    /// # Errors
    ///
    /// [`EmitError::MissingSpace`] or [`EmitError::InvalidTrivia`] if edits left two tokens
    /// touching or a comment that would swallow what follows it; the output would not read back
    /// as this tree.
    pub fn to_bytes(&self) -> Result<Vec<u8>, EmitError> {
        let mut out = Vec::new();
        self.write(&mut out, true)?;
        Ok(out)
    }

    fn write(&self, out: &mut Vec<u8>, file: bool) -> Result<(), EmitError> {
        for directive in &self.directives {
            directive.write(out)?;
        }
        self.trailing.check(file)?;
        out.extend_from_slice(self.trailing.as_bytes());
        Ok(())
    }

    /// Formats the tree in nginx's style: one statement per line, blocks indented by four
    /// spaces, comments kept on lines of their own, at most one blank line kept between
    /// statements. Spellings (quotes, escapes) and Lua bodies are kept as written.
    pub fn format(&self) -> Vec<u8> {
        self.format_with(b"    ")
    }

    /// Formats the tree as [`Block::format`] does, indenting with `indent` per level.
    pub fn format_with(&self, indent: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        self.format_into(&mut out, indent, 0);
        out
    }

    fn format_into(&self, out: &mut Vec<u8>, indent: &[u8], depth: usize) {
        for (i, directive) in self.directives.iter().enumerate() {
            format_trivia(out, &directive.leading, indent, depth, i > 0);
            for arg in &directive.args {
                format_trivia(out, arg.space(), indent, depth, false);
            }
            format_trivia(out, &directive.before_end, indent, depth, false);
            push_indent(out, indent, depth);
            out.extend_from_slice(directive.name.spelling());
            for word in directive.arg_words() {
                out.push(b' ');
                out.extend_from_slice(word.spelling());
            }
            match &directive.end {
                End::Semicolon => out.extend_from_slice(b";\n"),
                End::Block(block) => {
                    out.extend_from_slice(b" {\n");
                    block.format_into(out, indent, depth + 1);
                    push_indent(out, indent, depth);
                    out.extend_from_slice(b"}\n");
                }
                End::Lua(body) => {
                    out.extend_from_slice(b" {");
                    out.extend_from_slice(body.as_bytes());
                    out.extend_from_slice(b"}\n");
                }
            }
        }
        format_trivia(
            out,
            &self.trailing,
            indent,
            depth,
            !self.directives.is_empty(),
        );
    }
}

fn push_indent(out: &mut Vec<u8>, indent: &[u8], depth: usize) {
    for _ in 0..depth {
        out.extend_from_slice(indent);
    }
}

/// Writes the comments of `trivia` on lines of their own, and one blank line for a run of
/// blank lines when `blank_lines` allows it.
fn format_trivia(
    out: &mut Vec<u8>,
    trivia: &Trivia,
    indent: &[u8],
    depth: usize,
    blank_lines: bool,
) {
    let mut blank_allowed = blank_lines;
    for piece in trivia.pieces() {
        match piece {
            Piece::Space(space) => {
                if blank_allowed && space.iter().filter(|&&b| b == b'\n').count() >= 2 {
                    out.push(b'\n');
                    blank_allowed = false;
                }
            }
            Piece::Comment(text) => {
                push_indent(out, indent, depth);
                out.push(b'#');
                out.extend_from_slice(text.strip_suffix(b"\r").unwrap_or(text));
                out.push(b'\n');
                blank_allowed = blank_lines;
            }
        }
    }
}

impl Directive {
    fn write(&self, out: &mut Vec<u8>) -> Result<(), EmitError> {
        self.leading.check(false)?;
        out.extend_from_slice(self.leading.as_bytes());
        out.extend_from_slice(self.name.spelling());
        let mut previous = &self.name;
        for arg in &self.args {
            // After a closing quote nginx starts a new word at `)`: `if ($a = "x")`.
            let paren_after_quote =
                previous.quote() != Quote::None && arg.word().spelling().first() == Some(&b')');
            if !arg.space().starts_with_space() && !paren_after_quote {
                return Err(EmitError::MissingSpace);
            }
            previous = arg.word();
            arg.space().check(false)?;
            out.extend_from_slice(arg.space().as_bytes());
            out.extend_from_slice(arg.word().spelling());
        }
        if !self.before_end.is_empty() && !self.before_end.starts_with_space() {
            return Err(EmitError::MissingSpace);
        }
        let last = self.args.last().map_or(&self.name, |a| a.word());
        if self.before_end.is_empty() && !matches!(self.end, End::Semicolon) && last.absorbs_brace()
        {
            return Err(EmitError::MissingSpace);
        }
        self.before_end.check(false)?;
        out.extend_from_slice(self.before_end.as_bytes());
        match &self.end {
            End::Semicolon => out.push(b';'),
            End::Block(block) => {
                out.push(b'{');
                block.write(out, false)?;
                out.push(b'}');
            }
            End::Lua(body) => {
                out.push(b'{');
                out.extend_from_slice(body.as_bytes());
                out.push(b'}');
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::parse;

    #[test]
    fn lossless_round_trip() {
        let text: &[u8] = b"# head\r\nhttp {\n  server  {listen 80 ;  # c\n  if ($a = \"x\") { return 404 'a\\'b'; }\n  content_by_lua_block { ngx.say(\"}\") }}\n}\n# tail";
        assert_eq!(parse(text).unwrap().to_bytes().unwrap(), text);
    }

    #[test]
    fn formatting_is_nginx_style_and_reads_back() {
        let text = b"http { # c\n server {listen 80;\n\n\n location / { return 200 \"a b\" ; } } }";
        let formatted = parse(text).unwrap().format();
        assert_eq!(
            core::str::from_utf8(&formatted).unwrap(),
            "http {\n    # c\n    server {\n        listen 80;\n\n        location / {\n            return 200 \"a b\";\n        }\n    }\n}\n"
        );
        assert_eq!(parse(&formatted).unwrap().format(), formatted);
    }
}
