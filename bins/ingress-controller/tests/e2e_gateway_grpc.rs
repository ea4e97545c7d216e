//! The Gateway API conformance suite's GRPCRoute tests end to end (issue #32, profile
//! GATEWAY-GRPC): the suite's base manifests and a test's manifests (`testdata/gateway-api/`,
//! gateway-api v1.6.1) read with `--manifests`, each Gateway on an address of its own
//! (`--gateway-addresses`), so that its plaintext port serves gRPC alone and nginx speaks h2c
//! there (S-GR.5). The suite's gRPC Services are mapped to local gRPC servers written with the
//! `h2` crate, which answer every call with their name in an `x-backend` header and
//! `grpc-status: 0`; the tables (`support/gateway_grpc_tables.rs`) are sent by an `h2` client
//! with prior knowledge, and what no route matches must come back as nginx's
//! `grpc-status: 12` (S-GR.3). The routes' statuses are read from their status files, and
//! GRPCRouteWeight's split is counted.
//!
//! On the address the Ingresses share, a GRPCRoute is served on an HTTPS listener (ALPN h2,
//! curl as the client) and refused on the plaintext port 80, which is the Ingresses' HTTP/1
//! port (`UnsupportedProtocol`); a rule without a usable backend answers `grpc-status: 14`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

#[path = "support/gateway_grpc_tables.rs"]
mod grpc_tables;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::IpAddr;
use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, Response};
use grpc_tables::{GRPC, GrpcCase};
use ingress_controller::class::Selection;
use ingress_controller::gateway::addresses::Pool;
use ingress_controller::gateway::plan::Served;
use ingress_controller::model;
use ingress_controller::objects::Objects;
use support::{Controller, backend_ip, eventually};
use tokio::net::TcpListener;

const INFRA: &str = "gateway-conformance-infra";
const CLASS: &str = support::CONFORMANCE_CLASS;
const POOL: &str = "127.0.1.0/24";

/// The suite's gRPC Services, each mapped to a local server of the same name.
const BACKENDS: [&str; 3] = [
    "grpc-infra-backend-v1",
    "grpc-infra-backend-v2",
    "grpc-infra-backend-v3",
];

/// What the servers saw: `(backend, path, headers)` of each call.
type Seen = Arc<Mutex<Vec<(String, String, HeaderMap)>>>;

/// A gRPC server over cleartext HTTP/2 named `name`: every call gets an empty message, its
/// name in `x-backend`, and `grpc-status: 0`.
async fn grpc_server(name: &'static str, seen: Seen) -> u16 {
    let listener = TcpListener::bind((backend_ip(), 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let seen = Arc::clone(&seen);
            tokio::spawn(async move {
                let Ok(mut connection) = h2::server::handshake(stream).await else {
                    return;
                };
                while let Some(Ok((request, respond))) = connection.accept().await {
                    // Each call on its own task: the connection must go on being polled.
                    tokio::spawn(answer(name, request, respond, Arc::clone(&seen)));
                }
            });
        }
    });
    port
}

/// One call to backend `name`: its body read, then the answer.
async fn answer(
    name: &'static str,
    request: axum::http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    seen: Seen,
) {
    let (parts, mut body) = request.into_parts();
    while let Some(Ok(chunk)) = body.data().await {
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    let path = parts.uri.path().to_owned();
    seen.lock()
        .unwrap()
        .push((name.to_owned(), path, parts.headers));
    let response = Response::builder()
        .status(200)
        .header("content-type", "application/grpc")
        .header("x-backend", name)
        .body(())
        .unwrap();
    let Ok(mut send) = respond.send_response(response, false) else {
        return;
    };
    let _ = send.send_data(Bytes::from_static(&[0, 0, 0, 0, 0]), false);
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    let _ = send.send_trailers(trailers);
}

/// The manifests of `file`: the GatewayClass the suite creates, the base manifests, the
/// test's, and an EndpointSlice per gRPC Service naming its local server.
fn manifests(file: &str, ports: &BTreeMap<&str, u16>) -> String {
    let mut out = support::conformance_manifests(file);
    for (name, port) in ports {
        let _ = write!(
            out,
            "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: \
             {name}-e2e, namespace: {INFRA}, labels: {{kubernetes.io/service-name: {name}}}}}\n\
             addressType: IPv4\nports: [{{port: {port}}}]\nendpoints: [{{addresses: ['{}']}}]\n",
            backend_ip()
        );
    }
    out
}

/// The address the pool gives Gateway `gateway` of the infra namespace, computed as the
/// controller does, from the objects alone.
fn address_of(manifests: &str, gateway: &str) -> IpAddr {
    let mut objects = Objects::default();
    objects.add_yaml(manifests).unwrap();
    let built = model::build(&objects, &Selection::default());
    let pool: Pool = POOL.parse().unwrap();
    let served = built.gateway.addresses(Some(&pool));
    let key = cluster_state::ObjectRef::new(INFRA, gateway);
    match served.get(&key) {
        Some(Served::Own(address)) => *address,
        other => panic!("{gateway}: {other:?}"),
    }
}

/// What a call got: the HTTP status, the head's headers and the trailers (empty when the
/// head ended the stream).
struct Answer {
    status: u16,
    headers: HeaderMap,
    trailers: HeaderMap,
}

impl Answer {
    /// `name` from the trailers, else from the head (a trailers-only answer).
    fn grpc(&self, name: &str) -> Option<&str> {
        let value = self.trailers.get(name).or_else(|| self.headers.get(name));
        value.and_then(|v| v.to_str().ok())
    }
}

/// One unary call (an empty message) over HTTP/2 with prior knowledge, as a gRPC client makes
/// it: `:authority` the case's (the address when it names none), its metadata as headers.
/// A gRPC client keeps a complete answer when the server then resets the rest of the request
/// with `NO_ERROR` (RFC 9113 §8.1), as nginx does when it answers before reading the body;
/// the `h2` crate does too (curl does not).
async fn call(address: IpAddr, port: u16, case: &GrpcCase) -> Option<Answer> {
    let (authority, path, metadata, _) = *case;
    let tcp = tokio::net::TcpStream::connect((address, port)).await.ok()?;
    let (client, connection) = h2::client::handshake(tcp).await.ok()?;
    tokio::spawn(connection);
    let mut client = client.ready().await.ok()?;
    let authority = if authority.is_empty() {
        format!("{address}:{port}")
    } else {
        authority.to_owned()
    };
    let mut request = axum::http::Request::builder()
        .method("POST")
        .uri(format!("http://{authority}{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    for (name, value) in metadata {
        request = request.header(*name, *value);
    }
    let (response, mut send) = client.send_request(request.body(()).unwrap(), false).ok()?;
    // The server may have answered already: a failed send is no failure of the call.
    let _ = send.send_data(Bytes::from_static(&[0, 0, 0, 0, 0]), true);
    let response = tokio::time::timeout(std::time::Duration::from_secs(10), response)
        .await
        .ok()?
        .ok()?;
    let (parts, mut body) = response.into_parts();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.ok()?;
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    let trailers = body.trailers().await.ok()?.unwrap_or_default();
    Some(Answer {
        status: parts.status.as_u16(),
        headers: parts.headers,
        trailers,
    })
}

/// Whether `answer` is the one `case` wants: its backend with `grpc-status: 0`, or nginx's
/// `grpc-status: 12`; HTTP 200 with `application/grpc` either way.
fn holds(case: &GrpcCase, answer: &Answer) -> bool {
    let content_type = answer.headers.get("content-type");
    let grpc = answer.status == 200 && content_type.is_some_and(|v| v == "application/grpc");
    let backend = answer
        .headers
        .get("x-backend")
        .and_then(|v| v.to_str().ok());
    grpc && match case.3 {
        Some(wanted) => backend == Some(wanted) && answer.grpc("grpc-status") == Some("0"),
        None => backend.is_none() && answer.grpc("grpc-status") == Some("12"),
    }
}

/// The status file of GRPCRoute `name` of the infra namespace.
fn route_status(c: &Controller, name: &str) -> String {
    let path = c
        .manifests_dir()
        .join(format!(".status/grpcroutes/{INFRA}/{name}.yaml"));
    std::fs::read_to_string(path).unwrap_or_default()
}

/// A controller serving `file`'s objects, the manifests, and the address of `gateway`.
async fn serve(
    file: &str,
    gateway: &str,
    ports: &BTreeMap<&str, u16>,
) -> (Controller, String, IpAddr) {
    let manifests = manifests(file, ports);
    let address = address_of(&manifests, gateway);
    let extra = [
        "--gateway-addresses".to_owned(),
        POOL.to_owned(),
        "--publish-status-address=192.0.2.10".to_owned(),
    ];
    let controller = Controller::start_with(&manifests, &extra).await;
    (controller, manifests, address)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_grpc_tables_through_nginx() {
    if support::ran_elsewhere() {
        return;
    }
    let seen: Seen = Arc::default();
    let mut ports = BTreeMap::new();
    for name in BACKENDS {
        ports.insert(name, grpc_server(name, Arc::clone(&seen)).await);
    }
    for (test, file, gateway, cases) in GRPC {
        let (controller, manifests, address) = serve(file, gateway, &ports).await;
        let port = controller.http;
        let Some(first) = cases.first() else {
            continue;
        };
        eventually(&format!("{test}: {first:?}"), || async move {
            call(address, port, first)
                .await
                .is_some_and(|a| holds(first, &a))
        })
        .await;
        for case in cases {
            let answer = call(address, port, case).await.unwrap();
            assert!(
                holds(case, &answer),
                "{test}: {case:?} got {} {:?} {:?}",
                answer.status,
                answer.headers,
                answer.trailers
            );
        }
        // The routes' statuses: accepted, references resolved.
        let objects = {
            let mut objects = Objects::default();
            objects.add_yaml(&manifests).unwrap();
            objects
        };
        for key in objects.grpc_routes.keys() {
            eventually(&format!("{test}: {key} status"), || async {
                let text = route_status(&controller, &key.name);
                text.contains("reason: Accepted") && text.contains("reason: ResolvedRefs")
            })
            .await;
            let text = route_status(&controller, &key.name);
            assert!(!text.contains("status: \"False\""), "{text}");
        }
    }
    // GRPCRouteWeight: 70/30/0 by the Lua balancer (the suite's own check is a tolerance
    // around each weight; here ±10 % of 200 calls).
    let (controller, _, address) = serve("grpcroute-weight.yaml", "same-namespace", &ports).await;
    let port = controller.http;
    let case: GrpcCase = ("", grpc_tables::ECHO, &[], None);
    eventually("GRPCRouteWeight: a call answered", || async {
        call(address, port, &case)
            .await
            .is_some_and(|a| a.grpc("grpc-status") == Some("0"))
    })
    .await;
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    for _ in 0..200 {
        let answer = call(address, port, &case).await.unwrap();
        let backend = answer.headers.get("x-backend").unwrap().to_str().unwrap();
        *counts.entry(backend.to_owned()).or_default() += 1;
    }
    let v1 = counts
        .get("grpc-infra-backend-v1")
        .copied()
        .unwrap_or_default();
    let v2 = counts
        .get("grpc-infra-backend-v2")
        .copied()
        .unwrap_or_default();
    assert_eq!(v1 + v2, 200, "{counts:?}");
    assert!((120..=160).contains(&v1), "{counts:?}");

    // nginx passed the method path and the suite's metadata on to the backends.
    let calls = seen.lock().unwrap().clone();
    let versioned = calls.iter().find(|(_, _, headers)| {
        headers.get("version").is_some_and(|v| v == "two") && headers.get("color").is_some()
    });
    let (_, path, headers) = versioned.unwrap();
    assert_eq!(path, grpc_tables::ECHO);
    assert_eq!(headers.get("te").unwrap(), "trailers");
    assert!(headers.get("connection").is_none());
}

const TLS_HOST: &str = "tls.example.com";

/// The objects of the shared-address test: a Gateway with a plaintext and an HTTPS listener,
/// GRPCRoute `echo` on both (method `Say` to the local server, `Broken` to a Service that does
/// not exist), GRPCRoute `plain` on the plaintext one only.
fn shared_manifests(port: u16) -> String {
    let mut m = format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n\
         metadata: {{name: {CLASS}}}\nspec: {{controllerName: {}}}\n",
        ingress_controller::gateway::DEFAULT_CONTROLLER_NAME
    );
    m.push_str(&support::service("e2e", "echo", &[port]));
    m.push_str(&support::tls_secret(
        "e2e",
        "tls",
        &support::fixture("tls.crt"),
        &support::fixture("tls.key"),
    ));
    let _ = write!(
        m,
        "---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: gw, namespace: e2e}}
spec:
  gatewayClassName: {CLASS}
  listeners:
    - {{name: http, port: 80, protocol: HTTP}}
    - name: https
      port: 443
      protocol: HTTPS
      hostname: {TLS_HOST}
      tls: {{mode: Terminate, certificateRefs: [{{name: tls}}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {{name: echo, namespace: e2e}}
spec:
  parentRefs: [{{name: gw}}]
  rules:
    - matches: [{{method: {{service: echo.Echo, method: Say}}}}]
      backendRefs: [{{name: echo, port: 80}}]
    - matches: [{{method: {{service: echo.Echo, method: Broken}}}}]
      backendRefs: [{{name: missing, port: 80}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {{name: plain, namespace: e2e}}
spec:
  parentRefs: [{{name: gw, sectionName: http}}]
  rules: [{{backendRefs: [{{name: echo, port: 80}}]}}]
"
    );
    m
}

/// A call with curl over TLS (ALPN h2, the fixture certificate trusted) to `method`: the head
/// and trailer lines, lower case. With `message`, an empty message is sent; without, no body
/// (curl reports an error when nginx answers before reading a body, which gRPC clients accept,
/// RFC 9113 §8.1).
fn curl_tls(port: u16, method: &str, message: bool) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let request = dir.path().join("request.bin");
    let head = dir.path().join("head.txt");
    std::fs::write(&request, [0, 0, 0, 0, 0]).unwrap();
    let ca = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls.crt");
    let mut command = Command::new("curl");
    command
        .args(["-s", "--http2", "--max-time", "10", "--cacert", ca])
        .arg("--resolve")
        .arg(format!("{TLS_HOST}:{port}:127.0.0.1"))
        .args(["-H", "content-type: application/grpc", "-H", "te: trailers"]);
    if message {
        command
            .arg("--data-binary")
            .arg(format!("@{}", request.display()));
    } else {
        command.args(["-X", "POST"]);
    }
    let status = command
        .arg("-D")
        .arg(&head)
        .args(["-o", "/dev/null"])
        .arg(format!("https://{TLS_HOST}:{port}{method}"))
        .status()
        .unwrap();
    status
        .success()
        .then(|| std::fs::read_to_string(&head).unwrap().to_ascii_lowercase())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_over_tls_beside_the_ingresses() {
    if support::ran_elsewhere() {
        return;
    }
    if Command::new("curl").arg("--version").output().is_err() {
        println!("skipped: curl");
        return;
    }
    let port = grpc_server("echo", Seen::default()).await;
    let extra = ["--publish-status-address=192.0.2.10".to_owned()];
    let controller = Controller::start_with(&shared_manifests(port), &extra).await;
    let https = controller.https;
    eventually("a gRPC call over TLS", || async move {
        let head = tokio::task::spawn_blocking(move || curl_tls(https, "/echo.Echo/Say", true))
            .await
            .unwrap();
        head.is_some_and(|h| h.contains("x-backend: echo") && h.contains("grpc-status: 0"))
    })
    .await;
    for (method, status) in [("/echo.Echo/Other", "12"), ("/echo.Echo/Broken", "14")] {
        let head = tokio::task::spawn_blocking(move || curl_tls(https, method, false))
            .await
            .unwrap()
            .unwrap();
        assert!(head.starts_with("http/2 200"), "{method}: {head}");
        assert!(head.contains("content-type: application/grpc"), "{head}");
        assert!(
            head.contains(&format!("grpc-status: {status}")),
            "{method}: {head}"
        );
    }
    // Port 80 is the Ingresses' HTTP/1 port here: `plain` is refused, `echo` is served on
    // HTTPS alone, and the plaintext port still speaks HTTP/1.
    let file = |name: &str| {
        let path = controller
            .manifests_dir()
            .join(format!(".status/grpcroutes/e2e/{name}.yaml"));
        std::fs::read_to_string(path).unwrap_or_default()
    };
    eventually("the GRPCRoute statuses", || async {
        file("plain").contains("UnsupportedProtocol") && file("echo").contains("ResolvedRefs")
    })
    .await;
    assert!(file("plain").contains("nginx 1.22 cannot serve HTTP/1.1 and gRPC"));
    assert!(
        file("echo").contains("reason: Accepted"),
        "{}",
        file("echo")
    );
    let http1 = controller.get("example.com", "/").await;
    assert_eq!(http1.status, 404);
}
