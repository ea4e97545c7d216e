//! A token's text: borrowed from the parsed input, or owned. It means what
//! `Cow<'a, str>` means in two words instead of three, which makes a parsed [`Token`] 24
//! bytes: a large Corefile's token list is the bulk of what a parse writes (and what dropping
//! it reads back), and most texts are borrowed.
//!
//! [`Token`]: crate::parser::Token

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use core::borrow::Borrow;
use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::ops::Deref;

/// The text of a [`Token`](crate::parser::Token): a `&'a str` into the parsed input, or a
/// `String` of its own (a text the lexer unescaped, an environment substitution, a token
/// of an imported file). It dereferences to `str`; compares, hashes and prints as one; can be
/// looked up by `&str` in a map keyed by `Text`; and converts into a `Cow` without a copy.
#[derive(Clone)]
pub struct Text<'a>(Repr<'a>);

/// Owned texts are rare, so they take one more box: both variants then fit two words.
#[derive(Clone)]
enum Repr<'a> {
    Borrowed(&'a str),
    // One word where a `String` takes three: the point of this type.
    #[allow(clippy::box_collection)]
    Owned(Box<String>),
}

impl<'a> Text<'a> {
    /// A text borrowed from `text`.
    pub const fn borrowed(text: &'a str) -> Self {
        Text(Repr::Borrowed(text))
    }

    /// The text as a `str`.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Borrowed(text) => text,
            Repr::Owned(text) => text,
        }
    }

    /// Whether the text is borrowed from the parsed input.
    pub fn is_borrowed(&self) -> bool {
        matches!(self.0, Repr::Borrowed(_))
    }

    /// The text as a `Cow`: borrowed for as long as this one is, or a copy of an owned text.
    pub fn to_cow(&self) -> Cow<'a, str> {
        match &self.0 {
            Repr::Borrowed(text) => Cow::Borrowed(text),
            Repr::Owned(text) => Cow::Owned(String::clone(text)),
        }
    }

    /// The text as a `String`, copied only if it is borrowed.
    pub fn into_string(self) -> String {
        match self.0 {
            Repr::Borrowed(text) => String::from(text),
            Repr::Owned(text) => *text,
        }
    }

    /// The same text, owning it.
    pub fn into_owned(self) -> Text<'static> {
        match self.0 {
            Repr::Borrowed(text) => Text::from(String::from(text)),
            Repr::Owned(text) => Text(Repr::Owned(text)),
        }
    }
}

impl Default for Text<'_> {
    fn default() -> Self {
        Text::borrowed("")
    }
}

impl<'a> From<&'a str> for Text<'a> {
    fn from(text: &'a str) -> Self {
        Text::borrowed(text)
    }
}

impl From<String> for Text<'_> {
    fn from(text: String) -> Self {
        Text(Repr::Owned(Box::new(text)))
    }
}

impl<'a> From<Cow<'a, str>> for Text<'a> {
    fn from(text: Cow<'a, str>) -> Self {
        match text {
            Cow::Borrowed(text) => Text::borrowed(text),
            Cow::Owned(text) => Text::from(text),
        }
    }
}

impl<'a> From<Text<'a>> for Cow<'a, str> {
    fn from(text: Text<'a>) -> Self {
        match text.0 {
            Repr::Borrowed(text) => Cow::Borrowed(text),
            Repr::Owned(text) => Cow::Owned(*text),
        }
    }
}

impl Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text<'_> {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

// `Eq`, `Ord` and `Hash` are those of the `str`, so maps keyed by `Text` can be searched by
// `&str`.
impl Borrow<str> for Text<'_> {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for Text<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text<'_> {}

impl PartialOrd for Text<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Text<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for Text<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text<'_> {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Cow<'_, str>> for Text<'_> {
    fn eq(&self, other: &Cow<'_, str>) -> bool {
        self.as_str() == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn two_words_borrowed_or_owned() {
        assert_eq!(size_of::<Text<'_>>(), 2 * size_of::<usize>());
    }

    #[test]
    fn borrowed_and_owned_texts_are_the_same_str() {
        let input = String::from("forward . 1.1.1.1");
        let borrowed = Text::from(&input[..7]);
        let owned = Text::from(String::from("forward"));
        assert!(borrowed.is_borrowed() && !owned.is_borrowed());
        assert_eq!(borrowed, owned);
        assert_eq!(borrowed, "forward");
        assert_eq!(owned.to_string(), "forward");
        assert_eq!(alloc::format!("{owned:?}"), "\"forward\"");
        assert!(matches!(borrowed.to_cow(), Cow::Borrowed("forward")));
        assert!(matches!(owned.to_cow(), Cow::Owned(_)));
        assert_eq!(borrowed.clone().into_string(), owned.clone().into_string());
        let kept: Text<'static> = borrowed.into_owned();
        drop(input);
        assert_eq!(kept, "forward");
        assert!(!kept.is_borrowed());
        assert_eq!(
            Text::from(Cow::Borrowed("x")),
            Text::default().to_string() + "x"
        );
    }

    #[test]
    fn converts_to_a_cow_without_copying_and_serves_as_a_str_key() {
        assert!(matches!(Cow::from(Text::from("a")), Cow::Borrowed("a")));
        assert!(matches!(Cow::from(Text::from(String::from("b"))), Cow::Owned(s) if s == "b"));
        let keys: alloc::collections::BTreeSet<Text<'_>> =
            [Text::from("log"), Text::from(String::from("errors"))].into();
        assert!(keys.contains("log") && keys.contains("errors") && !keys.contains("cache"));
    }
}
