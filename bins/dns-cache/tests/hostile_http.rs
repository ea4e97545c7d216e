//! The HTTP endpoints under a slowloris crowd (issue #28): more connections than the cap,
//! each sending its request head a byte at a time. The head deadline closes them, and a
//! real `GET /health` is answered meanwhile, after a bounded wait.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{ErrorKind, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use dns_cache::metrics::Metrics;
use dns_cache::server::http::{Endpoints, HttpState, MAX_CONNECTIONS, router, serve};

/// `GET /health` on a new connection; the status line if a reply came within `wait`.
fn get_health(addr: SocketAddr, wait: Duration) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&addr, wait).ok()?;
    stream.set_read_timeout(Some(wait)).unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    let text = String::from_utf8_lossy(&reply);
    text.lines().next().map(str::to_owned)
}

#[test]
fn a_slowloris_crowd_cannot_hold_the_health_endpoint() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let state = Arc::new(HttpState {
        shutting_down: AtomicBool::new(false),
        metrics: Arc::new(Metrics::new()),
        source_check: None,
        ready_checks: Default::default(),
    });
    let endpoints = Endpoints {
        health: true,
        ..Endpoints::default()
    };
    let server = runtime.spawn(serve(listener, router(endpoints, state)));

    let stop = Arc::new(AtomicBool::new(false));
    let closed = Arc::new(AtomicUsize::new(0));
    let crowd: Vec<_> = (0..MAX_CONNECTIONS + 16)
        .map(|_| {
            let stop = Arc::clone(&stop);
            let closed = Arc::clone(&closed);
            std::thread::spawn(move || {
                let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
                else {
                    return;
                };
                stream
                    .set_read_timeout(Some(Duration::from_millis(500)))
                    .unwrap();
                let head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
                let mut buf = [0u8; 512];
                for byte in head {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    if stream.write_all(&[*byte]).is_err() {
                        closed.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    // Waits 500 ms, and sees an EOF or reset at once.
                    match stream.read(&mut buf) {
                        Ok(_) => {
                            closed.fetch_add(1, Ordering::Relaxed);
                            return;
                        }
                        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                        Err(_) => {
                            closed.fetch_add(1, Ordering::Relaxed);
                            return;
                        }
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    // The crowd holds every slot now; the head deadline (5 s) frees them.
    let start = Instant::now();
    let status = get_health(addr, Duration::from_secs(20));
    assert_eq!(status.as_deref(), Some("HTTP/1.1 200 OK"));
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "answered after {:?}",
        start.elapsed()
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    while closed.load(Ordering::Relaxed) < MAX_CONNECTIONS && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::Relaxed);
    for client in crowd {
        client.join().unwrap();
    }
    assert!(
        closed.load(Ordering::Relaxed) >= MAX_CONNECTIONS,
        "only {} slow connections closed",
        closed.load(Ordering::Relaxed)
    );
    server.abort();
}
