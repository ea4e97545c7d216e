//! Three `lease-demo` processes campaign on one file: exactly one leads, and when its process
//! is killed another takes over.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::Duration;

use support::{Candidates, PATIENCE};

#[test]
fn one_leader_among_three_processes_and_fail_over_on_kill() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lease.json");
    let mut candidates = Candidates::new(&["--file", path.to_str().unwrap()]);
    for id in ["a", "b", "c"] {
        candidates.spawn(id);
    }
    let first = candidates.one_leader(Duration::from_secs(4));
    candidates.kill(&first);
    let second = candidates.next("started", PATIENCE).expect("another leads");
    assert_ne!(second.id, first);
    let record = std::fs::read_to_string(&path).unwrap();
    assert!(
        record.contains(&format!("\"holderIdentity\":\"{}\"", second.id)),
        "{record}"
    );
}
