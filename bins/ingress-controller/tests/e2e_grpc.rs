//! A unary gRPC call through the controller's nginx, as ingress-nginx carries it with
//! `backend-protocol: GRPC`: HTTP/2 over TLS from the client (curl) to nginx, cleartext HTTP/2
//! (`grpc_pass`) from nginx to a gRPC server written here with the `h2` crate (gRPC's framing
//! by hand: a message is a flag byte, a big-endian length and the bytes). The reply and its
//! `grpc-status: 0` trailer come back, and the server sees the headers ingress-nginx sets.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, Response};
use support::{CLASS, Controller, backend_ip, eventually, ingress, service};
use tokio::net::TcpListener;

const HOST: &str = "tls.example.com";
/// The method called: package `echo`, service `Echo`, method `Say`.
const METHOD: &str = "/echo.Echo/Say";

/// `payload` as one uncompressed gRPC message.
fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0];
    out.extend_from_slice(&u32::try_from(payload.len()).unwrap().to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// What the server saw of one call: its path, its headers, its body.
type Seen = Arc<Mutex<Vec<(String, HeaderMap, Vec<u8>)>>>;

/// A gRPC server over cleartext HTTP/2 whose one method answers the message `hello, X` to the
/// message `X` (any other path: `grpc-status: 12`, unimplemented).
async fn grpc_server() -> (u16, Seen) {
    let listener = TcpListener::bind((backend_ip(), 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Seen = Arc::default();
    let calls = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let calls = Arc::clone(&calls);
            tokio::spawn(async move {
                let Ok(mut connection) = h2::server::handshake(stream).await else {
                    return;
                };
                while let Some(Ok((request, respond))) = connection.accept().await {
                    tokio::spawn(call(request, respond, Arc::clone(&calls)));
                }
            });
        }
    });
    (port, seen)
}

async fn call(
    request: axum::http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    calls: Seen,
) {
    let (parts, mut body) = request.into_parts();
    let mut received = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        let _ = body.flow_control().release_capacity(chunk.len());
        received.extend_from_slice(&chunk);
    }
    let path = parts.uri.path().to_owned();
    calls
        .lock()
        .unwrap()
        .push((path.clone(), parts.headers, received.clone()));
    let response = Response::builder()
        .status(200)
        .header("content-type", "application/grpc")
        .body(())
        .unwrap();
    let mut send = respond.send_response(response, false).unwrap();
    let mut trailers = HeaderMap::new();
    if path == METHOD && received.len() >= 5 && received[0] == 0 {
        let mut reply = b"hello, ".to_vec();
        reply.extend_from_slice(&received[5..]);
        send.send_data(Bytes::from(frame(&reply)), false).unwrap();
        trailers.insert("grpc-status", HeaderValue::from_static("0"));
    } else {
        trailers.insert("grpc-status", HeaderValue::from_static("12"));
    }
    send.send_trailers(trailers).unwrap();
}

/// What curl got back from one call: the head and trailer lines it dumped, and the body.
struct Reply {
    headers: String,
    body: Vec<u8>,
}

/// A unary call with curl (HTTP/2 over TLS, the fixture certificate trusted).
fn curl_call(dir: &std::path::Path, port: u16, message: &[u8]) -> Option<Reply> {
    let request = dir.join("request.bin");
    let head = dir.join("head.txt");
    let body = dir.join("body.bin");
    std::fs::write(&request, frame(message)).unwrap();
    let ca = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls.crt");
    let status = Command::new("curl")
        .args(["-s", "--http2", "--max-time", "10", "--cacert", ca])
        .arg("--resolve")
        .arg(format!("{HOST}:{port}:127.0.0.1"))
        .args(["-H", "content-type: application/grpc", "-H", "te: trailers"])
        .arg("--data-binary")
        .arg(format!("@{}", request.display()))
        .arg("-D")
        .arg(&head)
        .arg("-o")
        .arg(&body)
        .arg(format!("https://{HOST}:{port}{METHOD}"))
        .status()
        .unwrap();
    status.success().then(|| Reply {
        headers: std::fs::read_to_string(&head).unwrap().to_ascii_lowercase(),
        body: std::fs::read(&body).unwrap(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unary_grpc_call_passes_through_over_http2() {
    if support::ran_elsewhere() {
        return;
    }
    if Command::new("curl").arg("--version").output().is_err() {
        println!("skipped: curl");
        return;
    }
    let (port, seen) = grpc_server().await;
    let mut m = String::from(CLASS);
    m.push_str(&service("e2e", "echo", &[port]));
    m.push_str(&support::tls_secret(
        "e2e",
        "tls",
        &support::fixture("tls.crt"),
        &support::fixture("tls.key"),
    ));
    m.push_str(&support::with_tls(
        &ingress(
            "e2e",
            "grpc",
            HOST,
            "nginx.ingress.kubernetes.io/backend-protocol: GRPC",
            None,
            &[("Prefix", "/", "echo")],
        ),
        HOST,
        "tls",
    ));
    let controller = Controller::start(&m).await;
    let dir = tempfile::tempdir().unwrap();
    let https = controller.https;
    let reply = Arc::new(Mutex::new(None));
    eventually("a gRPC reply through nginx", || {
        let reply = Arc::clone(&reply);
        let dir = dir.path().to_owned();
        async move {
            let answer = tokio::task::spawn_blocking(move || curl_call(&dir, https, b"world"))
                .await
                .unwrap();
            let done = answer
                .as_ref()
                .is_some_and(|a| a.headers.starts_with("http/2 200"));
            *reply.lock().unwrap() = answer;
            done
        }
    })
    .await;
    let reply = reply.lock().unwrap().take().unwrap();
    assert_eq!(reply.body, frame(b"hello, world"), "{}", reply.headers);
    assert!(
        reply.headers.contains("content-type: application/grpc"),
        "{}",
        reply.headers
    );
    // The trailer, after the body (curl dumps trailers with the head).
    assert!(
        reply.headers.contains("grpc-status: 0"),
        "{}",
        reply.headers
    );

    // What the server saw: the method, the message, and ingress-nginx's headers.
    let calls = seen.lock().unwrap().clone();
    let (path, headers, body) = calls.last().unwrap();
    assert_eq!(path, METHOD);
    assert_eq!(body, &frame(b"world"));
    let header = |name: &str| {
        headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    assert_eq!(header("content-type"), "application/grpc");
    assert_eq!(header("te"), "trailers");
    // nginx's gRPC module sends the host as a `host` header (HTTP/2 allows either): the
    // client's own, port included (ingress-nginx's `$best_http_host`).
    let authority = format!("{HOST}:{https}");
    assert_eq!(header("host"), authority, "{headers:?}");
    assert_eq!(header("x-forwarded-for"), "127.0.0.1");
    assert_eq!(header("x-real-ip"), "127.0.0.1");
    assert_eq!(header("x-forwarded-proto"), "https");
    assert_eq!(header("x-forwarded-host"), authority);
    assert_eq!(header("x-forwarded-port"), "443");
    assert_eq!(header("x-request-id").len(), 32, "{headers:?}");
    assert!(headers.get("connection").is_none());
    assert!(headers.get("upgrade").is_none());
}
