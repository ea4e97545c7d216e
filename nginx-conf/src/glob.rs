//! Shell-style patterns for `include`, as glob(3) matches one path component: `*`, `?` and
//! `[...]` (with `!` or `^` to negate, and `a-z` ranges); a wildcard never matches `/`, nor a
//! leading `.` of a name.

/// Whether nginx treats an include argument as a glob (`*`, `?` or `[` anywhere in it).
pub fn is_glob(pattern: &[u8]) -> bool {
    pattern.iter().any(|b| matches!(b, b'*' | b'?' | b'['))
}

/// Whether the path component `name` matches `pattern` (itself one component).
pub fn matches_component(pattern: &[u8], name: &[u8]) -> bool {
    if name.first() == Some(&b'.') && pattern.first() != Some(&b'.') {
        return false;
    }
    matches_from(pattern, name)
}

/// Matches a `[...]` class at the start of `pattern` against `byte`: `Some((matched, rest))`,
/// or `None` when the class is not closed (then `[` is an ordinary byte).
fn class(pattern: &[u8], byte: u8) -> Option<(bool, &[u8])> {
    let mut rest = pattern.get(1..)?;
    let negate = matches!(rest.first(), Some(b'!' | b'^'));
    if negate {
        rest = rest.get(1..)?;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let (&c, tail) = rest.split_first()?;
        if c == b']' && !first {
            return Some((matched != negate, tail));
        }
        first = false;
        if let [b'-', hi, after @ ..] = tail
            && *hi != b']'
        {
            matched |= (c..=*hi).contains(&byte);
            rest = after;
        } else {
            matched |= c == byte;
            rest = tail;
        }
    }
}

fn matches_from(pattern: &[u8], name: &[u8]) -> bool {
    // Iterative matching with one backtrack point for the last `*` (no recursion).
    let (mut p, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        let pat = pattern.get(p..).unwrap_or_default();
        let step = match (pat.first(), name.get(n)) {
            (Some(b'*'), _) => {
                star = Some((p + 1, n));
                p += 1;
                continue;
            }
            (Some(b'?'), Some(&c)) if c != b'/' => Some(1),
            (Some(b'['), Some(&c)) if c != b'/' => match class(pat, c) {
                Some((true, rest)) => Some(pat.len() - rest.len()),
                Some((false, _)) => None,
                None if c == b'[' => Some(1),
                None => None,
            },
            (Some(&pc), Some(&c)) if pc == c && pc != b'?' && pc != b'[' => Some(1),
            (None, None) => return true,
            _ => None,
        };
        match step {
            Some(len) => {
                p += len;
                n += 1;
            }
            None => match star {
                Some((sp, sn)) if name.get(sn).is_some_and(|&c| c != b'/') => {
                    star = Some((sp, sn + 1));
                    p = sp;
                    n = sn + 1;
                }
                _ => return false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(is_glob(b"servers/*.conf"));
        assert!(!is_glob(b"mime.types"));
        assert!(matches_component(b"*.conf", b"a.conf"));
        assert!(!matches_component(b"*.conf", b"a.conf.bak"));
        assert!(!matches_component(b"*.conf", b".hidden.conf"));
        assert!(matches_component(b"a?c", b"abc"));
        assert!(matches_component(b"[a-c]x", b"bx"));
        assert!(!matches_component(b"[!a-c]x", b"bx"));
        assert!(matches_component(b"*", b"x"));
        assert!(matches_component(b"a*b*c", b"aXbYbc"));
        assert!(matches_component(b"[x", b"[x"));
    }
}
