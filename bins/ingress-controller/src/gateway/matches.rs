//! Which HTTPRoute match values nginx can serve (S-PM.3, S-PM.4, S-MM.1 to S-MM.3), and how:
//! an Exact or PathPrefix path as a path rule for nginx's locations, a RegularExpression path
//! and the method, header and query conditions as the Lua dispatcher's data.
//!
//! One check for the planner and the status: a match [`servable`] refuses is left out of
//! nginx's configuration, and its rule counts as invalid ([`rule_matches`], called by
//! [`super::rules::rule_actions`]), so that `PartiallyInvalid` and `Accepted` say what nginx
//! serves. RegularExpression header and query values are held to the regex paths' subset
//! ([`crate::regex_path::check_value`]) and, like paths, must match the whole value.

use cluster_state::gateway::{HttpRouteMatch, HttpRouteRule};

use super::Fault;
use super::plan::{Conditions, ValueRegex};
use crate::paths::{Kind, PathRule};

/// The longest header or query-parameter value a match may compare (the CRD's maximum for
/// query values; header values are held to it too, so that one candidate's data, encoded,
/// fits one nginx word).
const MAX_VALUE: usize = 1024;

/// The longest query-parameter name served (header names are at most 256 by the CRD).
const MAX_NAME: usize = 256;

/// The longest RegularExpression path served.
const MAX_REGEX: usize = 1024;

/// Match `m` as nginx serves it: its Exact or PathPrefix path (`None`: a RegularExpression
/// path, then in the conditions) and its conditions.
///
/// # Errors
///
/// Why `m` cannot be served (see `conditions`, [`gateway_path`], [`crate::regex_path::check`]).
pub fn servable(m: &HttpRouteMatch) -> Result<(Option<PathRule>, Conditions), String> {
    let path = m.path();
    let mut conditions = conditions(m)?;
    if path.match_type() == "RegularExpression" {
        if path.value().len() > MAX_REGEX {
            return Err(format!("path is longer than {MAX_REGEX} bytes"));
        }
        crate::regex_path::check(path.value())?;
        conditions.path = Some(whole_match(path.value()));
        Ok((None, conditions))
    } else {
        let rule = gateway_path(path.match_type(), path.value())?;
        Ok((Some(rule), conditions))
    }
}

/// `Ok` when nginx can serve every match of `rule`, else the first refused one as the fault
/// that makes the rule invalid.
pub fn rule_matches(rule: &HttpRouteRule) -> Result<(), Fault> {
    for (index, m) in rule.matches().iter().enumerate() {
        if let Err(message) = servable(m) {
            return Err(Fault::new(
                "UnsupportedValue",
                format!("match {index}: {message}"),
            ));
        }
    }
    Ok(())
}

/// The method, header and query conditions of `m` (S-MM.1 to S-MM.3); a repeated header or
/// parameter name counts once, the first entry.
///
/// # Errors
///
/// What cannot be served: a method that is not upper-case letters, a header name outside
/// `[A-Za-z0-9-]`, an empty parameter name, a value longer than [`MAX_VALUE`] (a parameter
/// name longer than [`MAX_NAME`]) or with control characters, a RegularExpression value
/// outside the checked subset or longer than [`MAX_REGEX`], an unknown type.
fn conditions(m: &HttpRouteMatch) -> Result<Conditions, String> {
    let long = |what: &str, text: &str, max: usize| {
        if text.len() > max {
            Some(format!("{what} longer than {max} bytes is not served"))
        } else if text.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            // No request can carry them in a header; refused in parameters alike.
            Some(format!("{what} with control characters is not served"))
        } else {
            None
        }
    };
    let mut out = Conditions::default();
    if let Some(method) = &m.method {
        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(format!("method {method:?} is not served"));
        }
        out.method = Some(method.clone());
    }
    for header in m.headers() {
        let name = &header.name;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(format!("header name {name:?} is not served"));
        }
        if let Some(why) = long("a header value", &header.value, MAX_VALUE) {
            return Err(why);
        }
        let name = name.to_ascii_lowercase();
        let regex = value_regex(header.match_type(), &header.value)?;
        if out.has(true, &name) {
            continue;
        }
        match regex {
            Some(pattern) => out.regexes.push(ValueRegex {
                header: true,
                name,
                pattern,
            }),
            None => out.headers.push((name, header.value.clone())),
        }
    }
    for param in m.query_params() {
        if param.name.is_empty() {
            return Err("an empty query parameter name is not served".into());
        }
        if let Some(why) = long("a query parameter name", &param.name, MAX_NAME)
            .or_else(|| long("a query parameter value", &param.value, MAX_VALUE))
        {
            return Err(why);
        }
        let regex = value_regex(param.match_type(), &param.value)?;
        if out.has(false, &param.name) {
            continue;
        }
        match regex {
            Some(pattern) => out.regexes.push(ValueRegex {
                header: false,
                name: param.name.clone(),
                pattern,
            }),
            None => out.query.push((param.name.clone(), param.value.clone())),
        }
    }
    Ok(out)
}

impl Conditions {
    /// Whether a header (`header`; `name` lower-cased) or query condition on `name` is there.
    fn has(&self, header: bool, name: &str) -> bool {
        let exact = if header { &self.headers } else { &self.query };
        exact.iter().any(|(n, _)| n == name)
            || self
                .regexes
                .iter()
                .any(|r| r.header == header && r.name == name)
    }
}

/// A header or query value of type `match_type`: `None` for `Exact`, the whole-value PCRE for
/// a checked `RegularExpression` (same anchors and limit as a regex path, S-MM.1).
///
/// # Errors
///
/// An unknown type, a regex longer than [`MAX_REGEX`] or outside the subset.
fn value_regex(match_type: &str, value: &str) -> Result<Option<String>, String> {
    match match_type {
        "Exact" => Ok(None),
        "RegularExpression" => {
            if value.len() > MAX_REGEX {
                return Err(format!(
                    "a regex longer than {MAX_REGEX} bytes is not served"
                ));
            }
            crate::regex_path::check_value(value)?;
            Ok(Some(whole_match(value)))
        }
        other => Err(format!("{other} matches are not served")),
    }
}

/// A checked RegularExpression path (or header or query value) as the PCRE the whole subject
/// must match (S-PM.4, S-MM.1): anchored at both ends (`\z`, not `$`, which also matches
/// before a final newline), under [`crate::regex_path::MATCH_LIMIT`].
pub(crate) fn whole_match(path: &str) -> String {
    format!(
        "(*LIMIT_MATCH={}){}\\z",
        crate::regex_path::MATCH_LIMIT,
        crate::regex_path::anchored(path)
    )
}

/// An Exact or PathPrefix path value as a path rule (semantics S-PM.1 to S-PM.3): `%XX`
/// escapes decoded (nginx matches the decoded path), and refused when the decoding yields a
/// control byte, a space, `%`, `/` or invalid UTF-8; no empty, `.` or `..` element. A prefix is
/// normalised without its trailing `/`.
///
/// # Errors
///
/// Why the value cannot be served.
pub fn gateway_path(match_type: &str, value: &str) -> Result<PathRule, String> {
    let kind = match match_type {
        "Exact" => Kind::Exact,
        "PathPrefix" => Kind::Prefix,
        other => return Err(format!("path type {other:?} is not served")),
    };
    if value.len() > 1024 {
        return Err("path is longer than 1024 bytes".into());
    }
    if !value.starts_with('/') {
        return Err(format!("path {value:?} does not start with /"));
    }
    let bytes = value.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(d) if d > 0x20 && d != 0x7f && d != b'%' && d != b'/' => decoded.push(d),
                _ => return Err(format!("path {value:?} has an escape that is not served")),
            }
            i += 3;
        } else if b.is_ascii_alphanumeric() || b"-/._~!$&'()*+,;=:@".contains(&b) {
            decoded.push(b);
            i += 1;
        } else {
            return Err(format!("path {value:?} contains {:?}", char::from(b)));
        }
    }
    let path = String::from_utf8(decoded)
        .map_err(|_| format!("path {value:?} does not decode to UTF-8"))?;
    let trimmed = path.trim_end_matches('/');
    if path.contains("//") || trimmed.split('/').any(|e| e == "." || e == "..") {
        return Err(format!("path {value:?} has an empty, . or .. element"));
    }
    let path = match kind {
        Kind::Prefix if trimmed.is_empty() => "/".to_owned(),
        Kind::Prefix => trimmed.to_owned(),
        _ => path,
    };
    Ok(PathRule { kind, path })
}

#[cfg(test)]
mod tests {
    use cluster_state::gateway::{HeaderMatch, HttpPathMatch, HttpQueryParamMatch};

    use super::*;

    fn with_header(name: &str, value: &str, type_: Option<&str>) -> HttpRouteMatch {
        HttpRouteMatch {
            headers: Some(vec![HeaderMatch {
                name: name.into(),
                value: value.into(),
                type_: type_.map(str::to_owned),
            }]),
            ..Default::default()
        }
    }

    fn with_path(type_: &str, value: &str) -> HttpRouteMatch {
        HttpRouteMatch {
            path: Some(HttpPathMatch {
                type_: Some(type_.into()),
                value: Some(value.into()),
            }),
            ..Default::default()
        }
    }

    /// What the planner leaves out makes the rule invalid, naming the match.
    #[test]
    fn refused_matches_make_the_rule_invalid() {
        let rule = |matches: Vec<HttpRouteMatch>| HttpRouteRule {
            matches: Some(matches),
            ..Default::default()
        };
        let fine = rule(vec![
            with_header("Version", "two", None),
            with_path("Exact", "/a"),
        ]);
        assert_eq!(rule_matches(&fine), Ok(()));
        for refused in [
            with_header("X_Under", "v", None),
            with_header("X-A", "a\r\nb", None),
            with_header("X-A", &"v".repeat(MAX_VALUE + 1), None),
            with_header("X-A", "(v+)+", Some("RegularExpression")),
            with_header("X-A", "v{2}", Some("RegularExpression")),
            with_header("X-A", "v", Some("Prefix")),
            with_path("Exact", "/a%0d"),
            with_path("RegularExpression", "/(a+)+$"),
        ] {
            let fault = rule_matches(&rule(vec![with_path("Exact", "/ok"), refused.clone()]));
            let fault = fault.unwrap_err();
            assert_eq!(fault.reason, "UnsupportedValue", "{refused:?}");
            assert!(fault.message.starts_with("match 1: "), "{}", fault.message);
        }
    }

    /// RegularExpression values become whole-value PCREs; a name counts once across both types
    /// and regardless of case, the first entry winning.
    #[test]
    fn regex_values_are_whole_matches_and_names_count_once() {
        let m = HttpRouteMatch {
            headers: Some(vec![
                HeaderMatch {
                    name: "Version".into(),
                    value: "v[0-9]+".into(),
                    type_: Some("RegularExpression".into()),
                },
                HeaderMatch {
                    name: "version".into(),
                    value: "two".into(),
                    type_: None,
                },
            ]),
            query_params: Some(vec![
                HttpQueryParamMatch {
                    name: "q".into(),
                    value: "one".into(),
                    type_: Some("Exact".into()),
                },
                HttpQueryParamMatch {
                    name: "q".into(),
                    value: "t.*".into(),
                    type_: Some("RegularExpression".into()),
                },
                HttpQueryParamMatch {
                    name: "Q".into(),
                    value: "a|b".into(),
                    type_: Some("RegularExpression".into()),
                },
            ]),
            ..Default::default()
        };
        let (_, conditions) = servable(&m).unwrap();
        assert!(conditions.headers.is_empty());
        assert_eq!(conditions.query, [("q".to_owned(), "one".to_owned())]);
        let regexes: Vec<_> = conditions
            .regexes
            .iter()
            .map(|r| (r.header, r.name.as_str(), r.pattern.as_str()))
            .collect();
        assert_eq!(
            regexes,
            [
                (true, "version", "(*LIMIT_MATCH=100000)^(?:v[0-9]+)\\z"),
                (false, "Q", "(*LIMIT_MATCH=100000)^(?:a|b)\\z"),
            ]
        );
    }
}
