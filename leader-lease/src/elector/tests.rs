//! One test per rule of the algorithm (`docs/leader-lease.md` §3, §4, §8), driving the machine by
//! hand.

use alloc::vec::Vec;

use super::*;
use crate::text::text;

const WALL: i64 = 1_796_032_800_000_000;

fn wall(ms: u64) -> MicroTime {
    MicroTime::from_unix_micros(WALL + i64::try_from(ms).unwrap() * 1000)
}

fn at(ms: u64) -> Instant {
    Instant::from_millis(ms)
}

fn elector(config: Config) -> Elector {
    Elector::new(config, 42)
}

fn me() -> Elector {
    elector(
        Config::new(
            "me",
            Duration::from_secs(15),
            Duration::from_secs(10),
            Duration::from_secs(2),
        )
        .unwrap(),
    )
}

fn action(e: &mut Elector, ms: u64) -> Option<Action> {
    e.poll_action(at(ms), wall(ms))
}

/// The next wake-up, in whole milliseconds (rounded up).
fn wake(e: &Elector) -> u64 {
    e.poll_timeout().unwrap().as_nanos().div_ceil(1_000_000)
}

fn events(e: &mut Elector) -> Vec<Event> {
    core::iter::from_fn(|| e.poll_event()).collect()
}

fn other(holder: &str, duration: i32, renew_ms: u64) -> Record {
    Record {
        holder_identity: text(holder),
        lease_duration_seconds: duration,
        acquire_time: Some(wall(0)),
        renew_time: Some(wall(renew_ms)),
        leader_transitions: 2,
        ..Record::default()
    }
}

fn stored(record: Record, version: u64) -> Option<Stored> {
    Some(Stored {
        record,
        version: Version(version),
    })
}

/// Wins an empty store: Get at 0, Create sent at 100 ms, answered at 300 ms with version 7.
fn leader() -> Elector {
    let mut e = me();
    assert_eq!(action(&mut e, 0), Some(Action::Get));
    e.handle_get(at(50), Ok(None));
    assert!(matches!(action(&mut e, 100), Some(Action::Create(_))));
    e.handle_write(at(300), Ok(Version(7)));
    events(&mut e);
    e
}

/// `docs/leader-lease.md` §3.4 step 3: NotFound → create my record.
#[test]
fn first_attempt_reads_then_creates_the_record() {
    let mut e = me();
    assert_eq!(action(&mut e, 0), Some(Action::Get));
    assert_eq!(action(&mut e, 0), None, "one request at a time");
    e.handle_get(at(50), Ok(None));
    let Some(Action::Create(record)) = action(&mut e, 100) else {
        panic!("expected a create")
    };
    assert_eq!(
        record,
        Record {
            holder_identity: text("me"),
            lease_duration_seconds: 15,
            acquire_time: Some(wall(100)),
            renew_time: Some(wall(100)),
            leader_transitions: 0,
            strategy: None,
            preferred_holder: None,
        }
    );
}

/// `docs/leader-lease.md` §8: leadership is anchored at the send time of the winning write.
#[test]
fn winning_write_starts_leading_until_the_anchored_deadline() {
    let mut e = me();
    action(&mut e, 0);
    e.handle_get(at(50), Ok(None));
    action(&mut e, 100);
    e.handle_write(at(300), Ok(Version(7)));
    let token = FencingToken {
        version: Version(7),
        transitions: 0,
    };
    assert_eq!(
        events(&mut e),
        [
            Event::NewLeader(Some(text("me"))),
            Event::StartedLeading { token }
        ]
    );
    let valid_until = at(100) + e.config().safe_lease();
    assert_eq!(e.valid_until(), Some(valid_until));
    assert_eq!(e.fencing_token(), Some(token));
    // Without renewals the round deadline (answer + RP + RD = 12.3 s) comes first.
    assert!(e.is_leader(at(300)));
    assert!(e.is_leader(at(12_300) - Duration::from_nanos(1)));
    assert!(!e.is_leader(at(12_300)));
    assert_eq!(
        e.poll_timeout(),
        Some(at(2300)),
        "next renew one retry period after the answer"
    );
}

/// `docs/leader-lease.md` §3.3/§3.4 step 2: renew every RP from the cache, keeping acquireTime and
/// transitions.
#[test]
fn renewal_takes_the_fast_path_and_keeps_acquire_time() {
    let mut e = leader();
    assert_eq!(action(&mut e, 2299), None);
    let Some(Action::Update { record, expected }) = action(&mut e, 2300) else {
        panic!("expected a renew")
    };
    assert_eq!(expected, Version(7));
    assert_eq!(
        (record.acquire_time, record.renew_time),
        (Some(wall(100)), Some(wall(2300)))
    );
    assert_eq!(record.leader_transitions, 0);
    e.handle_write(at(2400), Ok(Version(9)));
    assert_eq!(e.valid_until(), Some(at(2300) + e.config().safe_lease()));
    assert_eq!(
        e.fencing_token().unwrap().version,
        Version(7),
        "the token names the term, not the renewal"
    );
    assert!(events(&mut e).is_empty());
}

/// `docs/leader-lease.md` §3.4 step 2: a failed fast-path update falls through to a read in the
/// same attempt.
#[test]
fn failed_fast_path_falls_through_to_a_read() {
    let mut e = leader();
    action(&mut e, 2300);
    e.handle_write(at(2400), Err(StoreError::Conflict));
    assert_eq!(action(&mut e, 2400), Some(Action::Get));
}

/// `docs/leader-lease.md` §3.3: a renew round that fails for RenewDeadline ends leadership.
#[test]
fn failed_renew_round_steps_down_at_the_renew_deadline() {
    let mut e = leader();
    let mut now = 2300;
    while e.is_leader(at(now)) {
        if let Some(Action::Update { .. }) = action(&mut e, now) {
            e.handle_write(at(now), Err(StoreError::Unavailable));
        } else if e.poll_action(at(now), wall(now)) == Some(Action::Get) {
            e.handle_get(at(now), Err(StoreError::Unavailable));
        }
        now = wake(&e);
    }
    // The round started at 2.3 s: its deadline is 12.3 s, before the anchored 14.55 s.
    assert_eq!(now, 12_300);
    e.handle_timeout(at(now));
    assert_eq!(
        events(&mut e),
        [Event::StoppedLeading {
            reason: StopReason::RenewDeadline
        }]
    );
    assert_eq!(e.valid_until(), None);
}

/// `docs/leader-lease.md` §8 and kubernetes/kubernetes#44887: stop at `valid_until` even while a
/// request hangs and the renew round has time left.
#[test]
fn leader_stops_at_valid_until_even_mid_round() {
    let mut e = leader();
    action(&mut e, 2300);
    // The renew commits but its answer takes 4.9 s: the round now ends at 7.2 + 12 = 19.2 s.
    e.handle_write(at(7200), Ok(Version(8)));
    let valid_until = at(2300) + e.config().safe_lease();
    action(&mut e, 9200);
    assert!(e.is_leader(valid_until - Duration::from_nanos(1)));
    assert!(!e.is_leader(valid_until), "no handle_timeout needed");
    assert_eq!(e.poll_timeout(), Some(valid_until));
    e.handle_timeout(valid_until);
    assert_eq!(
        events(&mut e),
        [Event::StoppedLeading {
            reason: StopReason::ValidityExpired
        }]
    );
}

/// An answer that arrives after the validity it would have granted does not start a term.
#[test]
fn a_write_answered_too_late_does_not_lead() {
    let mut e = me();
    action(&mut e, 0);
    e.handle_get(at(0), Ok(None));
    action(&mut e, 0);
    e.handle_write(at(20_000), Ok(Version(3)));
    assert!(!e.is_leader(at(20_000)));
    assert_eq!(events(&mut e), [Event::NewLeader(Some(text("me")))]);
}

/// `docs/leader-lease.md` §3.4 step 5 and fabric8io/kubernetes-client#7160: expiry uses the
/// holder's published duration and the local time the record was first seen, never our own setting.
#[test]
fn a_held_lease_expires_by_the_holders_duration_from_first_sight() {
    let mut e = me();
    action(&mut e, 0);
    e.handle_get(at(1000), Ok(stored(other("them", 5, 0), 3)));
    assert_eq!(events(&mut e), [Event::NewLeader(Some(text("them")))]);
    let retry = e.poll_timeout().unwrap();
    assert!(
        retry >= at(3000) && retry < at(5400),
        "jittered retry in [RP, 2.2·RP): {retry}"
    );
    assert_eq!(action(&mut e, 5999), Some(Action::Get));
    e.handle_get(at(5999), Ok(stored(other("them", 5, 0), 3)));
    assert_eq!(
        action(&mut e, 5999),
        None,
        "still held 4.999 s after first sight"
    );
    let when = wake(&e);
    assert_eq!(action(&mut e, when), Some(Action::Get));
    e.handle_get(at(when), Ok(stored(other("them", 5, 0), 3)));
    let Some(Action::Update { record, expected }) = action(&mut e, when) else {
        panic!("expected a takeover")
    };
    assert_eq!(expected, Version(3));
    assert_eq!(record.holder_identity, "me");
    assert_eq!(record.leader_transitions, 3, "a different holder: +1");
    assert_eq!(record.acquire_time, Some(wall(when)));
}

/// `docs/leader-lease.md` §3.4 change detection: a new version with the same content (a label edit)
/// does not restart the expiry clock, but the CAS uses the newest version; new content does restart
/// it.
#[test]
fn only_a_changed_record_restarts_the_expiry_clock() {
    let mut e = me();
    action(&mut e, 0);
    e.handle_get(at(0), Ok(stored(other("them", 5, 0), 3)));
    let t = wake(&e);
    action(&mut e, t);
    e.handle_get(at(t), Ok(stored(other("them", 5, 0), 4)));
    let t = wake(&e);
    action(&mut e, t);
    e.handle_get(at(t), Ok(stored(other("them", 5, 1), 5)));
    let changed_at = t;
    let t = loop {
        let t = wake(&e);
        assert_eq!(action(&mut e, t), Some(Action::Get));
        e.handle_get(at(t), Ok(stored(other("them", 5, 1), 6)));
        if let Some(Action::Update { expected, .. }) = action(&mut e, t) {
            assert_eq!(expected, Version(6));
            break t;
        }
    };
    assert!(t >= changed_at + 5000 && t < changed_at + 5000 + 4400);
}

/// `docs/leader-lease.md` §1.1: an empty holder means released: take it at once, counting a
/// transition.
#[test]
fn a_released_record_is_taken_at_once() {
    let mut e = me();
    action(&mut e, 0);
    e.handle_get(at(0), Ok(stored(other("", 1, 0), 3)));
    let Some(Action::Update { record, .. }) = action(&mut e, 0) else {
        panic!("expected a takeover")
    };
    assert_eq!(record.leader_transitions, 3);
    assert_eq!(
        record.renew_time,
        Some(wall(0).next_micro()),
        "strictly after the previous renewal"
    );
}

/// A negative published duration counts as already expired.
#[test]
fn a_negative_duration_is_expired() {
    let mut e = me();
    action(&mut e, 0);
    e.handle_get(at(0), Ok(stored(other("them", -5, 0), 3)));
    assert!(matches!(action(&mut e, 0), Some(Action::Update { .. })));
}

/// `docs/leader-lease.md` §3.4 step 6: my own record (after a restart) is renewed without a
/// transition.
#[test]
fn my_own_record_is_renewed_after_a_restart() {
    let mut e = me();
    action(&mut e, 0);
    e.handle_get(at(0), Ok(stored(other("me", 15, 0), 3)));
    let Some(Action::Update { record, .. }) = action(&mut e, 10) else {
        panic!("expected a renew")
    };
    assert_eq!(
        (record.leader_transitions, record.acquire_time),
        (2, Some(wall(0)))
    );
    e.handle_write(at(20), Ok(Version(4)));
    assert!(e.is_leader(at(20)));
}

/// kubernetes/kubernetes#23731: losing the record to someone else is an explicit step-down.
#[test]
fn another_holder_in_the_store_ends_leadership() {
    let mut e = leader();
    action(&mut e, 2300);
    e.handle_write(at(2400), Err(StoreError::Conflict));
    action(&mut e, 2400);
    e.handle_get(at(2500), Ok(stored(other("them", 15, 2400), 8)));
    assert!(!e.is_leader(at(2500)));
    assert_eq!(
        events(&mut e),
        [
            Event::NewLeader(Some(text("them"))),
            Event::StoppedLeading {
                reason: StopReason::Superseded
            }
        ]
    );
}

/// `docs/leader-lease.md` §3.6: with hand-over enabled the holder stops renewing when
/// `preferredHolder` names another candidate; without it the field is kept as is.
#[test]
fn preferred_holder_asks_the_leader_to_step_down() {
    let config = Config::builder("me")
        .honor_preferred_holder(true)
        .build()
        .unwrap();
    let mut e = elector(config);
    action(&mut e, 0);
    e.handle_get(at(0), Ok(None));
    action(&mut e, 0);
    e.handle_write(at(10), Ok(Version(1)));
    assert!(e.is_leader(at(10)));
    assert_eq!(
        action(&mut e, 2010),
        Some(Action::Get),
        "no fast path: the request may be new"
    );
    let mut asked = other("me", 15, 10);
    asked.preferred_holder = Some(text("next"));
    e.handle_get(at(2020), Ok(stored(asked.clone(), 2)));
    assert!(!e.is_leader(at(2020)));
    assert_eq!(action(&mut e, 2020), None);
    assert!(events(&mut e).contains(&Event::StoppedLeading {
        reason: StopReason::HandedOver
    }));

    let mut e = me();
    action(&mut e, 0);
    e.handle_get(at(0), Ok(stored(asked, 2)));
    let Some(Action::Update { record, .. }) = action(&mut e, 0) else {
        panic!("expected a renew")
    };
    assert_eq!(record.preferred_holder.as_deref(), Some("next"));
}

/// The preferred holder clears the request when it takes over.
#[test]
fn the_preferred_holder_clears_the_request_on_takeover() {
    let mut e = me();
    action(&mut e, 0);
    let mut released = other("", 1, 0);
    released.preferred_holder = Some(text("me"));
    e.handle_get(at(0), Ok(stored(released, 2)));
    let Some(Action::Update { record, .. }) = action(&mut e, 0) else {
        panic!("expected a takeover")
    };
    assert_eq!(record.preferred_holder, None);
}

/// `docs/leader-lease.md` §1.4: release re-reads, writes an empty holder with duration 1 s and the
/// same transitions, retries on conflict, then asks for nothing more.
#[test]
fn release_hands_the_lease_back() {
    let mut e = leader();
    e.request_release(at(1000));
    assert!(!e.is_leader(at(1000)));
    assert_eq!(
        events(&mut e),
        [Event::StoppedLeading {
            reason: StopReason::Released
        }]
    );
    assert_eq!(action(&mut e, 1000), Some(Action::Get));
    let mine = e.observed_record().unwrap().clone();
    e.handle_get(at(1010), Ok(stored(mine.clone(), 8)));
    let Some(Action::Update { record, expected }) = action(&mut e, 1020) else {
        panic!("expected a release")
    };
    assert_eq!(expected, Version(8));
    assert_eq!(
        record,
        Record {
            holder_identity: Text::new(),
            lease_duration_seconds: 1,
            acquire_time: Some(wall(1020)),
            renew_time: Some(wall(1020)),
            ..mine.clone()
        }
    );
    e.handle_write(at(1030), Err(StoreError::Conflict));
    assert_eq!(
        action(&mut e, 1030),
        Some(Action::Get),
        "a conflict is retried after a re-read"
    );
    e.handle_get(at(1040), Ok(stored(mine, 9)));
    assert!(matches!(
        action(&mut e, 1040),
        Some(Action::Update {
            expected: Version(9),
            ..
        })
    ));
    e.handle_write(at(1050), Ok(Version(10)));
    assert!(e.is_released());
    assert_eq!(events(&mut e), [Event::NewLeader(None)]);
    assert_eq!((action(&mut e, 100_000), e.poll_timeout()), (None, None));
}

/// Releasing a lease someone else holds writes nothing.
#[test]
fn release_without_holding_does_nothing() {
    let mut e = me();
    action(&mut e, 0);
    e.handle_get(at(0), Ok(stored(other("them", 15, 0), 3)));
    e.request_release(at(10));
    assert!(e.is_released());
    assert_eq!(action(&mut e, 100_000), None);
}

/// A release requested while an acquire is in flight hands back whatever it won.
#[test]
fn release_during_an_acquire_hands_back_the_win() {
    let mut e = me();
    action(&mut e, 0);
    e.handle_get(at(0), Ok(None));
    action(&mut e, 0);
    e.request_release(at(5));
    assert!(!e.is_released());
    e.handle_write(at(10), Ok(Version(1)));
    assert!(!e.is_leader(at(10)));
    assert_eq!(action(&mut e, 10), Some(Action::Get));
}

/// Release gives up after one renew deadline if the store stays unreachable.
#[test]
fn release_gives_up_after_the_renew_deadline() {
    let mut e = leader();
    e.request_release(at(1000));
    let mut now = 1000;
    while !e.is_released() {
        if action(&mut e, now).is_some() {
            e.handle_get(at(now), Err(StoreError::Unavailable));
        }
        now = wake(&e);
        e.handle_timeout(at(now));
    }
    assert_eq!(now, 11_000);
}

/// Answers nobody asked for (a late duplicate, a driver bug) change nothing.
#[test]
fn unexpected_answers_are_ignored() {
    let mut e = me();
    e.handle_write(at(0), Ok(Version(1)));
    e.handle_get(at(0), Ok(None));
    assert!(!e.is_leader(at(0)));
    assert_eq!(action(&mut e, 0), Some(Action::Get));
    e.handle_write(at(0), Ok(Version(1)));
    assert!(!e.is_leader(at(0)));
}

/// Renewals always change the record, even if the wall clock stands still, so followers see
/// every renewal as a change.
#[test]
fn renew_time_strictly_increases() {
    let mut e = leader();
    let Some(Action::Update { record, .. }) = e.poll_action(at(2300), wall(0)) else {
        panic!("expected a renew")
    };
    assert_eq!(record.renew_time, Some(wall(100).next_micro()));
}

/// `docs/leader-lease.md` §3.5: a leader whose record has not changed for LD + tolerance is
/// unhealthy.
#[test]
fn health_check_flags_a_stuck_leader() {
    let e = leader();
    let tolerance = Duration::from_secs(5);
    assert!(e.is_healthy(at(20_300), tolerance));
    assert!(!e.is_healthy(at(20_301), tolerance));
    assert!(me().is_healthy(at(1_000_000), tolerance));
}

/// Once a release has given up, a late answer to a request from before cannot restart work.
#[test]
fn nothing_happens_after_a_release_gave_up() {
    let mut e = leader();
    assert!(matches!(action(&mut e, 2300), Some(Action::Update { .. })));
    e.request_release(at(2400));
    e.handle_timeout(at(12_400));
    assert!(e.is_released());
    e.handle_write(at(12_500), Err(StoreError::Conflict));
    assert_eq!((action(&mut e, 20_000), e.poll_timeout()), (None, None));
}

/// The machine never allocates, so undrained events live in a fixed queue: the oldest go
/// first, and the newest are always there to read.
#[test]
fn undrained_events_keep_the_newest_eight() {
    let mut e = me();
    for round in 0..12u64 {
        let holder = ["a", "b"][usize::try_from(round % 2).unwrap()];
        let ms = round * 5000;
        assert_eq!(action(&mut e, ms), Some(Action::Get));
        e.handle_get(at(ms), Ok(stored(other(holder, 15, ms), round + 1)));
        e.handle_timeout(at(ms));
        // Each read names a new holder; the attempt then waits (the lease is held).
    }
    let seen = events(&mut e);
    assert_eq!(seen.len(), 8);
    assert_eq!(seen.last(), Some(&Event::NewLeader(Some(text("b")))));
    assert_eq!(seen.first(), Some(&Event::NewLeader(Some(text("a")))));
}

/// Identities longer than a record field are refused up front, not truncated.
#[test]
fn an_identity_that_does_not_fit_a_record_is_refused() {
    let long = "n".repeat(crate::TEXT_CAPACITY + 1);
    assert_eq!(
        Config::builder(&long).build(),
        Err(crate::ConfigError::IdentityTooLong(crate::TextTooLong {
            len: crate::TEXT_CAPACITY + 1
        }))
    );
    assert!(
        Config::builder("n".repeat(crate::TEXT_CAPACITY))
            .build()
            .is_ok()
    );
}
