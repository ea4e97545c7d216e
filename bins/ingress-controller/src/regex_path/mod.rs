//! Regex paths (`use-regex`): the subset of PCRE accepted, the bound on what matching one may
//! cost, and the pattern nginx gets. Gateway header and query-parameter regexes are held to
//! the same subset and bound ([`check_value`]).
//!
//! A path is refused when nginx would refuse it (`parse`), when it has a construct whose
//! backtracking grows faster than the request's length (`cost`), or when one of its top-level
//! alternatives does not start with `/`: anchored or not, the empty alternative of `/a|`
//! matches every URI of the host, and a regex location wins over the other rules' prefix
//! locations.
//!
//! nginx has no directive that limits PCRE's work per match (`pcre_jit` only compiles the
//! pattern; it bounds nothing), so the limit travels in the pattern itself: PCRE2 (and PCRE
//! since 8.33) reads a leading `(*LIMIT_MATCH=N)`, which can only lower the library's limit
//! (pcre2pattern(3), "Setting match resource limits"; the JIT honours it too). A match that
//! reaches it fails with an error, and nginx answers that request 500 and logs
//! `pcre2_match() failed: -47` instead of spending CPU (checked with nginx 1.22 and PCRE2
//! 10.42, `pcre_jit` on and off). The checker refuses what it recognises; the limit covers the
//! rest.

mod cost;
mod parse;

/// PCRE's match limit for regex paths: PCRE's own default is 10,000,000, about 0.3 s of one
/// worker's CPU on `/(a+)+$`; 100,000 stops such a request within a few milliseconds, far above
/// what a pattern accepted by the checker needs on an 8 KB URI.
pub const MATCH_LIMIT: u32 = 100_000;

/// Checks a regex path: the PCRE subset, every top-level alternative starting with `/`, and
/// no construct with super-linear backtracking.
///
/// # Errors
///
/// A message that quotes the path and names what is wrong in it.
pub fn check(path: &str) -> Result<(), String> {
    let refused = |why: String| format!("regex path {path:?}: {why}");
    let alternatives = parse::alternatives(path).map_err(refused)?;
    cost::check(&alternatives, path, true).map_err(refused)
}

/// Checks a regex that a Gateway header or query-parameter value must match: the same subset
/// and the same bound on backtracking as [`check`], without the rule that alternatives start
/// with `/` (a value has no root, and it only selects among the candidates of its location).
///
/// # Errors
///
/// A message that quotes the pattern and names what is wrong in it.
pub fn check_value(pattern: &str) -> Result<(), String> {
    let refused = |why: String| format!("regex {pattern:?}: {why}");
    let alternatives = parse::alternatives(pattern).map_err(refused)?;
    cost::check(&alternatives, pattern, false).map_err(refused)
}

/// The path anchored as a whole: `^(?:PATH)`, so that every alternative starts at the
/// beginning of the URI.
pub fn anchored(path: &str) -> String {
    format!("^(?:{path})")
}

/// The PCRE nginx gets for a checked path: anchored, and under [`MATCH_LIMIT`].
pub fn pattern(path: &str) -> String {
    format!("(*LIMIT_MATCH={MATCH_LIMIT}){}", anchored(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_anchored_as_a_whole_and_limited() {
        assert_eq!(pattern("/a|/b"), "(*LIMIT_MATCH=100000)^(?:/a|/b)");
        // `^/a|/b` would let `/b` match anywhere in the URI; anchored, it does not.
        let anchored = regex::Regex::new(&anchored("/a|/b")).unwrap();
        assert!(anchored.is_match("/a/x") && anchored.is_match("/b"));
        assert!(!anchored.is_match("/zzz/b") && !anchored.is_match("/zzz"));
    }

    /// `/a|` rendered as `^/a|` matched every URI of the host. Anchoring alone does not help
    /// (its empty alternative still matches), so the path is refused.
    #[test]
    fn an_empty_alternative_is_refused() {
        for unanchored in ["^/a|", "^(?:/a|)"] {
            assert!(regex::Regex::new(unanchored).unwrap().is_match("/zzz"));
        }
        for bad in ["/a|", "|/a", "/a||/b", "/a|b", "/a|$", "/a|.*"] {
            let error = check(bad).unwrap_err();
            assert!(error.contains("does not start with /"), "{bad}: {error}");
        }
        let error = check("/a|").unwrap_err();
        assert_eq!(
            error,
            "regex path \"/a|\": alternative 2 (\"\") does not start with /; every top-level \
             alternative must, or it matches the paths of other rules"
        );
        assert!(check("/a|/b").is_ok());
    }

    /// Values are held to the same subset and cost rules, without the leading `/`.
    #[test]
    fn values_need_no_slash_but_the_same_subset() {
        for good in ["v[0-9]+", "a|b", ".*-beta", "(one|two)\\.x"] {
            assert_eq!(check_value(good), Ok(()), "{good}");
        }
        for bad in ["(a+)+$", "\\d+\\d+", "a{2}", "(?i)a", "a\"b", "[a;]"] {
            assert!(check_value(bad).is_err(), "{bad}");
        }
    }
}
