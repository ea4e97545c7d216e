//! nginx's life follows the controller's. nginx runs in a process group of its own, so a
//! controller killed with SIGKILL leaves it serving; the controller started next on the same
//! prefix stops that nginx and starts its own, instead of failing to bind again and again.
//! `/healthz` answers 200 only once the new nginx serves. A start that fails (a port held by
//! another program) is a failure: `/healthz` stays 503 until a retry succeeds.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::{Backends, CLASS, Controller, eventually, ingress};

const HOST: &str = "crash.example.com";

/// The pids of the live nginx masters running on `prefix` (zombies have no command line).
fn masters(prefix: &Path) -> Vec<u32> {
    let needle = format!(" -p {} -c ", prefix.display());
    let mut out: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (cmdline.starts_with("nginx: master process ") && cmdline.contains(&needle))
                .then_some(pid)
        })
        .collect();
    // A worker just forked still carries its master's title until it sets its own: a
    // process whose parent is in the list is such a worker, not a master.
    let parent = |pid: u32| -> Option<u32> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("PPid:"))
            .and_then(|p| p.trim().parse().ok())
    };
    let all = out.clone();
    out.retain(|pid| parent(*pid).is_none_or(|p| !all.contains(&p)));
    out.sort_unstable();
    out
}

/// The status of the controller's `/healthz`, `None` while nothing listens.
async fn healthz(controller: &Controller) -> Option<u16> {
    support::get(controller.metrics, "x", "/healthz", &[])
        .await
        .map(|r| r.status)
}

async fn objects() -> (Backends, String) {
    let backends = Backends::start(&["web"]).await;
    let mut m = String::from(CLASS);
    m.push_str(&backends.manifests("e2e"));
    m.push_str(&ingress(
        "e2e",
        "web",
        HOST,
        "",
        None,
        &[("Prefix", "/", "web")],
    ));
    (backends, m)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_controller_stops_the_nginx_its_crashed_predecessor_left() {
    if support::ran_elsewhere() {
        return;
    }
    let (_backends, m) = objects().await;
    let mut controller = Controller::start(&m).await;
    eventually("served", || async {
        controller.get(HOST, "/").await.backend() == "web"
    })
    .await;
    let prefix = controller.prefix();
    let old = masters(&prefix);
    assert_eq!(old.len(), 1, "{old:?}");

    controller.crash();
    // nginx outlives the controller and still serves.
    assert_eq!(masters(&prefix), old);
    assert_eq!(controller.get(HOST, "/").await.backend(), "web");

    controller.restart();
    let started = Instant::now();
    let mut unhealthy = 0;
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "/healthz never answered 200"
        );
        match healthz(&controller).await {
            Some(200) => break,
            Some(status) => {
                assert_eq!(status, 503);
                unhealthy += 1;
            }
            None => {}
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // At the first 200: the old nginx is gone, the new one serves.
    let new = masters(&prefix);
    assert_eq!(new.len(), 1, "{new:?}");
    assert_ne!(new, old);
    let response = controller.get(HOST, "/now").await;
    assert_eq!((response.status, response.body.as_str()), (200, "web /now"));
    println!("/healthz answered 503 {unhealthy} times before 200");

    // It stays so: no failed start, no restart, one master.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(masters(&prefix), new);
    assert_eq!(
        controller
            .metric("ingress_controller_nginx_restarts_total")
            .await,
        0.0
    );
    assert_eq!(healthz(&controller).await, Some(200));
    assert_eq!(controller.get(HOST, "/").await.backend(), "web");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_start_is_a_failure_and_is_retried() {
    if support::ran_elsewhere() {
        return;
    }
    let (_backends, m) = objects().await;
    let mut controller = Controller::start(&m).await;
    let prefix = controller.prefix();
    let old = masters(&prefix);
    controller.crash();
    // Another program takes the HTTP port once the orphaned nginx is gone.
    for pid in &old {
        std::process::Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{pid}")])
            .status()
            .unwrap();
    }
    let squatter = eventually_bind(controller.http).await;

    controller.restart();
    // While the port is held: never healthy, failures counted.
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        assert_ne!(healthz(&controller).await, Some(200));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        controller
            .metric("ingress_controller_reloads_total{result=\"failure\"}")
            .await
            + controller
                .metric("ingress_controller_nginx_restarts_total")
                .await
            >= 1.0
    );
    assert!(masters(&prefix).len() <= 1);

    // Once the port is free, a retry starts nginx.
    drop(squatter);
    eventually("/healthz 200 after the port is freed", || async {
        healthz(&controller).await == Some(200)
    })
    .await;
    assert_eq!(masters(&prefix).len(), 1);
    assert_eq!(controller.get(HOST, "/").await.backend(), "web");
}

/// Binds 127.0.0.1:`port` (retrying while the killed nginx's sockets close).
async fn eventually_bind(port: u16) -> std::net::TcpListener {
    for _ in 0..200 {
        if let Ok(listener) = std::net::TcpListener::bind(("127.0.0.1", port)) {
            return listener;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("cannot bind port {port}");
}
