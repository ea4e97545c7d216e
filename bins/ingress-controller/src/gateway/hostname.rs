//! Gateway API host names (semantics S-§3.3): a listener's or a route's `hostname`, exact or
//! wildcard, the wildcard covering **one or more** labels (unlike the Ingress wildcard of
//! `hosts.rs`, which covers exactly one); the intersection of a listener's and a route's names
//! (S-HN.1), and the specificity order (S-PR.1, S-LI.1).

use std::cmp::Reverse;
use std::fmt;

/// A host name as a listener or route writes it, lower-cased (the CRD pattern allows only lower
/// case; the request side compares case-insensitively).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Hostname {
    /// One name: `foo.example.com`.
    Exact(String),
    /// `*.` and a suffix: every name that ends in `.` + suffix with at least one label before.
    /// Holds the suffix (`example.com` for `*.example.com`).
    Wildcard(String),
}

impl Hostname {
    /// The host name `text` (`*.example.com` is a wildcard); `None` when `text` is empty, which
    /// the API treats as no host name at all.
    pub fn new(text: &str) -> Option<Self> {
        let text = text.to_ascii_lowercase();
        if text.is_empty() {
            return None;
        }
        Some(match text.strip_prefix("*.") {
            Some(suffix) => Self::Wildcard(suffix.to_owned()),
            None => Self::Exact(text),
        })
    }

    /// Whether the request host `host` (without its port) is one this name covers; compared
    /// case-insensitively.
    pub fn matches(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        match self {
            Self::Exact(name) => *name == host,
            Self::Wildcard(suffix) => below(&host, suffix),
        }
    }

    /// The names both `self` and `other` cover, as one name (semantics table §3.3); `None` when
    /// they share none.
    pub fn intersect(&self, other: &Self) -> Option<Self> {
        match (self, other) {
            (Self::Exact(a), Self::Exact(b)) => (a == b).then(|| self.clone()),
            (Self::Exact(name), Self::Wildcard(suffix))
            | (Self::Wildcard(suffix), Self::Exact(name)) => {
                below(name, suffix).then(|| Self::Exact(name.clone()))
            }
            (Self::Wildcard(s), Self::Wildcard(t)) => {
                if s == t || below(s, t) {
                    Some(self.clone())
                } else if below(t, s) {
                    Some(other.clone())
                } else {
                    None
                }
            }
        }
    }

    /// The sort key of S-PR.1 and S-LI.1, most specific first: exact names by length (longer
    /// first), then wildcards by length with the `*.` (longer, so more labels, first). Of two
    /// names that both cover one request host, the one sorting first is the more specific.
    pub fn specificity(&self) -> Specificity {
        match self {
            Self::Exact(name) => Specificity(Reverse(name.len()), Reverse(name.len())),
            Self::Wildcard(suffix) => Specificity(Reverse(0), Reverse(suffix.len() + 2)),
        }
    }
}

/// The S-PR.1 order of host names: smaller is more specific; see [`Hostname::specificity`]. A
/// route without host names sorts after every name ([`Specificity::NONE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Specificity(Reverse<usize>, Reverse<usize>);

impl Specificity {
    /// The key of "no host name": after every exact name and wildcard.
    pub const NONE: Specificity = Specificity(Reverse(0), Reverse(0));
}

impl fmt::Display for Hostname {
    /// The name as the API writes it (`*.example.com` for a wildcard).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exact(name) => f.write_str(name),
            Self::Wildcard(suffix) => write!(f, "*.{suffix}"),
        }
    }
}

/// Whether `name` ends in `.` + `suffix` with at least one label before it.
fn below(name: &str, suffix: &str) -> bool {
    name.strip_suffix(suffix)
        .and_then(|head| head.strip_suffix('.'))
        .is_some_and(|head| !head.is_empty())
}

/// The listener that serves requests for `host` (without its port) among the host names of
/// the listeners of one address and port, `None` standing for a listener without one (S-LI.1):
/// the most specific that covers `host`, the first of equals. Only routes attached to that
/// listener may serve the request, which also settles S-LI.2. `None` when no listener covers
/// `host`.
pub fn listener_for<'a>(
    host: &str,
    listeners: impl IntoIterator<Item = Option<&'a Hostname>>,
) -> Option<usize> {
    listeners
        .into_iter()
        .enumerate()
        .filter(|(_, name)| name.is_none_or(|name| name.matches(host)))
        .min_by_key(|(index, name)| {
            (
                name.map_or(Specificity::NONE, Hostname::specificity),
                *index,
            )
        })
        .map(|(index, _)| index)
}

/// The host names a route serves on a listener (S-HN.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hostnames {
    /// Any host: neither the listener nor the route names one.
    Any,
    /// These names (none: the route's names all miss the listener's).
    Only(Vec<Hostname>),
}

impl Hostnames {
    /// Whether no host is left (S-AT.5: `NoMatchingListenerHostname`).
    pub fn is_empty(&self) -> bool {
        matches!(self, Self::Only(names) if names.is_empty())
    }
}

/// The effective host names of a route with names `route` on a listener with name `listener`
/// (S-HN.1): a route name that misses the listener's is ignored.
pub fn effective(listener: Option<&Hostname>, route: &[Hostname]) -> Hostnames {
    match (listener, route.is_empty()) {
        (None, true) => Hostnames::Any,
        (None, false) => Hostnames::Only(dedup(route.to_vec())),
        (Some(listener), true) => Hostnames::Only(vec![listener.clone()]),
        (Some(listener), false) => Hostnames::Only(dedup(
            route.iter().filter_map(|r| listener.intersect(r)).collect(),
        )),
    }
}

/// `names` without repeats, in first-seen order.
fn dedup(names: Vec<Hostname>) -> Vec<Hostname> {
    let mut out: Vec<Hostname> = Vec::with_capacity(names.len());
    for name in names {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(text: &str) -> Hostname {
        Hostname::new(text).unwrap()
    }

    fn names(texts: &[&str]) -> Vec<Hostname> {
        texts.iter().map(|t| h(t)).collect()
    }

    #[test]
    fn s_hn_wildcard_covers_one_or_more_labels_never_the_suffix() {
        let wildcard = h("*.example.com");
        assert!(wildcard.matches("foo.example.com"));
        assert!(wildcard.matches("foo.bar.example.com"));
        assert!(wildcard.matches("FOO.Example.COM"));
        assert!(!wildcard.matches("example.com"));
        assert!(!wildcard.matches("fooexample.com"));
        assert!(!wildcard.matches(".example.com"));
        assert!(h("Very.Specific.com").matches("very.specific.COM"));
        assert_eq!(Hostname::new(""), None);
        assert_eq!(h("*.a.io").to_string(), "*.a.io");
    }

    #[test]
    fn s_hn_intersection_table() {
        let cases = [
            ("a.io", "a.io", Some("a.io")),
            ("a.io", "b.io", None),
            ("x.a.io", "*.a.io", Some("x.a.io")),
            ("*.a.io", "x.y.a.io", Some("x.y.a.io")),
            ("*.a.io", "a.io", None),
            ("*.a.io", "*.a.io", Some("*.a.io")),
            ("*.a.io", "*.b.a.io", Some("*.b.a.io")),
            ("*.b.a.io", "*.a.io", Some("*.b.a.io")),
            ("*.a.io", "*.b.io", None),
            ("*.a.io", "*.ba.io", None),
        ];
        for (a, b, want) in cases {
            assert_eq!(h(a).intersect(&h(b)), want.map(h), "{a} ∩ {b}");
            assert_eq!(h(b).intersect(&h(a)), want.map(h), "{b} ∩ {a}");
        }
    }

    /// The vectors of HTTPRouteHostnameIntersection and HTTPRouteListenerHostnameMatching.
    #[test]
    fn s_hn_1_effective_hostnames() {
        let listener = h("very.specific.com");
        let route = names(&[
            "non.matching.com",
            "*.nonmatchingwildcard.io",
            "very.specific.com",
        ]);
        let want = Hostnames::Only(names(&["very.specific.com"]));
        assert_eq!(effective(Some(&listener), &route), want);

        let listener = h("*.wildcard.io");
        let route = names(&[
            "non.matching.com",
            "wildcard.io",
            "foo.wildcard.io",
            "bar.wildcard.io",
            "foo.bar.wildcard.io",
        ]);
        let want = names(&["foo.wildcard.io", "bar.wildcard.io", "foo.bar.wildcard.io"]);
        assert_eq!(effective(Some(&listener), &route), Hostnames::Only(want));

        let route = names(&["non.matching.com", "*.specific.com"]);
        let want = Hostnames::Only(names(&["very.specific.com"]));
        assert_eq!(effective(Some(&h("very.specific.com")), &route), want);

        let listener = h("*.anotherwildcard.io");
        let want = Hostnames::Only(names(&["*.anotherwildcard.io"]));
        assert_eq!(
            effective(Some(&listener), std::slice::from_ref(&listener)),
            want
        );

        let route = names(&["specific.but.wrong.com", "wildcard.io"]);
        for listener in ["very.specific.com", "*.wildcard.io", "*.anotherwildcard.io"] {
            assert!(effective(Some(&h(listener)), &route).is_empty());
        }
        assert_eq!(effective(None, &[]), Hostnames::Any);
        assert_eq!(effective(None, &route), Hostnames::Only(route.clone()));
        let want = Hostnames::Only(vec![h("a.io")]);
        assert_eq!(effective(Some(&h("a.io")), &[]), want);
    }

    /// S-LI.1, the vector of GatewayHTTPListenerIsolation.
    #[test]
    fn s_li_1_the_most_specific_listener_serves() {
        let listeners = [
            None,
            Some(h("*.example.com")),
            Some(h("*.foo.example.com")),
            Some(h("abc.foo.example.com")),
        ];
        let pick = |host: &str| listener_for(host, listeners.iter().map(Option::as_ref));
        assert_eq!(pick("bar.com"), Some(0));
        assert_eq!(pick("bar.example.com"), Some(1));
        assert_eq!(pick("bar.foo.example.com"), Some(2));
        assert_eq!(pick("abc.foo.example.com"), Some(3));
        let named = [Some(h("a.io")), Some(h("*.b.io"))];
        assert_eq!(listener_for("c.io", named.iter().map(Option::as_ref)), None);
        assert_eq!(
            listener_for("x.b.io", named.iter().map(Option::as_ref)),
            Some(1)
        );
    }

    /// S-PR.1 / S-LI.1: exact before wildcard, longer exact first, wildcard with more labels
    /// first, no host name last.
    #[test]
    fn s_pr_1_specificity_order() {
        let mut keys = [
            ("none", Specificity::NONE),
            ("*.example.com", h("*.example.com").specificity()),
            (
                "abc.foo.example.com",
                h("abc.foo.example.com").specificity(),
            ),
            ("*.foo.example.com", h("*.foo.example.com").specificity()),
            ("foo.example.com", h("foo.example.com").specificity()),
        ];
        keys.sort_by_key(|(_, key)| *key);
        let order: Vec<&str> = keys.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            order,
            [
                "abc.foo.example.com",
                "foo.example.com",
                "*.foo.example.com",
                "*.example.com",
                "none"
            ]
        );
    }
}
