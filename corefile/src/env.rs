//! Environment variable substitution: `{%NAME%}` then `{$NAME}` (`docs/corefile.md` §2.3).
//!
//! The lookup is supplied by the caller ([`Env`]); nothing here reads the process environment.
//! CoreDNS restarts its scan after every replacement, so a value that refers to itself makes
//! it loop forever; this module stops after [`MAX_SUBSTITUTIONS`] replacements in one token and
//! reports [`EnvError`].

use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::string::String;

/// Replacements allowed in one token before substitution is declared runaway.
pub const MAX_SUBSTITUTIONS: usize = 1000;

/// Longest text substitution may produce for one token, in bytes.
pub const MAX_SUBSTITUTED_LEN: usize = 1 << 20;

/// A source of environment variables. An unset variable expands to the empty string.
pub trait Env {
    /// The value of `name`, or `None` when it is unset.
    fn var(&self, name: &str) -> Option<Cow<'_, str>>;
}

/// The empty environment: every variable is unset (how the corpus expectations were made).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoEnv;

impl Env for NoEnv {
    fn var(&self, _name: &str) -> Option<Cow<'_, str>> {
        None
    }
}

impl Env for BTreeMap<String, String> {
    fn var(&self, name: &str) -> Option<Cow<'_, str>> {
        self.get(name).map(|v| Cow::Borrowed(v.as_str()))
    }
}

impl<F: Fn(&str) -> Option<String>> Env for F {
    fn var(&self, name: &str) -> Option<Cow<'_, str>> {
        self(name).map(Cow::Owned)
    }
}

/// Substitution did not terminate: a variable's value keeps reintroducing references.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvError {
    /// The token text before substitution.
    pub token: String,
}

/// Whether `text` may hold a reference (it has `{%` or `{$`); substitution leaves any other
/// text unchanged.
pub fn has_reference(text: &str) -> bool {
    // A byte loop beats a searcher on short tokens.
    text.as_bytes()
        .windows(2)
        .any(|pair| matches!(pair, [b'{', b'%' | b'$']))
}

/// Substitutes both reference syntaxes in `text`, `{%NAME%}` first, like caddy's
/// `replaceEnvVars`.
pub fn substitute<'t>(text: &'t str, env: &dyn Env) -> Result<Cow<'t, str>, EnvError> {
    if !has_reference(text) {
        return Ok(Cow::Borrowed(text));
    }
    let once = replace_references(Cow::Borrowed(text), "{%", "%}", env, text)?;
    replace_references(once, "{$", "}", env, text)
}

/// caddy's `replaceEnvReferences`: replace every occurrence of the first reference, then
/// rescan from the start; an empty reference stops substitution.
fn replace_references<'t>(
    mut s: Cow<'t, str>,
    start: &str,
    end: &str,
    env: &dyn Env,
    original: &str,
) -> Result<Cow<'t, str>, EnvError> {
    let mut rounds = 0usize;
    while let Some(index) = s.find(start) {
        let Some(tail) = s.get(index..) else { break };
        let Some(end_offset) = tail.find(end) else {
            break;
        };
        let end_index = index.saturating_add(end_offset);
        let name_start = index.saturating_add(start.len());
        if end_index <= name_start {
            break;
        }
        rounds = rounds.saturating_add(1);
        if rounds > MAX_SUBSTITUTIONS {
            return Err(EnvError {
                token: String::from(original),
            });
        }
        let (Some(reference), Some(name)) = (
            s.get(index..end_index.saturating_add(end.len())),
            s.get(name_start..end_index),
        ) else {
            break;
        };
        let value = env.var(name).unwrap_or_default();
        let replaced = s.replace(reference, &value);
        if replaced.len() > MAX_SUBSTITUTED_LEN {
            return Err(EnvError {
                token: String::from(original),
            });
        }
        s = Cow::Owned(replaced);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn both_syntaxes_every_occurrence_spec_2_3() {
        let e = env(&[("A", "x"), ("B", "y")]);
        assert_eq!(substitute("{$A}-{%B%}-{$A}", &e).unwrap(), "x-y-x");
    }

    #[test]
    fn unset_is_empty_and_no_defaults_spec_2_3() {
        assert_eq!(substitute("a{$X:d}b", &NoEnv).unwrap(), "ab");
    }

    #[test]
    fn empty_reference_stops_spec_2_3() {
        let e = env(&[("A", "x")]);
        assert_eq!(substitute("{$}{$A}", &e).unwrap(), "{$}{$A}");
    }

    #[test]
    fn recursive_values_expand_spec_2_3() {
        let e = env(&[("A", "{$B}"), ("B", "z")]);
        assert_eq!(substitute("{$A}", &e).unwrap(), "z");
    }

    #[test]
    fn self_reference_is_an_error_not_a_hang_spec_2_3() {
        let e = env(&[("A", "a{$A}")]);
        assert!(substitute("{$A}", &e).is_err());
    }
}
