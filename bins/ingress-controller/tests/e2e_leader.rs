//! Two replicas electing a leader on a lease file: exactly one writes Ingress status; when it
//! crashes, the other takes over and writes it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use support::{Backends, CLASS, Controller, eventually, ingress, service};

const WRITES: &str = "ingress_controller_status_writes_total";
const LEADING: &str = "nginx_ingress_controller_leader_election_status";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_one_status_writer_and_handover() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["a"]).await;
    let mut m = String::from(CLASS);
    m.push_str(&service("lead", "a", &[backends.port("a")]));
    m.push_str(&ingress(
        "lead",
        "web",
        "web.example.com",
        "",
        None,
        &[("Prefix", "/", "a")],
    ));
    let shared = tempfile::tempdir().unwrap();
    let args = || -> Vec<String> {
        [
            "--publish-status-address",
            "192.0.2.10",
            "--lease-ms",
            "2000",
            "--renew-ms",
            "1000",
            "--retry-ms",
            "200",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([
            "--lease-file".to_owned(),
            shared.path().join("lease.json").display().to_string(),
        ])
        .collect()
    };
    let one = Controller::start_as(&m, Some("one"), &args()).await;
    // Both replicas read the same manifests; cluster-state keeps status beside them.
    let two = Controller::start_beside(&one, "two", &args()).await;
    let status = one.manifests_dir().join(".status/ingresses/lead/web.yaml");
    eventually("a status written", || async { status.exists() }).await;
    let text = std::fs::read_to_string(&status).unwrap();
    assert!(text.contains("192.0.2.10"), "{text}");
    // Both replicas serve; only one writes.
    assert_eq!(one.get("web.example.com", "/").await.backend(), "a");
    assert_eq!(two.get("web.example.com", "/").await.backend(), "a");
    let (w1, w2) = (one.metric(WRITES).await, two.metric(WRITES).await);
    assert!((w1 > 0.0) != (w2 > 0.0), "writes: one {w1}, two {w2}");
    let (mut leader, follower) = if w1 > 0.0 { (one, two) } else { (two, one) };
    assert_eq!(leader.metric(LEADING).await, 1.0);
    assert_eq!(follower.metric(LEADING).await, 0.0);
    // Renewals (every 200 ms here) write nothing more: the status already holds.
    let written = leader.metric(WRITES).await;
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert_eq!(leader.metric(WRITES).await, written);

    // The leader crashes: the follower takes over once the lease expires, and writes.
    std::fs::remove_file(&status).unwrap();
    leader.crash();
    eventually("the follower writes the status", || async {
        follower.metric(WRITES).await > 0.0 && status.exists()
    })
    .await;
    assert_eq!(follower.metric(LEADING).await, 1.0);
    drop(leader);
}
