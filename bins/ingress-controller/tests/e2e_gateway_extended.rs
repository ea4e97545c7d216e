//! Extended HTTPRoute features end to end through the real nginx (issue #32), with manifests of
//! our own: RegularExpression header and query-parameter matches (S-MM.1, S-MM.2; the
//! dispatcher's `H=` and `Q=` conditions), each matching the whole first value; RequestMirror
//! (S-F.6) as HTTPRouteRequestMirror, HTTPRouteRequestMultipleMirrors and
//! HTTPRouteRequestPercentageMirror check it (gateway-api v1.6.1, `conformance/tests/`): the
//! client gets the primary backend's answer, and the mirror's backend gets a copy with the same
//! path and query, the rule's header edits included; request header edits on a backendRef
//! (S-F.9) as HTTPRouteRequestHeaderModifierBackendWeights checks them, with the rule's own
//! edits and path rewrite beside them, and response header edits on a backendRef; CORS (S-F.7) on HTTPRouteCORS's table.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::time::Duration;

use support::{Backends, Controller, eventually};

/// The namespace of every object here.
const NS: &str = "extended";

/// A GatewayClass of ours and a Gateway `gw` in [`NS`] with one HTTP listener on port 80 (the
/// controller's HTTP port, on the shared listen address), then `routes`.
fn gateway(routes: &str) -> String {
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n\
         metadata: {{name: extended}}\nspec: {{controllerName: {}}}\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{name: gw, namespace: {NS}}}\n\
         spec: {{gatewayClassName: extended, listeners: [{{name: http, port: 80, protocol: HTTP}}]}}\n\
         {routes}",
        ingress_controller::gateway::DEFAULT_CONTROLLER_NAME
    )
}

/// One route of the regex table: a rule per condition type, and a catch-all.
const REGEX_ROUTE: &str = "---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: regex, namespace: extended}
spec:
  parentRefs: [{name: gw}]
  hostnames: [regex.example]
  rules:
  - matches: [{headers: [{name: Version, type: RegularExpression, value: 'v[0-9]+'}]}]
    backendRefs: [{name: header, port: 80}]
  - matches: [{queryParams: [{name: tier, type: RegularExpression, value: 'gold|silver'}]}]
    backendRefs: [{name: query, port: 80}]
  - backendRefs: [{name: rest, port: 80}]
";

/// `(path with query, headers, backend)`.
type Row = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

const REGEX_TABLE: &[Row] = &[
    ("/", &[("Version", "v2")], "header"),
    ("/a/b", &[("version", "v10")], "header"),
    // The whole value: no partial match at either end.
    ("/", &[("Version", "v2x")], "rest"),
    ("/", &[("Version", "xv2")], "rest"),
    ("/", &[("Version", "v")], "rest"),
    ("/", &[], "rest"),
    ("/?tier=gold", &[], "query"),
    ("/?tier=silver", &[], "query"),
    ("/?tier=golden", &[], "rest"),
    ("/?tier=xgold", &[], "rest"),
    // Decoded before the comparison; `\z`, not `$`: a trailing newline is no match.
    ("/?tier=g%6Fld", &[], "query"),
    ("/?tier=gold%0A", &[], "rest"),
    // The first value only.
    ("/?tier=bronze&tier=gold", &[], "rest"),
    ("/?tier=gold&tier=bronze", &[], "query"),
    ("/?Tier=gold", &[], "rest"),
    // Header matches before query matches (S-PR.4).
    ("/?tier=gold", &[("Version", "v1")], "header"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regex_header_and_query_matches_through_nginx() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["header", "query", "rest"]).await;
    let mut manifests = gateway(REGEX_ROUTE);
    manifests.push_str(&backends.manifests(NS));
    let controller = Controller::start(&manifests).await;
    eventually("the regex route served", || async {
        support::get(controller.http, "regex.example", "/", &[("Version", "v2")])
            .await
            .is_some_and(|r| r.backend() == "header")
    })
    .await;
    for (path, headers, want) in REGEX_TABLE {
        let response = controller.get_with("regex.example", path, headers).await;
        assert_eq!(
            (response.status, response.backend()),
            (200, *want),
            "{path} {headers:?}: {}",
            response.body
        );
    }
}

/// The mirror routes: one copy, a copy of an edited request, two copies, half, none, and a
/// copy to another namespace that no ReferenceGrant permits (dropped, S-F.6).
const MIRROR_ROUTE: &str = "---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mirror, namespace: extended}
spec:
  parentRefs: [{name: gw}]
  hostnames: [mirror.example]
  rules:
  - matches: [{path: {type: PathPrefix, value: /mirror}}]
    filters:
    - {type: RequestMirror, requestMirror: {backendRef: {name: copy, port: 80}}}
    backendRefs: [{name: primary, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /mirror-and-modify-headers}}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set: [{name: X-Header-Set, value: set-overwrites-values}]
        remove: [X-Header-Remove]
    - {type: RequestMirror, requestMirror: {backendRef: {name: copy, port: 80}}}
    backendRefs: [{name: primary, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /two}}]
    filters:
    - {type: RequestMirror, requestMirror: {backendRef: {name: copy, port: 80}}}
    - {type: RequestMirror, requestMirror: {backendRef: {name: copy2, port: 80}}}
    backendRefs: [{name: primary, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /half}}]
    filters:
    - type: RequestMirror
      requestMirror: {backendRef: {name: copy, port: 80}, fraction: {numerator: 25, denominator: 50}}
    backendRefs: [{name: primary, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /never}}]
    filters:
    - {type: RequestMirror, requestMirror: {backendRef: {name: copy, port: 80}, percent: 0}}
    backendRefs: [{name: primary, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /denied}}]
    filters:
    - type: RequestMirror
      requestMirror: {backendRef: {name: copy, namespace: other, port: 80}}
    backendRefs: [{name: primary, port: 80}]
";

/// The requests backend `backend` got whose target begins with `prefix`.
fn seen_by(backends: &Backends, backend: &str, prefix: &str) -> Vec<support::Seen> {
    let seen = backends.seen.lock().unwrap();
    let matching = seen
        .iter()
        .filter(|s| s.backend == backend && s.uri.starts_with(prefix));
    matching.cloned().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_mirrors_through_nginx() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["primary", "copy", "copy2"]).await;
    let mut manifests = gateway(MIRROR_ROUTE);
    manifests.push_str(&backends.manifests(NS));
    manifests.push_str(&support::service("other", "copy", &[backends.port("copy")]));
    let controller = Controller::start(&manifests).await;
    eventually("the mirror route served", || async {
        support::get(controller.http, "mirror.example", "/mirror?id=0", &[])
            .await
            .is_some_and(|r| r.backend() == "primary")
    })
    .await;
    let get = |path: &'static str, headers: &'static [(&'static str, &'static str)]| {
        let controller = &controller;
        async move {
            let response = controller.get_with("mirror.example", path, headers).await;
            assert_eq!(
                (response.status, response.backend()),
                (200, "primary"),
                "{path}"
            );
        }
    };
    let copied = |backend: &'static str, uri: &'static str| {
        let backends = &backends;
        async move {
            eventually(&format!("{backend} gets a copy of {uri}"), || async {
                !seen_by(backends, backend, uri).is_empty()
            })
            .await;
            seen_by(backends, backend, uri).remove(0)
        }
    };

    get("/mirror?id=1", &[("X-Test", "one")]).await;
    let copy = copied("copy", "/mirror?id=1").await;
    assert!(
        copy.headers.contains(&("x-test".into(), "one".into())),
        "{copy:?}"
    );
    assert!(
        copy.headers
            .contains(&("host".into(), "mirror.example".into())),
        "{copy:?}"
    );

    get(
        "/mirror-and-modify-headers?id=2",
        &[("X-Header-Remove", "gone"), ("X-Header-Set", "old")],
    )
    .await;
    let copy = copied("copy", "/mirror-and-modify-headers?id=2").await;
    let primary = &seen_by(&backends, "primary", "/mirror-and-modify-headers?id=2")[0];
    for seen in [&copy, primary] {
        let header = |name: &str| seen.headers.iter().find(|(n, _)| n == name);
        assert_eq!(
            header("x-header-set").map(|(_, v)| v.as_str()),
            Some("set-overwrites-values"),
            "{seen:?}"
        );
        assert!(header("x-header-remove").is_none(), "{seen:?}");
    }

    get("/two?id=3", &[]).await;
    copied("copy", "/two?id=3").await;
    copied("copy2", "/two?id=3").await;

    // 25/50 of 400 requests: 200 expected, 10 standard deviations either side is 100 to 300.
    for _ in 0..400 {
        get("/half", &[]).await;
    }
    get("/never", &[]).await;
    get("/denied", &[]).await;
    get("/mirror?id=last", &[]).await;
    copied("copy", "/mirror?id=last").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let half = seen_by(&backends, "copy", "/half").len();
    assert!((100..=300).contains(&half), "{half} copies of 400 at 25/50");
    assert!(seen_by(&backends, "copy", "/never").is_empty());
    assert!(seen_by(&backends, "copy", "/denied").is_empty());
    assert_eq!(seen_by(&backends, "primary", "/half").len(), 400);
}

/// Two backends by weight, each with a `Backend` header of its own (the manifest of
/// HTTPRouteRequestHeaderModifierBackendWeights), under a rule that also edits headers and
/// rewrites the path; the rule and the first backend also set an `X-Answer` response header.
const BACKEND_FILTERS_ROUTE: &str = "---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: backend-filters, namespace: extended}
spec:
  parentRefs: [{name: gw}]
  hostnames: [backends.example]
  rules:
  - matches: [{path: {type: PathPrefix, value: /old}}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set: [{name: X-Rule, value: rule}, {name: Backend, value: rule}]
    - {type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: X-Answer, value: rule}]}}
    - {type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /new}}}
    backendRefs:
    - name: one
      port: 80
      weight: 10
      filters:
      - {type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: Backend, value: one}]}}
      - {type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: X-Answer, value: one}]}}
    - name: two
      port: 80
      weight: 10
      filters:
      - type: RequestHeaderModifier
        requestHeaderModifier: {set: [{name: Backend, value: two}], remove: [X-Client]}
    - {name: three, port: 80, weight: 10}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backend_request_header_edits_through_nginx() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["one", "two", "three"]).await;
    let mut manifests = gateway(BACKEND_FILTERS_ROUTE);
    manifests.push_str(&backends.manifests(NS));
    let controller = Controller::start(&manifests).await;
    // Every request, the first included, is the same, and all are checked.
    let headers = [("X-Client", "c")];
    eventually("the backend filter route served", || async {
        support::get(controller.http, "backends.example", "/old/x?q=1", &headers)
            .await
            .is_some_and(|r| r.status == 200)
    })
    .await;
    for _ in 0..150 {
        let response = controller
            .get_with("backends.example", "/old/x?q=1", &headers)
            .await;
        assert_eq!(response.status, 200, "{}", response.body);
        // The answer's edits: the backend's own after the rule's (S-F.9).
        let want = match response.backend() {
            "one" => "one",
            _ => "rule",
        };
        assert_eq!(response.header("x-answer"), Some(want), "{response:?}");
    }
    let seen = backends.seen.lock().unwrap().clone();
    let mut counts = std::collections::BTreeMap::new();
    for request in &seen {
        // The path is rewritten once, whichever backend is drawn.
        assert_eq!(request.uri, "/new/x?q=1", "{request:?}");
        let header = |name: &str| {
            let found = request.headers.iter().filter(|(n, _)| n == name);
            found.map(|(_, v)| v.as_str()).collect::<Vec<_>>()
        };
        // One `Backend` header: the drawn backend's own, else the rule's.
        let want = match request.backend.as_str() {
            "three" => "rule",
            other => other,
        };
        assert_eq!(header("backend"), [want], "{request:?}");
        assert_eq!(header("x-rule"), ["rule"], "{request:?}");
        let client = if request.backend == "two" {
            vec![]
        } else {
            vec!["c"]
        };
        assert_eq!(header("x-client"), client, "{request:?}");
        *counts.entry(request.backend.clone()).or_insert(0) += 1;
    }
    // 1/3 each of 150: 50 expected, far from 0 and 150 (6 standard deviations: 15 to 85).
    for name in ["one", "two", "three"] {
        let n = counts.get(name).copied().unwrap_or(0);
        assert!((15..=85).contains(&n), "{counts:?}");
    }
}

/// HTTPRouteCORS's rules (gateway-api v1.6.1, `conformance/tests/httproute-cors.yaml`), as the
/// rules of one route.
const CORS_ROUTE: &str = "---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cors, namespace: extended}
spec:
  parentRefs: [{name: gw}]
  hostnames: [cors.example]
  rules:
  - matches: [{path: {type: PathPrefix, value: /cors-1}}]
    filters:
    - type: CORS
      cors:
        allowOrigins: ['https://www.foo.com', 'https://*.bar.com']
        allowMethods: [GET, OPTIONS]
        allowHeaders: [x-header-1, x-header-2]
        exposeHeaders: [x-header-3, x-header-4]
        allowCredentials: true
        maxAge: 3600
    backendRefs: [{name: web, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /cors-2}}]
    filters:
    - {type: CORS, cors: {allowOrigins: ['https://www.foo.com'], allowMethods: ['*']}}
    backendRefs: [{name: web, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /cors-wildcard-origin}}]
    filters:
    - {type: CORS, cors: {allowOrigins: ['*'], allowMethods: [PUT], allowCredentials: false}}
    backendRefs: [{name: web, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /cors-wildcard-methods-headers}}]
    filters:
    - type: CORS
      cors: {allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], allowCredentials: true}
    backendRefs: [{name: web, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /cors-wildcard-methods-headers-unauth}}]
    filters:
    - type: CORS
      cors: {allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], allowCredentials: false}
    backendRefs: [{name: web, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /cors-rewritten}}]
    filters:
    - {type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /new}}}
    - {type: CORS, cors: {allowOrigins: ['https://www.foo.com']}}
    backendRefs: [{name: web, port: 80}]
";

/// `(method, path, request headers, status, response headers: a value, or None for absent)`.
type CorsRow = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    u16,
    &'static [(&'static str, Option<&'static str>)],
);

/// HTTPRouteCORS's table (`httproute-cors.go`, v1.6.1), where the suite accepts several
/// answers the one this gateway gives: 204 for preflights, the request's origin echoed, the
/// lists joined with `, ` in the order written.
const CORS_TABLE: &[CorsRow] = &[
    (
        "OPTIONS",
        "/cors-1",
        &[
            ("Origin", "https://www.foo.com"),
            ("access-control-request-method", "GET"),
            ("access-control-request-headers", "x-header-1, x-header-2"),
        ],
        204,
        &[
            ("access-control-allow-origin", Some("https://www.foo.com")),
            ("access-control-allow-methods", Some("GET, OPTIONS")),
            (
                "access-control-allow-headers",
                Some("x-header-1, x-header-2"),
            ),
            (
                "access-control-expose-headers",
                Some("x-header-3, x-header-4"),
            ),
            ("access-control-max-age", Some("3600")),
            ("access-control-allow-credentials", Some("true")),
        ],
    ),
    (
        "OPTIONS",
        "/cors-1",
        &[
            ("Origin", "https://www.bar.com"),
            ("access-control-request-method", "GET"),
        ],
        204,
        &[("access-control-allow-origin", Some("https://www.bar.com"))],
    ),
    (
        "OPTIONS",
        "/cors-1",
        &[
            ("Origin", "https://xpto.www.bar.com"),
            ("access-control-request-method", "GET"),
        ],
        204,
        &[(
            "access-control-allow-origin",
            Some("https://xpto.www.bar.com"),
        )],
    ),
    (
        "OPTIONS",
        "/cors-1",
        &[
            ("Origin", "https://foobar.com"),
            ("access-control-request-method", "GET"),
        ],
        204,
        &[("access-control-allow-origin", None)],
    ),
    (
        "GET",
        "/cors-1",
        &[("Origin", "https://www.foo.com")],
        200,
        &[
            ("access-control-allow-origin", Some("https://www.foo.com")),
            ("access-control-allow-credentials", Some("true")),
            (
                "access-control-expose-headers",
                Some("x-header-3, x-header-4"),
            ),
            ("access-control-allow-methods", None),
        ],
    ),
    (
        "GET",
        "/cors-1",
        &[("Origin", "https://www.bar.com")],
        200,
        &[("access-control-allow-origin", Some("https://www.bar.com"))],
    ),
    (
        "GET",
        "/cors-1",
        &[("Origin", "https://foobar.com")],
        200,
        &[("access-control-allow-origin", None)],
    ),
    // Ours: CORS after a path rewrite; the backend's own CORS headers are hidden; another
    // scheme or port is another origin; no Origin, no CORS.
    (
        "GET",
        "/cors-rewritten/x",
        &[("Origin", "https://www.foo.com")],
        200,
        &[("access-control-allow-origin", Some("https://www.foo.com"))],
    ),
    (
        "GET",
        "/cors-1",
        &[
            ("Origin", "https://foobar.com"),
            (
                "X-Echo-Set-Header",
                "Access-Control-Allow-Origin:*,X-Other:kept",
            ),
        ],
        200,
        &[
            ("access-control-allow-origin", None),
            ("x-other", Some("kept")),
        ],
    ),
    (
        "GET",
        "/cors-1",
        &[("Origin", "http://www.foo.com")],
        200,
        &[("access-control-allow-origin", None)],
    ),
    (
        "GET",
        "/cors-1",
        &[("Origin", "https://www.foo.com:8443")],
        200,
        &[("access-control-allow-origin", None)],
    ),
    (
        "GET",
        "/cors-1",
        &[],
        200,
        &[("access-control-allow-origin", None)],
    ),
    (
        "OPTIONS",
        "/cors-2",
        &[
            ("Origin", "https://www.foo.com"),
            ("access-control-request-method", "POST"),
        ],
        204,
        &[
            ("access-control-allow-origin", Some("https://www.foo.com")),
            ("access-control-allow-methods", Some("*")),
            ("access-control-allow-credentials", None),
        ],
    ),
    (
        "OPTIONS",
        "/cors-wildcard-origin",
        &[
            ("Origin", "https://foobar.com:12345"),
            ("access-control-request-method", "PUT"),
        ],
        204,
        &[
            (
                "access-control-allow-origin",
                Some("https://foobar.com:12345"),
            ),
            ("access-control-allow-methods", Some("PUT")),
            ("access-control-allow-credentials", None),
        ],
    ),
    (
        "PUT",
        "/cors-wildcard-origin",
        &[("Origin", "https://foobar.com")],
        200,
        &[
            ("access-control-allow-origin", Some("https://foobar.com")),
            ("access-control-allow-credentials", None),
        ],
    ),
    (
        "OPTIONS",
        "/cors-wildcard-methods-headers",
        &[
            ("Origin", "https://other.foo.com"),
            ("access-control-request-method", "PUT"),
            ("access-control-request-headers", "x-header-1, x-header-2"),
        ],
        204,
        &[
            ("access-control-allow-origin", Some("https://other.foo.com")),
            ("access-control-allow-methods", Some("PUT")),
            (
                "access-control-allow-headers",
                Some("x-header-1, x-header-2"),
            ),
            ("access-control-allow-credentials", Some("true")),
        ],
    ),
    (
        "OPTIONS",
        "/cors-wildcard-methods-headers-unauth",
        &[
            ("Origin", "https://other.foo.com"),
            ("access-control-request-method", "PUT"),
            ("access-control-request-headers", "x-header-1, x-header-2"),
        ],
        204,
        &[
            ("access-control-allow-origin", Some("https://other.foo.com")),
            ("access-control-allow-methods", Some("*")),
            ("access-control-allow-headers", Some("*")),
            ("access-control-allow-credentials", None),
        ],
    ),
    (
        "GET",
        "/cors-wildcard-methods-headers",
        &[("Origin", "https://other.foo.com")],
        200,
        &[
            ("access-control-allow-origin", Some("https://other.foo.com")),
            ("access-control-allow-credentials", Some("true")),
        ],
    ),
    (
        "GET",
        "/cors-wildcard-methods-headers-unauth",
        &[("Origin", "https://other.foo.com")],
        200,
        &[("access-control-allow-credentials", None)],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_through_nginx() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["web"]).await;
    let mut manifests = gateway(CORS_ROUTE);
    manifests.push_str(&backends.manifests(NS));
    let controller = Controller::start(&manifests).await;
    let to = std::net::SocketAddr::from(([127, 0, 0, 1], controller.http));
    eventually("the CORS route served", || async {
        support::get(controller.http, "cors.example", "/cors-1", &[])
            .await
            .is_some_and(|r| r.status == 200)
    })
    .await;
    for (method, path, headers, status, want) in CORS_TABLE {
        let response = support::request_to(to, method, "cors.example", path, headers, "")
            .await
            .unwrap();
        let what = format!("{method} {path} {headers:?}: {response:?}");
        assert_eq!(response.status, *status, "{what}");
        // Preflights never reach the backend; other requests do.
        let backend = if *status == 204 { "-" } else { "web" };
        assert_eq!(response.backend(), backend, "{what}");
        for (name, value) in *want {
            assert_eq!(response.header(name), *value, "{name}: {what}");
        }
    }
}
