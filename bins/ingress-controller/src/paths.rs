//! Ingress v1 path rules: validation, the specification's matching and precedence, and the
//! nginx `location`s that reproduce them.
//!
//! Exact `/p` becomes `location = /p`. Prefix `/p` (with or without a trailing slash) becomes
//! `location = /p` and `location /p/`: nginx's longest-prefix rule then matches element by
//! element, and `=` beating a prefix of the same length gives "Exact over Prefix" on a tie.
//! Prefix `/` is `location /`. A regex path (opt-in) is `location ~ "…^(?:…)"` and applies to
//! that path only; [`crate::regex_path`] checks it and writes the pattern.

/// How a rule's path is compared with the request's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The whole path, case-sensitive.
    Exact,
    /// Element-wise prefix.
    Prefix,
    /// A PCRE anchored as a whole (ImplementationSpecific with `use-regex`).
    Regex,
}

/// A validated path rule.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathRule {
    /// How it matches.
    pub kind: Kind,
    /// For Prefix, normalised without a trailing slash (except `/` itself).
    pub path: String,
}

/// One nginx `location` a path rule needs.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LocationKey {
    /// `location = PATH`.
    Exact(String),
    /// `location PATH` (a prefix ending in `/`).
    Prefix(String),
    /// `location ~ PATTERN` (the whole pattern, as [`crate::regex_path::pattern`] writes it).
    Regex(String),
}

/// Whether `b` may appear in an Exact or Prefix path: RFC 3986 path characters without `%`
/// (nginx matches decoded paths) and without `;` (nginx does not treat it as a separator).
pub(crate) fn path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"/-._~!&'()*+,=:@".contains(&b)
}

impl PathRule {
    /// Validates a rule from its `path`, `pathType`, and whether the Ingress opted into regex.
    ///
    /// # Errors
    ///
    /// A message naming what is wrong.
    pub fn parse(path: Option<&str>, path_type: &str, use_regex: bool) -> Result<Self, String> {
        let path = path.unwrap_or("/");
        if path.len() > 1024 {
            return Err("path is longer than 1024 bytes".into());
        }
        let kind = match path_type {
            "Exact" => Kind::Exact,
            "Prefix" => Kind::Prefix,
            "ImplementationSpecific" if use_regex => Kind::Regex,
            "ImplementationSpecific" => Kind::Prefix,
            other => {
                return Err(format!(
                    "pathType {other:?} is not Exact, Prefix or ImplementationSpecific"
                ));
            }
        };
        if kind == Kind::Regex {
            crate::regex_path::check(path)?;
            return Ok(Self {
                kind,
                path: path.to_owned(),
            });
        }
        if !path.starts_with('/') {
            return Err(format!("path {path:?} does not start with /"));
        }
        // The character, not its first byte: `/é` names `'é'`, not `'Ã'`.
        if let Some(c) = path
            .chars()
            .find(|&c| !u8::try_from(c).is_ok_and(path_byte))
        {
            return Err(format!(
                "path {path:?} contains {c:?}; use use-regex for patterns"
            ));
        }
        let trimmed = path.trim_end_matches('/');
        if path.contains("//") || trimmed.split('/').any(|e| e == "." || e == "..") {
            return Err(format!(
                "path {path:?} has an empty, . or .. element, which never matches a normalised request"
            ));
        }
        let path = match kind {
            Kind::Prefix if trimmed.is_empty() => "/".to_owned(),
            Kind::Prefix => trimmed.to_owned(),
            _ => path.to_owned(),
        };
        Ok(Self { kind, path })
    }

    /// The length of the match with `request` (a normalised URL path) under the
    /// specification's rules, or `None` when it does not match.
    pub fn match_len(&self, request: &str) -> Option<usize> {
        match self.kind {
            Kind::Exact => (request == self.path).then_some(self.path.len()),
            Kind::Prefix if self.path == "/" => Some(1),
            Kind::Prefix => {
                let rest = request.strip_prefix(self.path.as_str())?;
                (rest.is_empty() || rest.starts_with('/')).then_some(self.path.len())
            }
            // Regex rules are matched by nginx's PCRE; the model does not evaluate them.
            Kind::Regex => None,
        }
    }

    /// The nginx locations that implement this rule.
    pub fn locations(&self) -> Vec<LocationKey> {
        match self.kind {
            Kind::Exact => vec![LocationKey::Exact(self.path.clone())],
            Kind::Prefix if self.path == "/" => vec![LocationKey::Prefix("/".into())],
            Kind::Prefix => vec![
                LocationKey::Exact(self.path.clone()),
                LocationKey::Prefix(format!("{}/", self.path)),
            ],
            Kind::Regex => vec![LocationKey::Regex(crate::regex_path::pattern(&self.path))],
        }
    }
}

/// The specification's choice among `rules` for `request`: the longest match, Exact over
/// Prefix on a tie; `None` means the default backend.
pub fn select<'a>(rules: &'a [PathRule], request: &str) -> Option<&'a PathRule> {
    rules
        .iter()
        .filter_map(|rule| rule.match_len(request).map(|len| (len, rule)))
        .max_by_key(|(len, rule)| (*len, rule.kind == Kind::Exact))
        .map(|(_, rule)| rule)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rule(kind: &str, path: &str) -> PathRule {
        PathRule::parse(Some(path), kind, false).unwrap()
    }

    /// nginx's location choice (for `=` and prefix locations): an exact match, else the
    /// longest prefix.
    fn nginx_select(keys: &[(LocationKey, usize)], request: &str) -> Option<usize> {
        keys.iter()
            .find(|(key, _)| *key == LocationKey::Exact(request.to_owned()))
            .or_else(|| {
                keys.iter()
                    .filter(|(key, _)| {
                        matches!(key, LocationKey::Prefix(p) if request.starts_with(p.as_str()))
                    })
                    .max_by_key(|(key, _)| match key {
                        LocationKey::Prefix(p) => p.len(),
                        _ => 0,
                    })
            })
            .map(|(_, i)| *i)
    }

    /// The nginx locations for `rules`, each tagged with its rule's index; an Exact rule
    /// takes a `=` location over a Prefix rule's (Exact beats Prefix on a tie).
    fn nginx_keys(rules: &[PathRule]) -> Vec<(LocationKey, usize)> {
        let mut keys: Vec<(LocationKey, usize)> = Vec::new();
        let mut order: Vec<usize> = (0..rules.len()).collect();
        order.sort_by_key(|&i| rules[i].kind != Kind::Exact);
        for i in order {
            for key in rules[i].locations() {
                if !keys.iter().any(|(k, _)| *k == key) {
                    keys.push((key, i));
                }
            }
        }
        keys
    }

    /// The specification's table (`docs/ingress.md` §1.2): rules, request, the index of the rule
    /// that must answer (`None`: the default backend).
    #[allow(clippy::type_complexity)]
    const TABLE: &[(&[(&str, &str)], &str, Option<usize>)] = &[
        (&[("Prefix", "/")], "/anything/at/all", Some(0)),
        (&[("Exact", "/foo")], "/foo", Some(0)),
        (&[("Exact", "/foo")], "/bar", None),
        (&[("Exact", "/foo")], "/foo/", None),
        (&[("Exact", "/foo/")], "/foo", None),
        (&[("Prefix", "/foo")], "/foo", Some(0)),
        (&[("Prefix", "/foo")], "/foo/", Some(0)),
        (&[("Prefix", "/foo/")], "/foo", Some(0)),
        (&[("Prefix", "/foo/")], "/foo/", Some(0)),
        (&[("Prefix", "/aaa/bb")], "/aaa/bbb", None),
        (&[("Prefix", "/aaa/bbb")], "/aaa/bbb", Some(0)),
        (&[("Prefix", "/aaa/bbb/")], "/aaa/bbb", Some(0)),
        (&[("Prefix", "/aaa/bbb")], "/aaa/bbb/", Some(0)),
        (&[("Prefix", "/aaa/bbb")], "/aaa/bbb/ccc", Some(0)),
        (&[("Prefix", "/aaa/bbb")], "/aaa/bbbxyz", None),
        (&[("Prefix", "/"), ("Prefix", "/aaa")], "/aaa/ccc", Some(1)),
        (
            &[("Prefix", "/"), ("Prefix", "/aaa"), ("Prefix", "/aaa/bbb")],
            "/aaa/bbb",
            Some(2),
        ),
        (
            &[("Prefix", "/"), ("Prefix", "/aaa"), ("Prefix", "/aaa/bbb")],
            "/ccc",
            Some(0),
        ),
        (&[("Prefix", "/aaa")], "/ccc", None),
        (&[("Prefix", "/foo"), ("Exact", "/foo")], "/foo", Some(1)),
        (&[("Exact", "/foo"), ("Prefix", "/foo")], "/foo", Some(0)),
    ];

    #[test]
    fn specification_table_in_the_model_and_in_nginx_locations() {
        for (rules, request, expected) in TABLE {
            let rules: Vec<PathRule> = rules.iter().map(|(k, p)| rule(k, p)).collect();
            let chosen = select(&rules, request).map(|r| rules.iter().position(|x| x == r));
            let chosen = chosen.flatten();
            // Rows with a duplicated rule (none here) would make position ambiguous.
            assert_eq!(chosen, *expected, "model: {rules:?} {request}");
            let nginx = nginx_select(&nginx_keys(&rules), request);
            assert_eq!(nginx, *expected, "nginx: {rules:?} {request}");
        }
    }

    #[test]
    fn validation() {
        assert_eq!(rule("Prefix", "/foo/").path, "/foo");
        assert_eq!(rule("Prefix", "/").path, "/");
        assert_eq!(rule("ImplementationSpecific", "/x").kind, Kind::Prefix);
        for (kind, bad) in [
            ("Exact", "foo"),
            ("Prefix", "/a//b"),
            ("Prefix", "/a/../b"),
            ("Prefix", "/a b"),
            ("Prefix", "/a;b"),
            ("Prefix", "/a{b}"),
            ("Prefix", "/a%2fb"),
            ("Prefix", "/a\"b"),
            ("Other", "/a"),
        ] {
            assert!(
                PathRule::parse(Some(bad), kind, false).is_err(),
                "{kind} {bad}"
            );
        }
    }

    #[test]
    fn refused_characters_are_named_as_characters() {
        let error = PathRule::parse(Some("/caf\u{e9}"), "Prefix", false).unwrap_err();
        assert!(error.contains("contains '\u{e9}'"), "{error}");
        let error = PathRule::parse(Some("/a;b"), "Exact", false).unwrap_err();
        assert!(error.contains("contains ';'"), "{error}");
    }

    proptest! {
        /// For any set of Exact and Prefix rules and any request, nginx's choice among the
        /// rendered locations is the specification's.
        #[test]
        fn nginx_locations_agree_with_the_specification(
            rules in prop::collection::vec(
                (prop::bool::ANY, prop::collection::vec("[ab]{1,2}", 0..3), prop::bool::ANY),
                1..6,
            ),
            request in prop::collection::vec("[ab]{1,3}", 0..4),
            trailing in prop::bool::ANY,
        ) {
            let mut parsed: Vec<PathRule> = Vec::new();
            for (exact, elements, slash) in rules {
                let mut path = format!("/{}", elements.join("/"));
                if slash && path != "/" { path.push('/'); }
                let r = rule(if exact { "Exact" } else { "Prefix" }, &path);
                if !parsed.contains(&r) { parsed.push(r); }
            }
            let mut request = format!("/{}", request.join("/"));
            if trailing && request != "/" { request.push('/'); }
            let expected = select(&parsed, &request).and_then(|r| parsed.iter().position(|x| x == r));
            prop_assert_eq!(nginx_select(&nginx_keys(&parsed), &request), expected);
        }
    }
}
