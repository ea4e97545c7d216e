//! The order in which the rules attached to one listener are tried for a request (semantics
//! §4.3, S-PR.1 to S-PR.7; S-GR.2 for GRPCRoutes): one sort key per candidate, a candidate
//! being one match of one rule of one route under one of the route's effective host names.

use std::cmp::Reverse;

use cluster_state::ObjectRef;
use cluster_state::gateway::HttpRouteMatch;
use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::hostname::{Hostname, Specificity};

/// The kinds of route a listener carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RouteKind {
    /// An HTTPRoute.
    Http,
    /// A GRPCRoute, served as the HTTPRoute [`super::grpc::as_http_route`] makes of it.
    Grpc,
}

impl RouteKind {
    /// The kind's name (`HTTPRoute`, `GRPCRoute`).
    pub fn name(self) -> &'static str {
        self.kind().name()
    }

    /// The cluster-state kind.
    pub fn kind(self) -> cluster_state::Kind {
        match self {
            Self::Http => cluster_state::Kind::HttpRoute,
            Self::Grpc => cluster_state::Kind::GrpcRoute,
        }
    }
}

/// One candidate: a match of a rule of a route, under one effective host name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The route's kind.
    pub kind: RouteKind,
    /// The route.
    pub route: ObjectRef,
    /// The rule's index in the route's rules (defaults applied).
    pub rule: usize,
    /// The match's index in the rule's matches (defaults applied).
    pub match_index: usize,
    /// The effective host name (S-HN.1) this candidate serves; `None` for any (neither the
    /// listener nor the route names one).
    pub hostname: Option<Hostname>,
    /// Its place: candidates sort by this key, the first whose conditions hold wins.
    pub key: Key,
}

/// The S-PR sort key: smaller comes first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    /// S-PR.1: the host name's specificity.
    hostname: Specificity,
    /// S-PR.2: the path type, Exact (0), RegularExpression (1), PathPrefix (2), unknown (3).
    path_type: u8,
    /// S-PR.2: the path value's length, longer first (a prefix without its trailing `/`).
    path_len: Reverse<usize>,
    /// S-PR.3: a method first (1 for a method, 0 without); S-GR.2: the gRPC method's
    /// characters, more first (a GRPCRoute's service characters take `path_len`).
    method: Reverse<usize>,
    /// S-PR.4: more header matches first, names counted once ignoring case.
    headers: Reverse<usize>,
    /// S-PR.5: more query-parameter matches first, names counted once.
    query: Reverse<usize>,
    /// S-PR.6: the route's age (S-0.4).
    age: Age,
    /// S-PR.7: the rule, then the match, in spec order.
    rule: usize,
    /// S-PR.7.
    match_index: usize,
}

/// The S-0.4 age order: creation time ascending, a missing time first, then the text
/// `{namespace}/{name}` in alphabetical order, as `HTTPRouteRule` documents the tie-break (not
/// the namespace and then the name: `a-b/x` sorts before `a/x`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Age(Option<Time>, String);

impl Age {
    /// The age of the object with metadata `meta`.
    pub fn of(meta: &ObjectMeta) -> Self {
        let key = ObjectRef::from_meta(meta);
        Self(
            meta.creation_timestamp.clone(),
            format!("{}/{}", key.namespace, key.name),
        )
    }
}

impl Key {
    /// The key of match `match_index` (`m`) of rule `rule` of a route of age `age`, under the
    /// route host name `hostname` (`None`: the route names no host, so it sorts after every
    /// route that does).
    pub fn new(
        hostname: Option<&Hostname>,
        m: &HttpRouteMatch,
        age: Age,
        rule: usize,
        match_index: usize,
    ) -> Self {
        let path = m.path();
        let (path_type, path_len) = match path.match_type() {
            "Exact" => (0, path.value().len()),
            "RegularExpression" => (1, path.value().len()),
            "PathPrefix" => (2, path.value().trim_end_matches('/').len()),
            _ => (3, 0),
        };
        let mut header_names: Vec<String> = m
            .headers()
            .iter()
            .map(|h| h.name.to_ascii_lowercase())
            .collect();
        header_names.sort();
        header_names.dedup();
        let mut query_names: Vec<&str> = m.query_params().iter().map(|q| q.name.as_str()).collect();
        query_names.sort_unstable();
        query_names.dedup();
        Self {
            hostname: hostname.map_or(Specificity::NONE, Hostname::specificity),
            path_type,
            path_len: Reverse(path_len),
            method: Reverse(usize::from(m.method.is_some())),
            headers: Reverse(header_names.len()),
            query: Reverse(query_names.len()),
            age,
            rule,
            match_index,
        }
    }
}

impl Key {
    /// The S-GR.2 key of a GRPCRoute match: the host name as S-PR.1, then more characters of
    /// the matched service first, then of the method, then more header matches (`headers`,
    /// names counted once), then age, rule and match as S-PR.6 and S-PR.7.
    pub fn grpc(
        hostname: Option<&Hostname>,
        chars: (usize, usize),
        headers: usize,
        age: Age,
        rule: usize,
        match_index: usize,
    ) -> Self {
        let (service, method) = chars;
        Self {
            hostname: hostname.map_or(Specificity::NONE, Hostname::specificity),
            path_type: 0,
            path_len: Reverse(service),
            method: Reverse(method),
            headers: Reverse(headers),
            query: Reverse(0),
            age,
            rule,
            match_index,
        }
    }
}

#[cfg(test)]
mod tests {
    use cluster_state::gateway::{HeaderMatch, HttpPathMatch, HttpQueryParamMatch};
    use cluster_state::k8s::jiff::Timestamp;

    use super::*;

    fn path(kind: &str, value: &str) -> HttpRouteMatch {
        HttpRouteMatch {
            path: Some(HttpPathMatch {
                type_: Some(kind.into()),
                value: Some(value.into()),
            }),
            ..Default::default()
        }
    }

    fn headers(names: &[&str]) -> HttpRouteMatch {
        HttpRouteMatch {
            headers: Some(
                names
                    .iter()
                    .map(|n| HeaderMatch {
                        name: (*n).into(),
                        value: "v".into(),
                        type_: None,
                    })
                    .collect(),
            ),
            ..Default::default()
        }
    }

    fn age(seconds: Option<i64>, name: &str) -> Age {
        let meta = ObjectMeta {
            namespace: Some("ns".into()),
            name: Some(name.into()),
            creation_timestamp: seconds.map(|s| Time(Timestamp::from_second(s).unwrap())),
            ..Default::default()
        };
        Age::of(&meta)
    }

    fn key(m: &HttpRouteMatch) -> Key {
        Key::new(None, m, age(Some(0), "r"), 0, 0)
    }

    #[test]
    fn s_pr_1_hostname_specificity_comes_first() {
        let exact = Hostname::new("a.example.com").unwrap();
        let wildcard = Hostname::new("*.example.com").unwrap();
        let m = path("Exact", "/long/exact/path");
        let slash = HttpRouteMatch::default();
        let by_exact = Key::new(Some(&exact), &slash, age(Some(9), "z"), 9, 9);
        let by_wildcard = Key::new(Some(&wildcard), &m, age(Some(0), "a"), 0, 0);
        let by_none = Key::new(None, &m, age(Some(0), "a"), 0, 0);
        assert!(by_exact < by_wildcard);
        assert!(by_wildcard < by_none);
    }

    /// HTTPRoutePathMatchOrder: Exact, then regex, then the longest prefix.
    #[test]
    fn s_pr_2_path_type_and_length() {
        let exact = key(&path("Exact", "/match/exact/one"));
        let regex = key(&path("RegularExpression", "/match/.*"));
        let long = key(&path("PathPrefix", "/match/prefix/one"));
        let short = key(&path("PathPrefix", "/match/"));
        let shorter = key(&path("PathPrefix", "/match/pre"));
        assert!(exact < regex && regex < long && long < shorter && shorter < short);
        // A trailing slash of a prefix does not count.
        assert_eq!(
            key(&path("PathPrefix", "/a/")),
            key(&path("PathPrefix", "/a"))
        );
    }

    /// HTTPRouteMethodMatching, HTTPRouteHeaderMatching, HTTPRouteQueryParamMatching.
    #[test]
    fn s_pr_3_to_5_method_headers_query() {
        let with_method = HttpRouteMatch {
            method: Some("PATCH".into()),
            ..Default::default()
        };
        assert!(key(&with_method) < key(&headers(&["a", "b"])));
        assert!(key(&headers(&["version", "color"])) < key(&headers(&["version"])));
        // Names repeated ignoring case count once (S-MM.1).
        assert_eq!(key(&headers(&["a", "A"])), key(&headers(&["a"])));
        let query = |names: &[&str]| HttpRouteMatch {
            query_params: Some(
                names
                    .iter()
                    .map(|n| HttpQueryParamMatch {
                        name: (*n).into(),
                        value: "v".into(),
                        type_: None,
                    })
                    .collect(),
            ),
            ..Default::default()
        };
        assert!(key(&query(&["animal", "color"])) < key(&query(&["animal"])));
        assert!(key(&headers(&["x"])) < key(&query(&["animal", "color"])));
    }

    #[test]
    fn s_pr_6_and_7_age_then_rule_order() {
        let m = HttpRouteMatch::default();
        let older = Key::new(None, &m, age(Some(1), "z"), 5, 5);
        let newer = Key::new(None, &m, age(Some(2), "a"), 0, 0);
        assert!(older < newer);
        // S-0.4: a missing timestamp first; ties by namespace/name.
        assert!(Key::new(None, &m, age(None, "z"), 0, 0) < older);
        assert!(Key::new(None, &m, age(Some(1), "a"), 5, 5) < older);
        // The tie-break compares the text "namespace/name": '-' sorts before '/'.
        let in_ns = |namespace: &str| {
            Age::of(&ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some("x".into()),
                ..Default::default()
            })
        };
        assert!(in_ns("a-b") < in_ns("a"));
        let first = Key::new(None, &m, age(Some(1), "r"), 0, 1);
        let second = Key::new(None, &m, age(Some(1), "r"), 1, 0);
        assert!(first < second);
    }
}
