//! The election state machine: client-go's `tryAcquireOrRenew` loop, driven by the caller.
//!
//! Inputs are the caller's monotonic time and the store's answers; outputs are store
//! [`Action`]s, [`Event`]s and the next instant to wake up. One request is outstanding at a time,
//! as in client-go. See the crate documentation for the driver loop and the safety argument.

use crate::config::Config;
use crate::jitter::Jitter;
use crate::micro_time::MicroTime;
use crate::record::Record;
use crate::store::{Action, StoreError, Stored, Version};
use crate::text::Text;
use crate::time::{Duration, Instant};

#[cfg(test)]
mod tests;

/// What the caller is told about leadership.
#[derive(Clone, Debug, PartialEq, Eq)]
#[expect(
    clippy::large_enum_variant,
    reason = "no allocator: the new leader's name is stored inline"
)]
pub enum Event {
    /// This candidate won the lease and may act as leader while
    /// [`Elector::is_leader`] holds (client-go's `OnStartedLeading`).
    StartedLeading {
        /// Identifies this term; see [`FencingToken`].
        token: FencingToken,
    },
    /// This candidate stopped leading (client-go's `OnStoppedLeading`). Only sent after a
    /// `StartedLeading`. The candidate keeps campaigning unless a release was requested.
    StoppedLeading {
        /// Why.
        reason: StopReason,
    },
    /// The observed holder changed (client-go's `OnNewLeader`); `None` when the lease was
    /// released.
    NewLeader(Option<Text>),
}

/// Why leadership ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// A renew round failed for the whole renew deadline (client-go's rule).
    RenewDeadline,
    /// The anchored validity ([`Elector::valid_until`]) ran out before a renewal succeeded.
    ValidityExpired,
    /// The store names another holder.
    Superseded,
    /// The record's `preferredHolder` asked for a hand-over (with
    /// [`ConfigBuilder::honor_preferred_holder`](crate::ConfigBuilder::honor_preferred_holder)).
    HandedOver,
    /// [`Elector::request_release`] was called.
    Released,
}

/// A token that grows with every change of leader, for resources that can reject stale writers
/// (Kleppmann's fencing token): the store version of the write that won this term, plus the
/// record's transition count at that time.
///
/// Compare `version`s only between tokens from the same store. Process pauses between
/// [`Elector::is_leader`] and a side effect are covered only if the resource checks the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FencingToken {
    /// The store version of the winning write.
    pub version: Version,
    /// `leaderTransitions` of the record written by that write.
    pub transitions: i32,
}

/// The lease as last observed, and the local instant its content last changed.
#[derive(Clone, Debug)]
struct Observed {
    record: Record,
    version: Version,
    changed_at: Instant,
}

/// This candidate's term while it leads.
#[derive(Clone, Copy, Debug)]
struct Leadership {
    token: FencingToken,
    /// Send time of the last successful write + [`Config::safe_lease`].
    valid_until: Instant,
    /// End of the current renew round (client-go's renew deadline).
    round_deadline: Instant,
}

/// The write being prepared or in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WriteKind {
    /// Renew straight from the cached record, without reading first (client-go's fast path).
    FastRenew,
    /// Acquire or renew after a read.
    Claim,
    /// Hand the lease back: empty holder.
    Release,
}

/// The next request, decided but not yet handed to the driver.
#[derive(Clone, Copy, Debug)]
enum Step {
    Get,
    Write {
        kind: WriteKind,
        expected: Option<Version>,
    },
}

/// The request the driver is carrying out.
#[derive(Clone, Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "no allocator: the record is stored inline"
)]
enum Pending {
    Get,
    Write {
        kind: WriteKind,
        sent_at: Instant,
        record: Record,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Release {
    NotRequested,
    /// Handing the lease back; give up at the deadline.
    InProgress {
        deadline: Instant,
    },
    /// Finished: no more actions.
    Done,
}

/// Events kept for [`Elector::poll_event`]; one `handle_*` call queues at most two.
const EVENT_CAPACITY: usize = 8;

/// One candidate's view of the election.
///
/// Drive it with [`handle_get`](Self::handle_get), [`handle_write`](Self::handle_write) and
/// [`handle_timeout`](Self::handle_timeout); drain [`poll_action`](Self::poll_action) and
/// [`poll_event`](Self::poll_event); sleep until [`poll_timeout`](Self::poll_timeout).
///
/// It never allocates: records and identities are stored inline ([`Text`]) and events wait in
/// a fixed queue of eight. Drain events after every call; a caller that lets more than eight
/// pile up loses the oldest.
#[derive(Clone, Debug)]
pub struct Elector {
    config: Config,
    jitter: Jitter,
    observed: Option<Observed>,
    reported_leader: Option<Text>,
    leadership: Option<Leadership>,
    next_attempt: Option<Instant>,
    step: Option<Step>,
    pending: Option<Pending>,
    release: Release,
    events: heapless::Deque<Event, EVENT_CAPACITY>,
}

impl Elector {
    /// A candidate that makes its first attempt as soon as it is polled.
    ///
    /// `seed` feeds the acquire loop's jitter; give each process a different one (for example
    /// from the OS random source) so candidates do not retry in lock step.
    pub fn new(config: Config, seed: u64) -> Self {
        Self {
            config,
            jitter: Jitter::new(seed),
            observed: None,
            reported_leader: None,
            leadership: None,
            next_attempt: Some(Instant::ZERO),
            step: None,
            pending: None,
            release: Release::NotRequested,
            events: heapless::Deque::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether this candidate may act as leader at `now`: it won the lease, has not stepped
    /// down, and `now` is before [`valid_until`](Self::valid_until).
    pub fn is_leader(&self, now: Instant) -> bool {
        self.leadership.is_some_and(|l| now < self.stop_at(&l))
    }

    /// While leading: the instant leadership ends unless a renewal succeeds first, the send
    /// time of the last successful write plus [`Config::safe_lease`].
    pub fn valid_until(&self) -> Option<Instant> {
        self.leadership.map(|l| l.valid_until)
    }

    /// While leading: the fencing token of this term.
    pub fn fencing_token(&self) -> Option<FencingToken> {
        self.leadership.map(|l| l.token)
    }

    /// The holder named by the last record seen, if any.
    pub fn leader(&self) -> Option<&str> {
        self.observed
            .as_ref()
            .map(|o| o.record.holder_identity.as_str())
            .filter(|h| !h.is_empty())
    }

    /// The last record seen or written, if any.
    pub fn observed_record(&self) -> Option<&Record> {
        self.observed.as_ref().map(|o| &o.record)
    }

    /// client-go's `HealthzAdaptor` check: a leader whose record has not changed for longer than
    /// the lease duration plus `tolerance` is unhealthy (a stuck renew loop,
    /// kubernetes/kubernetes#70819). Non-leaders are always healthy.
    pub fn is_healthy(&self, now: Instant, tolerance: Duration) -> bool {
        match (&self.leadership, &self.observed) {
            (Some(_), Some(o)) => {
                now.saturating_duration_since(o.changed_at)
                    <= self.config.lease_duration() + tolerance
            }
            _ => true,
        }
    }

    /// Whether a requested release has finished: the machine will ask for nothing more.
    pub fn is_released(&self) -> bool {
        self.release == Release::Done
    }

    /// Stop leading at once and hand the lease back (client-go's `ReleaseOnCancel`), so another
    /// candidate can take over without waiting for expiry. Afterwards the machine re-reads the
    /// record and, if this candidate still holds it, writes an empty holder; it finishes
    /// ([`is_released`](Self::is_released)) when that succeeds, someone else holds the lease, or
    /// a renew deadline has passed.
    pub fn request_release(&mut self, now: Instant) {
        if self.release != Release::NotRequested {
            return;
        }
        self.step_down(StopReason::Released);
        self.next_attempt = None;
        self.step = None;
        let holder = self
            .observed
            .as_ref()
            .is_some_and(|o| o.record.holder_identity == self.config.identity());
        // A request in flight may have made us the holder: wait for its answer.
        if holder || self.pending.is_some() {
            self.release = Release::InProgress {
                deadline: now + self.config.renew_deadline(),
            };
            if self.pending.is_none() {
                self.step = Some(Step::Get);
            }
        } else {
            self.release = Release::Done;
        }
    }

    /// Advances timers: steps down at the end of a renew round or of the validity, and starts
    /// the next attempt when it is due.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(l) = self.leadership {
            let stop_at = self.stop_at(&l);
            if now >= stop_at {
                let reason = if stop_at == l.valid_until {
                    StopReason::ValidityExpired
                } else {
                    StopReason::RenewDeadline
                };
                self.step_down(reason);
            }
        }
        if let Release::InProgress { deadline } = self.release
            && now >= deadline
        {
            self.finish_release();
        }
        if self.pending.is_none()
            && self.step.is_none()
            && self.next_attempt.is_some_and(|t| now >= t)
        {
            self.next_attempt = None;
            self.step = Some(self.first_step(now));
        }
    }

    /// The next store request, if one is due at `now` (timers are advanced first, as
    /// [`handle_timeout`](Self::handle_timeout) does). `wall` (the caller's wall clock) only
    /// stamps `acquireTime`/`renewTime` for humans; it is never compared with anything.
    ///
    /// `now` is taken as the request's send time: call this right before sending.
    pub fn poll_action(&mut self, now: Instant, wall: MicroTime) -> Option<Action> {
        self.handle_timeout(now);
        if self.pending.is_some() {
            return None;
        }
        match self.step.take()? {
            Step::Get => {
                self.pending = Some(Pending::Get);
                Some(Action::Get)
            }
            Step::Write { kind, expected } => {
                let record = self.record_to_write(kind, wall);
                self.pending = Some(Pending::Write {
                    kind,
                    sent_at: now,
                    record: record.clone(),
                });
                Some(match expected {
                    Some(expected) => Action::Update { record, expected },
                    None => Action::Create(record),
                })
            }
        }
    }

    /// The next event for the caller.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When to call [`handle_timeout`](Self::handle_timeout) next, if anything is scheduled.
    ///
    /// Drain [`poll_action`](Self::poll_action) after every `handle_*` call first: an answer
    /// can make the next request due at once.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let leadership = self.leadership.map(|l| self.stop_at(&l));
        let attempt = self.next_attempt.filter(|_| self.pending.is_none());
        let release = match self.release {
            Release::InProgress { deadline } => Some(deadline),
            _ => None,
        };
        [leadership, attempt, release].into_iter().flatten().min()
    }

    /// The answer to [`Action::Get`]: the record and its version, `Ok(None)` if there is none.
    /// An answer nobody asked for is ignored.
    pub fn handle_get(&mut self, now: Instant, result: Result<Option<Stored>, StoreError>) {
        let pending = self.pending.take_if(|p| matches!(p, Pending::Get));
        if pending.is_none() || self.release == Release::Done {
            return;
        }
        let stored = match result {
            Ok(stored) => stored,
            Err(_) => return self.attempt_failed(now),
        };
        if self.release != Release::NotRequested {
            return self.release_after_get(now, stored);
        }
        let Some(stored) = stored else {
            // No record (any more): create a fresh one, as client-go does.
            self.observed = None;
            self.report_leader();
            self.step = Some(Step::Write {
                kind: WriteKind::Claim,
                expected: None,
            });
            return;
        };
        let version = stored.version;
        self.observe(now, stored.record, version);
        let Some(observed) = &self.observed else {
            return;
        };
        let record = &observed.record;
        let me = self.config.identity();
        let held_by_other = !record.is_released() && record.holder_identity != me;
        let still_held = held_by_other && now < observed.changed_at + holder_lease(record);
        let hand_over = record.holder_identity == me
            && self.config.honor_preferred_holder()
            && record
                .preferred_holder
                .as_deref()
                .is_some_and(|p| !p.is_empty() && p != me);
        if held_by_other {
            self.step_down(StopReason::Superseded);
        }
        if hand_over {
            self.step_down(StopReason::HandedOver);
        }
        if still_held || hand_over {
            return self.attempt_failed(now);
        }
        self.step = Some(Step::Write {
            kind: WriteKind::Claim,
            expected: Some(version),
        });
    }

    /// The answer to [`Action::Create`] or [`Action::Update`]: the new version, or why it failed.
    /// An answer nobody asked for is ignored.
    pub fn handle_write(&mut self, now: Instant, result: Result<Version, StoreError>) {
        let pending = self.pending.take_if(|p| matches!(p, Pending::Write { .. }));
        let Some(Pending::Write {
            kind,
            sent_at,
            record,
        }) = pending
        else {
            return;
        };
        if self.release == Release::Done {
            return;
        }
        let version = match result {
            Ok(version) => version,
            Err(error) => return self.write_failed(now, kind, error),
        };
        let transitions = record.leader_transitions;
        self.observed = Some(Observed {
            record,
            version,
            changed_at: now,
        });
        self.report_leader();
        if let Release::InProgress { .. } = self.release {
            if kind == WriteKind::Release {
                self.finish_release();
            } else {
                // An acquire or renew that was in flight when the release was requested:
                // re-read and hand back what it may have won.
                self.step = Some(Step::Get);
            }
            return;
        }
        let valid_until = sent_at + self.config.safe_lease();
        let round_deadline = now + self.config.retry_period() + self.config.renew_deadline();
        self.next_attempt = Some(now + self.config.retry_period());
        let token = match self.leadership {
            Some(l) => l.token,
            None => FencingToken {
                version,
                transitions,
            },
        };
        let term = Leadership {
            token,
            valid_until,
            round_deadline,
        };
        if now >= self.stop_at(&term) {
            // The answer came too late to act on; the next renewal may still succeed.
            return self.step_down(StopReason::ValidityExpired);
        }
        if self.leadership.replace(term).is_none() {
            self.push_event(Event::StartedLeading { token });
        }
    }

    /// The first request of an attempt: renew from the cache while our observed lease is
    /// valid, else read.
    fn first_step(&self, now: Instant) -> Step {
        if self.release != Release::NotRequested {
            return Step::Get;
        }
        match &self.observed {
            Some(o)
                if o.record.holder_identity == self.config.identity()
                    && now < o.changed_at + holder_lease(&o.record)
                    && !self.config.honor_preferred_holder() =>
            {
                Step::Write {
                    kind: WriteKind::FastRenew,
                    expected: Some(o.version),
                }
            }
            _ => Step::Get,
        }
    }

    /// Records what a read returned: a change of content restarts the expiry clock; a new
    /// version with the same content (a label edit) does not.
    fn observe(&mut self, now: Instant, record: Record, version: Version) {
        match &mut self.observed {
            Some(o) if o.record == record => o.version = version,
            _ => {
                self.observed = Some(Observed {
                    record,
                    version,
                    changed_at: now,
                });
                self.report_leader();
            }
        }
    }

    fn report_leader(&mut self) {
        let holder = self
            .observed
            .as_ref()
            .map(|o| &o.record.holder_identity)
            .filter(|h| !h.is_empty());
        if holder != self.reported_leader.as_ref() {
            self.reported_leader = holder.cloned();
            self.push_event(Event::NewLeader(self.reported_leader.clone()));
        }
    }

    /// Queues `event`, dropping the oldest one if the caller has not drained the queue.
    fn push_event(&mut self, event: Event) {
        if self.events.is_full() {
            self.events.pop_front();
        }
        // Cannot fail: there is room now.
        let _ = self.events.push_back(event);
    }

    fn write_failed(&mut self, now: Instant, kind: WriteKind, error: StoreError) {
        match kind {
            // client-go falls through to the slow path within the same attempt.
            WriteKind::FastRenew => self.step = Some(Step::Get),
            // Re-read and try again: the conflict may be an in-flight renew or a label edit.
            WriteKind::Release if error == StoreError::Conflict => self.step = Some(Step::Get),
            WriteKind::Release | WriteKind::Claim => self.attempt_failed(now),
        }
    }

    fn attempt_failed(&mut self, now: Instant) {
        match self.release {
            Release::InProgress { .. } => {
                self.next_attempt = Some(now + self.config.retry_period())
            }
            Release::Done => {}
            // A leader retries every retry period within its round; others jitter.
            Release::NotRequested if self.leadership.is_some() => {
                self.next_attempt = Some(now + self.config.retry_period());
            }
            Release::NotRequested => {
                self.next_attempt = Some(now + self.jitter.wait(self.config.retry_period()))
            }
        }
    }

    fn release_after_get(&mut self, now: Instant, stored: Option<Stored>) {
        let Some(stored) = stored else {
            return self.finish_release();
        };
        let version = stored.version;
        self.observe(now, stored.record, version);
        if self
            .observed
            .as_ref()
            .is_some_and(|o| o.record.holder_identity == self.config.identity())
        {
            self.step = Some(Step::Write {
                kind: WriteKind::Release,
                expected: Some(version),
            });
        } else {
            self.finish_release();
        }
    }

    fn finish_release(&mut self) {
        self.release = Release::Done;
        self.next_attempt = None;
        self.step = None;
    }

    fn step_down(&mut self, reason: StopReason) {
        if self.leadership.take().is_some() {
            self.push_event(Event::StoppedLeading { reason });
        }
    }

    /// When the current term ends unless renewed.
    fn stop_at(&self, term: &Leadership) -> Instant {
        #[cfg(test)]
        if self.config.client_go_timing {
            return term.round_deadline;
        }
        term.valid_until.min(term.round_deadline)
    }

    /// The record a write of `kind` proposes, from the last observed one (`docs/leader-lease.md`
    /// §3.4 step 6, §1.4 for a release).
    fn record_to_write(&self, kind: WriteKind, wall: MicroTime) -> Record {
        let me = self.config.identity();
        let previous = self.observed.as_ref().map(|o| &o.record);
        // Strictly after the previous renewal, so every write changes the record's content and
        // followers restart their expiry clock even if wall clocks disagree or stand still.
        let renew = previous
            .and_then(|p| p.renew_time)
            .map_or(wall, |last| wall.max(last.next_micro()));
        let mut record = match previous {
            Some(p) => p.clone(),
            None => Record::default(),
        };
        if kind == WriteKind::Release {
            record.holder_identity = Text::new();
            record.lease_duration_seconds = 1;
            record.acquire_time = Some(renew);
        } else {
            if record.holder_identity != me || previous.is_none() {
                if previous.is_some() {
                    record.leader_transitions = record.leader_transitions.saturating_add(1);
                }
                record.acquire_time = Some(renew);
                record.holder_identity = self.config.identity_text().clone();
            }
            record.lease_duration_seconds = self.config.lease_duration_seconds();
            if record.preferred_holder.as_deref() == Some(me) {
                record.preferred_holder = None;
            }
        }
        record.renew_time = Some(renew);
        record
    }
}

/// The holder's published lease duration (never our own setting); negative counts as zero.
fn holder_lease(record: &Record) -> Duration {
    Duration::from_secs(u64::try_from(record.lease_duration_seconds).unwrap_or(0))
}
