//! Kubernetes label selectors in their text form (`--watch-namespace-selector`, CoreDNS's
//! `labels` and `namespace_labels`), parsed and matched as apimachinery's `labels.Parse` and
//! `Selector.Matches` (`staging/src/k8s.io/apimachinery/pkg/labels/selector.go`).
//!
//! A selector is a comma-separated list of requirements, all of which must hold:
//! `key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (a,b)`,
//! `key notin (a,b)`, `key>N`, `key<N`. The empty selector matches everything. Keys are
//! qualified names and values label values, validated as the API server does.

use std::collections::BTreeMap;
use std::fmt;

use crate::validate::names::{label_value, qualified_name};

/// A parsed label selector: every requirement must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

/// One requirement of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Requirement {
    key: String,
    operator: Operator,
}

/// What a requirement asks of its key.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Operator {
    Exists,
    DoesNotExist,
    /// `=`, `==` and `in`: present with one of the values.
    In(Vec<String>),
    /// `!=` and `notin`: absent, or present with none of the values.
    NotIn(Vec<String>),
    GreaterThan(i64),
    LessThan(i64),
}

/// Why a selector does not parse: what was found where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("label selector {selector:?}: {message} at byte {offset}")]
pub struct SelectorError {
    /// The selector text, as given.
    pub selector: String,
    /// The byte offset of the problem.
    pub offset: usize,
    /// What is wrong there.
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token<'a> {
    End,
    Comma,
    Open,
    Close,
    Equals,
    DoubleEquals,
    NotEquals,
    Not,
    Greater,
    Less,
    In,
    NotIn,
    Word(&'a str),
}

/// apimachinery's lexer: whitespace separates, these characters are tokens of their own, and
/// anything else runs into an identifier.
fn special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '<' | '>')
}

impl<'a> Token<'a> {
    /// The token as a key or value: `in` and `notin` are words there, as in apimachinery's
    /// parser (`notin=in` is a valid selector).
    fn word(self) -> Option<&'a str> {
        match self {
            Token::Word(word) => Some(word),
            Token::In => Some("in"),
            Token::NotIn => Some("notin"),
            _ => None,
        }
    }
}

struct Lexer<'a> {
    text: &'a str,
    position: usize,
}

impl<'a> Lexer<'a> {
    /// The next token and its byte offset.
    fn next(&mut self) -> (Token<'a>, usize) {
        let rest = self.text.get(self.position..).unwrap_or_default();
        let trimmed = rest.trim_start();
        let start = self.position + (rest.len() - trimmed.len());
        let mut chars = trimmed.chars();
        let Some(first) = chars.next() else {
            self.position = self.text.len();
            return (Token::End, start);
        };
        let second = chars.next();
        let (token, length) = match (first, second) {
            ('!', Some('=')) => (Token::NotEquals, 2),
            ('=', Some('=')) => (Token::DoubleEquals, 2),
            ('!', _) => (Token::Not, 1),
            ('=', _) => (Token::Equals, 1),
            (',', _) => (Token::Comma, 1),
            ('(', _) => (Token::Open, 1),
            (')', _) => (Token::Close, 1),
            ('<', _) => (Token::Less, 1),
            ('>', _) => (Token::Greater, 1),
            _ => {
                let length = trimmed
                    .find(|c: char| c.is_whitespace() || special(c))
                    .unwrap_or(trimmed.len());
                let word = trimmed.get(..length).unwrap_or_default();
                let token = match word {
                    "in" => Token::In,
                    "notin" => Token::NotIn,
                    _ => Token::Word(word),
                };
                (token, length)
            }
        };
        self.position = start + length;
        (token, start)
    }

    fn peek(&self) -> Token<'a> {
        Lexer {
            text: self.text,
            position: self.position,
        }
        .next()
        .0
    }
}

impl LabelSelector {
    /// Parses the text form of a selector.
    ///
    /// # Errors
    ///
    /// The first thing that does not fit the grammar, an invalid key or value, or a
    /// non-integer operand of `>` or `<`, with its byte offset.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let fail = |offset: usize, message: String| SelectorError {
            selector: text.to_owned(),
            offset,
            message,
        };
        let mut lexer = Lexer { text, position: 0 };
        let mut requirements = Vec::new();
        if lexer.peek() == Token::End {
            return Ok(Self::default());
        }
        loop {
            requirements.push(Self::requirement(&mut lexer, &fail)?);
            match lexer.next() {
                (Token::End, _) => break,
                (Token::Comma, _) => {}
                (_, offset) => return Err(fail(offset, "expected ',' or the end".into())),
            }
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self { requirements })
    }

    fn requirement(
        lexer: &mut Lexer<'_>,
        fail: &impl Fn(usize, String) -> SelectorError,
    ) -> Result<Requirement, SelectorError> {
        let (mut token, mut offset) = lexer.next();
        let negated = token == Token::Not;
        if negated {
            (token, offset) = lexer.next();
        }
        let Some(key) = token.word() else {
            return Err(fail(offset, "expected a label key".into()));
        };
        if let Some(error) = qualified_name(key).into_iter().next() {
            return Err(fail(offset, format!("invalid label key {key:?}: {error}")));
        }
        let key = key.to_owned();
        if negated {
            return Ok(Requirement {
                key,
                operator: Operator::DoesNotExist,
            });
        }
        let value = |lexer: &mut Lexer<'_>| -> Result<String, SelectorError> {
            match lexer.peek() {
                Token::End | Token::Comma | Token::Close => Ok(String::new()),
                _ => match lexer.next() {
                    (token, offset) if token.word().is_some() => {
                        let value = token.word().unwrap_or_default();
                        if let Some(error) = label_value(value).into_iter().next() {
                            return Err(fail(
                                offset,
                                format!("invalid label value {value:?}: {error}"),
                            ));
                        }
                        Ok(value.to_owned())
                    }
                    (_, offset) => Err(fail(offset, "expected a label value".into())),
                },
            }
        };
        let number = |lexer: &mut Lexer<'_>| match lexer.next() {
            (Token::Word(value), offset) => value
                .parse::<i64>()
                .map_err(|_| fail(offset, format!("{value:?} is not an integer"))),
            (_, offset) => Err(fail(offset, "expected an integer".into())),
        };
        let operator = match lexer.peek() {
            Token::End | Token::Comma => Operator::Exists,
            _ => match lexer.next() {
                (Token::Equals | Token::DoubleEquals, _) => Operator::In(vec![value(lexer)?]),
                (Token::NotEquals, _) => Operator::NotIn(vec![value(lexer)?]),
                (Token::Greater, _) => Operator::GreaterThan(number(lexer)?),
                (Token::Less, _) => Operator::LessThan(number(lexer)?),
                (token @ (Token::In | Token::NotIn), _) => {
                    let (open, offset) = lexer.next();
                    if open != Token::Open {
                        return Err(fail(offset, "expected '(' after in/notin".into()));
                    }
                    let mut values = vec![value(lexer)?];
                    loop {
                        match lexer.next() {
                            (Token::Close, _) => break,
                            (Token::Comma, _) => values.push(value(lexer)?),
                            (_, offset) => return Err(fail(offset, "expected ',' or ')'".into())),
                        }
                    }
                    values.sort();
                    values.dedup();
                    if token == Token::In {
                        Operator::In(values)
                    } else {
                        Operator::NotIn(values)
                    }
                }
                (_, offset) => {
                    return Err(fail(
                        offset,
                        "expected one of '=', '==', '!=', 'in', 'notin', '>', '<'".into(),
                    ));
                }
            },
        };
        Ok(Requirement { key, operator })
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        self.requirements.iter().all(|r| {
            let value = labels.and_then(|l| l.get(&r.key));
            match &r.operator {
                Operator::Exists => value.is_some(),
                Operator::DoesNotExist => value.is_none(),
                Operator::In(values) => value.is_some_and(|v| values.contains(v)),
                Operator::NotIn(values) => value.is_none_or(|v| !values.contains(v)),
                Operator::GreaterThan(n) => value
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|v| v > *n),
                Operator::LessThan(n) => value
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|v| v < *n),
            }
        })
    }

    /// Whether it matches everything (the empty selector).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }
}

/// The canonical text form (requirements sorted by key), as apimachinery's `String()`.
impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let key = &r.key;
            match &r.operator {
                Operator::Exists => write!(f, "{key}")?,
                Operator::DoesNotExist => write!(f, "!{key}")?,
                Operator::In(v) if v.len() == 1 => write!(f, "{key}={}", v.join(""))?,
                Operator::NotIn(v) if v.len() == 1 => write!(f, "{key}!={}", v.join(""))?,
                Operator::In(v) => write!(f, "{key} in ({})", v.join(","))?,
                Operator::NotIn(v) => write!(f, "{key} notin ({})", v.join(","))?,
                Operator::GreaterThan(n) => write!(f, "{key}>{n}")?,
                Operator::LessThan(n) => write!(f, "{key}<{n}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! Vectors from apimachinery's `pkg/labels/selector_test.go` (TestSelectorParse,
    //! TestSelectorMatches, TestRequirementSelectorMatching, TestSetSelectorParser).

    use super::*;

    fn set(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn matches(selector: &str, labels: &[(&str, &str)]) -> bool {
        LabelSelector::parse(selector)
            .unwrap_or_else(|e| panic!("{e}"))
            .matches(Some(&set(labels)))
    }

    #[test]
    fn good_and_bad_strings() {
        for good in [
            "x=a,y=b,z=c",
            "",
            "x!=a,y=b",
            "x=",
            "x= ",
            "x=,z= ",
            "x= ,z= ",
            "!x",
            "x>1",
            "x>1,z<5",
        ] {
            LabelSelector::parse(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        for bad in [
            "x=a||y=b", "x==a==b", "!x=a", "x<a", "x in (a", "x in a", "=a", "a,", "x=a b",
        ] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad}");
        }
        assert!(LabelSelector::parse(&"a".repeat(254)).is_err());
        let error = LabelSelector::parse("x=a,y in (b").unwrap_err();
        assert_eq!(error.offset, 11, "{error}");
    }

    #[test]
    fn canonical_form_sorts_requirements() {
        let canonical = |s: &str| LabelSelector::parse(s).unwrap().to_string();
        assert_eq!(canonical("x=a,a=x"), canonical("a=x,x=a"));
        assert_eq!(canonical("x= ,z= "), "x=,z=");
        assert_eq!(
            canonical("x notin (abc,def),bar,z in (),w"),
            "bar,w,x notin (abc,def),z="
        );
        assert_eq!(canonical("x  notin\t\t(abc,def)"), "x notin (abc,def)");
    }

    #[test]
    fn selector_matches() {
        assert!(matches("", &[("x", "y")]));
        assert!(matches("x=y", &[("x", "y")]));
        assert!(matches("x=y,z=w", &[("x", "y"), ("z", "w")]));
        assert!(matches("x!=y,z!=w", &[("x", "z"), ("z", "a")]));
        assert!(matches("notin=in", &[("notin", "in")]));
        assert!(matches("x", &[("x", "z")]));
        assert!(matches("!x", &[("y", "z")]));
        assert!(matches("x>1", &[("x", "2")]));
        assert!(matches("x<1", &[("x", "0")]));
        assert!(!matches("x=z", &[]));
        assert!(!matches("x=y", &[("x", "z")]));
        assert!(!matches("x=y,z=w", &[("x", "w"), ("z", "w")]));
        assert!(!matches("x!=y,z!=w", &[("x", "z"), ("z", "w")]));
        assert!(!matches("x", &[("y", "z")]));
        assert!(!matches("!x", &[("x", "z")]));
        assert!(!matches("x>1", &[("x", "0")]));
        assert!(!matches("x<1", &[("x", "2")]));
        let labels = [("foo", "bar"), ("baz", "blah")];
        assert!(matches("foo=bar,baz=blah", &labels));
        assert!(!matches("foo=bar,foobar=bar,baz=blah", &labels));
    }

    #[test]
    fn set_based_requirements() {
        assert!(matches(
            "x in (foo),y notin (alpha)",
            &[("x", "foo"), ("y", "baz")]
        ));
        assert!(!matches(
            "x in (foo),y in (alpha)",
            &[("x", "foo"), ("y", "baz")]
        ));
        assert!(matches("x notin (),y", &[("y", "")]));
        assert!(matches("!x,y", &[("y", "")]));
        assert!(!matches("x notin (),!y", &[("y", "")]));
        assert!(!matches("x in ()", &[("y", "baz")]));
        assert!(matches("z>1", &[("z", "2")]));
        assert!(!matches("z>1", &[("z", "v2")]));
        assert!(matches("\rx", &[("x", "")]));
        assert!(matches(
            "this-is-a-dns.domain.com/key-with-dash",
            &[("this-is-a-dns.domain.com/key-with-dash", "1")]
        ));
        assert!(matches(
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            &[]
        ));
        assert!(matches("x in (abc,)", &[("x", "")]));
        assert!(!matches("x,y in (a)", &[("x", "")]));
        // No labels at all: only absence-tolerant requirements hold.
        let selector = LabelSelector::parse("x!=a,!y").unwrap();
        assert!(selector.matches(None));
    }
}
