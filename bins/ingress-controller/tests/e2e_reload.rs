//! Changes under load: a bounded load generator keeps requesting while Ingresses and
//! endpoints change; no request fails, endpoint-only changes cause no reload, structural ones
//! exactly one each. Also: a configuration nginx refuses is never loaded (the last good one
//! keeps serving), a killed nginx is restarted, and an empty backend table is taken.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use support::{Backends, CLASS, Controller, eventually, ingress, service};

fn objects(backends: &Backends, pool: &[&str], extra: &str, timeout: &str) -> String {
    let ports: Vec<u16> = pool.iter().map(|n| backends.port(n)).collect();
    let mut m = String::from(CLASS);
    m.push_str(&service("load", "pool", &ports));
    m.push_str(&ingress(
        "load",
        "load",
        "load.example.com",
        &format!("nginx.ingress.kubernetes.io/proxy-read-timeout: '{timeout}'"),
        None,
        &[("Prefix", "/", "pool")],
    ));
    m.push_str(extra);
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_under_load_drop_nothing_and_endpoints_do_not_reload() {
    if support::ran_elsewhere() {
        return;
    }
    let mut backends = Backends::start(&["a", "b"]).await;
    let c = Controller::start(&objects(&backends, &["a"], "", "30")).await;
    let reloads = || c.loads();
    let started = reloads().await;

    // The load: 4 clients, one request at a time each, until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let seen_b = Arc::new(AtomicBool::new(false));
    let mut clients = Vec::new();
    for _ in 0..4 {
        let (stop, ok, failed, seen_b) = (stop.clone(), ok.clone(), failed.clone(), seen_b.clone());
        let port = c.http;
        clients.push(tokio::spawn(async move {
            let mut failures = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                match support::get(port, "load.example.com", "/", &[]).await {
                    Some(r) if r.status == 200 => {
                        ok.fetch_add(1, Ordering::Relaxed);
                        if r.backend() == "b" {
                            seen_b.store(true, Ordering::Relaxed);
                        }
                    }
                    other => {
                        failed.fetch_add(1, Ordering::Relaxed);
                        failures.push(format!("{other:?}"));
                    }
                }
            }
            failures
        }));
    }

    // Endpoint-only changes: the balancer gets them, nginx does not reload.
    c.update(&objects(&backends, &["a", "b"], "", "30")).await;
    eventually("traffic on the new endpoint", || async {
        seen_b.load(Ordering::Relaxed)
    })
    .await;
    c.update(&objects(&backends, &["b"], "", "30")).await;
    // The old endpoint goes away for real once the balancer no longer uses it.
    backends.stop("a");
    assert_eq!(
        reloads().await,
        started,
        "endpoint-only changes reloaded nginx"
    );

    // Structural changes: one reload each, still no failed request.
    let extra = ingress(
        "load",
        "new",
        "new.example.com",
        "",
        None,
        &[("Prefix", "/", "pool")],
    );
    let written = Instant::now();
    c.update(&objects(&backends, &["b"], &extra, "30")).await;
    eventually("the new host serving", || async {
        c.get("new.example.com", "/").await.status == 200
    })
    .await;
    let change_to_serving = written.elapsed();
    assert_eq!(reloads().await, started + 1.0);
    c.update(&objects(&backends, &["b"], &extra, "31")).await;
    assert_eq!(reloads().await, started + 2.0);

    stop.store(true, Ordering::Relaxed);
    let mut failures = Vec::new();
    for client in clients {
        failures.extend(client.await.unwrap());
    }
    let ok = ok.load(Ordering::Relaxed);
    println!(
        "{ok} requests served during the changes, {} failed; a new host served {} ms after \
         its manifest was written",
        failures.len(),
        change_to_serving.as_millis()
    );
    assert!(ok > 0);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_configuration_keeps_the_last_good_one_and_dead_nginx_restarts() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["a"]).await;
    let good = objects(&backends, &["a"], "", "30");
    let settings = ["--configmap".to_owned(), "load/settings".to_owned()];
    let c = Controller::start_with(&good, &settings).await;
    assert_eq!(c.get("load.example.com", "/").await.backend(), "a");

    // A cipher list OpenSSL does not know: the controller checks only its spelling (as
    // ingress-nginx, which passes `ssl-ciphers` to nginx as it is), so `nginx -t` refuses the
    // whole configuration, and with it this change's new Ingress.
    let broken = format!(
        "{good}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: settings, namespace: load}}\n\
         data: {{ssl-ciphers: NO-SUCH-CIPHER}}\n{}",
        ingress(
            "load",
            "tls",
            "tls.example.com",
            "",
            None,
            &[("Prefix", "/", "pool")]
        )
    );
    let tmp = c.dir.path().join("objects.yaml.tmp");
    std::fs::write(&tmp, &broken).unwrap();
    std::fs::rename(&tmp, c.manifests_dir().join("objects.yaml")).unwrap();
    eventually("the refusal counted", || async {
        c.metric("nginx_ingress_controller_config_last_reload_successful")
            .await
            == 0.0
    })
    .await;
    assert_eq!(c.get("load.example.com", "/").await.backend(), "a");
    assert_eq!(c.get("tls.example.com", "/").await.status, 404);

    // nginx killed: the controller restarts it on the last good configuration.
    let pid = std::fs::read_to_string(c.prefix().join("nginx.pid")).unwrap();
    std::process::Command::new("kill")
        .args(["-s", "KILL", pid.trim()])
        .status()
        .unwrap();
    // At least once: on a loaded machine the first start may find the killed workers'
    // ports not yet released, and the controller starts nginx again until it serves.
    eventually("nginx restarted", || async {
        c.metric("ingress_controller_nginx_restarts_total").await >= 1.0
            && support::get(c.http, "load.example.com", "/", &[])
                .await
                .is_some_and(|r| r.backend() == "a")
    })
    .await;
}

/// With no Service at all, the backend table is empty: the Lua side takes the empty body
/// (before, it answered 400 and the controller retried every 50 ms).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_backend_table_is_taken() {
    if support::ran_elsewhere() {
        return;
    }
    let c = Controller::start(CLASS).await;
    eventually("the empty backend table is sent", || async {
        c.metric("ingress_controller_backend_updates_total").await >= 1.0
    })
    .await;
}
