//! `include`: following includes through a caller-supplied [`Resolver`], as crossplane does
//! (each file parsed once, in the order its first `include` is reached), with nginx's rules
//! for paths: relative patterns resolve against the main file's folder, glob matches are
//! sorted and may be none, and a missing explicit file is an error.

use crate::MAX_FILES;
use crate::error::{Error, ErrorKind};
use crate::glob::is_glob;
use crate::parser::{Options, parse_with};
use crate::tree::{Block, Config, Directive, End};
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

/// Supplies the files that `include` names. The crate does no I/O: a binary reads the file
/// system (the `std` feature provides [`crate::FsResolver`]), a test hands out strings.
pub trait Resolver {
    /// The contents of the file at `path`, or `None` if it does not exist.
    fn read(&mut self, path: &str) -> Option<Vec<u8>>;

    /// The files matching the glob `pattern` (in any order; they are sorted afterwards).
    fn glob(&mut self, pattern: &str) -> Vec<String>;
}

/// One file of an include tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    /// The path as it was opened: the main path as given, an included path joined to the main
    /// file's folder, or a glob match.
    pub path: String,
    /// The parsed file, or the error that stopped nginx reading it.
    pub config: Result<Config, Error>,
    /// The `include` directives of this file, in source order.
    pub includes: Vec<Include>,
}

/// One `include` directive and what it brought in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Include {
    /// Where the directive is: indexes into `directives` from the top of the file down.
    pub at: Vec<usize>,
    /// Indexes into [`Files::files`] of the included files, in nginx's order.
    pub files: Vec<usize>,
    /// The error for a missing explicit file.
    pub error: Option<Error>,
}

/// Every file of a configuration: the main file first, then the included ones in the order
/// their first `include` was reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Files {
    /// The files; `files[0]` is the main file.
    pub files: Vec<File>,
}

/// Joins a relative include pattern to the folder of the main file, as crossplane's
/// `os.path.join(os.path.dirname(main), pattern)` and nginx's conf prefix do.
fn join(folder: &str, pattern: &str) -> String {
    if pattern.starts_with('/') || folder.is_empty() {
        return String::from(pattern);
    }
    let mut path = String::from(folder);
    if !path.ends_with('/') {
        path.push('/');
    }
    path.push_str(pattern);
    path
}

/// The folder part of `path` (`os.path.dirname`).
fn folder(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) => "/",
        Some(i) => path.get(..i).unwrap_or_default(),
        None => "",
    }
}

/// The line nginx reports for a directive's error: the line of its `;`.
fn end_line(directive: &Directive) -> u32 {
    let mut bytes = 0usize;
    for arg in &directive.args {
        bytes += count_lf(arg.space().as_bytes()) + count_lf(arg.word().spelling());
    }
    bytes += count_lf(directive.name.spelling()) + count_lf(directive.before_end.as_bytes());
    directive
        .line
        .saturating_add(u32::try_from(bytes).unwrap_or(u32::MAX))
}

fn count_lf(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// Collects the `include` directives with one argument, depth first, in source order.
fn find_includes<'a>(
    block: &'a Block,
    at: &mut Vec<usize>,
    out: &mut Vec<(Vec<usize>, &'a Directive)>,
) {
    for (i, directive) in block.directives.iter().enumerate() {
        at.push(i);
        if directive.is("include") && directive.args.len() == 1 {
            out.push((at.clone(), directive));
        }
        if let End::Block(inner) = &directive.end {
            find_includes(inner, at, out);
        }
        at.pop();
    }
}

impl Files {
    /// Parses `main` (read through `resolver`) and every file it includes.
    ///
    /// # Errors
    ///
    /// When the main file itself does not exist, or the include tree has more than
    /// [`MAX_FILES`] files; every other problem is recorded in the [`File`] it belongs to.
    pub fn load(
        main: &str,
        resolver: &mut dyn Resolver,
        options: &Options<'_>,
    ) -> Result<Self, Error> {
        let text = resolver
            .read(main)
            .ok_or_else(|| Error::new(ErrorKind::IncludeNotFound(String::from(main)), 0, 0))?;
        Self::load_text(main, &text, resolver, options)
    }

    /// Parses only the main file, without following includes (crossplane's `single`).
    pub fn main_only(main: &str, text: &[u8], options: &Options<'_>) -> Self {
        Self {
            files: alloc::vec![File {
                path: String::from(main),
                config: parse_with(text, options).map_err(|e| e.in_file(main)),
                includes: Vec::new(),
            }],
        }
    }

    /// Parses the main file from `text` (named `main`) and every file it includes.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::TooManyFiles`] if the include tree has more than [`MAX_FILES`] files.
    pub fn load_text(
        main: &str,
        text: &[u8],
        resolver: &mut dyn Resolver,
        options: &Options<'_>,
    ) -> Result<Self, Error> {
        let base = folder(main);
        let mut files = Vec::new();
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        index.insert(String::from(main), 0);
        files.push(File {
            path: String::from(main),
            config: parse_with(text, options).map_err(|e| e.in_file(main)),
            includes: Vec::new(),
        });
        let mut next = 0;
        while let Some(file) = files.get(next) {
            let path = file.path.clone();
            let requests: Vec<(Vec<usize>, String, u32, u32)> = match &file.config {
                Ok(config) => {
                    let mut found = Vec::new();
                    find_includes(config, &mut Vec::new(), &mut found);
                    found
                        .into_iter()
                        .filter_map(|(at, directive)| {
                            let arg = directive.args.first()?;
                            let pattern = String::from_utf8_lossy(&arg.word().value()).into_owned();
                            Some((
                                at,
                                join(base, &pattern),
                                directive.line,
                                end_line(directive),
                            ))
                        })
                        .collect()
                }
                Err(_) => Vec::new(),
            };
            let mut includes = Vec::with_capacity(requests.len());
            for (at, pattern, line, end) in requests {
                let mut include = Include {
                    at,
                    files: Vec::new(),
                    error: None,
                };
                let names: Vec<(String, Option<Vec<u8>>)> = if is_glob(pattern.as_bytes()) {
                    let mut names = resolver.glob(&pattern);
                    names.sort();
                    names.into_iter().map(|name| (name, None)).collect()
                } else if let Some(text) = resolver.read(&pattern) {
                    alloc::vec![(pattern, Some(text))]
                } else {
                    let kind = ErrorKind::IncludeNotFound(pattern);
                    include.error = Some(Error::new(kind, end, 0).in_file(&path));
                    Vec::new()
                };
                for (name, text) in names {
                    let len = index.len();
                    let slot = *index.entry(name.clone()).or_insert(len);
                    if slot == len {
                        if len >= MAX_FILES {
                            return Err(Error::new(ErrorKind::TooManyFiles, line, 0).in_file(&path));
                        }
                        let config = match text.or_else(|| resolver.read(&name)) {
                            Some(text) => parse_with(&text, options),
                            None => Err(Error::new(ErrorKind::IncludeNotFound(name.clone()), 0, 0)),
                        };
                        files.push(File {
                            config: config.map_err(|e| e.in_file(&name)),
                            path: name,
                            includes: Vec::new(),
                        });
                    }
                    include.files.push(slot);
                }
                includes.push(include);
            }
            if let Some(file) = files.get_mut(next) {
                file.includes = includes;
            }
            next += 1;
        }
        Ok(Self { files })
    }
}
