//! HTTPRoute filters as typed values, and the ones refused (S-F): header edits of the request
//! and of the response, redirects, rewrites, mirrors ([`super::mirror`]), request header edits
//! on a backendRef ([`super::backend_filters`]), CORS ([`super::cors`]). A filter that is
//! refused, not implemented or unknown makes its rule invalid (S-IR.1, S-F.8): the rule then
//! answers 500 rather than be skipped, so that no filter is ever bypassed.
//!
//! The types branch has already checked what the CRDs' CEL rules check (one header name per
//! action, no URLRewrite beside a RequestRedirect, path values' characters); what is checked
//! here is what nginx needs on top.

use cluster_state::gateway::{HeaderModifier, HttpPathModifier, HttpRouteFilter, HttpRouteRule};

use super::Fault;
use super::backend_filters::{self, BackendRoute};
use super::cors::{self, Cors};
use super::mirror::{self, Mirror};

/// The reason of a refused value (S-IR.1).
const UNSUPPORTED: &str = "UnsupportedValue";

/// One filter of a rule, as nginx will apply it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// Changes to the request headers sent to the backend (S-F.1).
    RequestHeaders(HeaderEdits),
    /// Changes to the response headers sent to the client (S-F.2).
    ResponseHeaders(HeaderEdits),
    /// A redirect answered by the gateway (S-F.3).
    Redirect(Redirect),
    /// The host and path sent to the backend (S-F.4).
    Rewrite(Rewrite),
    /// A copy of the request sent to another backend, its answer ignored (S-F.6).
    Mirror(Mirror),
    /// The header edits of one backend of the rule's split, applied when the split picks it
    /// (S-F.9). Added by the planner; never written in a rule's `filters`.
    BackendHeaders(BackendRoute),
    /// The cross-origin requests allowed, answered by the gateway (S-F.7).
    Cors(Cors),
}

/// Header changes: each name appears in one list only; names are as written (nginx compares
/// them without regard to case).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HeaderEdits {
    /// Headers whose every value is replaced by this one (or added when absent).
    pub set: Vec<(String, String)>,
    /// Headers given this value after those already there.
    pub add: Vec<(String, String)>,
    /// Headers removed.
    pub remove: Vec<String>,
}

/// How a redirect or a rewrite changes the path (S-F.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathChange {
    /// The whole path becomes this value.
    Full(String),
    /// The part the rule's PathPrefix matched becomes this value ([`replace_prefix`]).
    Prefix(String),
}

/// A redirect (S-F.3): what the filter sets; the rest comes from the request and the listener
/// ([`Redirect::scheme_and_port`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// 301, 302, 303, 307 or 308.
    pub code: u16,
    /// `http` or `https`, when set.
    pub scheme: Option<String>,
    /// The host, when set (else the request's).
    pub hostname: Option<String>,
    /// The port, when set.
    pub port: Option<u16>,
    /// The path change, when set (else the request's path).
    pub path: Option<PathChange>,
}

/// A rewrite of what is sent to the backend (S-F.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The `Host` header sent, when set.
    pub hostname: Option<String>,
    /// The path change, when set.
    pub path: Option<PathChange>,
}

impl Redirect {
    /// The scheme of the `Location`, and its port unless it is the scheme's own (S-F.3): the
    /// filter's port, else the filter's scheme's well-known port, else the listener's port
    /// (the Gateway's, not nginx's); `listener_scheme` when the filter sets none.
    pub fn scheme_and_port(
        &self,
        listener_scheme: &str,
        listener_port: u16,
    ) -> (String, Option<u16>) {
        let scheme = self
            .scheme
            .clone()
            .unwrap_or_else(|| listener_scheme.to_owned());
        let port = match (self.port, &self.scheme) {
            (Some(port), _) => port,
            (None, Some(scheme)) => well_known_port(scheme),
            (None, None) => listener_port,
        };
        let shown = (port != well_known_port(&scheme)).then_some(port);
        (scheme, shown)
    }
}

/// 443 for `https`, 80 otherwise.
fn well_known_port(scheme: &str) -> u16 {
    if scheme == "https" { 443 } else { 80 }
}

/// The path `path` with the PathPrefix `prefix` it matched replaced by `replacement` (S-F.5,
/// the table of HTTPPathModifier's documentation): the prefix without its trailing `/` (or `/`
/// itself) is cut from the path, and the replacement without its trailing `/` goes before what
/// remains; an empty result is `/`.
pub fn replace_prefix(path: &str, prefix: &str, replacement: &str) -> String {
    let prefix = prefix.trim_end_matches('/');
    let rest = path.strip_prefix(prefix).unwrap_or(path);
    let result = format!("{}{rest}", replacement.trim_end_matches('/'));
    if result.is_empty() {
        "/".to_owned()
    } else {
        result
    }
}

/// Headers nginx owns for the connection or the message framing: setting, adding or removing
/// them could desynchronise the exchange with the backend (S-F.1). `Host` is changed with
/// URLRewrite's `hostname`.
const OWNED_HEADERS: [&str; 9] = [
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "te",
    "trailer",
    "content-length",
];

/// Whether `name` can be a header name in nginx directives and variables: `[A-Za-z0-9-]+`
/// (nginx drops names with `_` by default, S-MM.1).
pub fn usable_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// The longest value a filter may write into the configuration, counted as it is spelled
/// there ([`spelled_len`]): with a header name and the `$http_NAME,` of an appended value it
/// still fits one nginx word (4 KB). A longer one would make the whole configuration
/// unwritable, not just its rule.
const MAX_SPELLED: usize = 3584;

/// The length of `value` as the renderer spells it: each `$` as `${literal_dollar}` (16 bytes),
/// each `"` and `\\` escaped, in quotes.
fn spelled_len(value: &str) -> usize {
    let extra = |b: &u8| match b {
        b'$' => 15,
        b'"' | b'\\' => 1,
        _ => 0,
    };
    value.len() + 2 + value.as_bytes().iter().map(extra).sum::<usize>()
}

/// Whether `value` can be a header value nginx sends: no control character (the CRD allows
/// any string; a CR or LF would end the header line), and not too long ([`MAX_SPELLED`]).
fn usable_header_value(value: &str) -> bool {
    !value.bytes().any(|b| b < 0x20 && b != b'\t' || b == 0x7f) && spelled_len(value) <= MAX_SPELLED
}

/// The edits of `modifier`, or why they are refused.
fn header_edits(modifier: &HeaderModifier, what: &str) -> Result<HeaderEdits, Fault> {
    let pairs = |list: &Option<Vec<cluster_state::gateway::Header>>| -> Vec<(String, String)> {
        let list = list.iter().flatten();
        list.map(|h| (h.name.clone(), h.value.clone())).collect()
    };
    let edits = HeaderEdits {
        set: pairs(&modifier.set),
        add: pairs(&modifier.add),
        remove: modifier.remove.clone().unwrap_or_default(),
    };
    let names = edits.set.iter().chain(&edits.add).map(|(n, _)| n);
    let mut seen: Vec<String> = Vec::new();
    for name in names.chain(&edits.remove) {
        if !usable_header_name(name) {
            let message = format!("{what}: header name {name:?} is not [A-Za-z0-9-]+");
            return Err(Fault::new(UNSUPPORTED, message));
        }
        let lower = name.to_ascii_lowercase();
        if OWNED_HEADERS.contains(&lower.as_str()) {
            let message = format!("{what}: header {name} is the proxy's to set");
            return Err(Fault::new(UNSUPPORTED, message));
        }
        if seen.contains(&lower) {
            let message = format!("{what}: header {name} is named twice");
            return Err(Fault::new(UNSUPPORTED, message));
        }
        seen.push(lower);
    }
    let values = edits.set.iter().chain(&edits.add);
    if let Some((name, _)) = values.clone().find(|(_, v)| !usable_header_value(v)) {
        let message =
            format!("{what}: the value of header {name} holds a control character or is too long");
        return Err(Fault::new(UNSUPPORTED, message));
    }
    Ok(edits)
}

/// Whether `value` can be a replacement path: an Exact path S-PM.3 serves, without `%XX`
/// escapes (so that the value is the same in a `Location`, where it is sent as written, and in
/// a rewrite, where nginx reads it decoded); `may_be_empty` for a ReplacePrefixMatch.
fn usable_path(value: &str, may_be_empty: bool) -> bool {
    (may_be_empty && value.is_empty())
        || (!value.contains('%')
            && spelled_len(value) <= MAX_SPELLED
            && super::matches::gateway_path("Exact", value).is_ok())
}

/// The path change of `modifier`, or why it is refused.
fn path_change(modifier: &HttpPathModifier, what: &str) -> Result<PathChange, Fault> {
    let change = match (
        modifier.type_.as_str(),
        &modifier.replace_full_path,
        &modifier.replace_prefix_match,
    ) {
        ("ReplaceFullPath", Some(path), _) => PathChange::Full(path.clone()),
        ("ReplacePrefixMatch", _, Some(prefix)) => PathChange::Prefix(prefix.clone()),
        (other, _, _) => {
            return Err(Fault::new(
                UNSUPPORTED,
                format!("{what}: path modifier {other:?} is not supported"),
            ));
        }
    };
    let (value, may_be_empty) = match &change {
        PathChange::Full(value) => (value, false),
        PathChange::Prefix(value) => (value, true),
    };
    if !usable_path(value, may_be_empty) {
        let message = format!("{what}: path {value:?} is not a path without escapes S-PM.3 serves");
        return Err(Fault::new(UNSUPPORTED, message));
    }
    Ok(change)
}

/// `hostname` when it is a lower-case DNS name (the CRD's PreciseHostname, checked again
/// because manifests skip the API server), or why it is refused.
fn precise_hostname(hostname: Option<&String>, what: &str) -> Result<Option<String>, Fault> {
    match hostname {
        Some(name) if !crate::hosts::is_dns_name(name) => Err(Fault::new(
            UNSUPPORTED,
            format!("{what}: hostname {name:?} is not a lower-case DNS name"),
        )),
        other => Ok(other.cloned()),
    }
}

/// The typed filter of `filter`, or why its rule is invalid.
pub fn filter(filter: &HttpRouteFilter) -> Result<Filter, Fault> {
    let missing = |field: &str| {
        let message = format!("filter {} without its {field} field", filter.type_);
        Fault::new(UNSUPPORTED, message)
    };
    match filter.type_.as_str() {
        "RequestHeaderModifier" => {
            let modifier = filter.request_header_modifier.as_ref();
            let modifier = modifier.ok_or_else(|| missing("requestHeaderModifier"))?;
            header_edits(modifier, "RequestHeaderModifier").map(Filter::RequestHeaders)
        }
        "ResponseHeaderModifier" => {
            let modifier = filter.response_header_modifier.as_ref();
            let modifier = modifier.ok_or_else(|| missing("responseHeaderModifier"))?;
            header_edits(modifier, "ResponseHeaderModifier").map(Filter::ResponseHeaders)
        }
        "RequestRedirect" => {
            let redirect = filter.request_redirect.as_ref();
            let redirect = redirect.ok_or_else(|| missing("requestRedirect"))?;
            let code = match redirect.status_code() {
                code @ (301 | 302 | 303 | 307 | 308) => u16::try_from(code).unwrap_or(302),
                other => {
                    let message = format!("RequestRedirect: status code {other} is not supported");
                    return Err(Fault::new(UNSUPPORTED, message));
                }
            };
            let scheme = match redirect.scheme.as_deref() {
                None => None,
                Some(scheme @ ("http" | "https")) => Some(scheme.to_owned()),
                Some(other) => {
                    let message = format!("RequestRedirect: scheme {other:?} is not supported");
                    return Err(Fault::new(UNSUPPORTED, message));
                }
            };
            let port = match redirect.port {
                None => None,
                Some(port) => {
                    Some(u16::try_from(port).ok().filter(|p| *p > 0).ok_or_else(|| {
                        Fault::new(
                            UNSUPPORTED,
                            format!("RequestRedirect: port {port} is out of range"),
                        )
                    })?)
                }
            };
            let path = redirect
                .path
                .as_ref()
                .map(|p| path_change(p, "RequestRedirect"));
            Ok(Filter::Redirect(Redirect {
                code,
                scheme,
                hostname: precise_hostname(redirect.hostname.as_ref(), "RequestRedirect")?,
                port,
                path: path.transpose()?,
            }))
        }
        "URLRewrite" => {
            let rewrite = filter
                .url_rewrite
                .as_ref()
                .ok_or_else(|| missing("urlRewrite"))?;
            let path = rewrite.path.as_ref().map(|p| path_change(p, "URLRewrite"));
            Ok(Filter::Rewrite(Rewrite {
                hostname: precise_hostname(rewrite.hostname.as_ref(), "URLRewrite")?,
                path: path.transpose()?,
            }))
        }
        "RequestMirror" => {
            let filter = filter.request_mirror.as_ref();
            mirror::mirror(filter.ok_or_else(|| missing("requestMirror"))?).map(Filter::Mirror)
        }
        "CORS" => {
            cors::cors(filter.cors.as_ref().ok_or_else(|| missing("cors"))?).map(Filter::Cors)
        }
        // S-F.8: not implemented (yet), and never skipped.
        other => Err(Fault::new(
            UNSUPPORTED,
            format!("filter {other} is not supported"),
        )),
    }
}

/// The filters of `rule` in the order written, or the first reason it is invalid: a refused
/// filter, or a refused filter on a backendRef ([`backend_filters::check`], S-F.9).
pub fn rule_filters(rule: &HttpRouteRule) -> Result<Vec<Filter>, Fault> {
    let filters: Vec<Filter> = rule
        .filters
        .iter()
        .flatten()
        .map(filter)
        .collect::<Result<_, _>>()?;
    backend_filters::check(rule, &filters)?;
    Ok(filters)
}

#[cfg(test)]
mod tests {
    use cluster_state::gateway::{Header, HttpRequestRedirectFilter, HttpUrlRewriteFilter};

    use super::*;

    /// S-F.5: every row of the table in HTTPPathModifier's documentation, and the
    /// HTTPRouteRewritePath conformance vectors.
    #[test]
    fn s_f_5_replace_prefix_match_table() {
        let rows = [
            ("/foo/bar", "/foo", "/xyz", "/xyz/bar"),
            ("/foo/bar", "/foo", "/xyz/", "/xyz/bar"),
            ("/foo/bar", "/foo/", "/xyz", "/xyz/bar"),
            ("/foo", "/foo", "/xyz", "/xyz"),
            ("/foo/", "/foo", "/xyz", "/xyz/"),
            ("/foo/bar", "/foo", "", "/bar"),
            ("/foo/", "/foo", "", "/"),
            ("/foo", "/foo", "", "/"),
            ("/foo/", "/foo", "/", "/"),
            ("/foo", "/foo", "/", "/"),
            ("/prefix/one/two", "/prefix/one", "/one", "/one/two"),
            ("/strip-prefix/three", "/strip-prefix", "/", "/three"),
            ("/strip-prefix", "/strip-prefix", "/", "/"),
            ("/anything", "/", "/new", "/new/anything"),
        ];
        for (path, prefix, replacement, expected) in rows {
            assert_eq!(
                replace_prefix(path, prefix, replacement),
                expected,
                "{path} {prefix} {replacement}"
            );
        }
    }

    fn redirect(scheme: Option<&str>, port: Option<u16>) -> Redirect {
        Redirect {
            code: 302,
            scheme: scheme.map(str::to_owned),
            hostname: None,
            port,
            path: None,
        }
    }

    /// S-F.3: the HTTPRouteRedirectPortAndScheme table (listener, filter → scheme and port).
    #[test]
    fn s_f_3_scheme_and_port_table() {
        /// Listener scheme and port, the filter's scheme and port, the Location's.
        type Row = (
            &'static str,
            u16,
            Option<&'static str>,
            Option<u16>,
            &'static str,
            Option<u16>,
        );
        let rows: [Row; 15] = [
            ("http", 80, None, None, "http", None),
            ("http", 80, None, Some(80), "http", None),
            ("http", 80, None, Some(8080), "http", Some(8080)),
            ("http", 80, Some("https"), None, "https", None),
            ("http", 80, Some("https"), Some(443), "https", None),
            ("http", 80, Some("https"), Some(8443), "https", Some(8443)),
            ("http", 8080, None, None, "http", Some(8080)),
            ("http", 8080, None, Some(80), "http", None),
            ("http", 8080, Some("https"), None, "https", None),
            ("https", 443, None, None, "https", None),
            ("https", 443, None, Some(443), "https", None),
            ("https", 443, None, Some(8443), "https", Some(8443)),
            ("https", 443, Some("http"), None, "http", None),
            ("https", 443, Some("http"), Some(80), "http", None),
            ("https", 443, Some("http"), Some(8080), "http", Some(8080)),
        ];
        for (listener, listener_port, scheme, port, want_scheme, want_port) in rows {
            let (got_scheme, got_port) =
                redirect(scheme, port).scheme_and_port(listener, listener_port);
            assert_eq!(
                (got_scheme.as_str(), got_port),
                (want_scheme, want_port),
                "{listener}:{listener_port} {scheme:?} {port:?}"
            );
        }
    }

    fn header(name: &str, value: &str) -> Header {
        Header {
            name: name.into(),
            value: value.into(),
        }
    }

    fn modifier(set: &[(&str, &str)], remove: &[&str]) -> HttpRouteFilter {
        HttpRouteFilter {
            type_: "RequestHeaderModifier".into(),
            request_header_modifier: Some(HeaderModifier {
                set: Some(set.iter().map(|(n, v)| header(n, v)).collect()),
                add: None,
                remove: Some(remove.iter().map(|n| (*n).to_owned()).collect()),
            }),
            ..Default::default()
        }
    }

    /// S-F.1: the edits as written; names nginx cannot carry, names it owns, a name twice and
    /// values with line breaks make the rule invalid.
    #[test]
    fn s_f_1_header_edits_and_refusals() {
        let ok = filter(&modifier(
            &[("X-Header-Set", "set-overwrites-values")],
            &["X-Old"],
        ));
        let Ok(Filter::RequestHeaders(edits)) = ok else {
            panic!("{ok:?}");
        };
        assert_eq!(
            edits.set,
            [("X-Header-Set".into(), "set-overwrites-values".into())]
        );
        assert_eq!(edits.remove, ["X-Old"]);
        for refused in [
            modifier(&[("X_Under", "v")], &[]),
            modifier(&[("Host", "evil")], &[]),
            modifier(&[], &["transfer-encoding"]),
            modifier(&[("X-A", "1")], &["x-a"]),
            modifier(&[("X-A", "1\r\nSet-Cookie: x")], &[]),
            modifier(&[("X-A", &"$".repeat(250))], &[]),
        ] {
            let fault = filter(&refused).unwrap_err();
            assert_eq!(fault.reason, UNSUPPORTED, "{refused:?}");
        }
    }

    /// S-F.3, S-F.4, S-F.8: redirects and rewrites typed; a status code or scheme the spec does
    /// not list, and filters not implemented, make the rule invalid.
    #[test]
    fn s_f_3_redirects_rewrites_and_unsupported_filters() {
        let redirect = HttpRouteFilter {
            type_: "RequestRedirect".into(),
            request_redirect: Some(HttpRequestRedirectFilter {
                hostname: Some("example.org".into()),
                status_code: Some(301),
                path: Some(HttpPathModifier {
                    type_: "ReplacePrefixMatch".into(),
                    replace_full_path: None,
                    replace_prefix_match: Some("/replacement-prefix".into()),
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let Ok(Filter::Redirect(typed)) = filter(&redirect) else {
            panic!("refused");
        };
        assert_eq!(typed.code, 301);
        assert_eq!(typed.hostname.as_deref(), Some("example.org"));
        assert_eq!(
            typed.path,
            Some(PathChange::Prefix("/replacement-prefix".into()))
        );

        let mut bad_code = redirect.clone();
        if let Some(r) = bad_code.request_redirect.as_mut() {
            r.status_code = Some(418);
        }
        assert!(filter(&bad_code).is_err());
        // Hostnames and paths written into the configuration: a DNS name, an S-PM.3 path
        // without escapes, short enough to be written.
        let with = |hostname: &str, path: &str| {
            let mut changed = redirect.clone();
            if let Some(r) = changed.request_redirect.as_mut() {
                r.hostname = Some(hostname.into());
                r.path = Some(HttpPathModifier {
                    type_: "ReplaceFullPath".into(),
                    replace_full_path: Some(path.into()),
                    replace_prefix_match: None,
                });
            }
            filter(&changed)
        };
        assert!(with("example.org", "/a$b").is_ok());
        let long = format!("/{}", "$".repeat(300));
        for (hostname, path) in [
            ("Example.org", "/a"),
            ("example.org;", "/a"),
            ("example.org", "/a b"),
            ("example.org", "/a%0d%0a"),
            ("example.org", "/a%2D"),
            ("example.org", "a"),
            ("example.org", long.as_str()),
        ] {
            assert!(with(hostname, path).is_err(), "{hostname} {path}");
        }

        let rewrite = HttpRouteFilter {
            type_: "URLRewrite".into(),
            url_rewrite: Some(HttpUrlRewriteFilter {
                hostname: Some("one.example.org".into()),
                path: None,
            }),
            ..Default::default()
        };
        assert_eq!(
            filter(&rewrite),
            Ok(Filter::Rewrite(Rewrite {
                hostname: Some("one.example.org".into()),
                path: None,
            }))
        );
        for unsupported in ["ExtensionRef", "ExternalAuth"] {
            let f = HttpRouteFilter {
                type_: unsupported.into(),
                ..Default::default()
            };
            let fault = filter(&f).unwrap_err();
            assert_eq!(fault.reason, UNSUPPORTED, "{unsupported}");
            assert!(!fault.message.contains("without its"), "{fault:?}");
        }
        // A supported type without its field: invalid, and said so.
        for (type_, field) in [("RequestMirror", "requestMirror"), ("CORS", "cors")] {
            let f = HttpRouteFilter {
                type_: type_.into(),
                ..Default::default()
            };
            let fault = filter(&f).unwrap_err();
            assert_eq!(fault.reason, UNSUPPORTED, "{type_}");
            assert!(
                fault
                    .message
                    .contains(&format!("without its {field} field")),
                "{fault:?}"
            );
        }
    }
}
