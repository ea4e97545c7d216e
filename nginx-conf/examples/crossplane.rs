//! A drop-in for the `crossplane` command line (nginxinc/crossplane 0.5.8): `parse` prints
//! crossplane's JSON payload, `build` writes configuration files from such a payload, `format`
//! pretty-prints a file.
//!
//! ```text
//! cargo run -p nginx-conf --example crossplane -- parse nginx.conf --indent 4
//! cargo run -p nginx-conf --example crossplane -- build payload.json -d out/ --stdout
//! cargo run -p nginx-conf --example crossplane -- format nginx.conf
//! ```
#![allow(clippy::std_instead_of_alloc, clippy::std_instead_of_core)]
// `value["key"]` on a serde_json `Value` cannot panic: a missing key reads as `null`.
#![allow(clippy::indexing_slicing)]

use nginx_conf::crossplane::{self, payload};
use nginx_conf::{
    Arg, Block, Directive, Files, FsResolver, LuaBlocks, LuaBody, Options, Trivia, Word,
};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "usage: crossplane <command> [options]

commands:
  parse FILE [-o OUT] [-i NUM] [--include-comments] [--combine] [--single-file]
  build FILE [-d PATH] [-f] [-i NUM | -t] [--no-headers] [--stdout] [-v]
  format FILE [-o OUT] [-i NUM | -t]";

/// Command-line flags, as crossplane spells them.
#[derive(Default)]
struct Flags {
    file: Option<String>,
    out: Option<String>,
    dir: Option<String>,
    indent: Option<usize>,
    tabs: bool,
    comments: bool,
    combine: bool,
    single: bool,
    force: bool,
    headers: bool,
    stdout: bool,
    verbose: bool,
}

fn flags(args: &[String]) -> Result<Flags, String> {
    let mut flags = Flags {
        headers: true,
        ..Flags::default()
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "-o" | "--out" => flags.out = Some(value(arg)?),
            "-d" | "--dir" => flags.dir = Some(value(arg)?),
            "-i" | "--indent" => {
                let n = value(arg)?;
                flags.indent = Some(n.parse().map_err(|_| format!("invalid indent {n:?}"))?);
            }
            "-t" | "--tabs" => flags.tabs = true,
            "--include-comments" => flags.comments = true,
            "--combine" => flags.combine = true,
            "--single-file" => flags.single = true,
            "-f" | "--force" => flags.force = true,
            "--no-headers" => flags.headers = false,
            "--stdout" => flags.stdout = true,
            "-v" | "--verbose" => flags.verbose = true,
            other if other.starts_with('-') => return Err(format!("unknown option {other}")),
            other if flags.file.is_none() => flags.file = Some(other.to_owned()),
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    Ok(flags)
}

fn write_out(out: Option<&str>, text: &[u8]) -> Result<(), String> {
    match out {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("{path}: {e}")),
        None => std::io::stdout()
            .write_all(text)
            .map_err(|e| format!("stdout: {e}")),
    }
}

fn parse(flags: &Flags, file: &str) -> Result<(), String> {
    let options = Options::default();
    let mut resolver = FsResolver::new();
    let files = if flags.single {
        let text = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
        Files::main_only(file, &text, &options)
    } else {
        Files::load(file, &mut resolver, &options).map_err(|e| e.to_string())?
    };
    let options = crossplane::Options::default()
        .with_comments(flags.comments)
        .with_combine(flags.combine)
        .with_single(flags.single);
    let mut json = payload(&files, options).to_python_string(flags.indent);
    json.push('\n');
    write_out(flags.out.as_deref(), json.as_bytes())
}

fn indent_unit(flags: &Flags) -> Vec<u8> {
    if flags.tabs {
        b"\t".to_vec()
    } else {
        vec![b' '; flags.indent.unwrap_or(4)]
    }
}

fn format(flags: &Flags, file: &str) -> Result<(), String> {
    let text = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let config = nginx_conf::parse(&text).map_err(|e| e.in_file(file).to_string())?;
    write_out(
        flags.out.as_deref(),
        &config.format_with(&indent_unit(flags)),
    )
}

fn strings(value: &Value, what: &str) -> Result<Vec<String>, String> {
    value
        .as_array()
        .ok_or_else(|| format!("{what} is not a list"))?
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{what} holds a non-string"))
        })
        .collect()
}

/// A word for a crossplane argument. crossplane's arguments keep nginx's escapes as written
/// (`t\tn` means TAB), so the argument is reused as the spelling when it is one bare word, or
/// wrapped in double quotes; only if neither reads back as one word is it quoted as a plain
/// value.
fn word(arg: &str) -> Result<Word, String> {
    let bare = !arg.starts_with(['"', '\'']);
    if bare && let Ok(word) = Word::from_spelling(arg) {
        return Ok(word);
    }
    let quoted = format!("\"{}\"", arg.replace('"', "\\\""));
    Word::from_spelling(quoted)
        .or_else(|_| Word::new(arg))
        .map_err(|e| format!("{arg:?}: {e}"))
}

/// Builds a block from crossplane statements: comments become comment lines, `if` gets its
/// parentheses back, Lua block directives take their last argument as the body.
fn block(statements: &Value) -> Result<Block, String> {
    let list = statements
        .as_array()
        .ok_or("\"parsed\"/\"block\" is not a list")?;
    let mut directives = Vec::new();
    let mut comments: Vec<u8> = Vec::new();
    for stmt in list {
        let name = stmt["directive"]
            .as_str()
            .ok_or("statement without \"directive\"")?;
        if name == "#" {
            let text = stmt["comment"].as_str().unwrap_or_default();
            comments
                .extend_from_slice(Trivia::comment(text).map_err(|e| e.to_string())?.as_bytes());
            continue;
        }
        let mut args = strings(&stmt["args"], "\"args\"")?;
        let mut directive = Directive::with_name(word(name)?);
        if name == "if" && !args.is_empty() {
            args.insert(0, "(".to_owned());
            args.push(")".to_owned());
        }
        let lua = LuaBlocks::Module.contains(name.as_bytes()) && stmt.get("block").is_none();
        let body = if lua { args.pop() } else { None };
        for arg in &args {
            directive.args.push(Arg::new(word(arg)?));
        }
        if let Some(body) = body {
            directive = directive.lua(LuaBody::new(body).map_err(|e| format!("{name}: {e}"))?);
        } else if let Some(inner) = stmt.get("block") {
            directive = directive.block(block(inner)?);
        }
        directive.leading =
            Trivia::new(std::mem::take(&mut comments)).map_err(|e| e.to_string())?;
        directives.push(directive);
    }
    let mut block = Block::new(directives);
    block.trailing = Trivia::new(comments).map_err(|e| e.to_string())?;
    Ok(block)
}

const HEADER: &str =
    "# This config was built from JSON using nginx-conf (crossplane compatible).\n\n";

fn build(flags: &Flags, file: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let payload: Value = serde_json::from_str(&text).map_err(|e| format!("{file}: {e}"))?;
    let dir = flags.dir.clone().unwrap_or_else(|| ".".to_owned());
    let configs = payload["config"]
        .as_array()
        .ok_or("payload has no \"config\" list")?;
    for config in configs {
        let path = config["file"].as_str().ok_or("config without \"file\"")?;
        let path = Path::new(&dir).join(path);
        let mut out = Vec::new();
        if flags.headers {
            out.extend_from_slice(HEADER.as_bytes());
        }
        out.extend(block(&config["parsed"])?.format_with(&indent_unit(flags)));
        if flags.stdout {
            let mut stdout = std::io::stdout();
            let header = format!("# {}\n", path.display());
            stdout
                .write_all(header.as_bytes())
                .and_then(|()| stdout.write_all(&out))
                .and_then(|()| stdout.write_all(b"\n"))
                .map_err(|e| format!("stdout: {e}"))?;
            continue;
        }
        if path.exists() && !flags.force {
            return Err(format!("{} exists (use -f to overwrite)", path.display()));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, &out).map_err(|e| format!("{}: {e}", path.display()))?;
        if flags.verbose {
            println!("wrote to {}", path.display());
        }
    }
    Ok(())
}

fn run(args: &[String]) -> Result<(), String> {
    let (command, rest) = args.split_first().ok_or(USAGE)?;
    let flags = flags(rest)?;
    let file = flags.file.clone().ok_or(USAGE)?;
    match command.as_str() {
        "parse" => parse(&flags, &file),
        "build" => build(&flags, &file),
        "format" => format(&flags, &file),
        _ => Err(USAGE.to_owned()),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("crossplane: {message}");
            ExitCode::FAILURE
        }
    }
}
