//! Candidates as tasks of one process on a `MemoryStore`, on tokio's paused clock: virtual time
//! advances whenever every task waits, so these run in milliseconds and deterministically.

// Test helpers outside `#[test]` functions may fail loudly too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use leader_lease::{Config, Elector, Event, Record, StopReason, Stored, Version};
use lease_driver::{Driver, MemoryStore, Notice, RequestError, Status, Store};
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

/// `docs/leader-lease.md` §5: at most one candidate believes it leads, and it stays the leader
/// while it renews.
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

/// A store that can be made to hang: every request started while `hung` is set never answers.
#[derive(Clone, Default)]
struct Hanging {
    inner: MemoryStore,
    hung: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Hanging {
    async fn hang_if_set(&self) {
        if self.hung.load(std::sync::atomic::Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
    }
}

impl Store for Hanging {
    async fn get(&self) -> Result<Option<Stored>, RequestError> {
        self.hang_if_set().await;
        self.inner.get().await
    }

    async fn create(&self, record: &Record) -> Result<Version, RequestError> {
        self.hang_if_set().await;
        self.inner.create(record).await
    }

    async fn update(&self, record: &Record, expected: Version) -> Result<Version, RequestError> {
        self.hang_if_set().await;
        self.inner.update(record, expected).await
    }
}

/// kubernetes/kubernetes#65090 and #44887: requests are bounded by the request timeout, and a
/// leader whose store hangs steps down by its deadline whatever is in flight.
#[tokio::test(start_paused = true)]
async fn a_leader_whose_store_hangs_steps_down_in_time() {
    let store = Hanging::default();
    let driver = Driver::new(config("a"), store.clone());
    let status = driver.status();
    let (tx, mut notices) = mpsc::unbounded_channel();
    let task = tokio::spawn(driver.run(std::future::pending(), move |notice| {
        let _ = tx.send(notice);
    }));
    status.clone().wait_for(|s| s.term.is_some()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    store.hung.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut timed_out = 0;
    let stop = loop {
        match notices.recv().await.unwrap() {
            Notice::RequestFailed {
                error: RequestError::TimedOut(limit),
                ..
            } => {
                // Config::request_timeout: max(1 s, RD / 2).
                assert_eq!(limit, Duration::from_secs(1));
                timed_out += 1;
            }
            Notice::Event {
                event: Event::StoppedLeading { reason },
                at,
                term: Some(term),
            } => break (reason, at, term.valid_until),
            _ => {}
        }
    };
    let (reason, at, valid_until) = stop;
    assert_eq!(reason, StopReason::RenewDeadline);
    assert!(
        at < valid_until,
        "stopped at {at:?}, valid until {valid_until:?}"
    );
    // The hung request's timeout may fall on the same instant as the step-down, after it.
    while timed_out == 0 {
        let notice = tokio::time::timeout(Duration::from_secs(2), notices.recv()).await;
        if let Notice::RequestFailed {
            error: RequestError::TimedOut(_),
            ..
        } = notice.unwrap().unwrap()
        {
            timed_out += 1;
        }
    }
    assert!(!status.borrow().is_leading(Instant::now()));
    task.abort();
}

/// A store whose answers arrive `delay` after the request took effect: the slow response that
/// breaks client-go's timing (`docs/leader-lease.md` §6) when `delay > LD − RD − RP` (0.5 s here).
#[derive(Clone, Default)]
struct Slow {
    inner: MemoryStore,
    delay: Duration,
}

impl Store for Slow {
    async fn get(&self) -> Result<Option<Stored>, RequestError> {
        let answer = self.inner.get().await;
        tokio::time::sleep(self.delay).await;
        answer
    }

    async fn create(&self, record: &Record) -> Result<Version, RequestError> {
        let answer = self.inner.create(record).await;
        tokio::time::sleep(self.delay).await;
        answer
    }

    async fn update(&self, record: &Record, expected: Version) -> Result<Version, RequestError> {
        let answer = self.inner.update(record, expected).await;
        tokio::time::sleep(self.delay).await;
        answer
    }
}

/// `docs/leader-lease.md` §6 end to end: answers delayed by 0.9 s (under the 1 s request timeout,
/// above client-go's 0.5 s threshold) while the leader is crashed and restarted; sampled every
/// 10 ms, never do two candidates believe they lead.
#[tokio::test(start_paused = true)]
async fn slow_answers_never_make_two_leaders() {
    let store = Slow {
        inner: MemoryStore::new(),
        delay: Duration::from_millis(900),
    };
    let (tx, mut notices) = mpsc::unbounded_channel::<(String, Notice)>();
    let spawn_slow = |id: &str| {
        let driver = Driver::new(config(id), store.clone());
        let status = driver.status();
        let (who, tx) = (id.to_owned(), tx.clone());
        let task = tokio::spawn(driver.run(std::future::pending(), move |notice| {
            let _ = tx.send((who.clone(), notice));
        }));
        (id.to_owned(), task, status)
    };
    let mut candidates: Vec<_> = ["a", "b", "c"].into_iter().map(spawn_slow).collect();
    let mut starts = 0;
    for round in 0..6 {
        let deadline = Instant::now() + Duration::from_secs(8);
        while Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let now = Instant::now();
            let leading: Vec<_> = candidates
                .iter()
                .filter(|(_, _, status)| status.borrow().is_leading(now))
                .map(|(id, _, _)| id.clone())
                .collect();
            assert!(leading.len() <= 1, "round {round}: {leading:?} all lead");
        }
        while let Ok((_, notice)) = notices.try_recv() {
            starts += usize::from(matches!(
                notice,
                Notice::Event {
                    event: Event::StartedLeading { .. },
                    ..
                }
            ));
        }
        // Crash whoever holds the record and start a fresh candidate in its place.
        let holder = store.inner.current().unwrap().record.holder_identity;
        let index = candidates
            .iter()
            .position(|(id, _, _)| *id == holder)
            .unwrap();
        let (id, task, _) = candidates.remove(index);
        task.abort();
        candidates.push(spawn_slow(&format!("{id}{round}")));
    }
    assert!(starts >= 5, "leadership changed hands: {starts} terms");
}
