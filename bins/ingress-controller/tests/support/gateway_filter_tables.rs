//! The request tables of the Gateway API conformance suite's filter and timeout tests
//! (gateway-api v1.6.1, `conformance/tests/httproute-*.go`), replayed through the real nginx by
//! `tests/e2e_gateway.rs`: what the backend must see (path, host, headers), what the client
//! must get (status, headers, redirect location).
//!
//! The suite's echo backend is told which response headers to send by the test; the local
//! backends read the same list from `X-Echo-Set-Header` (`support::Backends`).
#![allow(dead_code, unreachable_pub)]

/// A header name and its value (`None`: absent).
pub type Seen = (&'static str, Option<&'static str>);

/// One request and what must come of it. The Host is the Gateway's address when `host` is
/// empty.
#[derive(Clone, Copy, Debug)]
pub struct FilterCase {
    /// The request's method.
    pub method: &'static str,
    /// The request's Host header.
    pub host: &'static str,
    /// The request's path and query.
    pub path: &'static str,
    /// The request's headers.
    pub headers: &'static [(&'static str, &'static str)],
    /// The status the client gets.
    pub status: u16,
    /// The backend that answers (`None`: nginx does).
    pub backend: Option<&'static str>,
    /// The path (and query) the backend sees.
    pub upstream_path: Option<&'static str>,
    /// The Host header the backend sees.
    pub upstream_host: Option<&'static str>,
    /// Headers the backend sees, or does not.
    pub seen: &'static [Seen],
    /// Response headers the client gets, or does not (the values of a repeated name joined
    /// with `,`, as the suite compares them).
    pub returned: &'static [Seen],
    /// The `Location`, `{host}` standing for the request's host.
    pub location: Option<&'static str>,
}

/// A GET of `/` answered 200 by nobody in particular: the base the tables start from.
pub const GET: FilterCase = FilterCase {
    method: "GET",
    host: "",
    path: "/",
    headers: &[],
    status: 200,
    backend: None,
    upstream_path: None,
    upstream_host: None,
    seen: &[],
    returned: &[],
    location: None,
};

const V1: Option<&str> = Some("infra-backend-v1");
const V2: Option<&str> = Some("infra-backend-v2");

/// A GET of `path` proxied to infra-backend-v1 with its path unchanged.
const fn proxied(path: &'static str) -> FilterCase {
    FilterCase {
        path,
        backend: V1,
        upstream_path: Some(path),
        ..GET
    }
}

/// A GET of `path` answered `status` with `location`.
const fn redirected(path: &'static str, status: u16, location: &'static str) -> FilterCase {
    FilterCase {
        path,
        status,
        location: Some(location),
        ..GET
    }
}

/// `(test, manifest file, Gateway, listener port, cases)`.
pub type FilterTable = (
    &'static str,
    &'static str,
    &'static str,
    u16,
    &'static [FilterCase],
);

/// The tables, each sent to the Gateway it names.
pub const FILTERS: [FilterTable; 15] = [
    (
        "HTTPRouteRequestHeaderModifier",
        "httproute-request-header-modifier.yaml",
        "same-namespace",
        80,
        &[
            FilterCase {
                headers: &[("Some-Other-Header", "val")],
                seen: &[
                    ("Some-Other-Header", Some("val")),
                    ("X-Header-Set", Some("set-overwrites-values")),
                ],
                ..proxied("/set")
            },
            FilterCase {
                headers: &[
                    ("Some-Other-Header", "val"),
                    ("X-Header-Set", "some-other-value"),
                ],
                seen: &[
                    ("Some-Other-Header", Some("val")),
                    ("X-Header-Set", Some("set-overwrites-values")),
                ],
                ..proxied("/set")
            },
            FilterCase {
                headers: &[("Some-Other-Header", "val")],
                seen: &[
                    ("Some-Other-Header", Some("val")),
                    ("X-Header-Add", Some("add-appends-values")),
                ],
                ..proxied("/add")
            },
            FilterCase {
                headers: &[
                    ("Some-Other-Header", "val"),
                    ("X-Header-Add", "some-other-value"),
                ],
                seen: &[
                    ("Some-Other-Header", Some("val")),
                    ("X-Header-Add", Some("some-other-value,add-appends-values")),
                ],
                ..proxied("/add")
            },
            FilterCase {
                headers: &[("X-Header-Remove", "val")],
                seen: &[("X-Header-Remove", None)],
                ..proxied("/remove")
            },
            FilterCase {
                headers: &[
                    ("X-Header-Set-2", "set-val-2"),
                    ("X-Header-Add-2", "add-val-2"),
                    ("X-Header-Remove-2", "remove-val-2"),
                    ("Another-Header", "another-header-val"),
                ],
                seen: &[
                    ("X-Header-Set-1", Some("header-set-1")),
                    ("X-Header-Set-2", Some("header-set-2")),
                    ("X-Header-Add-1", Some("header-add-1")),
                    ("X-Header-Add-2", Some("add-val-2,header-add-2")),
                    ("X-Header-Add-3", Some("header-add-3")),
                    ("Another-Header", Some("another-header-val")),
                    ("X-Header-Remove-1", None),
                    ("X-Header-Remove-2", None),
                ],
                ..proxied("/multiple")
            },
            FilterCase {
                headers: &[
                    ("x-header-set", "original-val-set"),
                    ("x-header-add", "original-val-add"),
                    ("x-header-remove", "original-val-remove"),
                    ("Another-Header", "another-header-val"),
                ],
                seen: &[
                    ("X-Header-Set", Some("header-set")),
                    ("X-Header-Add", Some("original-val-add,header-add")),
                    ("Another-Header", Some("another-header-val")),
                    ("X-Header-Remove", None),
                ],
                ..proxied("/case-insensitivity")
            },
        ],
    ),
    (
        "HTTPRouteResponseHeaderModifier",
        "httproute-response-header-modifier.yaml",
        "same-namespace",
        80,
        &[
            FilterCase {
                headers: &[("X-Echo-Set-Header", "Some-Other-Header:val")],
                returned: &[
                    ("Some-Other-Header", Some("val")),
                    ("X-Header-Set", Some("set-overwrites-values")),
                ],
                ..proxied("/set")
            },
            FilterCase {
                headers: &[(
                    "X-Echo-Set-Header",
                    "Some-Other-Header:val,X-Header-Set:some-other-value",
                )],
                returned: &[
                    ("Some-Other-Header", Some("val")),
                    ("X-Header-Set", Some("set-overwrites-values")),
                ],
                ..proxied("/set")
            },
            FilterCase {
                headers: &[("X-Echo-Set-Header", "Some-Other-Header:val")],
                returned: &[
                    ("Some-Other-Header", Some("val")),
                    ("X-Header-Add", Some("add-appends-values")),
                ],
                ..proxied("/add")
            },
            FilterCase {
                headers: &[(
                    "X-Echo-Set-Header",
                    "Some-Other-Header:val,X-Header-Add:some-other-value",
                )],
                returned: &[
                    ("Some-Other-Header", Some("val")),
                    ("X-Header-Add", Some("some-other-value,add-appends-values")),
                ],
                ..proxied("/add")
            },
            FilterCase {
                headers: &[("X-Echo-Set-Header", "X-Header-Remove:val")],
                returned: &[("X-Header-Remove", None)],
                ..proxied("/remove")
            },
            FilterCase {
                headers: &[(
                    "X-Echo-Set-Header",
                    "X-Header-Set-2:set-val-2,X-Header-Add-2:add-val-2,\
                     X-Header-Remove-2:remove-val-2,Another-Header:another-header-val,\
                     X-Header-Remove-1:val",
                )],
                returned: &[
                    ("X-Header-Set-1", Some("header-set-1")),
                    ("X-Header-Set-2", Some("header-set-2")),
                    ("X-Header-Add-1", Some("header-add-1")),
                    ("X-Header-Add-2", Some("add-val-2,header-add-2")),
                    ("X-Header-Add-3", Some("header-add-3")),
                    ("Another-Header", Some("another-header-val")),
                    ("X-Header-Remove-1", None),
                    ("X-Header-Remove-2", None),
                ],
                ..proxied("/multiple")
            },
            FilterCase {
                headers: &[(
                    "X-Echo-Set-Header",
                    "x-header-set:original-val-set,x-header-add:original-val-add,\
                     x-header-remove:original-val-remove,Another-Header:another-header-val",
                )],
                returned: &[
                    ("X-Header-Set", Some("header-set")),
                    ("X-Header-Add", Some("original-val-add,header-add")),
                    ("X-Lowercase-Add", Some("lowercase-add")),
                    ("X-Mixedcase-Add-1", Some("mixedcase-add-1")),
                    ("X-Mixedcase-Add-2", Some("mixedcase-add-2")),
                    ("X-Uppercase-Add", Some("uppercase-add")),
                    ("Another-Header", Some("another-header-val")),
                    ("X-Header-Remove", None),
                ],
                ..proxied("/case-insensitivity")
            },
            FilterCase {
                headers: &[
                    ("X-Header-Remove", "remove-val"),
                    ("X-Header-Add-Append", "append-val-1"),
                    ("X-Header-Echo", "echo"),
                    (
                        "X-Echo-Set-Header",
                        "X-Header-Set-2:set-val-2,X-Header-Add-2:add-val-2,\
                         X-Header-Remove-2:remove-val-2,Another-Header:another-header-val,\
                         X-Header-Remove-1:remove-val-1,X-Header-Echo:echo",
                    ),
                ],
                seen: &[
                    ("X-Header-Add", Some("header-val-1")),
                    ("X-Header-Set", Some("set-overwrites-values")),
                    ("X-Header-Add-Append", Some("append-val-1,header-val-2")),
                    ("X-Header-Echo", Some("echo")),
                    ("X-Header-Remove", None),
                ],
                returned: &[
                    ("X-Header-Set-1", Some("header-set-1")),
                    ("X-Header-Set-2", Some("header-set-2")),
                    ("X-Header-Add-1", Some("header-add-1")),
                    ("X-Header-Add-2", Some("add-val-2,header-add-2")),
                    ("Another-Header", Some("another-header-val")),
                    ("X-Header-Echo", Some("echo")),
                    ("X-Header-Remove-1", None),
                    ("X-Header-Remove-2", None),
                ],
                ..proxied("/response-and-request-header-modifiers")
            },
        ],
    ),
    (
        "HTTPRouteRedirectHostAndStatus",
        "httproute-redirect-host-and-status.yaml",
        "same-namespace",
        80,
        &[
            redirected(
                "/hostname-redirect",
                302,
                "http://example.org/hostname-redirect",
            ),
            redirected(
                "/host-and-status",
                301,
                "http://example.org/host-and-status",
            ),
        ],
    ),
    (
        "HTTPRouteRedirectPath",
        "httproute-redirect-path.yaml",
        "same-namespace",
        80,
        &[
            redirected(
                "/original-prefix/lemon",
                302,
                "http://{host}/replacement-prefix/lemon",
            ),
            redirected(
                "/full/path/original",
                302,
                "http://{host}/full-path-replacement",
            ),
            redirected(
                "/path-and-host",
                302,
                "http://example.org/replacement-prefix",
            ),
            redirected("/path-and-status", 301, "http://{host}/replacement-prefix"),
            redirected(
                "/full-path-and-host",
                302,
                "http://example.org/replacement-full",
            ),
            redirected(
                "/full-path-and-status",
                301,
                "http://{host}/replacement-full",
            ),
        ],
    ),
    (
        "HTTPRouteRedirectPort",
        "httproute-redirect-port.yaml",
        "same-namespace",
        80,
        &[
            redirected("/port", 302, "http://{host}:8083/port"),
            redirected(
                "/port-and-host",
                302,
                "http://example.org:8083/port-and-host",
            ),
            redirected(
                "/port-and-status",
                301,
                "http://{host}:8083/port-and-status",
            ),
            redirected(
                "/port-and-host-and-status",
                302,
                "http://example.org:8083/port-and-host-and-status",
            ),
        ],
    ),
    (
        "HTTPRouteRedirectScheme",
        "httproute-redirect-scheme.yaml",
        "same-namespace",
        80,
        &[
            redirected("/scheme", 302, "https://{host}/scheme"),
            redirected(
                "/scheme-and-host",
                302,
                "https://example.org/scheme-and-host",
            ),
            redirected(
                "/scheme-and-status",
                301,
                "https://{host}/scheme-and-status",
            ),
            redirected(
                "/scheme-and-host-and-status",
                302,
                "https://example.org/scheme-and-host-and-status",
            ),
        ],
    ),
    (
        "HTTPRouteRedirectPortAndScheme",
        "httproute-redirect-port-and-scheme.yaml",
        "same-namespace",
        80,
        &[
            redirected(
                "/scheme-nil-and-port-nil",
                302,
                "http://example.org/scheme-nil-and-port-nil",
            ),
            redirected(
                "/scheme-nil-and-port-80",
                302,
                "http://example.org/scheme-nil-and-port-80",
            ),
            redirected(
                "/scheme-nil-and-port-8080",
                302,
                "http://example.org:8080/scheme-nil-and-port-8080",
            ),
            redirected(
                "/scheme-https-and-port-nil",
                302,
                "https://example.org/scheme-https-and-port-nil",
            ),
            redirected(
                "/scheme-https-and-port-443",
                302,
                "https://example.org/scheme-https-and-port-443",
            ),
            redirected(
                "/scheme-https-and-port-8443",
                302,
                "https://example.org:8443/scheme-https-and-port-8443",
            ),
        ],
    ),
    // The same test's listener on port 8080 (its HTTPS listener's table is not replayed here:
    // the scheme and port table of `filters.rs` holds its rows).
    (
        "HTTPRouteRedirectPortAndScheme",
        "httproute-redirect-port-and-scheme.yaml",
        "same-namespace-with-http-listener-on-8080",
        8080,
        &[
            redirected(
                "/scheme-nil-and-port-nil",
                302,
                "http://example.org:8080/scheme-nil-and-port-nil",
            ),
            redirected(
                "/scheme-nil-and-port-80",
                302,
                "http://example.org/scheme-nil-and-port-80",
            ),
            redirected(
                "/scheme-https-and-port-nil",
                302,
                "https://example.org/scheme-https-and-port-nil",
            ),
        ],
    ),
    (
        "HTTPRoute303Redirect",
        "httproute-303-redirect.yaml",
        "same-namespace",
        80,
        &[FilterCase {
            method: "POST",
            ..redirected("/see-other", 303, "http://{host}/see-other")
        }],
    ),
    (
        "HTTPRoute307Redirect",
        "httproute-307-redirect.yaml",
        "same-namespace",
        80,
        &[redirected("/temporary", 307, "http://{host}/temporary")],
    ),
    (
        "HTTPRoute308Redirect",
        "httproute-308-redirect.yaml",
        "same-namespace",
        80,
        &[redirected("/permanent", 308, "http://{host}/permanent")],
    ),
    (
        "HTTPRouteRewriteHost",
        "httproute-rewrite-host.yaml",
        "same-namespace",
        80,
        &[
            FilterCase {
                host: "rewrite.example",
                upstream_host: Some("one.example.org"),
                ..proxied("/one")
            },
            FilterCase {
                host: "rewrite.example",
                backend: V2,
                upstream_host: Some("example.org"),
                ..proxied("/two")
            },
            FilterCase {
                host: "rewrite.example",
                headers: &[
                    ("X-Header-Remove", "remove-val"),
                    ("X-Header-Add-Append", "append-val-1"),
                ],
                backend: V2,
                upstream_host: Some("test.example.org"),
                seen: &[
                    ("X-Header-Add", Some("header-val-1")),
                    ("X-Header-Add-Append", Some("append-val-1,header-val-2")),
                    ("X-Header-Set", Some("set-overwrites-values")),
                    ("X-Header-Remove", None),
                ],
                ..proxied("/rewrite-host-and-modify-headers")
            },
        ],
    ),
    (
        "HTTPRouteRewritePath",
        "httproute-rewrite-path.yaml",
        "same-namespace",
        80,
        &[
            FilterCase {
                upstream_path: Some("/one/two"),
                ..proxied("/prefix/one/two")
            },
            FilterCase {
                upstream_path: Some("/three"),
                ..proxied("/strip-prefix/three")
            },
            FilterCase {
                upstream_path: Some("/"),
                ..proxied("/strip-prefix")
            },
            FilterCase {
                upstream_path: Some("/one"),
                ..proxied("/full/one/two")
            },
            FilterCase {
                headers: &[
                    ("X-Header-Remove", "remove-val"),
                    ("X-Header-Add-Append", "append-val-1"),
                    ("X-Header-Set", "set-val"),
                ],
                upstream_path: Some("/test"),
                seen: &[
                    ("X-Header-Add", Some("header-val-1")),
                    ("X-Header-Add-Append", Some("append-val-1,header-val-2")),
                    ("X-Header-Set", Some("set-overwrites-values")),
                    ("X-Header-Remove", None),
                ],
                ..proxied("/full/rewrite-path-and-modify-headers/test")
            },
            FilterCase {
                headers: &[
                    ("X-Header-Remove", "remove-val"),
                    ("X-Header-Add-Append", "append-val-1"),
                    ("X-Header-Set", "set-val"),
                ],
                upstream_path: Some("/prefix/one"),
                seen: &[
                    ("X-Header-Add", Some("header-val-1")),
                    ("X-Header-Add-Append", Some("append-val-1,header-val-2")),
                    ("X-Header-Set", Some("set-overwrites-values")),
                    ("X-Header-Remove", None),
                ],
                ..proxied("/prefix/rewrite-path-and-modify-headers/one")
            },
        ],
    ),
    (
        "HTTPRouteTimeoutRequest",
        "httproute-timeout-request.yaml",
        "same-namespace",
        80,
        &[
            proxied("/request-timeout"),
            FilterCase {
                status: 504,
                backend: None,
                upstream_path: None,
                ..proxied("/request-timeout?delay=1s")
            },
            proxied("/disable-request-timeout?delay=1s"),
        ],
    ),
    (
        "HTTPRouteTimeoutBackendRequest",
        "httproute-timeout-backend-request.yaml",
        "same-namespace",
        80,
        &[
            proxied("/backend-timeout"),
            FilterCase {
                status: 504,
                backend: None,
                upstream_path: None,
                ..proxied("/backend-timeout?delay=1s")
            },
            proxied("/disable-backend-timeout?delay=1s"),
        ],
    ),
];

/// Requests whose decoded path holds a CR LF, against the ReplacePrefixMatch redirect and
/// rewrites of HTTPRouteRedirectPath and HTTPRouteRewritePath (rendering notes §6.3, §6.4):
/// the escapes stay escapes, and no second header appears.
pub const CRLF: [(&str, FilterCase); 3] = [
    (
        "httproute-redirect-path.yaml",
        FilterCase {
            returned: &[("Set-Cookie", None)],
            ..redirected(
                "/original-prefix/p%0d%0aSet-Cookie:x",
                302,
                "http://{host}/replacement-prefix/p%0d%0aSet-Cookie:x",
            )
        },
    ),
    (
        "httproute-rewrite-path.yaml",
        FilterCase {
            upstream_path: Some("/one/p%0D%0ASet-Cookie:x"),
            returned: &[("Set-Cookie", None)],
            ..proxied("/prefix/one/p%0d%0aSet-Cookie:x")
        },
    ),
    (
        "httproute-rewrite-path.yaml",
        FilterCase {
            upstream_path: Some("/a%0Ab"),
            ..proxied("/strip-prefix/a%0ab")
        },
    ),
];
