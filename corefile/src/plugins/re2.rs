//! Whether Go's `regexp.Compile` accepts a pattern, and its error text when it does not.
//!
//! CoreDNS plugins (the `errors` plugin's `consolidate`) compile their patterns at setup with
//! Go's `regexp` package (RE2 syntax, `syntax.Perl` flags). This module walks a pattern the way
//! Go's `regexp/syntax` parser does and reports the first error with Go's code and fragment:
//! ``error parsing regexp: missing closing ): `(a` ``. It builds no program, only what
//! acceptance needs: a stack of atoms, group openings and alternation bars, each atom with
//! the largest product of counted repeats inside it (Go refuses nested counts over 1000).
//!
//! Not reproduced (documented gaps): Unicode class names (`\p{Greek}`) are checked for form
//! only, not against Go's tables; Go's limits on program size (`expression too large`) and
//! tree height (`expression nests too deeply`) are not applied; input is valid UTF-8 here,
//! so `invalid UTF-8` never occurs.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// Go's `regexp/syntax` error: its code's text and the fragment it quotes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegexpError {
    /// The error code's text, e.g. `missing closing )`.
    pub code: &'static str,
    /// The part of the pattern the error is about.
    pub fragment: String,
}

impl fmt::Display for RegexpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "error parsing regexp: {}: `{}`",
            self.code, self.fragment
        )
    }
}

impl core::error::Error for RegexpError {}

const INVALID_CHAR_RANGE: &str = "invalid character class range";
const INVALID_ESCAPE: &str = "invalid escape sequence";
const INVALID_NAMED_CAPTURE: &str = "invalid named capture";
const INVALID_PERL_OP: &str = "invalid or unsupported Perl syntax";
const INVALID_REPEAT_OP: &str = "invalid nested repetition operator";
const INVALID_REPEAT_SIZE: &str = "invalid repeat count";
const MISSING_BRACKET: &str = "missing closing ]";
const MISSING_PAREN: &str = "missing closing )";
const MISSING_REPEAT_ARGUMENT: &str = "missing argument to repetition operator";
const TRAILING_BACKSLASH: &str = "trailing backslash at end of expression";
const UNEXPECTED_PAREN: &str = "unexpected )";

/// Go's bound on a counted repetition, and on nested counts multiplied together.
const MAX_REPEAT: i64 = 1000;

/// POSIX classes Go knows inside brackets (each also with `^` after the colon).
const POSIX_CLASSES: [&str; 14] = [
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

/// One entry of the parse stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Item {
    /// Something a repetition can apply to, with the largest product of counted repeats
    /// on any path inside it (1 when there is none).
    Atom(i64),
    /// An open group.
    Paren,
    /// An alternation bar.
    Bar,
}

fn err(code: &'static str, fragment: &str) -> RegexpError {
    RegexpError {
        code,
        fragment: String::from(fragment),
    }
}

/// `s` after its first character (`""` when it is empty).
fn after_first(s: &str) -> &str {
    let mut chars = s.chars();
    chars.next();
    chars.as_str()
}

/// `s` from byte `n` on (`""` past its end).
fn skip(s: &str, n: usize) -> &str {
    s.get(n..).unwrap_or_default()
}

/// The part of `from` before its suffix `rest`.
fn consumed<'s>(from: &'s str, rest: &str) -> &'s str {
    from.get(..from.len().saturating_sub(rest.len()))
        .unwrap_or(from)
}

/// Checks `pattern` as Go's `regexp.Compile` does.
pub fn check(pattern: &str) -> Result<(), RegexpError> {
    let mut stack: Vec<Item> = Vec::new();
    let mut t = pattern;
    // The text from the previous repetition operator on, while the last thing read was one.
    let mut last_repeat: Option<&str> = None;
    while let Some(c) = t.chars().next() {
        let mut repeat = None;
        match c {
            '(' if t.starts_with("(?") => t = perl_flags(t, &mut stack)?,
            '(' => {
                stack.push(Item::Paren);
                t = skip(t, 1);
            }
            '|' => {
                stack.push(Item::Bar);
                t = skip(t, 1);
            }
            ')' => {
                close_group(&mut stack).ok_or_else(|| err(UNEXPECTED_PAREN, pattern))?;
                t = skip(t, 1);
            }
            '[' => {
                t = class(t)?;
                stack.push(Item::Atom(1));
            }
            '*' | '+' | '?' => {
                let after = repeat_op(&mut stack, t, skip(t, 1), last_repeat, None)?;
                repeat = Some(t);
                t = after;
            }
            '{' => match counted(t) {
                Some((min, max, after)) => {
                    if !(0..=MAX_REPEAT).contains(&min)
                        || max > MAX_REPEAT
                        || (max >= 0 && min > max)
                    {
                        return Err(err(INVALID_REPEAT_SIZE, consumed(t, after)));
                    }
                    let after = repeat_op(&mut stack, t, after, last_repeat, Some((min, max)))?;
                    repeat = Some(t);
                    t = after;
                }
                // Not a count: a literal brace.
                None => {
                    stack.push(Item::Atom(1));
                    t = skip(t, 1);
                }
            },
            '\\' => t = escape_atom(t, &mut stack)?,
            _ => {
                stack.push(Item::Atom(1));
                t = after_first(t);
            }
        }
        last_repeat = repeat;
    }
    if stack.contains(&Item::Paren) {
        return Err(err(MISSING_PAREN, pattern));
    }
    Ok(())
}

/// Closes the innermost group into one atom; `None` when no group is open.
fn close_group(stack: &mut Vec<Item>) -> Option<()> {
    let open = stack.iter().rposition(|item| *item == Item::Paren)?;
    let deepest = stack
        .drain(open..)
        .filter_map(|item| match item {
            Item::Atom(product) => Some(product),
            Item::Paren | Item::Bar => None,
        })
        .max()
        .unwrap_or(1);
    stack.push(Item::Atom(deepest));
    Some(())
}

/// Applies a repetition operator (`before` starts at it, `after` follows it) to the atom on
/// top of the stack; `count` is `{min,max}` (max -1 when open). Returns the rest of the text.
fn repeat_op<'s>(
    stack: &mut [Item],
    before: &'s str,
    after: &'s str,
    last_repeat: Option<&'s str>,
    count: Option<(i64, i64)>,
) -> Result<&'s str, RegexpError> {
    // A `?` right after the operator makes it non-greedy.
    let after = after.strip_prefix('?').unwrap_or(after);
    if let Some(last) = last_repeat {
        // Perl does not allow stacking repetitions (`a**`).
        return Err(err(INVALID_REPEAT_OP, consumed(last, after)));
    }
    let Some(Item::Atom(inside)) = stack.last_mut() else {
        return Err(err(MISSING_REPEAT_ARGUMENT, consumed(before, after)));
    };
    if let Some((min, max)) = count {
        // Go's repeatIsValid: a count of 0 hides what it repeats; an open count counts its
        // minimum; the counts on any path multiply to at most 1000.
        let factor = if max < 0 { min } else { max };
        let product = match (max, factor) {
            (0, _) => 1,
            (_, factor) if factor <= 0 => *inside,
            _ => factor.saturating_mul(*inside),
        };
        if (min >= 2 || max >= 2) && product > MAX_REPEAT {
            return Err(err(INVALID_REPEAT_SIZE, consumed(before, after)));
        }
        *inside = product;
    }
    Ok(after)
}

/// Go's `parseRepeat`: `{n}`, `{n,}` or `{n,m}` at the start of `s` as (min, max, rest), with
/// max -1 for an open count and min -1 for a number too large; `None` when it is not one.
fn counted(s: &str) -> Option<(i64, i64, &str)> {
    let s = s.strip_prefix('{')?;
    let (min, s) = int(s)?;
    let (max, s) = match s.strip_prefix(',') {
        None => (min, s),
        Some(s) if s.starts_with('}') => (-1, s),
        Some(s) => int(s)?,
    };
    let min = if max < -1 { -1 } else { min };
    let rest = s.strip_prefix('}')?;
    Some((min, max.max(-1), rest))
}

/// Go's `parseInt`: decimal digits without a leading zero; a value of 10^8 or more is -2
/// (so that callers tell it from "open").
fn int(s: &str) -> Option<(i64, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let (number, rest) = s.split_at_checked(digits)?;
    if number.is_empty() || (number.len() > 1 && number.starts_with('0')) {
        return None;
    }
    let mut n: i64 = 0;
    for d in number.bytes() {
        if n >= 100_000_000 {
            return Some((-2, rest));
        }
        n = n * 10 + i64::from(d - b'0');
    }
    Some((n, rest))
}

/// A `(?` group: named capture, flags, or a non-capturing group.
fn perl_flags<'s>(s: &'s str, stack: &mut Vec<Item>) -> Result<&'s str, RegexpError> {
    let name_start = if s.len() > 4 && s.starts_with("(?P<") {
        Some(4)
    } else if s.len() > 3 && s.starts_with("(?<") {
        Some(3)
    } else {
        None
    };
    if let Some(start) = name_start {
        let Some(end) = s.find('>') else {
            return Err(err(INVALID_NAMED_CAPTURE, s));
        };
        let name = s.get(start..end).unwrap_or_default();
        let valid =
            !name.is_empty() && name.bytes().all(|b| b == b'_' || b.is_ascii_alphanumeric());
        if !valid {
            return Err(err(INVALID_NAMED_CAPTURE, s.get(..=end).unwrap_or(s)));
        }
        stack.push(Item::Paren);
        return Ok(s.get(end + 1..).unwrap_or_default());
    }
    let mut t = s.get(2..).unwrap_or_default();
    let mut negated = false;
    let mut saw_flag = false;
    while let Some(c) = t.chars().next() {
        t = after_first(t);
        match c {
            'i' | 'm' | 's' | 'U' => saw_flag = true,
            '-' if !negated => {
                negated = true;
                saw_flag = false;
            }
            ':' | ')' if !negated || saw_flag => {
                if c == ':' {
                    stack.push(Item::Paren);
                }
                return Ok(t);
            }
            _ => break,
        }
    }
    Err(err(INVALID_PERL_OP, consumed(s, t)))
}

/// An escape outside brackets: an assertion, `\Q...\E`, a class, or one character.
fn escape_atom<'s>(t: &'s str, stack: &mut Vec<Item>) -> Result<&'s str, RegexpError> {
    match t.get(1..2) {
        Some("A" | "b" | "B" | "z") => {
            stack.push(Item::Atom(1));
            return Ok(skip(t, 2));
        }
        Some("C") => return Err(err(INVALID_ESCAPE, t.get(..2).unwrap_or(t))),
        Some("Q") => {
            let quoted = skip(t, 2);
            let (literal, rest) = quoted.split_once("\\E").unwrap_or((quoted, ""));
            stack.extend(literal.chars().map(|_| Item::Atom(1)));
            return Ok(rest);
        }
        _ => {}
    }
    stack.push(Item::Atom(1));
    if let Some(rest) = unicode_class(t)? {
        return Ok(rest);
    }
    if let Some(rest) = perl_class(t) {
        return Ok(rest);
    }
    escape(t)
}

/// `\d \D \s \S \w \W` at the start of `t`: the rest after it.
fn perl_class(t: &str) -> Option<&str> {
    match t.get(..2) {
        Some("\\d" | "\\D" | "\\s" | "\\S" | "\\w" | "\\W") => t.get(2..),
        _ => None,
    }
}

/// `\pX`, `\p{Name}`, `\PX`, `\P{^Name}` at the start of `t`: the rest after it, `None` when
/// `t` does not start with `\p` or `\P`. Names are checked for form only (see the module).
fn unicode_class(t: &str) -> Result<Option<&str>, RegexpError> {
    if !(t.starts_with("\\p") || t.starts_with("\\P")) {
        return Ok(None);
    }
    let body = skip(t, 2);
    let (name, rest) = if let Some(braced) = body.strip_prefix('{') {
        let Some(end) = braced.find('}') else {
            return Err(err(INVALID_CHAR_RANGE, t));
        };
        (braced.get(..end).unwrap_or_default(), skip(braced, end + 1))
    } else {
        let rest = after_first(body);
        (consumed(body, rest), rest)
    };
    let name = name.strip_prefix('^').unwrap_or(name);
    let plausible = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' '));
    if !plausible {
        return Err(err(INVALID_CHAR_RANGE, consumed(t, rest)));
    }
    Ok(Some(rest))
}

/// Go's `parseEscape`: one escaped character at the start of `s` (which starts with `\`).
fn escape(s: &str) -> Result<&str, RegexpError> {
    let t = skip(s, 1);
    let Some(c) = t.chars().next() else {
        return Err(err(TRAILING_BACKSLASH, ""));
    };
    let t = after_first(t);
    let invalid = |rest: &str| Err(err(INVALID_ESCAPE, consumed(s, rest)));
    match c {
        // Octal: `\0` and up to two more digits, or a non-zero digit followed by one.
        '1'..='7' if !t.starts_with(|d: char| ('0'..='7').contains(&d)) => invalid(t),
        '0'..='7' => {
            let more = t
                .bytes()
                .take(2)
                .take_while(|d| (b'0'..=b'7').contains(d))
                .count();
            Ok(skip(t, more))
        }
        'x' => hex_escape(s, t),
        'a' | 'f' | 'n' | 'r' | 't' | 'v' => Ok(t),
        // Escaped punctuation is itself.
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok(t),
        _ => invalid(t),
    }
}

/// `\xHH` or `\x{H...}` (at most U+10FFFF); `t` follows the `x`.
fn hex_escape<'s>(s: &'s str, t: &'s str) -> Result<&'s str, RegexpError> {
    let invalid = |rest: &str| Err(err(INVALID_ESCAPE, consumed(s, rest)));
    let Some(first) = t.chars().next() else {
        return invalid(t);
    };
    let mut rest = after_first(t);
    if first != '{' {
        let second = rest.chars().next();
        rest = after_first(rest);
        return match second {
            Some(second) if first.is_ascii_hexdigit() && second.is_ascii_hexdigit() => Ok(rest),
            _ => invalid(rest),
        };
    }
    let mut value: u32 = 0;
    let mut digits = 0usize;
    loop {
        let Some(c) = rest.chars().next() else {
            return invalid(rest);
        };
        rest = after_first(rest);
        if c == '}' {
            break;
        }
        let Some(digit) = c.to_digit(16) else {
            return invalid(rest);
        };
        value = value * 16 + digit;
        if value > u32::from(char::MAX) {
            return invalid(rest);
        }
        digits += 1;
    }
    if digits == 0 {
        return invalid(rest);
    }
    Ok(rest)
}

/// Go's `parseClass`: a bracketed class at the start of `s`; the rest after its `]`.
fn class(s: &str) -> Result<&str, RegexpError> {
    let mut t = skip(s, 1);
    if let Some(rest) = t.strip_prefix('^') {
        t = rest;
    }
    let mut first = true;
    while first || !t.starts_with(']') {
        first = false;
        if t.len() > 2
            && t.starts_with("[:")
            && let Some(end) = skip(t, 2).find(":]")
        {
            let name = t.get(..end + 4).unwrap_or(t);
            let bare = name.get(2..end + 2).unwrap_or_default();
            if !POSIX_CLASSES.contains(&bare.strip_prefix('^').unwrap_or(bare)) {
                return Err(err(INVALID_CHAR_RANGE, name));
            }
            t = skip(t, end + 4);
            continue;
        }
        if let Some(rest) = unicode_class(t)? {
            t = rest;
            continue;
        }
        if let Some(rest) = perl_class(t) {
            t = rest;
            continue;
        }
        let range = t;
        let (lo, rest) = class_char(t, s)?;
        t = rest;
        // `[a-]` is `a` or `-`.
        if t.len() >= 2 && t.starts_with('-') && !skip(t, 1).starts_with(']') {
            let (hi, rest) = class_char(skip(t, 1), s)?;
            t = rest;
            if hi < lo {
                return Err(err(INVALID_CHAR_RANGE, consumed(range, t)));
            }
        }
    }
    Ok(skip(t, 1))
}

/// One class character (possibly escaped) at the start of `t`, as its value and the rest.
fn class_char<'s>(t: &'s str, whole_class: &str) -> Result<(u32, &'s str), RegexpError> {
    let Some(c) = t.chars().next() else {
        return Err(err(MISSING_BRACKET, whole_class));
    };
    if c != '\\' {
        return Ok((u32::from(c), after_first(t)));
    }
    let rest = escape(t)?;
    Ok((escaped_value(consumed(t, rest)), rest))
}

/// The character an escape accepted by [`escape`] stands for.
fn escaped_value(escape: &str) -> u32 {
    let body = escape.get(1..).unwrap_or_default();
    let mut chars = body.chars();
    match chars.next() {
        Some('0'..='7') => u32::from_str_radix(body, 8).unwrap_or(0),
        Some('x') => {
            let hex = chars.as_str().trim_start_matches('{').trim_end_matches('}');
            u32::from_str_radix(hex, 16).unwrap_or(0)
        }
        Some('a') => 7,
        Some('f') => 12,
        Some('n') => 10,
        Some('r') => 13,
        Some('t') => 9,
        Some('v') => 11,
        Some(c) => u32::from(c),
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn error(pattern: &str) -> String {
        check(pattern).unwrap_err().to_string()
    }

    #[test]
    fn patterns_people_write_are_accepted() {
        for pattern in [
            ".*",
            "^exact$",
            "error",
            "%s",
            "format error",
            r"^\[ERROR\] plugin/errors: 2 .* (A|AAAA): read udp .*: i/o timeout$",
            r"[a-z0-9._-]+\.example\.org\.?",
            r"(?i)timeout|refused",
            r"(?P<rcode>SERVFAIL|REFUSED) \d{1,3}\s\w+",
            r"(?<name>x)(?:y)?z*?a+?b??c{2,}d{3,5}?",
            r"[[:alpha:]\d\pL\p{Greek}\x41-\x{5A}\n-]",
            r"[]a][^]\-]",
            r"\Q.*+?\E\A\z\b\B\.\-\_\ \#",
            r"\012\0\x7f\a\f\t\v\r",
            "a{,5}{",
            "x{01}",
            "()*|(|a)",
            r"a(?i)*",
            "(a{10}){100}",
            "(?)",
            "(?i-s:x)",
        ] {
            assert_eq!(check(pattern), Ok(()), "{pattern}");
        }
    }

    #[test]
    fn errors_read_like_go() {
        assert_eq!(error("())"), "error parsing regexp: unexpected ): `())`");
        assert_eq!(error("(a"), "error parsing regexp: missing closing ): `(a`");
        assert_eq!(
            error("[a-"),
            "error parsing regexp: missing closing ]: `[a-`"
        );
        assert_eq!(
            error("[z-a]"),
            "error parsing regexp: invalid character class range: `z-a`"
        );
        assert_eq!(
            error("[[:foo:]]"),
            "error parsing regexp: invalid character class range: `[:foo:]`"
        );
        assert_eq!(
            error(r"\p{}"),
            "error parsing regexp: invalid character class range: `\\p{}`"
        );
        assert_eq!(
            error(r"\p{L"),
            "error parsing regexp: invalid character class range: `\\p{L`"
        );
        assert_eq!(
            error("*"),
            "error parsing regexp: missing argument to repetition operator: `*`"
        );
        assert_eq!(
            error("a|+"),
            "error parsing regexp: missing argument to repetition operator: `+`"
        );
        assert_eq!(
            error("(?i)*"),
            "error parsing regexp: missing argument to repetition operator: `*`"
        );
        assert_eq!(
            error("a**"),
            "error parsing regexp: invalid nested repetition operator: `**`"
        );
        assert_eq!(
            error("a*?+"),
            "error parsing regexp: invalid nested repetition operator: `*?+`"
        );
        assert_eq!(
            error("a{2}{3}"),
            "error parsing regexp: invalid nested repetition operator: `{2}{3}`"
        );
        assert_eq!(
            error("a{1001}"),
            "error parsing regexp: invalid repeat count: `{1001}`"
        );
        assert_eq!(
            error("a{3,2}"),
            "error parsing regexp: invalid repeat count: `{3,2}`"
        );
        assert_eq!(
            error("{1001}"),
            "error parsing regexp: invalid repeat count: `{1001}`"
        );
        assert_eq!(
            error("a{999999999}"),
            "error parsing regexp: invalid repeat count: `{999999999}`"
        );
        assert_eq!(
            error("(a{100}){20}"),
            "error parsing regexp: invalid repeat count: `{20}`"
        );
        assert_eq!(
            error(r"\1"),
            "error parsing regexp: invalid escape sequence: `\\1`"
        );
        assert_eq!(
            error(r"\q"),
            "error parsing regexp: invalid escape sequence: `\\q`"
        );
        assert_eq!(
            error(r"\C"),
            "error parsing regexp: invalid escape sequence: `\\C`"
        );
        assert_eq!(
            error(r"\xZ1"),
            "error parsing regexp: invalid escape sequence: `\\xZ1`"
        );
        assert_eq!(
            error(r"\x{}"),
            "error parsing regexp: invalid escape sequence: `\\x{}`"
        );
        assert_eq!(
            error(r"\x{110000}"),
            "error parsing regexp: invalid escape sequence: `\\x{110000`"
        );
        assert_eq!(
            error(r"[\b]"),
            "error parsing regexp: invalid escape sequence: `\\b`"
        );
        assert_eq!(
            error("a\\"),
            "error parsing regexp: trailing backslash at end of expression: ``"
        );
        assert_eq!(
            error("(?=x)"),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"
        );
        assert_eq!(
            error("(?i-)"),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?i-)`"
        );
        assert_eq!(
            error("(?"),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?`"
        );
        assert_eq!(
            error("(?P<n-1>x)"),
            "error parsing regexp: invalid named capture: `(?P<n-1>`"
        );
        assert_eq!(
            error("(?P<name"),
            "error parsing regexp: invalid named capture: `(?P<name`"
        );
        assert_eq!(
            error("(?<>x)"),
            "error parsing regexp: invalid named capture: `(?<>`"
        );
    }
}
