//! Ingress status over the controller's life, beside the manifests (no election: this
//! replica writes): the published address is written once, and cleared when the controller
//! stops for good (`--update-status-on-shutdown`, default true, as ingress-nginx); with
//! `--update-status-on-shutdown=false` it stays.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use support::{Backends, CLASS, Controller, eventually, ingress, service};

async fn objects() -> (Backends, String) {
    let backends = Backends::start(&["a"]).await;
    let mut m = String::from(CLASS);
    m.push_str(&service("st", "a", &[backends.port("a")]));
    m.push_str(&ingress(
        "st",
        "web",
        "web.example.com",
        "",
        None,
        &[("Prefix", "/", "a")],
    ));
    (backends, m)
}

/// The published status of Ingress st/web, as the file beside the manifests holds it.
fn status(c: &Controller) -> String {
    std::fs::read_to_string(c.manifests_dir().join(".status/ingresses/st/web.yaml"))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_is_cleared_when_the_controller_stops_for_good() {
    if support::ran_elsewhere() {
        return;
    }
    let (_backends, m) = objects().await;
    let args = ["--publish-status-address=192.0.2.10".to_owned()];
    let mut c = Controller::start_with(&m, &args).await;
    eventually("the status written", || async {
        status(&c).contains("192.0.2.10")
    })
    .await;
    c.stop();
    let after = status(&c);
    assert!(!after.contains("192.0.2.10"), "{after}");
    assert!(after.contains("ingress: []"), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_update_status_on_shutdown_the_status_stays() {
    if support::ran_elsewhere() {
        return;
    }
    let (_backends, m) = objects().await;
    let args = [
        "--publish-status-address=192.0.2.10".to_owned(),
        "--update-status-on-shutdown=false".to_owned(),
    ];
    let mut c = Controller::start_with(&m, &args).await;
    eventually("the status written", || async {
        status(&c).contains("192.0.2.10")
    })
    .await;
    c.stop();
    assert!(status(&c).contains("192.0.2.10"), "{}", status(&c));
}
