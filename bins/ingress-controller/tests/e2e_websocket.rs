//! A WebSocket upgrade through the controller's nginx, as ingress-nginx passes it: the backend
//! sees `Upgrade` and `Connection: upgrade` (and the forwarded headers and a request id), answers
//! 101, and bytes then flow both ways on the upgraded connection. The same through an HTTPRoute
//! to a Service port with `appProtocol: kubernetes.io/ws` (HTTPRouteBackendProtocolWebSocket).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::sync::{Arc, Mutex};

use support::{CLASS, Controller, backend_ip, eventually, ingress, service};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Reads up to the end of an HTTP head (`\r\n\r\n`).
async fn head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.unwrap() == 0 {
            break;
        }
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// A backend that answers 101 to a WebSocket upgrade and then echoes, 400 otherwise; the
/// request heads it saw are kept, lower-cased.
async fn echo_backend() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind((backend_ip(), 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let heads = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            let heads = Arc::clone(&heads);
            tokio::spawn(async move {
                let request = head(&mut stream).await.to_ascii_lowercase();
                heads.lock().unwrap().push(request.clone());
                if !(request.contains("\r\nupgrade: websocket\r\n")
                    && request.contains("\r\nconnection: upgrade\r\n"))
                {
                    let _ = stream
                        .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                        .await;
                    return;
                }
                stream
                    .write_all(
                        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                          Connection: Upgrade\r\n\r\n",
                    )
                    .await
                    .unwrap();
                let mut buffer = [0u8; 256];
                loop {
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            if stream.write_all(&buffer[..n]).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    (port, seen)
}

/// Opens a WebSocket to `ws.example.com/chat` through the controller's nginx (waiting until
/// it is served) and checks that messages come back.
async fn upgrade_and_echo(controller: &Controller) {
    let upgrade = "GET /chat HTTP/1.1\r\nHost: ws.example.com\r\nUpgrade: websocket\r\n\
                   Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
                   Sec-WebSocket-Version: 13\r\n\r\n";
    let connection = Arc::new(tokio::sync::Mutex::new(None));
    eventually("a 101 through nginx", || {
        let connection = Arc::clone(&connection);
        async move {
            let Ok(mut stream) = TcpStream::connect(("127.0.0.1", controller.http)).await else {
                return false;
            };
            if stream.write_all(upgrade.as_bytes()).await.is_err() {
                return false;
            }
            let answer = head(&mut stream).await;
            if !answer.starts_with("HTTP/1.1 101") {
                return false;
            }
            *connection.lock().await = Some(stream);
            true
        }
    })
    .await;
    let mut stream = connection.lock().await.take().unwrap();
    for message in ["ping", "a longer message, twice", "a longer message, twice"] {
        stream.write_all(message.as_bytes()).await.unwrap();
        let mut echoed = vec![0u8; message.len()];
        tokio::time::timeout(
            std::time::Duration::from_secs(5),
            stream.read_exact(&mut echoed),
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(echoed, message.as_bytes());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_upgrade_passes_through_and_echoes() {
    if support::ran_elsewhere() {
        return;
    }
    let (port, seen) = echo_backend().await;
    let mut m = String::from(CLASS);
    m.push_str(&service("ws", "echo", &[port]));
    m.push_str(&ingress(
        "ws",
        "chat",
        "ws.example.com",
        "",
        None,
        &[("Prefix", "/", "echo")],
    ));
    let controller = Controller::start(&m).await;
    upgrade_and_echo(&controller).await;

    // The headers ingress-nginx adds, as the backend saw them on the upgrade.
    let heads = seen.lock().unwrap().clone();
    let request = heads.last().unwrap();
    for header in [
        "\r\nx-forwarded-proto: http\r\n",
        "\r\nx-forwarded-scheme: http\r\n",
        "\r\nx-forwarded-host: ws.example.com\r\n",
        &format!("\r\nx-forwarded-port: {}\r\n", controller.http),
        "\r\nx-forwarded-for: 127.0.0.1\r\n",
        "\r\nx-real-ip: 127.0.0.1\r\n",
        "\r\nx-request-id: ",
    ] {
        assert!(request.contains(header), "no {header:?} in {request}");
    }
}

/// HTTPRouteBackendProtocolWebSocket (gateway-api v1.6.1,
/// `conformance/tests/httproute-backend-protocol-websocket.go`): a route to a Service port
/// whose `appProtocol` is `kubernetes.io/ws` carries a WebSocket (S-BR.1 step 6). The suite
/// checks that messages come back; the backend here also checks the upgrade headers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_route_to_a_ws_port_upgrades_and_echoes() {
    if support::ran_elsewhere() {
        return;
    }
    let (port, seen) = echo_backend().await;
    let m = format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n\
         metadata: {{name: ws}}\nspec: {{controllerName: {controller}}}\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{name: gw, namespace: ws}}\nspec: {{gatewayClassName: ws, listeners: \
         [{{name: http, port: 80, protocol: HTTP}}]}}\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n\
         metadata: {{name: chat, namespace: ws}}\nspec: {{parentRefs: [{{name: gw}}], \
         hostnames: [ws.example.com], rules: [{{backendRefs: [{{name: echo, port: 8082}}]}}]}}\n\
         ---\napiVersion: v1\nkind: Service\nmetadata: {{name: echo, namespace: ws}}\n\
         spec: {{ports: [{{name: third-port, port: 8082, appProtocol: kubernetes.io/ws}}]}}\n\
         ---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: echo-0, \
         namespace: ws, labels: {{kubernetes.io/service-name: echo}}}}\naddressType: IPv4\n\
         ports: [{{name: third-port, port: {port}}}]\nendpoints: [{{addresses: ['{ip}']}}]\n",
        controller = ingress_controller::gateway::DEFAULT_CONTROLLER_NAME,
        ip = backend_ip(),
    );
    let controller = Controller::start(&m).await;
    upgrade_and_echo(&controller).await;
    let heads = seen.lock().unwrap().clone();
    let request = heads.last().unwrap();
    assert!(request.starts_with("get /chat http/1.1\r\n"), "{request}");
    assert!(
        request.contains("\r\nx-forwarded-host: ws.example.com\r\n"),
        "{request}"
    );
}
