//! crossplane's JSON payload (nginxinc/crossplane 0.5.8, `crossplane parse`), computed from
//! the lossless tree.
//!
//! Where crossplane's lexer agrees with nginx the payload is crossplane's, key order included:
//! arguments keep their escapes as written except an escaped quote inside quotes, `if` loses
//! its parentheses, a Lua body is one argument, comments between the words of a statement
//! follow the statement. Where crossplane disagrees with nginx the payload follows nginx:
//! words split as nginx splits them, every `*_by_lua_block` name of [`crate::LuaBlocks`] is
//! Lua, lexical errors are nginx's. crossplane's directive table (its "not allowed here" and
//! argument-count errors) is not reproduced: it is a semantic check, and a stale one.

mod json;

pub use json::Json;

use crate::error::ErrorKind;
use crate::include::{File, Files};
use crate::tree::{Block, End};
use crate::trivia::{Piece, Trivia};
use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// Which payload to build, as the flags of `crossplane parse`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// `--include-comments`: every comment becomes a `#` statement.
    pub comments: bool,
    /// `--combine`: one config entry with includes inlined, each statement tagged with its file.
    pub combine: bool,
    /// `--single-file`: no `includes` keys (load the [`Files`] with [`Files::main_only`]).
    pub single: bool,
}

impl Options {
    /// Sets `comments` (`--include-comments`).
    #[must_use]
    pub fn with_comments(mut self, comments: bool) -> Self {
        self.comments = comments;
        self
    }

    /// Sets `combine` (`--combine`).
    #[must_use]
    pub fn with_combine(mut self, combine: bool) -> Self {
        self.combine = combine;
        self
    }

    /// Sets `single` (`--single-file`).
    #[must_use]
    pub fn with_single(mut self, single: bool) -> Self {
        self.single = single;
        self
    }
}

fn text(bytes: &[u8]) -> Json {
    Json::Str(String::from_utf8_lossy(bytes).into_owned())
}

fn count_lf(bytes: &[u8]) -> u32 {
    u32::try_from(bytes.iter().filter(|&&b| b == b'\n').count()).unwrap_or(u32::MAX)
}

/// crossplane's `_prepare_if_args`: strips the parentheses around an `if` condition.
fn prepare_if_args(args: &mut Vec<Cow<'_, [u8]>>) {
    let (Some(first), Some(last)) = (args.first(), args.last()) else {
        return;
    };
    if !first.starts_with(b"(") || !last.ends_with(b")") {
        return;
    }
    if let Some(first) = args.first_mut() {
        *first = Cow::Owned(
            first
                .get(1..)
                .unwrap_or_default()
                .trim_ascii_start()
                .to_vec(),
        );
    }
    if let Some(last) = args.last_mut() {
        let len = last.len().saturating_sub(1);
        *last = Cow::Owned(
            last.get(..len)
                .unwrap_or_default()
                .trim_ascii_end()
                .to_vec(),
        );
    }
    if args.last().is_some_and(|a| a.is_empty()) {
        args.pop();
    }
    if args.first().is_some_and(|a| a.is_empty()) {
        args.remove(0);
    }
}

/// Walks one file in source order, counting lines as crossplane does.
struct Walker<'a> {
    files: &'a Files,
    file: usize,
    options: Options,
    line: u32,
    /// Include directives of this file by position, with the files they bring in.
    includes: BTreeMap<&'a [usize], &'a [usize]>,
    /// Files being inlined (combine mode), to stop include cycles.
    stack: Vec<usize>,
}

impl<'a> Walker<'a> {
    fn new(files: &'a Files, file: usize, options: Options, stack: Vec<usize>) -> Self {
        let includes = files
            .files
            .get(file)
            .map(|f| {
                f.includes
                    .iter()
                    .map(|i| (i.at.as_slice(), i.files.as_slice()))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            files,
            file,
            options,
            line: 1,
            includes,
            stack,
        }
    }

    fn path(&self) -> &'a str {
        self.files
            .files
            .get(self.file)
            .map_or("", |f| f.path.as_str())
    }

    fn statement(&self, directive: Json, line: u32) -> Vec<(String, Json)> {
        let mut pairs = Vec::with_capacity(5);
        if self.options.combine {
            pairs.push((String::from("file"), Json::Str(String::from(self.path()))));
        }
        pairs.push((String::from("directive"), directive));
        pairs.push((String::from("line"), Json::Int(i64::from(line))));
        pairs.push((String::from("args"), Json::Array(Vec::new())));
        pairs
    }

    fn comment(&self, text_bytes: &[u8], line: u32, tagged: bool) -> Json {
        let text_bytes = text_bytes.strip_suffix(b"\r").unwrap_or(text_bytes);
        let mut pairs = if tagged {
            self.statement(text(b"#"), line)
        } else {
            alloc::vec![
                (String::from("directive"), text(b"#")),
                (String::from("line"), Json::Int(i64::from(line))),
                (String::from("args"), Json::Array(Vec::new())),
            ]
        };
        pairs.push((String::from("comment"), text(text_bytes)));
        Json::Object(pairs)
    }

    /// Advances over trivia; comments go to `out` when `keep` (with their own line) or to
    /// `inline` (the statement's line, given later).
    fn trivia(&mut self, trivia: &Trivia, out: &mut Vec<Json>, keep: bool) {
        for piece in trivia.pieces() {
            match piece {
                Piece::Space(space) => self.line = self.line.saturating_add(count_lf(space)),
                Piece::Comment(body) => {
                    if keep {
                        out.push(self.comment(body, self.line, true));
                    }
                }
            }
        }
    }

    fn block(&mut self, block: &Block, at: &mut Vec<usize>) -> Vec<Json> {
        let mut out = Vec::with_capacity(block.directives.len());
        for (i, directive) in block.directives.iter().enumerate() {
            at.push(i);
            self.trivia(&directive.leading, &mut out, self.options.comments);
            let line = self.line;
            self.line = self
                .line
                .saturating_add(count_lf(directive.name.spelling()));
            let mut inline = Vec::new();
            let mut args: Vec<Cow<'_, [u8]>> = Vec::with_capacity(directive.args.len() + 1);
            for arg in &directive.args {
                self.collect(arg.space(), &mut inline);
                self.line = self.line.saturating_add(count_lf(arg.word().spelling()));
                args.push(arg.word().crossplane_value());
            }
            self.collect(&directive.before_end, &mut inline);
            let name = directive.name.crossplane_value();
            if *name == *b"if" {
                prepare_if_args(&mut args);
            }
            let mut block_json = None;
            match &directive.end {
                End::Semicolon => {}
                End::Lua(body) => {
                    self.line = self.line.saturating_add(count_lf(body.as_bytes()));
                    args.push(Cow::Borrowed(body.as_bytes()));
                }
                End::Block(inner) => block_json = Some(self.block(inner, at)),
            }
            let included = self.includes.get(at.as_slice()).copied();
            if let (Some(indexes), true) = (included, self.options.combine) {
                for &index in indexes {
                    if !self.stack.contains(&index) {
                        let mut stack = self.stack.clone();
                        stack.push(index);
                        let mut walker = Walker::new(self.files, index, self.options, stack);
                        out.extend(walker.file());
                    }
                }
            } else {
                let mut pairs = self.statement(text(&name), line);
                if let Some((_, Json::Array(list))) = pairs.last_mut() {
                    list.extend(args.iter().map(|a| text(a)));
                }
                if let (Some(indexes), false) = (included, self.options.single) {
                    let list = indexes
                        .iter()
                        .map(|&i| Json::Int(i64::try_from(i).unwrap_or(0)));
                    pairs.push((String::from("includes"), Json::Array(list.collect())));
                }
                if let Some(block) = block_json {
                    pairs.push((String::from("block"), Json::Array(block)));
                }
                out.push(Json::Object(pairs));
            }
            for body in inline {
                out.push(self.comment(&body, line, false));
            }
            at.pop();
        }
        self.trivia(&block.trailing, &mut out, self.options.comments);
        out
    }

    /// Advances over trivia inside a statement, collecting its comments.
    fn collect(&mut self, trivia: &Trivia, inline: &mut Vec<Vec<u8>>) {
        for piece in trivia.pieces() {
            match piece {
                Piece::Space(space) => self.line = self.line.saturating_add(count_lf(space)),
                Piece::Comment(body) => inline.push(body.to_vec()),
            }
        }
    }

    fn file(&mut self) -> Vec<Json> {
        match self.files.files.get(self.file).map(|f| &f.config) {
            Some(Ok(config)) => self.block(config, &mut Vec::new()),
            _ => Vec::new(),
        }
    }
}

/// The errors crossplane records for a file, in order: missing includes, then the error that
/// stopped the parse.
fn file_errors(file: &File, options: Options) -> Vec<(String, Option<u32>)> {
    let mut errors = Vec::new();
    if let Ok(config) = &file.config
        && !options.single
    {
        for include in &file.includes {
            if let Some(error) = &include.error
                && let ErrorKind::IncludeNotFound(path) = error.kind()
            {
                let line = directive_line(config, &include.at);
                errors.push((
                    format!("[Errno 2] No such file or directory: '{path}'"),
                    Some(line),
                ));
            }
        }
    }
    if let Err(error) = &file.config {
        errors.push((format!("{error}"), Some(error.line())));
    }
    errors
}

fn directive_line(block: &Block, at: &[usize]) -> u32 {
    let mut block = block;
    let mut line = 0;
    for &i in at {
        let Some(directive) = block.directives.get(i) else {
            break;
        };
        line = directive.line;
        if let End::Block(inner) = &directive.end {
            block = inner;
        }
    }
    line
}

fn error_json(message: &str, line: Option<u32>, file: Option<&str>) -> Json {
    let mut pairs = Vec::with_capacity(3);
    if let Some(file) = file {
        pairs.push((String::from("file"), Json::Str(String::from(file))));
    }
    pairs.push((String::from("error"), Json::Str(String::from(message))));
    let line = line.map_or(Json::Null, |l| Json::Int(i64::from(l)));
    pairs.push((String::from("line"), line));
    Json::Object(pairs)
}

fn status(failed: bool) -> Json {
    Json::Str(String::from(if failed { "failed" } else { "ok" }))
}

/// The payload `crossplane parse` prints for these files.
pub fn payload(files: &Files, options: Options) -> Json {
    let mut all_errors = Vec::new();
    let mut configs = Vec::new();
    let mut combined_errors = Vec::new();
    for (index, file) in files.files.iter().enumerate() {
        let errors = file_errors(file, options);
        for (message, line) in &errors {
            all_errors.push(error_json(message, *line, Some(&file.path)));
            combined_errors.push(error_json(message, *line, None));
        }
        if options.combine {
            continue;
        }
        let parsed = Walker::new(files, index, options, alloc::vec![index]).file();
        configs.push(Json::object([
            ("file", Json::Str(file.path.clone())),
            ("status", status(!errors.is_empty())),
            (
                "errors",
                Json::Array(
                    errors
                        .iter()
                        .map(|(m, l)| error_json(m, *l, None))
                        .collect(),
                ),
            ),
            ("parsed", Json::Array(parsed)),
        ]));
    }
    let failed = !all_errors.is_empty();
    if options.combine {
        let parsed = Walker::new(files, 0, options, alloc::vec![0]).file();
        let main = files.files.first().map_or("", |f| f.path.as_str());
        configs.push(Json::object([
            ("file", Json::Str(String::from(main))),
            ("status", status(failed)),
            ("errors", Json::Array(combined_errors)),
            ("parsed", Json::Array(parsed)),
        ]));
    }
    Json::object([
        ("status", status(failed)),
        ("errors", Json::Array(all_errors)),
        ("config", Json::Array(configs)),
    ])
}
