//! Three `lease-demo` processes campaign on one key of a real etcd (Debian's `etcd-server`),
//! started here on loopback: one leads, killing it makes another lead, and stopping etcd makes
//! the leader step down before its validity ends. Skipped, with a message, without `etcd`.

#![cfg(feature = "etcd")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{Candidates, PATIENCE};

/// A throw-away etcd on loopback, killed on drop (also when the test fails).
struct Etcd {
    child: Child,
    client_url: String,
    _data: tempfile::TempDir,
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Etcd {
    /// Starts etcd, or returns `None` when the binary is missing.
    fn start() -> Option<Self> {
        if Command::new("etcd").arg("--version").output().is_err() {
            return None;
        }
        // tmpfs where there is one: etcd syncs every write, and a slow disk on a busy CI machine
        // would stretch renewals past the short test timings.
        let shm = std::path::Path::new("/dev/shm");
        let data = if shm.is_dir() {
            tempfile::tempdir_in(shm)
        } else {
            tempfile::tempdir()
        }
        .unwrap();
        let (client, peer) = (free_port(), free_port());
        let client_url = format!("http://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let log = std::fs::File::create(data.path().join("etcd.log")).unwrap();
        let child = Command::new("etcd")
            .arg("--data-dir")
            .arg(data.path().join("data"))
            .args(["--listen-client-urls", &client_url])
            .args(["--advertise-client-urls", &client_url])
            .args(["--listen-peer-urls", &peer_url])
            .args(["--initial-advertise-peer-urls", &peer_url])
            .args(["--initial-cluster", &format!("default={peer_url}")])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let etcd = Self {
            child,
            client_url,
            _data: data,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", client)).is_err() {
            assert!(Instant::now() < deadline, "etcd did not listen within 20 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(etcd)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.stop();
    }
}

#[test]
fn one_leader_fail_over_and_step_down_when_etcd_stops() {
    let Some(mut etcd) = Etcd::start() else {
        eprintln!("skipped: no `etcd` on the PATH (Debian package etcd-server)");
        return;
    };
    let url = etcd.client_url.clone();
    let mut candidates = Candidates::new(&["--etcd", &url, "--key", "/kube-node-net/lease-test"]);
    for id in ["a", "b", "c"] {
        candidates.spawn(id);
    }
    let first = candidates.one_leader(Duration::from_secs(4));

    candidates.kill(&first);
    let second = candidates.next("started", PATIENCE).expect("another leads");
    assert_ne!(second.id, first);

    // No store, no renewals: the leader steps down at the end of its renew round, before the
    // validity its last successful write bought, and nobody else can win.
    etcd.stop();
    let stopped = candidates
        .next("stopped", PATIENCE)
        .expect("the leader steps down");
    assert_eq!(stopped.id, second.id);
    assert!(
        stopped.millis("at_ms") < stopped.millis("valid_until_ms"),
        "stepped down after its validity: {stopped:?}"
    );
    assert!(candidates.next("started", Duration::from_secs(4)).is_none());
}

/// The store answers each `leader_lease::Action` as the state machine expects, against etcd.
#[tokio::test]
async fn the_etcd_store_is_a_compare_and_swap_register() {
    use leader_lease::{Record, Text, Version};
    use lease_driver::{EtcdStore, RequestError, Store};

    let Some(etcd) = Etcd::start() else {
        eprintln!("skipped: no `etcd` on the PATH (Debian package etcd-server)");
        return;
    };
    let mut client = etcd_client::Client::connect([etcd.client_url.as_str()], None)
        .await
        .unwrap();
    let store = EtcdStore::new(&client, "/kube-node-net/cas");
    let record = |holder: &str| Record {
        holder_identity: Text::try_from(holder).unwrap(),
        lease_duration_seconds: 3,
        ..Record::default()
    };
    // etcd listens before it has elected itself: wait until it answers.
    let mut tries = 0;
    let empty = loop {
        match store.get().await {
            Err(e) if tries < 100 => {
                eprintln!("etcd not ready: {e}");
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            answer => break answer.unwrap(),
        }
    };
    assert!(empty.is_none());
    let missing = store.update(&record("a"), Version(1)).await;
    assert!(
        matches!(missing, Err(RequestError::NotFound)),
        "{missing:?}"
    );
    let first = store.create(&record("a")).await.unwrap();
    let again = store.create(&record("b")).await;
    assert!(matches!(again, Err(RequestError::Conflict)), "{again:?}");
    let second = store.update(&record("b"), first).await.unwrap();
    assert!(second > first);
    let stale = store.update(&record("c"), first).await;
    assert!(matches!(stale, Err(RequestError::Conflict)), "{stale:?}");
    let stored = store.get().await.unwrap().unwrap();
    assert_eq!((stored.record, stored.version), (record("b"), second));

    client
        .put("/kube-node-net/cas", "not json", None)
        .await
        .unwrap();
    let corrupt = store.get().await.unwrap_err();
    assert!(
        corrupt
            .to_string()
            .starts_with("etcd key \"/kube-node-net/cas\": not an election record"),
        "{corrupt}"
    );
}
