//! The PCRE subset of regex paths, read into a small tree: allow-listed characters, `.`,
//! `[classes]` of letters, digits and `-._~/`, `\d \w \s` and the escapes `\. \/ \-`, groups,
//! `|`, the quantifiers `* + ?` (each optionally lazy) after an atom, and `$` only at the end of
//! the pattern or of a group. A path nginx would refuse must not make the whole configuration
//! fail, so anything else is refused here.

use crate::paths::path_byte;

/// The deepest nesting of groups accepted: PCRE refuses patterns nested deeper than its
/// compile-time limit (250 by default in PCRE2), and no path needs more than a few.
const DEPTH_LIMIT: usize = 32;

/// A set of bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Bytes([u64; 4]);

impl Bytes {
    /// The set of one byte.
    pub(super) fn of(b: u8) -> Self {
        Self::default().with(b)
    }

    fn with(mut self, b: u8) -> Self {
        if let Some(word) = self.0.get_mut(usize::from(b / 64)) {
            *word |= 1 << (b % 64);
        }
        self
    }

    fn range(low: u8, high: u8) -> Self {
        (low..=high).fold(Self::default(), Self::with)
    }

    fn all_but(b: u8) -> Self {
        Self::default().with(b).complement()
    }

    fn complement(self) -> Self {
        Self(self.0.map(|word| !word))
    }

    /// Both sets together.
    pub(super) fn union(self, other: Self) -> Self {
        let mut out = self;
        for (word, theirs) in out.0.iter_mut().zip(other.0) {
            *word |= theirs;
        }
        out
    }

    /// Whether a byte is in both.
    pub(super) fn meets(self, other: Self) -> bool {
        self.0.iter().zip(other.0).any(|(a, b)| a & b != 0)
    }

    /// Whether every byte of `self` is in `other`.
    pub(super) fn within(self, other: Self) -> bool {
        self.0.iter().zip(other.0).all(|(a, b)| a & !b == 0)
    }

    /// Whether the set is empty.
    pub(super) fn is_empty(self) -> bool {
        self.0.iter().all(|word| *word == 0)
    }
}

/// How often an atom may repeat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Repeat {
    /// Exactly once.
    One,
    /// `?`
    Optional,
    /// `*`
    Star,
    /// `+`
    Plus,
}

/// What one item matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Atom {
    /// One byte of the set.
    Set(Bytes),
    /// A group of alternatives.
    Group(Vec<Sequence>),
    /// `$`
    End,
}

/// An atom with its quantifier, and where it is in the pattern (quantifier included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Item {
    pub(super) atom: Atom,
    pub(super) repeat: Repeat,
    pub(super) span: std::ops::Range<usize>,
}

/// Items matched one after the other.
pub(super) type Sequence = Vec<Item>;

/// Reads `path` as top-level alternatives.
///
/// # Errors
///
/// What in the path is outside the subset.
pub(super) fn alternatives(path: &str) -> Result<Vec<Sequence>, String> {
    let mut parser = Parser {
        bytes: path.as_bytes(),
        at: 0,
    };
    parser.alternatives(0)
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn alternatives(&mut self, depth: usize) -> Result<Vec<Sequence>, String> {
        if depth > DEPTH_LIMIT {
            return Err(format!("groups nest deeper than {DEPTH_LIMIT}"));
        }
        let mut alternatives = vec![Sequence::new()];
        loop {
            match self.peek() {
                None if depth > 0 => return Err("unbalanced (".into()),
                Some(b')') if depth == 0 => return Err("unbalanced )".into()),
                None | Some(b')') => return Ok(alternatives),
                Some(b'|') => {
                    self.at += 1;
                    alternatives.push(Sequence::new());
                }
                Some(_) => {
                    let item = self.item(depth)?;
                    if let Some(sequence) = alternatives.last_mut() {
                        sequence.push(item);
                    }
                }
            }
        }
    }

    fn item(&mut self, depth: usize) -> Result<Item, String> {
        let start = self.at;
        let Some(b) = self.peek() else {
            return Err("unexpected end".into());
        };
        self.at += 1;
        let atom = match b {
            b'(' => {
                let group = self.alternatives(depth + 1)?;
                self.at += 1; // the `)` that ended the group
                Atom::Group(group)
            }
            b'*' | b'+' | b'?' => return Err("a quantifier follows nothing".into()),
            b'$' => {
                if !matches!(self.peek(), None | Some(b')' | b'|')) {
                    return Err("$ may only end the pattern or a group".into());
                }
                return Ok(Item {
                    atom: Atom::End,
                    repeat: Repeat::One,
                    span: start..self.at,
                });
            }
            b'\\' => {
                let escaped = self.peek();
                self.at += 1;
                Atom::Set(match escaped {
                    Some(c @ (b'.' | b'/' | b'-')) => Bytes::default().with(c),
                    Some(b'd') => Bytes::range(b'0', b'9'),
                    Some(b'w') => Bytes::range(b'a', b'z')
                        .union(Bytes::range(b'A', b'Z'))
                        .union(Bytes::range(b'0', b'9'))
                        .with(b'_'),
                    Some(b's') => Bytes::range(b'\t', b'\r').with(b' '),
                    _ => return Err("\\ may only escape . / - or start \\d \\w \\s".into()),
                })
            }
            b'[' => Atom::Set(self.class()?),
            b'.' => Atom::Set(Bytes::all_but(b'\n')),
            _ if path_byte(b) => Atom::Set(Bytes::default().with(b)),
            _ => return Err(format!("{:?} is not allowed", char::from(b))),
        };
        let repeat = match self.peek() {
            Some(b'*') => Repeat::Star,
            Some(b'+') => Repeat::Plus,
            Some(b'?') => Repeat::Optional,
            _ => Repeat::One,
        };
        if repeat != Repeat::One {
            self.at += 1;
            // A lazy `?` may follow a quantifier; nothing else may.
            if self.peek() == Some(b'?') {
                self.at += 1;
            }
        }
        Ok(Item {
            atom,
            repeat,
            span: start..self.at,
        })
    }

    /// The set of a `[class]` whose `[` was just read.
    fn class(&mut self) -> Result<Bytes, String> {
        let rest = self.bytes.get(self.at..).unwrap_or_default();
        let close = rest.iter().position(|&c| c == b']').ok_or("unclosed [")?;
        self.at += close + 1;
        let class = rest.get(..close).unwrap_or_default();
        let (negated, class) = match class.strip_prefix(b"^") {
            Some(class) => (true, class),
            None => (false, class),
        };
        if class.is_empty()
            || !class
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || b"-._~/".contains(&c))
        {
            return Err("a [class] may only hold letters, digits and -._~/".into());
        }
        let mut set = Bytes::default();
        let mut i = 0;
        while let Some(&low) = class.get(i) {
            match (class.get(i + 1), class.get(i + 2)) {
                (Some(b'-'), Some(&high)) => {
                    if high < low {
                        return Err("a [class] range is out of order".into());
                    }
                    set = set.union(Bytes::range(low, high));
                    i += 3;
                }
                _ => {
                    set = set.with(low);
                    i += 1;
                }
            }
        }
        Ok(if negated { set.complement() } else { set })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subset_nginx_compiles() {
        for good in [
            "/app(/|$)(.*)",
            "/api/v[0-9]+/.*",
            "/x\\.y",
            "/a|/b",
            "/(a)?",
            "/[^/]+/[-a-z]+",
            "/(|x)",
            "/a*?",
        ] {
            assert!(alternatives(good).is_ok(), "{good}");
        }
        for bad in [
            "/(a", "/a)", "/(*)", "/a**", "/a{2}", "/a\\", "/[a", "/a$b", "/\"", "/a\\Q", "/[]",
            "/[z-a]", "/[a;]", "/(?:a)", "/a*??",
        ] {
            assert!(alternatives(bad).is_err(), "{bad}");
        }
        let nested = |depth: usize| format!("/{}a{}", "(".repeat(depth), ")".repeat(depth));
        assert!(alternatives(&nested(DEPTH_LIMIT)).is_ok());
        assert!(alternatives(&nested(DEPTH_LIMIT + 1)).is_err());
    }

    #[test]
    fn items_keep_their_span_and_sets() {
        let parsed = alternatives("/(a+)+$").unwrap();
        let [sequence] = parsed.as_slice() else {
            panic!("{parsed:?}")
        };
        let spans: Vec<_> = sequence.iter().map(|item| item.span.clone()).collect();
        assert_eq!(spans, [0..1, 1..6, 6..7]);
        assert_eq!(sequence[1].repeat, Repeat::Plus);
        let digits = Bytes::range(b'0', b'9');
        let Atom::Set(class) = alternatives("/[0-9]").unwrap()[0][1].atom else {
            panic!()
        };
        assert_eq!(class, digits);
        let Atom::Set(negated) = alternatives("/[^0-9]").unwrap()[0][1].atom else {
            panic!()
        };
        assert_eq!(negated, digits.complement());
    }
}
