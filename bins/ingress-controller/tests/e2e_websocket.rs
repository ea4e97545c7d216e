//! A WebSocket upgrade through the controller's nginx, as ingress-nginx passes it: the backend
//! sees `Upgrade` and `Connection: upgrade` (and the forwarded headers and a request id), answers
//! 101, and bytes then flow both ways on the upgraded connection.
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
