//! HTTPRoute: rules that match HTTP requests (path, headers, query, method), change them
//! (filters) and send them to weighted backends.

use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::shared::unknown_paths;
use super::{
    BackendRef, HeaderMatch, HeaderModifier, LocalObjectReference, ParentReference, RequestMirror,
    RouteStatus, UnknownFields, impl_kind,
};

/// An HTTPRoute: HTTP routing rules attached to Gateway listeners.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct HttpRoute {
    /// The object's metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The parents, host names and rules.
    pub spec: HttpRouteSpec,
    /// What the parents' controllers say about the route.
    #[serde(default)]
    pub status: Option<RouteStatus>,
}

impl_kind!(
    HttpRoute,
    "HTTPRoute",
    "httproutes",
    NamespaceResourceScope,
    [status]
);

impl HttpRoute {
    /// The paths of fields the types do not know (`spec.rules[0].retry`, …), to report as
    /// unsupported.
    pub fn unknown_fields(&self) -> Vec<String> {
        let mut paths = Vec::new();
        unknown_paths(&self.spec.unknown, "spec", &mut paths);
        for (index, rule) in self.spec.rules.iter().flatten().enumerate() {
            let rule_path = format!("spec.rules[{index}]");
            unknown_paths(&rule.unknown, &rule_path, &mut paths);
            for (number, filter) in rule.filters().iter().enumerate() {
                let path = format!("{rule_path}.filters[{number}]");
                unknown_paths(&filter.unknown, &path, &mut paths);
            }
            for (number, backend) in rule.backend_refs().iter().enumerate() {
                for (position, filter) in backend.filters().iter().enumerate() {
                    let path = format!("{rule_path}.backendRefs[{number}].filters[{position}]");
                    unknown_paths(&filter.unknown, &path, &mut paths);
                }
            }
        }
        paths
    }
}

/// What an HTTPRoute is: where it attaches, for which host names, and its rules.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteSpec {
    /// The Gateways (or listeners) the route attaches to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_refs: Option<Vec<ParentReference>>,
    /// The host names the route serves (`*.example.com`: one or more labels in front of
    /// `example.com`), intersected with the listeners'; absent or empty means the listeners'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostnames: Option<Vec<String>>,
    /// The rules; absent means one rule matching every path (see [`Self::rules`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<HttpRouteRule>>,
    /// The fields the types do not know (experimental channel).
    #[serde(flatten)]
    pub unknown: UnknownFields,
}

impl HttpRouteSpec {
    /// The parent references (none when absent).
    pub fn parent_refs(&self) -> &[ParentReference] {
        self.parent_refs.as_deref().unwrap_or_default()
    }

    /// The host names (none when absent).
    pub fn hostnames(&self) -> &[String] {
        self.hostnames.as_deref().unwrap_or_default()
    }

    /// The rules, defaulted as the CRD does: one rule, matching the path prefix `/`, with no
    /// backend.
    pub fn rules(&self) -> Cow<'_, [HttpRouteRule]> {
        match &self.rules {
            Some(rules) => Cow::Borrowed(rules),
            None => Cow::Owned(vec![HttpRouteRule::default()]),
        }
    }
}

/// One rule: requests that satisfy any of its matches go through its filters to its
/// backends.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteRule {
    /// The rule's name, unique in the route.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The conditions a request must meet, any one of them; absent means the path prefix
    /// `/` (see [`Self::matches`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<HttpRouteMatch>>,
    /// The changes made to matching requests and their responses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<HttpRouteFilter>>,
    /// Where matching requests go, by weight; none means they are answered with an error
    /// (500) unless a filter answers them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend_refs: Option<Vec<HttpBackendRef>>,
    /// How long a request (or each request to a backend) may take.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<HttpRouteTimeouts>,
    /// The fields the types do not know (experimental channel: `retry`,
    /// `sessionPersistence`, …).
    #[serde(flatten)]
    pub unknown: UnknownFields,
}

impl HttpRouteRule {
    /// The matches, defaulted as the CRD does: one match on the path prefix `/`.
    pub fn matches(&self) -> Cow<'_, [HttpRouteMatch]> {
        match &self.matches {
            Some(matches) => Cow::Borrowed(matches),
            None => Cow::Owned(vec![HttpRouteMatch::default()]),
        }
    }

    /// The filters (none when absent).
    pub fn filters(&self) -> &[HttpRouteFilter] {
        self.filters.as_deref().unwrap_or_default()
    }

    /// The backends (none when absent).
    pub fn backend_refs(&self) -> &[HttpBackendRef] {
        self.backend_refs.as_deref().unwrap_or_default()
    }
}

/// A backend of an HTTPRoute rule, with its own filters.
pub type HttpBackendRef = BackendRef<HttpRouteFilter>;

/// Conditions on a request, all of which it must meet.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteMatch {
    /// The path condition; absent means the prefix `/` (see [`Self::path`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<HttpPathMatch>,
    /// Headers the request must carry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers: Option<Vec<HeaderMatch>>,
    /// Query parameters the request must carry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_params: Option<Vec<HttpQueryParamMatch>>,
    /// The method the request must have (`GET`, …); absent means any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}

impl HttpRouteMatch {
    /// The path condition, defaulted as the CRD does (`PathPrefix` `/`).
    pub fn path(&self) -> HttpPathMatch {
        self.path.clone().unwrap_or_default()
    }

    /// The header conditions (none when absent).
    pub fn headers(&self) -> &[HeaderMatch] {
        self.headers.as_deref().unwrap_or_default()
    }

    /// The query parameter conditions (none when absent).
    pub fn query_params(&self) -> &[HttpQueryParamMatch] {
        self.query_params.as_deref().unwrap_or_default()
    }
}

/// A condition on the request's path.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HttpPathMatch {
    /// `Exact`, `PathPrefix` (whole segments; absent means this, see [`Self::match_type`]) or
    /// `RegularExpression`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The path, prefix or pattern; absent means `/` (see [`Self::value`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl HttpPathMatch {
    /// How the path is compared, defaulted as the CRD does (`PathPrefix`).
    pub fn match_type(&self) -> &str {
        self.type_.as_deref().unwrap_or("PathPrefix")
    }

    /// The path, prefix or pattern, defaulted as the CRD does (`/`).
    pub fn value(&self) -> &str {
        self.value.as_deref().unwrap_or("/")
    }
}

/// A query parameter a match requires: by exact value (the default) or regular expression.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HttpQueryParamMatch {
    /// `Exact` or `RegularExpression`; absent means `Exact` (see [`Self::match_type`]).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The parameter's name, compared exactly.
    pub name: String,
    /// The value (or pattern) the parameter must have.
    pub value: String,
}

impl HttpQueryParamMatch {
    /// How the value is compared, defaulted as the CRD does (`Exact`).
    pub fn match_type(&self) -> &str {
        self.type_.as_deref().unwrap_or("Exact")
    }
}

/// A change made to matching requests or their responses; `type_` says which of the fields
/// is set.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteFilter {
    /// `RequestHeaderModifier`, `ResponseHeaderModifier`, `RequestMirror`,
    /// `RequestRedirect`, `URLRewrite`, `ExtensionRef` or `CORS`.
    #[serde(rename = "type")]
    pub type_: String,
    /// With `RequestHeaderModifier`: the request headers to change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_header_modifier: Option<HeaderModifier>,
    /// With `ResponseHeaderModifier`: the response headers to change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_header_modifier: Option<HeaderModifier>,
    /// With `RequestMirror`: where copies of the requests go.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_mirror: Option<RequestMirror>,
    /// With `RequestRedirect`: the redirect answered instead of a backend's response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_redirect: Option<HttpRequestRedirectFilter>,
    /// With `URLRewrite`: the host and path the backend sees instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url_rewrite: Option<HttpUrlRewriteFilter>,
    /// With `CORS`: the cross-origin requests allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cors: Option<CorsFilter>,
    /// With `ExtensionRef`: the implementation-specific filter object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extension_ref: Option<LocalObjectReference>,
    /// The fields the types do not know (experimental channel: `externalAuth`).
    #[serde(flatten)]
    pub unknown: UnknownFields,
}

/// A redirect: the parts of the request's URL to replace in the `Location` answered.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpRequestRedirectFilter {
    /// `http` or `https`; absent keeps the request's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    /// The host name; absent keeps the request's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// The path, whole or its matched prefix; absent keeps the request's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<HttpPathModifier>,
    /// The port; absent keeps the listener's, or the scheme's well-known port when the scheme
    /// is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    /// The status answered: 301, 302 (absent means this, see [`Self::status_code`]), 303,
    /// 307 or 308.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_code: Option<i32>,
}

impl HttpRequestRedirectFilter {
    /// The redirect's status, defaulted as the CRD does (302).
    pub fn status_code(&self) -> i32 {
        self.status_code.unwrap_or(302)
    }
}

/// A rewrite: the host and path the backend sees instead of the request's.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HttpUrlRewriteFilter {
    /// The `Host` header sent to the backend; absent keeps the request's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// The path sent to the backend; absent keeps the request's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<HttpPathModifier>,
}

/// A replacement of the path: whole (`ReplaceFullPath`) or the part a `PathPrefix` match
/// matched (`ReplacePrefixMatch`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpPathModifier {
    /// `ReplaceFullPath` or `ReplacePrefixMatch`: which of the two fields is set.
    #[serde(rename = "type")]
    pub type_: String,
    /// With `ReplaceFullPath`: the new path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replace_full_path: Option<String>,
    /// With `ReplacePrefixMatch`: what replaces the matched prefix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replace_prefix_match: Option<String>,
}

/// The cross-origin (CORS) requests a rule allows, answered in its responses' headers.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CorsFilter {
    /// The origins allowed (`https://example.com`, `https://*.example.com`, or `*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_origins: Option<Vec<String>>,
    /// Whether credentials are allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_credentials: Option<bool>,
    /// The methods allowed (or `*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_methods: Option<Vec<String>>,
    /// The request headers allowed (or `*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_headers: Option<Vec<String>>,
    /// The response headers the client may read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expose_headers: Option<Vec<String>>,
    /// How many seconds a client may cache the answer to a preflight; absent means 5 (see
    /// [`Self::max_age`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_age: Option<i32>,
}

impl CorsFilter {
    /// The preflight cache time in seconds, defaulted as the CRD does (5).
    pub fn max_age(&self) -> i32 {
        self.max_age.unwrap_or(5)
    }
}

/// How long requests of a rule may take, as Gateway API durations (`10s`, `1h30m`, `500ms`;
/// `0s` means no limit).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteTimeouts {
    /// From the request's start to the end of the response sent to the client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// For each request to a backend (retries included), at most `request`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend_request: Option<String>,
}
