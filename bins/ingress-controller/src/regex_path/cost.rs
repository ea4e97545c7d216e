//! Constructs with super-linear backtracking in a parsed regex path.
//!
//! PCRE backtracks: when a subject can be split among the parts of a pattern in many ways and
//! the match then fails, it tries them all. Two shapes make that number grow with the length
//! of the request's path, and are refused:
//!
//! - **nested**: a group repeated by `*` or `+` whose iterations can divide the same text in
//!   several ways — it can match the empty string (`(a*)*`), two of its alternatives can start
//!   with the same character (`(a|a)*`), or it contains an unbounded quantifier and one of its
//!   alternatives has no character that the unbounded parts cannot take (`(a+)+`, `(.*a)+`;
//!   `(/[a-z]+)*` is fine: each iteration owns its `/`). Exponential.
//! - **adjacent**: two unbounded quantifiers whose characters overlap, with nothing between
//!   them but what may be empty (`\d+\d+`, `.*.*`, `a*b?a*`), or only what the first could
//!   take too when something after them can still fail (`.*a.*b`). Polynomial, of a degree
//!   that grows with each such pair.
//!
//! The rules over-approximate on purpose; what they miss meets the match limit (see the
//! parent module).

use super::parse::{Atom, Bytes, Item, Repeat, Sequence};

/// Checks every sequence of the pattern; `text` is the pattern, for quoting constructs.
/// `rooted`: every top-level alternative must also start with `/` (a path; header and
/// query-parameter values have no such rule).
///
/// # Errors
///
/// The first refused construct, quoted, and why.
pub(super) fn check(alternatives: &[Sequence], text: &str, rooted: bool) -> Result<(), String> {
    for (i, sequence) in alternatives.iter().enumerate() {
        let starts_with_slash = sequence.first().is_some_and(|item| {
            item.repeat == Repeat::One && item.atom == Atom::Set(Bytes::of(b'/'))
        });
        if rooted && !starts_with_slash {
            let quoted = span_text(text, sequence.first(), sequence.last());
            return Err(format!(
                "alternative {} ({quoted:?}) does not start with /; every top-level \
                 alternative must, or it matches the paths of other rules",
                i + 1
            ));
        }
        sequence_cost(sequence, false, text)?;
    }
    Ok(())
}

/// The pattern text from the start of `first` to the end of `last`.
fn span_text<'a>(text: &'a str, first: Option<&Item>, last: Option<&Item>) -> &'a str {
    match (first, last) {
        (Some(first), Some(last)) => text.get(first.span.start..last.span.end).unwrap_or(text),
        _ => "",
    }
}

/// Whether `item` repeats without bound (`*` or `+`).
fn loops(item: &Item) -> bool {
    matches!(item.repeat, Repeat::Star | Repeat::Plus)
}

/// Every byte `item` can consume.
fn consumes(item: &Item) -> Bytes {
    match &item.atom {
        Atom::Set(set) => *set,
        Atom::Group(alternatives) => alternatives
            .iter()
            .flatten()
            .fold(Bytes::default(), |acc, inner| acc.union(consumes(inner))),
        Atom::End => Bytes::default(),
    }
}

/// Whether `item` can match the empty string.
fn nullable(item: &Item) -> bool {
    match (&item.atom, item.repeat) {
        (_, Repeat::Optional | Repeat::Star) | (Atom::End, _) => true,
        (Atom::Set(_), _) => false,
        (Atom::Group(alternatives), _) => alternatives.iter().any(|s| s.iter().all(nullable)),
    }
}

/// The bytes an unbounded quantifier in `item` (itself included) can consume.
fn unbounded(item: &Item) -> Bytes {
    if loops(item) {
        return consumes(item);
    }
    match &item.atom {
        Atom::Group(alternatives) => alternatives
            .iter()
            .flatten()
            .fold(Bytes::default(), |acc, inner| acc.union(unbounded(inner))),
        Atom::Set(_) | Atom::End => Bytes::default(),
    }
}

/// The bytes a non-empty match of `sequence` can start with.
fn first(sequence: &[Item]) -> Bytes {
    let mut out = Bytes::default();
    for item in sequence {
        let starts = match &item.atom {
            Atom::Set(set) => *set,
            Atom::Group(alternatives) => alternatives
                .iter()
                .fold(Bytes::default(), |acc, s| acc.union(first(s))),
            Atom::End => Bytes::default(),
        };
        out = out.union(starts);
        if !nullable(item) {
            break;
        }
    }
    out
}

/// Whether an item of `rest` can fail to match (something that must match, or `$`).
fn can_fail(rest: &[Item]) -> bool {
    rest.iter()
        .any(|item| !nullable(item) || item.atom == Atom::End)
}

/// Checks `sequence`, whose continuation after it can fail when `tail_fails`.
fn sequence_cost(sequence: &[Item], tail_fails: bool, text: &str) -> Result<(), String> {
    for (i, item) in sequence.iter().enumerate() {
        let rest = sequence.get(i + 1..).unwrap_or_default();
        if let Atom::Group(alternatives) = &item.atom {
            if loops(item) {
                nested(item, alternatives, text)?;
            }
            let inner_tail = tail_fails || loops(item) || can_fail(rest);
            for inner in alternatives {
                sequence_cost(inner, inner_tail, text)?;
            }
        }
        adjacent(item, rest, tail_fails, text)?;
    }
    Ok(())
}

/// The nested rule for a repeated group.
fn nested(item: &Item, alternatives: &[Sequence], text: &str) -> Result<(), String> {
    let quoted = text.get(item.span.clone()).unwrap_or(text);
    let refuse = |why: &str| {
        Err(format!(
            "{quoted:?} {why}, which can backtrack exponentially; make each repetition start \
             or end with a character the rest of it cannot match"
        ))
    };
    if alternatives.iter().any(|s| s.iter().all(nullable)) {
        return refuse("repeats a group that can match the empty string");
    }
    let mut seen = Bytes::default();
    for sequence in alternatives {
        let starts = first(sequence);
        if starts.meets(seen) {
            return refuse("repeats alternatives that can start with the same character");
        }
        seen = seen.union(starts);
    }
    let inner = alternatives
        .iter()
        .flatten()
        .fold(Bytes::default(), |acc, inner| acc.union(unbounded(inner)));
    if inner.is_empty() {
        return Ok(());
    }
    let delimited = |sequence: &Sequence| {
        sequence.iter().any(|inner_item| {
            inner_item.repeat == Repeat::One
                && matches!(inner_item.atom, Atom::Set(set) if !set.meets(inner))
        })
    };
    if alternatives.iter().all(delimited) {
        Ok(())
    } else {
        refuse("nests unbounded quantifiers")
    }
}

/// The adjacent rule for `item` and what follows it in its sequence.
fn adjacent(item: &Item, rest: &[Item], tail_fails: bool, text: &str) -> Result<(), String> {
    let mine = unbounded(item);
    if mine.is_empty() {
        return Ok(());
    }
    let mut all_nullable = true;
    for (j, later) in rest.iter().enumerate() {
        let theirs = unbounded(later);
        if !theirs.is_empty() && theirs.meets(mine) {
            let after = rest.get(j + 1..).unwrap_or_default();
            if all_nullable || tail_fails || can_fail(after) {
                let quoted = text.get(item.span.start..later.span.end).unwrap_or(text);
                return Err(format!(
                    "{quoted:?} has two unbounded quantifiers that can match the same \
                     characters one after the other, which backtracks polynomially; keep one, \
                     or separate them with a character the first cannot match"
                ));
            }
        }
        if !nullable(later) {
            all_nullable = false;
            if !consumes(later).within(mine) {
                break;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::check;

    /// Patterns and whether they are accepted.
    const TABLE: &[(&str, bool)] = &[
        // Linear: accepted.
        ("/app(/|$)(.*)", true),
        ("/api/v[0-9]+/.*", true),
        ("/api/v[0-9]+/[a-z0-9-]+/items/[0-9]+", true),
        ("/(/[a-z]+)*", true),
        ("/v(\\d+\\.)+x", true),
        ("/([a-z]+-)+[0-9]", true),
        ("/(a|b)+", true),
        ("/(.*)/(.*)", true),
        ("/[a-z]+[0-9]+", true),
        ("/a+b", true),
        ("/x\\.y", true),
        ("/(a)?", true),
        ("/((ab)c)+", true),
        // Nested: refused.
        ("/(a+)+$", false),
        ("/(a*)*", false),
        ("/(a?)+x", false),
        ("/(a|a)*", false),
        ("/(a|ab)+", false),
        ("/(\\d|\\w)+x", false),
        ("/(.*a)+", false),
        ("/(a+b*)+x", false),
        ("/((ab)+)+", false),
        ("/(/.*)+", false),
        ("/(/a+|a)+", false),
        ("/x(|a)*", false),
        // Adjacent: refused.
        ("/\\d+\\d+", false),
        ("/.*.*", false),
        ("/a*b?a*", false),
        ("/(\\d+)\\d+", false),
        ("/.*a.*b", false),
        ("/.*(.*)x", false),
        ("/(.*)/(.*)$", false),
        ("/([a-z]*)([a-z]*)", false),
    ];

    #[test]
    fn the_table() {
        let mut wrong = Vec::new();
        for (pattern, accepted) in TABLE {
            let verdict = check(pattern);
            if verdict.is_ok() != *accepted {
                wrong.push(format!("{pattern}: {verdict:?}"));
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    /// The checker's own work stays small on the longest paths (1024 bytes).
    #[test]
    fn long_paths_are_checked_quickly() {
        let started = std::time::Instant::now();
        for unit in ["(a)", "a?", "(a|b)*", "[a-z]+-", "(.*)/", "((a)b)"] {
            let path = format!("/{}", unit.repeat(1000 / unit.len()));
            let _ = check(&path);
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn messages_name_the_construct() {
        assert_eq!(
            check("/(a+)+$").unwrap_err(),
            "regex path \"/(a+)+$\": \"(a+)+\" nests unbounded quantifiers, which can backtrack \
             exponentially; make each repetition start or end with a character the rest of it \
             cannot match"
        );
        let error = check("/x/\\d+\\d+").unwrap_err();
        assert!(
            error.contains("\"\\\\d+\\\\d+\" has two unbounded"),
            "{error}"
        );
    }
}
