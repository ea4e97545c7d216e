//! The Gateway API conformance suite's routing tests end to end (issue #32): the suite's base
//! manifests and a test's manifests (`testdata/gateway-api/`, gateway-api v1.6.1) read with
//! `--manifests`, each Gateway on an address of its own (`--gateway-addresses`), the suite's
//! Services mapped to local backends that answer with their name, and the tests' request
//! tables (`support::gateway_tables`, and the shorter ones below) sent through the real nginx.
//!
//! Each table gets a controller of its own: a fresh manifests directory, so no Gateway holds an
//! address in its status yet, and the addresses are those [`Plan::addresses`] assigns from the
//! objects alone, which the test computes with the same function.
//!
//! The filter and timeout tests (`support::gateway_filter_tables`) compare what the backend
//! saw (path, Host, headers, from its echo) and what the client got (status, headers,
//! `Location`), and add requests whose decoded path holds a CR LF.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::process::Command;

use ingress_controller::class::Selection;
use ingress_controller::gateway::addresses::Pool;
use ingress_controller::gateway::plan::{Plan, Served};
use ingress_controller::model;
use ingress_controller::objects::Objects;
use support::gateway_filter_tables::{CRLF, FILTERS, FilterCase};
use support::gateway_tables::{Case, LISTENERS, PRECEDENCE};
use support::{Backends, Controller, Response, eventually, request_to};

const INFRA: &str = "gateway-conformance-infra";
const WEB: &str = "gateway-conformance-web-backend";
const APP: &str = "gateway-conformance-app-backend";
const CLASS: &str = support::CONFORMANCE_CLASS;
const POOL: &str = "127.0.1.0/24";

/// The suite's Services this test serves, `(namespace, name, port names)`: each is mapped to
/// a local backend of the same name.
const SERVICES: [(&str, &str, &[&str]); 6] = [
    (
        INFRA,
        "infra-backend-v1",
        &["first-port", "second-port", "third-port"],
    ),
    (INFRA, "infra-backend-v2", &[""]),
    (INFRA, "infra-backend-v3", &[""]),
    (APP, "app-backend-v1", &[""]),
    (APP, "app-backend-v2", &[""]),
    (WEB, "web-backend", &[""]),
];

/// What a request must get: a backend's answer, or nginx's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    Backend(&'static str),
    Status(u16),
}

impl Want {
    fn of(case: &Case) -> Self {
        case.4.map_or(Self::Status(404), Self::Backend)
    }

    fn holds(self, response: &Response) -> bool {
        match self {
            Self::Backend(name) => response.status == 200 && response.backend() == name,
            Self::Status(status) => response.status == status && response.backend() == "-",
        }
    }
}

/// The running test's objects: the GatewayClass the suite creates, the base manifests and
/// `file`'s, the certificate Secrets the suite creates, and an EndpointSlice per Service
/// naming its local backend.
struct Suite {
    backends: Backends,
    secrets: String,
}

impl Suite {
    async fn start() -> Self {
        let names: Vec<&str> = SERVICES.iter().map(|(_, name, _)| *name).collect();
        let backends = Backends::start(&names).await;
        let dir = tempfile::tempdir().unwrap();
        let san = "DNS:example.org,DNS:second-example.org,DNS:*.wildcard.org";
        let (crt, key) = support::self_signed(dir.path(), "conformance", "example.org", san);
        let (crt, key) = (
            std::fs::read_to_string(crt).unwrap(),
            std::fs::read_to_string(key).unwrap(),
        );
        let mut secrets = support::tls_secret(INFRA, "tls-validity-checks-certificate", &crt, &key);
        secrets.push_str(&support::tls_secret(WEB, "certificate", &crt, &key));
        Self { backends, secrets }
    }

    fn manifests(&self, file: &str) -> String {
        let mut out = support::conformance_manifests(file);
        out.push_str(&self.secrets);
        for (namespace, name, ports) in SERVICES {
            let port = self.backends.port(name);
            let ports: Vec<String> = ports
                .iter()
                .map(|p| match *p {
                    "" => format!("{{port: {port}}}"),
                    p => format!("{{name: {p}, port: {port}}}"),
                })
                .collect();
            let _ = write!(
                out,
                "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: \
                 {name}-e2e, namespace: {namespace}, labels: {{kubernetes.io/service-name: \
                 {name}}}}}\naddressType: IPv4\nports: [{}]\nendpoints: [{{addresses: ['{}']}}]\n",
                ports.join(", "),
                support::backend_ip()
            );
        }
        out
    }

    /// A controller serving `file`'s objects, and the address of each Gateway it serves.
    async fn serve(&self, file: &str) -> (Controller, BTreeMap<String, IpAddr>) {
        self.serve_with(file, "").await
    }

    /// As [`Suite::serve`], with the objects `more` (YAML) beside them: what the suite's
    /// cluster would create itself (EndpointSlices of a selector, or filled in by a test).
    async fn serve_with(&self, file: &str, more: &str) -> (Controller, BTreeMap<String, IpAddr>) {
        let manifests = self.manifests(file) + more;
        let mut objects = Objects::default();
        objects.add_yaml(&manifests).unwrap();
        let built = model::build(&objects, &Selection::default());
        let addresses = addresses(&built.gateway);
        let extra = ["--gateway-addresses".to_owned(), POOL.to_owned()];
        let controller = Controller::start_with(&manifests, &extra).await;
        (controller, addresses)
    }
}

/// The address of each Gateway of the infra namespace `plan` serves, by name.
fn addresses(plan: &Plan) -> BTreeMap<String, IpAddr> {
    let pool: Pool = POOL.parse().unwrap();
    plan.addresses(Some(&pool))
        .into_iter()
        .filter(|(gateway, _)| gateway.namespace == INFRA)
        .map(|(gateway, served)| match served {
            Served::Own(address) => (gateway.name, address),
            Served::Shared => panic!("{gateway} on the shared address"),
        })
        .collect()
}

/// `case` sent to `address` on `port`: the Host header is the case's, or the address when the
/// case names none (as the suite sends the Gateway's address).
async fn send(address: IpAddr, port: u16, case: &Case) -> Option<Response> {
    let (host, method, path, headers, _) = *case;
    let authority = format!("{address}:{port}");
    let host = if host.is_empty() { &authority } else { host };
    request_to(
        SocketAddr::new(address, port),
        method,
        host,
        path,
        headers,
        "",
    )
    .await
}

/// Sends every case of `cases` to Gateway `gateway` and checks the answers; the first case
/// waits until the configuration is served.
async fn replay(
    controller: &Controller,
    addresses: &BTreeMap<String, IpAddr>,
    gateway: &str,
    cases: &[(Case, Want)],
) {
    let address = addresses[gateway];
    let port = controller.http;
    if let Some((first, want)) = cases.first() {
        eventually(&format!("{gateway}: {first:?}"), || async {
            send(address, port, first)
                .await
                .is_some_and(|r| want.holds(&r))
        })
        .await;
    }
    for (case, want) in cases {
        let response = send(address, port, case).await.unwrap();
        assert!(
            want.holds(&response),
            "{gateway}: {case:?} wants {want:?}, got {} from {}: {}",
            response.status,
            response.backend(),
            response.body
        );
    }
}

/// `(test, manifest file, Gateway, cases)`.
type Table = (&'static str, &'static str, &'static str, Vec<(Case, Want)>);

/// `(path, want)` cases for the Gateway named in them.
fn cases(list: &[(&'static str, Want)]) -> Vec<(Case, Want)> {
    list.iter()
        .map(|(path, want)| {
            let case: Case = ("", "GET", path, &[], None);
            (case, *want)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_routing_tables_through_nginx() {
    if support::ran_elsewhere() {
        return;
    }
    let suite = Suite::start().await;
    use Want::{Backend, Status};
    // `(test, manifest file, Gateway, cases)`: the tables of the Go files, transcribed in the
    // design notes' tests/<Test>.yaml.
    let simple: [Table; 12] = [
        (
            "HTTPRouteSimpleSameNamespace",
            "httproute-simple-same-namespace.yaml",
            "same-namespace",
            cases(&[("/", Backend("infra-backend-v1"))]),
        ),
        (
            "HTTPRouteExactPathMatching",
            "httproute-exact-path-matching.yaml",
            "same-namespace",
            cases(&[
                ("/one", Backend("infra-backend-v1")),
                ("/two", Backend("infra-backend-v2")),
                ("/", Status(404)),
                ("/one/example", Status(404)),
                ("/two/", Status(404)),
                ("/Two", Status(404)),
            ]),
        ),
        (
            "HTTPRouteCrossNamespace",
            "httproute-cross-namespace.yaml",
            "backend-namespaces",
            cases(&[("/", Backend("web-backend"))]),
        ),
        (
            "HTTPRouteInvalidNonExistentBackendRef",
            "httproute-invalid-nonexistent-backendref.yaml",
            "same-namespace",
            cases(&[("/", Status(500))]),
        ),
        (
            "HTTPRouteInvalidCrossNamespaceBackendRef",
            "httproute-invalid-cross-namespace-backend-ref.yaml",
            "same-namespace",
            cases(&[("/", Status(500))]),
        ),
        (
            "HTTPRouteInvalidBackendRefUnknownKind",
            "httproute-invalid-backendref-unknown-kind.yaml",
            "same-namespace",
            cases(&[("/v2", Status(500))]),
        ),
        (
            "HTTPRouteInvalidReferenceGrant",
            "httproute-invalid-reference-grant.yaml",
            "same-namespace",
            cases(&[("/", Status(500))]),
        ),
        (
            "HTTPRouteNoBackendRefs",
            "httproute-omitted-backendrefs.yaml",
            "same-namespace",
            cases(&[
                ("/forward", Backend("infra-backend-v1")),
                ("/omitted-no-forward", Status(500)),
                ("/empty-no-forward", Status(500)),
            ]),
        ),
        (
            "HTTPRoutePartiallyInvalidViaInvalidReferenceGrant",
            "httproute-partially-invalid-via-invalid-reference-grant.yaml",
            "same-namespace",
            cases(&[("/v2", Status(500)), ("/", Backend("app-backend-v1"))]),
        ),
        (
            "HTTPRouteReferenceGrant",
            "httproute-reference-grant.yaml",
            "same-namespace",
            cases(&[("/", Backend("web-backend"))]),
        ),
        (
            "HTTPRouteMultipleGateways",
            "httproute-multiple-gateways.yaml",
            "same-namespace",
            cases(&[
                ("/shared", Backend("infra-backend-v1")),
                ("/", Backend("infra-backend-v2")),
            ]),
        ),
        (
            "HTTPRouteMultipleGateways",
            "httproute-multiple-gateways.yaml",
            "all-namespaces",
            cases(&[
                ("/shared", Backend("infra-backend-v1")),
                ("/", Backend("infra-backend-v3")),
            ]),
        ),
    ];
    for (test, file, gateway, cases) in &simple {
        println!("{test}");
        let (controller, addresses) = suite.serve(file).await;
        replay(&controller, &addresses, gateway, cases).await;
    }

    // The precedence tables: Matching, MatchingAcrossRoutes, PathMatchOrder, HeaderMatching,
    // MethodMatching, QueryParamMatching.
    for (file, table) in PRECEDENCE {
        println!("{file}");
        let (controller, addresses) = suite.serve(file).await;
        let with_wants: Vec<(Case, Want)> = table.iter().map(|c| (*c, Want::of(c))).collect();
        replay(&controller, &addresses, "same-namespace", &with_wants).await;
    }

    // The listener tables: each case is served by one of the Gateways (the table does not say
    // which), the others answer 404.
    for (files, gateways, table) in LISTENERS {
        println!("{files:?}");
        let (controller, addresses) = suite.serve(files[0]).await;
        let port = controller.http;
        let first = gateways[0];
        eventually("the listener table served", || async {
            send(addresses[first], port, &table[0]).await.is_some()
        })
        .await;
        for case in table {
            let want = Want::of(case);
            let mut answered = false;
            for gateway in gateways {
                let response = send(addresses[*gateway], port, case).await.unwrap();
                answered |= want.holds(&response);
                assert!(
                    want.holds(&response) || Want::Status(404).holds(&response),
                    "{gateway}: {case:?} wants {want:?}, got {} from {}",
                    response.status,
                    response.backend()
                );
            }
            assert!(answered, "{files:?}: {case:?} wants {want:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_weights_within_five_percent() {
    if support::ran_elsewhere() {
        return;
    }
    // HTTPRouteWeight: 70/30/0 over 500 requests, each share within ±5 % (weight.go).
    let suite = Suite::start().await;
    let (controller, addresses) = suite.serve("httproute-weight.yaml").await;
    let address = addresses["same-namespace"];
    let case: Case = ("", "GET", "/", &[], None);
    eventually("the weighted route served", || async {
        send(address, controller.http, &case)
            .await
            .is_some_and(|r| r.status == 200)
    })
    .await;
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    for _ in 0..500 {
        let response = send(address, controller.http, &case).await.unwrap();
        *counts.entry(response.backend().to_owned()).or_default() += 1;
    }
    let share = |name: &str| f64::from(counts.get(name).copied().unwrap_or(0)) / 500.0;
    assert!(
        (share("infra-backend-v1") - 0.7).abs() <= 0.05,
        "{counts:?}"
    );
    assert!(
        (share("infra-backend-v2") - 0.3).abs() <= 0.05,
        "{counts:?}"
    );
    assert_eq!(share("infra-backend-v3"), 0.0, "{counts:?}");
}

/// `curl -k` to `https://HOST:PORT/` at `address` (SNI and Host `host`): the status and the
/// backend that answered (`-`: nginx).
fn https_get(address: IpAddr, port: u16, host: &str) -> (u16, String) {
    support::https_get_sni(address, port, host, host, "/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_https_listener() {
    if support::ran_elsewhere() {
        return;
    }
    if Command::new("curl").arg("--version").output().is_err() {
        println!("skipped: curl");
        return;
    }
    // HTTPRouteHTTPSListener: the route with a host name on the catch-all listener, the one
    // without on the listener of its host, an unknown name 404 through the catch-all.
    let suite = Suite::start().await;
    let (controller, addresses) = suite.serve("httproute-https-listener.yaml").await;
    let address = addresses["same-namespace-with-https-listener"];
    let port = controller.https;
    let table = [
        ("example.org", 200, "infra-backend-v1"),
        ("unknown-example.org", 404, "-"),
        ("second-example.org", 200, "infra-backend-v2"),
    ];
    eventually("the HTTPS listener served", || async {
        https_get(address, port, "example.org") == (200, "infra-backend-v1".to_owned())
    })
    .await;
    for (host, status, backend) in table {
        assert_eq!(
            https_get(address, port, host),
            (status, backend.to_owned()),
            "{host}"
        );
    }
    drop(controller);

    // The same on the shared listen address (no --gateway-addresses): the HTTPS listeners
    // share the HTTPS port with the Ingress servers, the catch-all listener `https` holding
    // its default server.
    let controller = Controller::start(&suite.manifests("httproute-https-listener.yaml")).await;
    let localhost = IpAddr::from([127, 0, 0, 1]);
    let port = controller.https;
    eventually(
        "the HTTPS listener served on the shared address",
        || async {
            https_get(localhost, port, "example.org") == (200, "infra-backend-v1".to_owned())
        },
    )
    .await;
    for (host, status, backend) in table {
        assert_eq!(
            https_get(localhost, port, host),
            (status, backend.to_owned()),
            "{host}, shared"
        );
    }
}

/// HTTPRouteHTTPSListenerDetectMisdirectedRequests (v1.6.1
/// `conformance/tests/httproute-https-listener-detect-misdirected-requests.go`): `(SNI, Host,
/// status, backend)`, 421 where the SNI selected another listener than the Host does.
const MISDIRECTED: [(&str, &str, u16, &str); 15] = [
    ("example.org", "example.org", 200, "infra-backend-v1"),
    ("example.org", "second-example.org", 421, "-"),
    ("example.org", "unknown-example.org", 404, "-"),
    (
        "second-example.org",
        "second-example.org",
        200,
        "infra-backend-v2",
    ),
    ("second-example.org", "example.org", 421, "-"),
    ("second-example.org", "unknown-example.org", 421, "-"),
    (
        "third-example.wildcard.org",
        "third-example.wildcard.org",
        200,
        "infra-backend-v3",
    ),
    (
        "third-example.wildcard.org",
        "fith-example.wildcard.org",
        200,
        "infra-backend-v3",
    ),
    (
        "third-example.wildcard.org",
        "fourth-example.wildcard.org",
        421,
        "-",
    ),
    ("third-example.wildcard.org", "second-example.org", 421, "-"),
    (
        "third-example.wildcard.org",
        "unknown-example.org",
        421,
        "-",
    ),
    (
        "fourth-example.wildcard.org",
        "fourth-example.wildcard.org",
        200,
        "infra-backend-v1",
    ),
    (
        "fourth-example.wildcard.org",
        "fith-example.wildcard.org",
        421,
        "-",
    ),
    (
        "unknown-example.org",
        "example.org",
        200,
        "infra-backend-v1",
    ),
    ("unknown-example.org", "unknown-example.org", 404, "-"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_https_misdirected_requests() {
    if support::ran_elsewhere() {
        return;
    }
    if Command::new("curl").arg("--version").output().is_err() {
        println!("skipped: curl");
        return;
    }
    // S-HN.2 on the suite's HTTPS Gateway, on its own address, then on the shared listen
    // address beside the Ingress servers.
    let file = "httproute-https-listener-detect-misdirected-requests.yaml";
    let path = "/detect-misdirected-requests";
    let suite = Suite::start().await;
    let (controller, addresses) = suite.serve(file).await;
    let own = addresses["same-namespace-with-https-listener"];
    let check = |address: IpAddr, port: u16, what: &str| {
        for (sni, host, status, backend) in MISDIRECTED {
            assert_eq!(
                support::https_get_sni(address, port, sni, host, path),
                (status, backend.to_owned()),
                "SNI {sni}, Host {host}, {what}"
            );
        }
        // Without SNI (a client that connects by address) nothing is misdirected.
        let by_address = address.to_string();
        let answer = support::https_get_sni(address, port, &by_address, "second-example.org", path);
        assert_eq!(answer.0, 200, "no SNI, {what}");
    };
    let port = controller.https;
    eventually("the HTTPS listeners served", || async {
        support::https_get_sni(own, port, "example.org", "example.org", path).0 == 200
    })
    .await;
    check(own, port, "own address");
    drop(controller);

    let controller = Controller::start(&suite.manifests(file)).await;
    let localhost = IpAddr::from([127, 0, 0, 1]);
    let port = controller.https;
    eventually(
        "the HTTPS listeners served on the shared address",
        || async {
            support::https_get_sni(localhost, port, "example.org", "example.org", path).0 == 200
        },
    )
    .await;
    check(localhost, port, "shared address");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateways_share_the_listen_address_with_ingresses() {
    if support::ran_elsewhere() {
        return;
    }
    // Without --gateway-addresses: an Ingress host keeps its name, and a Gateway listener
    // without host name takes the catch-all no Ingress claims.
    let backends = Backends::start(&["ingress-web", "gateway-web"]).await;
    let mut m = String::from(support::CLASS);
    m.push_str(&support::service(
        "e2e",
        "ingress-web",
        &[backends.port("ingress-web")],
    ));
    m.push_str(&support::service(
        "e2e",
        "gateway-web",
        &[backends.port("gateway-web")],
    ));
    m.push_str(&support::ingress(
        "e2e",
        "web",
        "ingress.example.com",
        "",
        None,
        &[("Prefix", "/", "ingress-web")],
    ));
    let _ = write!(
        m,
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n\
         metadata: {{name: {CLASS}}}\nspec: {{controllerName: {}}}\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{name: gw, namespace: e2e}}\n\
         spec: {{gatewayClassName: {CLASS}, listeners: [{{name: http, port: 80, protocol: HTTP}}]}}\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{name: route, namespace: e2e}}\n\
         spec: {{parentRefs: [{{name: gw}}], rules: [{{backendRefs: [{{name: gateway-web, port: 80}}]}}]}}\n",
        ingress_controller::gateway::DEFAULT_CONTROLLER_NAME
    );
    let controller = Controller::start(&m).await;
    eventually("the Gateway's catch-all served", || async {
        controller.get("other.example.com", "/x").await.backend() == "gateway-web"
    })
    .await;
    assert_eq!(
        controller.get("ingress.example.com", "/x").await.backend(),
        "ingress-web"
    );
}

/// `case` sent to `address` on `port`, asking the backend to echo the request's headers.
async fn send_filter(address: IpAddr, port: u16, case: &FilterCase) -> Option<Response> {
    let authority = format!("{address}:{port}");
    let host = if case.host.is_empty() {
        &authority
    } else {
        case.host
    };
    let mut headers = case.headers.to_vec();
    headers.push(("X-Echo-Request-Headers", "1"));
    request_to(
        SocketAddr::new(address, port),
        case.method,
        host,
        case.path,
        &headers,
        "",
    )
    .await
}

/// The values of every `name` header of `headers`, joined with `,` (`None`: none).
fn joined<'a>(headers: impl Iterator<Item = (&'a str, &'a str)>, name: &str) -> Option<String> {
    let values: Vec<&str> = headers
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
        .collect();
    (!values.is_empty()).then(|| values.join(","))
}

/// What is wrong with `response` to `case` sent to `address` (`None`: nothing).
fn filter_mismatch(case: &FilterCase, address: IpAddr, response: &Response) -> Option<String> {
    let mut wrong = Vec::new();
    if response.status != case.status {
        wrong.push(format!("status {}", response.status));
    }
    let backend = response.backend();
    if backend != case.backend.unwrap_or("-") {
        wrong.push(format!("backend {backend}"));
    }
    // The echo: `NAME URI`, then the request's headers, `name: value` a line.
    let mut lines = response.body.lines();
    let uri = lines
        .next()
        .and_then(|l| l.split_once(' '))
        .map(|(_, uri)| uri);
    let seen: Vec<(&str, &str)> = lines.filter_map(|l| l.split_once(": ")).collect();
    if let Some(path) = case.upstream_path
        && uri != Some(path)
    {
        wrong.push(format!("upstream path {uri:?}"));
    }
    if let Some(host) = case.upstream_host {
        let got = joined(seen.iter().copied(), "host");
        if got.as_deref() != Some(host) {
            wrong.push(format!("upstream host {got:?}"));
        }
    }
    for (name, want) in case.seen {
        let got = joined(seen.iter().copied(), name);
        if got.as_deref() != *want {
            wrong.push(format!("upstream {name}: {got:?}"));
        }
    }
    let returned = || {
        response
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
    };
    for (name, want) in case.returned {
        let got = joined(returned(), name);
        if got.as_deref() != *want {
            wrong.push(format!("response {name}: {got:?}"));
        }
    }
    if let Some(location) = case.location {
        let want = location.replace("{host}", &address.to_string());
        let got = joined(returned(), "location");
        if got.as_deref() != Some(want.as_str()) {
            wrong.push(format!("location {got:?}, not {want}"));
        }
    }
    (!wrong.is_empty()).then(|| wrong.join("; "))
}

/// Sends every case of `cases` to Gateway `gateway`'s listener on `listener` (80: nginx's HTTP
/// port, others their own) and checks the answers; the first case waits until the
/// configuration is served.
async fn replay_filters(
    controller: &Controller,
    addresses: &BTreeMap<String, IpAddr>,
    (gateway, listener): (&str, u16),
    cases: &[FilterCase],
) {
    let address = addresses[gateway];
    let port = if listener == 80 {
        controller.http
    } else {
        listener
    };
    if let Some(first) = cases.first() {
        eventually(&format!("{gateway}: {first:?}"), || async {
            send_filter(address, port, first)
                .await
                .is_some_and(|r| filter_mismatch(first, address, &r).is_none())
        })
        .await;
    }
    for case in cases {
        let response = send_filter(address, port, case).await.unwrap();
        if let Some(wrong) = filter_mismatch(case, address, &response) {
            panic!("{gateway}: {case:?}: {wrong}\n{response:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_filters_and_timeouts_through_nginx() {
    if support::ran_elsewhere() {
        return;
    }
    let suite = Suite::start().await;
    // HTTPRouteBackendRequestHeaderModifier replays HTTPRouteRequestHeaderModifier's table on
    // the manifest whose filters are on the backendRef (httproute-request-header-modifier.go).
    let on_backend = (
        "HTTPRouteBackendRequestHeaderModifier",
        "httproute-request-header-modifier-backend.yaml",
        FILTERS[0].2,
        FILTERS[0].3,
        FILTERS[0].4,
    );
    for (test, file, gateway, listener, cases) in FILTERS.into_iter().chain([on_backend]) {
        println!("{test}");
        let (controller, addresses) = suite.serve(file).await;
        let at = (gateway, listener);
        replay_filters(&controller, &addresses, at, cases).await;
        // A CR LF in the decoded path never becomes a header (rendering notes §6.3, §6.4).
        let crlf: Vec<FilterCase> = CRLF
            .iter()
            .filter(|(f, _)| *f == file)
            .map(|(_, case)| *case)
            .collect();
        replay_filters(&controller, &addresses, at, &crlf).await;
    }
}

/// HTTPRouteServiceTypes (`httproute-service-types.go`, v1.6.1): a Service with EndpointSlices
/// written by hand, a headless one with a selector and a headless one with slices by hand, each
/// reached at `/NAME`. The test fills the hand-written slices with infra-backend-v1's Pod
/// addresses and the cluster derives the selector's; here both are slices naming its backend.
/// HTTPRouteListenerPortMatching (`httproute-listener-port-matching.go`): routes bound by
/// parentRef `port` (and `sectionName`) to listeners on 80, 8080 and 8090 of one Gateway.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_service_types_and_listener_ports() {
    if support::ran_elsewhere() {
        return;
    }
    let suite = Suite::start().await;
    let port = suite.backends.port("infra-backend-v1");
    let mut slices = String::new();
    for service in [
        "manual-endpointslices",
        "headless",
        "headless-manual-endpointslices",
    ] {
        let _ = write!(
            slices,
            "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: \
             {service}-e2e, namespace: {INFRA}, labels: {{kubernetes.io/service-name: \
             {service}}}}}\naddressType: IPv4\nports: [{{name: first-port, port: {port}}}]\n\
             endpoints: [{{addresses: ['{}']}}]\n",
            support::backend_ip()
        );
    }
    println!("HTTPRouteServiceTypes");
    let (controller, addresses) = suite
        .serve_with("httproute-service-types.yaml", &slices)
        .await;
    let table: Vec<(Case, Want)> = [
        "/manual-endpointslices",
        "/headless",
        "/headless-manual-endpointslices",
    ]
    .into_iter()
    .map(|path| {
        (
            ("", "GET", path, &[][..], None),
            Want::Backend("infra-backend-v1"),
        )
    })
    .collect();
    replay(&controller, &addresses, "same-namespace", &table).await;
    drop(controller);

    println!("HTTPRouteListenerPortMatching");
    let (controller, addresses) = suite.serve("httproute-listener-port-matching.yaml").await;
    let address = addresses["httproute-listener-port-matching"];
    // `(Host, port: 80 is the controller's HTTP port, want)`.
    let table: [(&str, u16, Want); 5] = [
        ("foo.com", 80, Want::Backend("infra-backend-v1")),
        ("foo.com:8080", 8080, Want::Backend("infra-backend-v2")),
        ("bar.com:8080", 8080, Want::Backend("infra-backend-v2")),
        ("foo.com:8090", 8090, Want::Backend("infra-backend-v3")),
        ("bar.com:8090", 8090, Want::Status(404)),
    ];
    for (host, port, want) in table {
        let port = if port == 80 { controller.http } else { port };
        let to = SocketAddr::new(address, port);
        eventually(&format!("{host}: {want:?}"), || async {
            request_to(to, "GET", host, "/", &[], "")
                .await
                .is_some_and(|r| want.holds(&r))
        })
        .await;
    }
}

/// The requests backend `backend` got whose target begins with `prefix`.
fn seen_by(suite: &Suite, backend: &str, prefix: &str) -> Vec<support::Seen> {
    let seen = suite.backends.seen.lock().unwrap();
    let matching = seen
        .iter()
        .filter(|s| s.backend == backend && s.uri.starts_with(prefix));
    matching.cloned().collect()
}

/// HTTPRouteRequestMirror and HTTPRouteRequestMultipleMirrors (`httproute-request-mirror.go`,
/// `httproute-request-multiple-mirrors.go`, v1.6.1): the primary backend answers, each mirror's
/// backend gets the request (the suite reads its log for the path; here its record, also for
/// the edited headers). HTTPRouteRequestPercentageMirror (`…-percentage-mirror.go`): the share
/// of copies within four standard deviations of 20 %, 25/50 and 35 % (the suite: three).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_request_mirrors() {
    if support::ran_elsewhere() {
        return;
    }
    let suite = Suite::start().await;
    let edited: &[(&str, Option<&str>)] = &[
        ("x-header-add", Some("header-val-1")),
        ("x-header-add-append", Some("append-val-1,header-val-2")),
        ("x-header-set", Some("set-overwrites-values")),
        ("x-header-remove", None),
    ];
    let sent: &[(&str, &str)] = &[
        ("X-Header-Remove", "remove-val"),
        ("X-Header-Add-Append", "append-val-1"),
    ];
    // `(file, path, request headers, mirrors, headers primary and mirrors see)`.
    type MirrorCase<'a> = (
        &'a str,
        &'a str,
        &'a [(&'a str, &'a str)],
        &'a [&'a str],
        &'a [(&'a str, Option<&'a str>)],
    );
    let cases: [MirrorCase; 4] = [
        (
            "httproute-request-mirror.yaml",
            "/mirror",
            &[],
            &["infra-backend-v2"],
            &[],
        ),
        (
            "httproute-request-mirror.yaml",
            "/mirror-and-modify-headers",
            sent,
            &["infra-backend-v2"],
            edited,
        ),
        (
            "httproute-request-multiple-mirrors.yaml",
            "/multi-mirror",
            &[],
            &["infra-backend-v2", "infra-backend-v3"],
            &[],
        ),
        (
            "httproute-request-multiple-mirrors.yaml",
            "/multi-mirror-and-modify-request-headers",
            sent,
            &["infra-backend-v2", "infra-backend-v3"],
            edited,
        ),
    ];
    let mut served = None;
    for (index, (file, path, headers, mirrors, want)) in cases.into_iter().enumerate() {
        if served.as_ref().is_none_or(|(f, _, _)| *f != file) {
            println!("{file}");
            let (controller, addresses) = suite.serve(file).await;
            served = Some((file, controller, addresses));
        }
        let Some((_, controller, addresses)) = &served else {
            unreachable!()
        };
        let to = SocketAddr::new(addresses["same-namespace"], controller.http);
        let target = format!("{path}?request-id={index}");
        let authority = to.to_string();
        eventually(&format!("{target} from infra-backend-v1"), || async {
            request_to(to, "GET", &authority, &target, headers, "")
                .await
                .is_some_and(|r| r.status == 200 && r.backend() == "infra-backend-v1")
        })
        .await;
        for backend in ["infra-backend-v1"].iter().chain(mirrors.iter()) {
            eventually(&format!("{backend} gets {target}"), || async {
                !seen_by(&suite, backend, &target).is_empty()
            })
            .await;
            let request = seen_by(&suite, backend, &target).remove(0);
            for (name, value) in want {
                let got = request.headers.iter().find(|(n, _)| n == name);
                let got = got.map(|(_, v)| v.as_str());
                assert_eq!(got, *value, "{backend} {target}: {name}");
            }
        }
    }
    drop(served);

    println!("httproute-request-percentage-mirror.yaml");
    let (controller, addresses) = suite
        .serve("httproute-request-percentage-mirror.yaml")
        .await;
    let to = SocketAddr::new(addresses["same-namespace"], controller.http);
    let authority = to.to_string();
    for (path, percent) in [
        ("/percent-mirror", 20.0),
        ("/percent-mirror-fraction", 50.0),
        ("/percent-mirror-and-modify-headers", 35.0),
    ] {
        let sent = 300.0;
        let target = format!("{path}?batch=1");
        eventually(&format!("{path} served"), || async {
            request_to(to, "GET", &authority, &format!("{path}?probe"), &[], "")
                .await
                .is_some_and(|r| r.backend() == "infra-backend-v1")
        })
        .await;
        for _ in 0..300 {
            let response = request_to(to, "GET", &authority, &target, &[], "")
                .await
                .unwrap();
            assert_eq!(response.backend(), "infra-backend-v1");
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let copies = seen_by(&suite, "infra-backend-v2", &target).len() as f64;
        let share: f64 = percent / 100.0;
        let (mean, deviation) = (sent * share, (sent * share * (1.0 - share)).sqrt());
        assert!(
            (copies - mean).abs() <= 4.0 * deviation,
            "{path}: {copies} copies of {sent} at {percent} %"
        );
    }
}

/// HTTPRouteRequestHeaderModifierBackendWeights
/// (`httproute-request-header-modifier-backend-weights.go`, v1.6.1): of 100 requests split
/// 10/10 between two backends, each carries one `Backend` header, naming the backend it
/// reached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_backend_header_modifier_weights() {
    if support::ran_elsewhere() {
        return;
    }
    let suite = Suite::start().await;
    let file = "httproute-request-header-modifier-backend-weights.yaml";
    let (controller, addresses) = suite.serve(file).await;
    let to = SocketAddr::new(addresses["same-namespace"], controller.http);
    let authority = to.to_string();
    eventually("the route served", || async {
        request_to(to, "GET", &authority, "/?probe", &[], "")
            .await
            .is_some_and(|r| r.status == 200)
    })
    .await;
    for _ in 0..100 {
        let response = request_to(to, "GET", &authority, "/?weights", &[], "").await;
        assert_eq!(response.unwrap().status, 200);
    }
    let mut reached = BTreeMap::new();
    for request in seen_by(&suite, "infra-backend-v1", "/?weights")
        .into_iter()
        .chain(seen_by(&suite, "infra-backend-v2", "/?weights"))
    {
        let named: Vec<&str> = request
            .headers
            .iter()
            .filter(|(n, _)| n == "backend")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(named, [request.backend.as_str()], "{request:?}");
        *reached.entry(request.backend.clone()).or_insert(0) += 1;
    }
    assert_eq!(reached.values().sum::<i32>(), 100, "{reached:?}");
    assert_eq!(reached.len(), 2, "{reached:?}");
}
