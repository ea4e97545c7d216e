//! The lossless syntax tree: blocks of directives, each word and each piece of trivia kept as
//! written, and the builder methods that make trees in code.

use crate::error::EmitError;
use crate::lua;
use crate::trivia::Trivia;
use crate::word::Word;
use alloc::vec::Vec;
use core::fmt;
use core::ops::{Deref, DerefMut};
use core::slice;

/// A list of directives and the trivia after the last one: the body of a `{ }` block, or a
/// whole file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block {
    /// The statements, in order.
    pub directives: Vec<Directive>,
    /// Whitespace and comments after the last statement (before `}` or the end of the file).
    pub trailing: Trivia,
}

/// A whole configuration file: the body of an implicit top-level block.
pub type Config = Block;

/// One statement: a name, its arguments, and how it ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    /// Trivia before the name.
    pub leading: Trivia,
    /// The first word. nginx looks it up as a directive, but inside blocks such as `map` or
    /// `types` it is just the first word of an entry, so any word is allowed.
    pub name: Word,
    /// The other words.
    pub args: Args,
    /// Trivia between the last word and the `;` or `{`.
    pub before_end: Trivia,
    /// `;`, a block, or a Lua body.
    pub end: End,
    /// The line of the name in its file (1-based), or 0 for a directive made in code.
    pub line: u32,
}

/// An argument with the trivia before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    space: Trivia,
    word: Word,
}

/// The arguments of a directive: a list of [`Arg`] used as a slice (`args[0]`, `args.len()`,
/// `args.iter()`), to which [`Args::push`] appends. One argument, the most common case, is
/// kept without a heap allocation.
#[derive(Clone, Default)]
pub struct Args(ArgsRepr);

#[derive(Clone)]
enum ArgsRepr {
    One(Arg),
    Many(Vec<Arg>),
}

impl Default for ArgsRepr {
    fn default() -> Self {
        Self::Many(Vec::new())
    }
}

impl Args {
    /// No arguments.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an argument.
    pub fn push(&mut self, arg: Arg) {
        self.0 = match core::mem::take(&mut self.0) {
            ArgsRepr::Many(mut args) if !args.is_empty() => {
                args.push(arg);
                ArgsRepr::Many(args)
            }
            ArgsRepr::Many(_) => ArgsRepr::One(arg),
            ArgsRepr::One(first) => {
                let mut args = Vec::with_capacity(4);
                args.push(first);
                args.push(arg);
                ArgsRepr::Many(args)
            }
        };
    }
}

impl Deref for Args {
    type Target = [Arg];

    fn deref(&self) -> &[Arg] {
        match &self.0 {
            ArgsRepr::One(arg) => slice::from_ref(arg),
            ArgsRepr::Many(args) => args,
        }
    }
}

impl DerefMut for Args {
    fn deref_mut(&mut self) -> &mut [Arg] {
        match &mut self.0 {
            ArgsRepr::One(arg) => slice::from_mut(arg),
            ArgsRepr::Many(args) => args,
        }
    }
}

impl From<Vec<Arg>> for Args {
    fn from(args: Vec<Arg>) -> Self {
        Self(ArgsRepr::Many(args))
    }
}

impl FromIterator<Arg> for Args {
    fn from_iter<I: IntoIterator<Item = Arg>>(iter: I) -> Self {
        let mut iter = iter.into_iter();
        let Some(first) = iter.next() else {
            return Self::new();
        };
        let Some(second) = iter.next() else {
            return Self(ArgsRepr::One(first));
        };
        let mut args = Vec::with_capacity(iter.size_hint().0.saturating_add(2));
        args.push(first);
        args.push(second);
        args.extend(iter);
        Self(ArgsRepr::Many(args))
    }
}

impl<'a> IntoIterator for &'a Args {
    type Item = &'a Arg;
    type IntoIter = slice::Iter<'a, Arg>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Args {
    type Item = &'a mut Arg;
    type IntoIter = slice::IterMut<'a, Arg>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl PartialEq for Args {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Args {}

impl fmt::Debug for Args {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// How a directive ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// `;`.
    Semicolon,
    /// `{ ... }` holding nginx directives.
    Block(Block),
    /// `{ ... }` of a `*_by_lua_block` directive: the raw bytes between the braces.
    Lua(LuaBody),
}

/// The raw text of a `*_by_lua_block` body, between (and excluding) its braces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LuaBody {
    raw: Vec<u8>,
}

impl LuaBody {
    pub(crate) fn from_raw(raw: &[u8]) -> Self {
        Self { raw: raw.to_vec() }
    }

    /// Checks that `code` reads back as the same body: its braces, strings and long brackets
    /// balance as lua-nginx-module counts them, and no Lua token (a lexeme and the text before
    /// it) reaches 2048 bytes, half of nginx's buffer, so that it reads back the same wherever
    /// it falls in the buffer.
    ///
    /// # Errors
    ///
    /// [`EmitError::LuaBody`] or [`EmitError::Nul`].
    pub fn new(code: impl AsRef<[u8]>) -> Result<Self, EmitError> {
        let code = code.as_ref();
        if code.contains(&0) {
            return Err(EmitError::Nul);
        }
        if !lua::body_reads_back(code) {
            return Err(EmitError::LuaBody);
        }
        Ok(Self::from_raw(code))
    }

    /// The body as written.
    pub fn as_bytes(&self) -> &[u8] {
        &self.raw
    }
}

impl Arg {
    pub(crate) fn from_parts(space: Trivia, word: Word) -> Self {
        Self { space, word }
    }

    /// An argument preceded by one space.
    pub fn new(word: Word) -> Self {
        Self::from_parts(Trivia::space(), word)
    }

    /// An argument preceded by `space`, which must begin with whitespace so that the argument
    /// stays a separate word.
    ///
    /// # Errors
    ///
    /// [`EmitError::MissingSpace`] otherwise.
    pub fn with_space(space: Trivia, word: Word) -> Result<Self, EmitError> {
        if !space.starts_with_space() {
            return Err(EmitError::MissingSpace);
        }
        Ok(Self::from_parts(space, word))
    }

    /// The trivia before the word.
    pub fn space(&self) -> &Trivia {
        &self.space
    }

    /// The word.
    pub fn word(&self) -> &Word {
        &self.word
    }

    /// Replaces the word, keeping the spacing.
    pub fn set_word(&mut self, word: Word) {
        self.word = word;
    }
}

impl Directive {
    /// A directive `name;` with no arguments, on a line of its own once formatted. The name is
    /// quoted like any value ([`Word::new`]).
    ///
    /// # Errors
    ///
    /// As [`Word::new`].
    pub fn new(name: impl AsRef<[u8]>) -> Result<Self, EmitError> {
        Ok(Self::with_name(Word::new(name)?))
    }

    /// A directive `name;` with an already made name word.
    pub fn with_name(name: Word) -> Self {
        Self {
            leading: Trivia::empty(),
            name,
            args: Args::new(),
            before_end: Trivia::empty(),
            end: End::Semicolon,
            line: 0,
        }
    }

    /// Adds an argument holding `value` (see [`Word::new`] for quoting and refusals).
    ///
    /// # Errors
    ///
    /// As [`Word::new`].
    pub fn arg(mut self, value: impl AsRef<[u8]>) -> Result<Self, EmitError> {
        self.args.push(Arg::new(Word::new(value)?));
        Ok(self)
    }

    /// Adds arguments holding `values`.
    ///
    /// # Errors
    ///
    /// As [`Word::new`].
    pub fn args<I>(mut self, values: I) -> Result<Self, EmitError>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        for value in values {
            self = self.arg(value)?;
        }
        Ok(self)
    }

    /// Makes it a block directive holding `block` (a [`Block`] or a `Vec<Directive>`).
    #[must_use]
    pub fn block(mut self, block: impl Into<Block>) -> Self {
        self.end = End::Block(block.into());
        self
    }

    /// Makes it a Lua block directive with `body`.
    #[must_use]
    pub fn lua(mut self, body: LuaBody) -> Self {
        self.end = End::Lua(body);
        self
    }

    /// The argument words.
    pub fn arg_words(&self) -> impl ExactSizeIterator<Item = &Word> {
        self.args.iter().map(Arg::word)
    }

    /// Whether the name reads as `name` (after decoding).
    pub fn is(&self, name: &str) -> bool {
        *self.name.value() == *name.as_bytes()
    }

    /// The nested block, if the directive has one.
    pub fn children(&self) -> Option<&Block> {
        match &self.end {
            End::Block(block) => Some(block),
            End::Semicolon | End::Lua(_) => None,
        }
    }

    /// The nested block, mutably.
    pub fn children_mut(&mut self) -> Option<&mut Block> {
        match &mut self.end {
            End::Block(block) => Some(block),
            End::Semicolon | End::Lua(_) => None,
        }
    }
}

impl From<Vec<Directive>> for Block {
    fn from(directives: Vec<Directive>) -> Self {
        Self::new(directives)
    }
}

impl Block {
    /// A block holding `directives`.
    pub fn new(directives: Vec<Directive>) -> Self {
        Self {
            directives,
            trailing: Trivia::empty(),
        }
    }

    /// The directives named `name`, at this level only.
    pub fn find<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Directive> + 'a {
        self.directives.iter().filter(move |d| d.is(name))
    }

    /// The directives named `name`, mutably, at this level only.
    pub fn find_mut<'a>(
        &'a mut self,
        name: &'a str,
    ) -> impl Iterator<Item = &'a mut Directive> + 'a {
        self.directives.iter_mut().filter(move |d| d.is(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn arg(value: &str) -> Arg {
        Arg::new(Word::new(value).unwrap())
    }

    #[test]
    fn args_behave_as_one_list_however_stored() {
        let mut pushed = Args::new();
        assert!(pushed.is_empty());
        for (i, value) in ["a", "b", "c"].into_iter().enumerate() {
            pushed.push(arg(value));
            assert_eq!(pushed.len(), i + 1);
            assert_eq!(pushed.last().unwrap().word().spelling(), value.as_bytes());
        }
        let collected: Args = ["a", "b", "c"].into_iter().map(arg).collect();
        let from_vec = Args::from(vec![arg("a"), arg("b"), arg("c")]);
        assert_eq!(pushed, collected);
        assert_eq!(pushed, from_vec);
        let one: Args = core::iter::once(arg("a")).collect();
        assert_eq!(one, Args::from(vec![arg("a")]));
        assert_ne!(one, pushed);
        assert_eq!(Args::new(), Args::from(Vec::new()));
        let mut edited = one.clone();
        edited[0].set_word(Word::new("z").unwrap());
        for a in &mut edited {
            assert_eq!(a.word().spelling(), b"z");
        }
        assert_eq!(alloc::format!("{:?}", Args::new()), "[]");
    }
}
