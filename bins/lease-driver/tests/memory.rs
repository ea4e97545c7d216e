//! Candidates as tasks of one process on a `MemoryStore`, on tokio's paused clock: virtual time
//! advances whenever every task waits, so these run in milliseconds and deterministically.

// Test helpers outside `#[test]` functions may fail loudly too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use leader_lease::{Config, Elector, Event, StopReason};
use lease_driver::{Driver, MemoryStore, Notice, Status};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

fn config(id: &str) -> Config {
    Config::new(
        id,
        leader_lease::Duration::from_secs(2),
        leader_lease::Duration::from_secs(1),
        leader_lease::Duration::from_millis(500),
    )
    .unwrap()
}

struct Candidate {
    id: String,
    task: JoinHandle<Elector>,
    status: watch::Receiver<Status>,
    stop: Option<oneshot::Sender<()>>,
}

fn spawn(
    id: &str,
    store: &MemoryStore,
    notices: &mpsc::UnboundedSender<(String, Notice)>,
) -> Candidate {
    let driver = Driver::new(config(id), store.clone());
    let status = driver.status();
    let (stop, stopped) = oneshot::channel::<()>();
    let (who, notices) = (id.to_owned(), notices.clone());
    let task = tokio::spawn(driver.run(
        async move {
            let _ = stopped.await;
        },
        move |notice| {
            let _ = notices.send((who.clone(), notice));
        },
    ));
    Candidate {
        id: id.to_owned(),
        task,
        status,
        stop: Some(stop),
    }
}

/// The next `StartedLeading`: who, when, and until when its first term is valid.
async fn next_start(
    notices: &mut mpsc::UnboundedReceiver<(String, Notice)>,
) -> (String, Instant, Instant) {
    loop {
        let (who, notice) = tokio::time::timeout(Duration::from_secs(30), notices.recv())
            .await
            .expect("someone leads within 30 s")
            .expect("candidates are running");
        if let Notice::Event {
            event: Event::StartedLeading { .. },
            at,
            term: Some(term),
        } = notice
        {
            return (who, at, term.valid_until);
        }
    }
}

fn leaders(candidates: &[Candidate]) -> Vec<&str> {
    let now = Instant::now();
    candidates
        .iter()
        .filter(|c| c.status.borrow().is_leading(now))
        .map(|c| c.id.as_str())
        .collect()
}

fn three(store: &MemoryStore, notices: &mpsc::UnboundedSender<(String, Notice)>) -> Vec<Candidate> {
    ["a", "b", "c"]
        .iter()
        .map(|id| spawn(id, store, notices))
        .collect()
}

/// Spec §5: at most one candidate believes it leads, and it stays the leader while it renews.
#[tokio::test(start_paused = true)]
async fn one_leader_among_three() {
    let store = MemoryStore::new();
    let (tx, mut notices) = mpsc::unbounded_channel();
    let candidates = three(&store, &tx);
    let (first, _, _) = next_start(&mut notices).await;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert_eq!(leaders(&candidates), [first.as_str()]);
    }
    while let Ok((who, notice)) = notices.try_recv() {
        assert!(
            !matches!(
                notice,
                Notice::Event {
                    event: Event::StartedLeading { .. } | Event::StoppedLeading { .. },
                    ..
                }
            ),
            "{who}: {notice:?}"
        );
    }
    assert_eq!(store.current().unwrap().record.holder_identity, first);
}

/// A crashed leader (task aborted, nothing released) is replaced once its lease expires, and
/// not before its own validity ended.
#[tokio::test(start_paused = true)]
async fn a_crashed_leader_is_replaced_after_its_validity() {
    let store = MemoryStore::new();
    let (tx, mut notices) = mpsc::unbounded_channel();
    let candidates = three(&store, &tx);
    let (first, _, _) = next_start(&mut notices).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let leader = candidates.iter().find(|c| c.id == first).unwrap();
    let valid_until = leader.status.borrow().term.unwrap().valid_until;
    leader.task.abort();
    let (second, started_at, _) = next_start(&mut notices).await;
    assert_ne!(second, first);
    assert!(
        started_at >= valid_until,
        "{second} led at {started_at:?}, before {first}'s term ended at {valid_until:?}"
    );
    let record = store.current().unwrap().record;
    assert_eq!(record.holder_identity, second);
    assert_eq!(record.leader_transitions, 1);
}

/// client-go's `ReleaseOnCancel`: a leader that shuts down hands the lease back, so another
/// takes over well before the lease would have expired.
#[tokio::test(start_paused = true)]
async fn a_leader_that_shuts_down_hands_over_at_once() {
    let store = MemoryStore::new();
    let (tx, mut notices) = mpsc::unbounded_channel();
    let mut candidates = three(&store, &tx);
    let (first, _, _) = next_start(&mut notices).await;
    let leader = candidates.iter_mut().find(|c| c.id == first).unwrap();
    let shutdown_at = Instant::now();
    leader.stop.take().unwrap().send(()).unwrap();
    let elector = (&mut leader.task).await.unwrap();
    assert!(elector.is_released());
    assert!(!leader.status.borrow().is_leading(Instant::now()));
    let released = std::iter::from_fn(|| notices.try_recv().ok()).any(|(who, notice)| {
        who == first
            && matches!(
                notice,
                Notice::Event {
                    event: Event::StoppedLeading {
                        reason: StopReason::Released
                    },
                    ..
                }
            )
    });
    assert!(released, "{first} reports the release");
    let (second, started_at, _) = next_start(&mut notices).await;
    assert_ne!(second, first);
    // Without the release, the others would wait a full lease duration (2 s) from shutdown.
    assert!(
        started_at < shutdown_at + Duration::from_secs(2),
        "took over at {started_at:?}"
    );
}
