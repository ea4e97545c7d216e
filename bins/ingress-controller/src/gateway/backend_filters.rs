//! Filters on a backendRef (S-F.9; HTTPRouteBackendRequestHeaderModification): a
//! RequestHeaderModifier that applies only to the requests sent to that backend, and a
//! ResponseHeaderModifier that applies only to its answers. Any other filter type there makes
//! the rule invalid, as a filter is never skipped (S-IR.1).
//!
//! A rule's backend is drawn from its split by the Lua balancer in the access phase, after
//! nginx has settled the location's request headers. A backend with filters is therefore a
//! named location of its own ([`member_location`]): the split names that location instead of
//! the backend, the draw jumps there (`ngx.exec`), and it proxies to the backend with the
//! rule's request edits followed by the backend's, merged into one list ([`merge`]), and the
//! same for the response edits. Weights
//! and endpoints stay table data: changing them reloads nothing.

use cluster_state::gateway::{HttpBackendRef, HttpRouteRule};

use super::Fault;
use super::filters::{Filter, HeaderEdits, Rewrite, filter};
use super::plan::Action;

/// One backend of a rule's split whose requests get header edits of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendRoute {
    /// The named location the split draws ([`member_location`]).
    pub location: String,
    /// The backend's name in the table.
    pub backend: String,
    /// The request header edits its requests get: the rule's, then the backend's.
    pub request: HeaderEdits,
    /// The response header edits its answers get: the rule's, then the backend's.
    pub response: HeaderEdits,
}

/// The header edits of one backendRef's filters, each list in the order written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BackendEdits {
    /// Its RequestHeaderModifiers.
    pub request: Vec<HeaderEdits>,
    /// Its ResponseHeaderModifiers.
    pub response: Vec<HeaderEdits>,
}

impl BackendEdits {
    /// Whether the backendRef has no filters.
    pub fn is_empty(&self) -> bool {
        self.request.is_empty() && self.response.is_empty()
    }
}

/// The header edits of `backend`'s filters (none: no filters).
///
/// # Errors
///
/// A refused header modifier (S-F.1, S-F.2), or a filter of another type.
pub fn backend_edits(backend: &HttpBackendRef) -> Result<BackendEdits, Fault> {
    let mut out = BackendEdits::default();
    for f in backend.filters.iter().flatten() {
        match filter(f)? {
            Filter::RequestHeaders(edits) => out.request.push(edits),
            Filter::ResponseHeaders(edits) => out.response.push(edits),
            _ => {
                let message = format!(
                    "backendRef {}: filter {} is not supported on a backendRef",
                    backend.name, f.type_
                );
                return Err(Fault::new("UnsupportedValue", message));
            }
        }
    }
    Ok(out)
}

/// Checks the backendRef filters of `rule`, whose own filters are `filters`: each backend's
/// edits can be served and merged after the rule's.
///
/// # Errors
///
/// Why the rule is invalid.
pub fn check(rule: &HttpRouteRule, filters: &[Filter]) -> Result<(), Fault> {
    for backend in rule.backend_refs() {
        let edits = backend_edits(backend)?;
        if !edits.is_empty() {
            merged_edits(filters, &edits).map_err(|why| {
                let message = format!("backendRef {}: {why}", backend.name);
                Fault::new("UnsupportedValue", message)
            })?;
        }
    }
    Ok(())
}

/// The rule's header modifier edits among `filters`, then `backend`'s, merged: the request
/// edits, and the response edits.
///
/// # Errors
///
/// As [`merge`].
pub fn merged_edits(
    filters: &[Filter],
    backend: &BackendEdits,
) -> Result<(HeaderEdits, HeaderEdits), String> {
    let mut request = Vec::new();
    let mut response = Vec::new();
    for f in filters {
        match f {
            Filter::RequestHeaders(edits) => request.push(edits),
            Filter::ResponseHeaders(edits) => response.push(edits),
            _ => {}
        }
    }
    Ok((
        merge(request.into_iter().chain(&backend.request))?,
        merge(response.into_iter().chain(&backend.response))?,
    ))
}

/// What a header ends up as after a sequence of edits.
enum Outcome {
    Set(String),
    Add(String),
    Remove,
}

/// `edits` applied one after the other, as one [`HeaderEdits`] in which each name appears
/// once (names compare regardless of case; the first spelling is kept): a later `set` or
/// `remove` replaces what came before, an `add` after a `remove` is a `set`.
///
/// # Errors
///
/// An `add` to a header an earlier edit sets or adds to: the values would have to be joined,
/// and the result could outgrow what one configuration word holds (S-F.1's cap).
pub fn merge<'a>(edits: impl IntoIterator<Item = &'a HeaderEdits>) -> Result<HeaderEdits, String> {
    let mut state: Vec<(String, Outcome)> = Vec::new();
    let mut apply = |name: &String, outcome: Outcome| -> Result<(), String> {
        let found = state.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(name));
        match (found, outcome) {
            (Some((_, Outcome::Set(_) | Outcome::Add(_))), Outcome::Add(_)) => Err(format!(
                "header {name} is added to after an earlier edit of it"
            )),
            (Some((_, slot @ Outcome::Remove)), Outcome::Add(value)) => {
                *slot = Outcome::Set(value);
                Ok(())
            }
            (Some((_, slot)), outcome) => {
                *slot = outcome;
                Ok(())
            }
            (None, outcome) => {
                state.push((name.clone(), outcome));
                Ok(())
            }
        }
    };
    for e in edits {
        for (name, value) in &e.set {
            apply(name, Outcome::Set(value.clone()))?;
        }
        for (name, value) in &e.add {
            apply(name, Outcome::Add(value.clone()))?;
        }
        for name in &e.remove {
            apply(name, Outcome::Remove)?;
        }
    }
    let mut out = HeaderEdits::default();
    for (name, outcome) in state {
        match outcome {
            Outcome::Set(value) => out.set.push((name, value)),
            Outcome::Add(value) => out.add.push((name, value)),
            Outcome::Remove => out.remove.push(name),
        }
    }
    Ok(out)
}

/// The named location of backendRef `backend` of the rule whose split is `split`.
pub fn member_location(split: &str, backend: usize) -> String {
    format!("@{split}:{backend}")
}

/// What the named location of `route` does, from the rule's action `action` (a forward):
/// the same, to `route`'s backend alone, with its merged request and response edits, and
/// without the rule's path rewrite (nginx already rewrote the path before the draw jumped
/// here).
pub fn member_action(action: &Action, route: &BackendRoute) -> Action {
    match action {
        Action::Forward {
            route: key,
            path,
            actions,
            prefix,
            ..
        } => {
            let mut actions = actions.clone();
            actions.filters.retain(|f| {
                !matches!(
                    f,
                    Filter::RequestHeaders(_)
                        | Filter::ResponseHeaders(_)
                        | Filter::BackendHeaders(_)
                )
            });
            for f in &mut actions.filters {
                if let Filter::Rewrite(Rewrite { path, .. }) = f {
                    *path = None;
                }
            }
            actions
                .filters
                .push(Filter::RequestHeaders(route.request.clone()));
            if route.response != HeaderEdits::default() {
                actions
                    .filters
                    .push(Filter::ResponseHeaders(route.response.clone()));
            }
            Action::Forward {
                split: route.backend.clone(),
                route: key.clone(),
                path: path.clone(),
                actions,
                prefix: prefix.clone(),
            }
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use cluster_state::gateway::{
        Header, HeaderModifier, HttpRequestRedirectFilter, HttpRouteFilter,
    };

    use super::*;

    fn edits(set: &[(&str, &str)], add: &[(&str, &str)], remove: &[&str]) -> HeaderEdits {
        let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect()
        };
        HeaderEdits {
            set: pairs(set),
            add: pairs(add),
            remove: remove.iter().map(|n| (*n).to_owned()).collect(),
        }
    }

    /// The rule's edits then the backend's: a later set or remove wins, an add after a remove
    /// is a set, names compare regardless of case; joining two values is refused.
    #[test]
    fn merge_applies_edits_in_order() {
        let rule = edits(
            &[("Backend", "rule"), ("X-A", "a")],
            &[("X-B", "b")],
            &["X-C"],
        );
        let backend = edits(&[("backend", "one")], &[("x-c", "c")], &["x-a"]);
        assert_eq!(
            merge([&rule, &backend]),
            Ok(edits(
                &[("Backend", "one"), ("X-C", "c")],
                &[("X-B", "b")],
                &["X-A"]
            ))
        );
        for (first, then) in [
            (
                edits(&[("X-A", "a")], &[], &[]),
                edits(&[], &[("x-a", "b")], &[]),
            ),
            (
                edits(&[], &[("X-A", "a")], &[]),
                edits(&[], &[("X-A", "b")], &[]),
            ),
        ] {
            assert!(merge([&first, &then]).is_err(), "{first:?} {then:?}");
        }
    }

    fn with_filter(type_: &str, modifier: HeaderModifier) -> HttpBackendRef {
        let filter = HttpRouteFilter {
            type_: type_.into(),
            request_header_modifier: (type_ == "RequestHeaderModifier").then(|| modifier.clone()),
            response_header_modifier: (type_ == "ResponseHeaderModifier").then_some(modifier),
            ..Default::default()
        };
        HttpBackendRef {
            name: "one".into(),
            port: Some(80),
            filters: Some(vec![filter]),
            ..Default::default()
        }
    }

    fn set(name: &str, value: &str) -> HeaderModifier {
        HeaderModifier {
            set: Some(vec![Header {
                name: name.into(),
                value: value.into(),
            }]),
            ..Default::default()
        }
    }

    /// S-F.9: a RequestHeaderModifier or ResponseHeaderModifier on a backendRef is served;
    /// another type, a refused header, or an edit that cannot follow the rule's makes the rule
    /// invalid.
    #[test]
    fn s_f_9_what_a_backend_ref_may_carry() {
        let rule = |backend: HttpBackendRef, filters: Vec<HttpRouteFilter>| HttpRouteRule {
            filters: Some(filters),
            backend_refs: Some(vec![backend]),
            ..Default::default()
        };
        let fine = with_filter("RequestHeaderModifier", set("Backend", "one"));
        assert_eq!(
            backend_edits(&fine),
            Ok(BackendEdits {
                request: vec![edits(&[("Backend", "one")], &[], &[])],
                response: Vec::new(),
            })
        );
        assert_eq!(check(&rule(fine, vec![]), &[]), Ok(()));
        let answers = with_filter("ResponseHeaderModifier", set("X-Answer", "one"));
        assert_eq!(
            backend_edits(&answers),
            Ok(BackendEdits {
                request: Vec::new(),
                response: vec![edits(&[("X-Answer", "one")], &[], &[])],
            })
        );
        assert_eq!(check(&rule(answers, vec![]), &[]), Ok(()));
        for refused in [
            with_filter("ResponseHeaderModifier", set("Backend", "a\nb")),
            with_filter("RequestHeaderModifier", set("Backend", "a\nb")),
            with_filter("RequestHeaderModifier", set("Host", "a")),
        ] {
            let fault = check(&rule(refused.clone(), vec![]), &[]).unwrap_err();
            assert_eq!(fault.reason, "UnsupportedValue", "{refused:?}");
        }
        // A filter that is valid on a rule but not on a backendRef.
        let mut redirect = with_filter("RequestRedirect", HeaderModifier::default());
        for f in redirect.filters.iter_mut().flatten() {
            f.request_redirect = Some(HttpRequestRedirectFilter::default());
        }
        let fault = check(&rule(redirect, vec![]), &[]).unwrap_err();
        assert_eq!(fault.reason, "UnsupportedValue");
        assert!(
            fault.message.contains("not supported on a backendRef"),
            "{fault:?}"
        );
        let adds = HeaderModifier {
            add: Some(vec![Header {
                name: "X-A".into(),
                value: "b".into(),
            }]),
            ..Default::default()
        };
        let rule_sets = [Filter::RequestHeaders(edits(&[("X-A", "a")], &[], &[]))];
        let backend = with_filter("RequestHeaderModifier", adds.clone());
        let fault = check(&rule(backend, vec![]), &rule_sets).unwrap_err();
        assert!(
            fault.message.starts_with("backendRef one: "),
            "{}",
            fault.message
        );
        // The same for the answers: the backend's add after the rule's set.
        let rule_sets = [Filter::ResponseHeaders(edits(&[("X-A", "a")], &[], &[]))];
        let backend = with_filter("ResponseHeaderModifier", adds);
        assert!(check(&rule(backend, vec![]), &rule_sets).is_err());
    }

    /// A backend's location forwards to that backend alone, with the merged edits, and does
    /// not rewrite the path again; the URLRewrite host stays.
    #[test]
    fn member_actions_replace_the_split_and_the_request_edits() {
        let route = BackendRoute {
            location: member_location("gw:ns/r#0", 1),
            backend: "ns/one:80".into(),
            request: edits(&[("Backend", "one")], &[], &[]),
            response: edits(&[("X-Answer", "one")], &[], &["X-Rule"]),
        };
        assert_eq!(route.location, "@gw:ns/r#0:1");
        let rewrite = Filter::Rewrite(Rewrite {
            hostname: Some("h.example".into()),
            path: Some(super::super::filters::PathChange::Full("/new".into())),
        });
        let rule = Action::Forward {
            split: "gw:ns/r#0".into(),
            route: cluster_state::ObjectRef::new("ns", "r"),
            path: "/old".into(),
            actions: super::super::rules::RuleActions {
                filters: vec![
                    Filter::RequestHeaders(edits(&[("Backend", "rule")], &[], &[])),
                    Filter::ResponseHeaders(edits(&[], &[], &["X-Rule"])),
                    rewrite,
                    Filter::BackendHeaders(route.clone()),
                ],
                timeouts: Default::default(),
            },
            prefix: Some("/old".into()),
        };
        let Action::Forward { split, actions, .. } = member_action(&rule, &route) else {
            panic!("not a forward");
        };
        assert_eq!(split, "ns/one:80");
        assert_eq!(
            actions.filters,
            [
                Filter::Rewrite(Rewrite {
                    hostname: Some("h.example".into()),
                    path: None,
                }),
                Filter::RequestHeaders(edits(&[("Backend", "one")], &[], &[])),
                Filter::ResponseHeaders(edits(&[("X-Answer", "one")], &[], &["X-Rule"])),
            ]
        );
    }
}
