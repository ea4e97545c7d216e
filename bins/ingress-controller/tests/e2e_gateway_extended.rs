//! Extended HTTPRoute features end to end through the real nginx (issue #32), with manifests of
//! our own: RegularExpression header and query-parameter matches (S-MM.1, S-MM.2; the
//! dispatcher's `H=` and `Q=` conditions), each matching the whole first value.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

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
