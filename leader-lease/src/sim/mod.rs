//! A deterministic simulation of several candidates sharing one compare-and-swap store.
//!
//! Real time is virtual (nanoseconds). Each node reads its own monotonic clock, which runs at a
//! fixed rate within `1 ± ρ` of real time from its own offset. Every request goes through an
//! [`Adversary`] that delays or drops it; a driver that does not get an answer within the
//! request timeout reports [`StoreError::Unavailable`] (the write may still commit later, as a
//! real one can). Nodes crash (losing all state) and restart. After every event the simulation
//! checks the safety property: no two nodes have `is_leader(now)` true at once.
//!
//! Overlaps can only begin at an event (leadership starts when a write's answer arrives), and
//! `is_leader` compares against the node's clock at that instant, so checking at events is
//! exact.

mod tests;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::{Action, Config, Elector, Event, MicroTime, StoreError, Stored, Version};
use crate::{Duration, Instant};

const PPM: i64 = 1_000_000;

/// A node's monotonic clock: `offset + real × (1 + rate_ppm / 10⁶)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    pub(crate) offset: u64,
    pub(crate) rate_ppm: i64,
}

impl Clock {
    fn local(self, real: u64) -> Instant {
        let scaled = i128::from(real) * i128::from(PPM + self.rate_ppm) / i128::from(PPM);
        Instant::from_nanos(self.offset + u64::try_from(scaled).unwrap())
    }

    /// The first real instant at which the local clock reads at least `local`.
    fn real(self, local: Instant) -> u64 {
        let span = i128::from(local.as_nanos().saturating_sub(self.offset));
        let rate = i128::from(PPM + self.rate_ppm);
        let mut real =
            u64::try_from((span * i128::from(PPM) + rate - 1) / rate).unwrap_or(u64::MAX);
        while self.local(real) < local {
            real += 1;
        }
        real
    }
}

/// What the adversary does with one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Never reaches the store.
    Lost,
    /// Reaches the store after `request`, and its answer the node `response` later (an answer
    /// later than the request timeout is dropped and the driver reports a failure instead).
    Delivered {
        request: Duration,
        response: Duration,
    },
}

impl Delivery {
    pub(crate) const FAST: Self = Self::Delivered {
        request: Duration::ZERO,
        response: Duration::ZERO,
    };
}

/// A request as the adversary sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    pub(crate) node: usize,
    /// How many requests this node (all incarnations) sent before this one.
    pub(crate) index: usize,
}

/// Decides the fate of every request.
pub(crate) trait Adversary {
    fn deliver(&mut self, request: &Request) -> Delivery;
}

impl<F: FnMut(&Request) -> Delivery> Adversary for F {
    fn deliver(&mut self, request: &Request) -> Delivery {
        self(request)
    }
}

/// Something that happened, for liveness assertions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Log {
    Started { node: usize, real: u64 },
    Stopped { node: usize, real: u64 },
    Crashed { node: usize, real: u64 },
}

#[derive(Clone, Debug)]
#[expect(clippy::large_enum_variant, reason = "records are stored inline")]
enum Answer {
    Get(Result<Option<Stored>, StoreError>),
    Write(Result<Version, StoreError>),
}

#[derive(Clone, Debug)]
enum Ev {
    Wake {
        node: usize,
    },
    Commit {
        node: usize,
        incarnation: u32,
        action: Action,
        answer_after: Option<Duration>,
    },
    Answer {
        node: usize,
        incarnation: u32,
        answer: Answer,
    },
    Start {
        node: usize,
    },
    Crash {
        node: usize,
    },
    Release {
        node: usize,
    },
}

struct Node {
    config: Config,
    clock: Clock,
    seed: u64,
    elector: Option<Elector>,
    incarnation: u32,
    requests: usize,
    wake: Option<u64>,
}

/// The simulated world.
pub(crate) struct Sim<A> {
    pub(crate) real: u64,
    nodes: Vec<Node>,
    store: Option<Stored>,
    next_version: u64,
    queue: BTreeMap<(u64, u64), Ev>,
    seq: u64,
    adversary: A,
    pub(crate) log: Vec<Log>,
    /// The first instant two nodes led at once, and which.
    pub(crate) violation: Option<(u64, usize, usize)>,
    /// Writes whose `leaderTransitions` broke the counting rule.
    pub(crate) bad_transitions: Vec<String>,
}

/// Wall-clock stamp for a node: its local clock from a fixed date, for humans only.
fn wall(local: Instant) -> MicroTime {
    let micros = i64::try_from(local.as_nanos() / 1000).unwrap();
    MicroTime::from_unix_micros(1_796_032_800_000_000 + micros)
}

impl<A: Adversary> Sim<A> {
    pub(crate) fn new(adversary: A) -> Self {
        Self {
            real: 0,
            nodes: Vec::new(),
            store: None,
            next_version: 1,
            queue: BTreeMap::new(),
            seq: 0,
            adversary,
            log: Vec::new(),
            violation: None,
            bad_transitions: Vec::new(),
        }
    }

    /// Adds a node that starts at real time `start`; returns its index.
    pub(crate) fn add_node(
        &mut self,
        config: Config,
        clock: Clock,
        seed: u64,
        start: u64,
    ) -> usize {
        let node = self.nodes.len();
        self.nodes.push(Node {
            config,
            clock,
            seed,
            elector: None,
            incarnation: 0,
            requests: 0,
            wake: None,
        });
        self.schedule(start, Ev::Start { node });
        node
    }

    /// Puts a record in the store before anything runs (for example one left by a dead holder).
    pub(crate) fn preload(&mut self, record: crate::Record) {
        self.store = Some(Stored {
            record,
            version: Version(self.next_version),
        });
        self.next_version += 1;
    }

    pub(crate) fn crash_at(&mut self, node: usize, real: u64) {
        self.schedule(real, Ev::Crash { node });
    }

    pub(crate) fn restart_at(&mut self, node: usize, real: u64) {
        self.schedule(real, Ev::Start { node });
    }

    pub(crate) fn release_at(&mut self, node: usize, real: u64) {
        self.schedule(real, Ev::Release { node });
    }

    pub(crate) fn elector(&self, node: usize) -> Option<&Elector> {
        self.nodes.get(node).and_then(|n| n.elector.as_ref())
    }

    /// Nodes leading at the current instant.
    pub(crate) fn leaders(&self) -> Vec<usize> {
        let real = self.real;
        (0..self.nodes.len())
            .filter(|&i| {
                let n = &self.nodes[i];
                n.elector
                    .as_ref()
                    .is_some_and(|e| e.is_leader(n.clock.local(real)))
            })
            .collect()
    }

    fn schedule(&mut self, real: u64, ev: Ev) {
        self.queue.insert((real, self.seq), ev);
        self.seq += 1;
    }

    /// Runs every event up to `until` (real nanoseconds), checking safety after each.
    pub(crate) fn run_until(&mut self, until: u64) {
        while let Some(entry) = self.queue.first_entry() {
            if entry.key().0 > until {
                break;
            }
            let ((real, _), ev) = entry.remove_entry();
            self.real = real;
            self.step(ev);
            let leaders = self.leaders();
            if let ([a, b, ..], None) = (leaders.as_slice(), self.violation) {
                self.violation = Some((real, *a, *b));
            }
        }
        self.real = until;
    }

    fn step(&mut self, ev: Ev) {
        match ev {
            Ev::Wake { node } => {
                if self.nodes[node].wake == Some(self.real) {
                    self.nodes[node].wake = None;
                }
                self.drive(node);
            }
            Ev::Start { node } => {
                let n = &mut self.nodes[node];
                if n.elector.is_none() {
                    n.seed = n
                        .seed
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    n.elector = Some(Elector::new(n.config.clone(), n.seed));
                    self.drive(node);
                }
            }
            Ev::Crash { node } => {
                let n = &mut self.nodes[node];
                if n.elector.take().is_some() {
                    n.incarnation += 1;
                    n.wake = None;
                    self.log.push(Log::Crashed {
                        node,
                        real: self.real,
                    });
                }
            }
            Ev::Release { node } => {
                let n = &mut self.nodes[node];
                let local = n.clock.local(self.real);
                if let Some(e) = &mut n.elector {
                    e.request_release(local);
                    self.drive(node);
                }
            }
            Ev::Commit {
                node,
                incarnation,
                action,
                answer_after,
            } => {
                let answer = self.commit(action);
                if let Some(delay) = answer_after {
                    self.schedule(
                        self.real + delay.as_nanos(),
                        Ev::Answer {
                            node,
                            incarnation,
                            answer,
                        },
                    );
                }
            }
            Ev::Answer {
                node,
                incarnation,
                answer,
            } => {
                let n = &mut self.nodes[node];
                let local = n.clock.local(self.real);
                if n.incarnation != incarnation {
                    return;
                }
                let Some(e) = &mut n.elector else { return };
                match answer {
                    Answer::Get(result) => e.handle_get(local, result),
                    Answer::Write(result) => e.handle_write(local, result),
                }
                self.drive(node);
            }
        }
    }

    /// The store applies a request atomically.
    fn commit(&mut self, action: Action) -> Answer {
        match action {
            Action::Get => Answer::Get(Ok(self.store.clone())),
            Action::Create(record) => Answer::Write(if self.store.is_some() {
                Err(StoreError::Conflict)
            } else {
                Ok(self.write(record))
            }),
            Action::Update { record, expected } => Answer::Write(match &self.store {
                None => Err(StoreError::NotFound),
                Some(s) if s.version != expected => Err(StoreError::Conflict),
                Some(_) => Ok(self.write(record)),
            }),
        }
    }

    fn write(&mut self, record: crate::Record) -> Version {
        // `docs/leader-lease.md` §4 (kubernetes/kubernetes#41956): transitions change only with the
        // holder.
        let previous = self.store.as_ref().map(|s| &s.record);
        let expected = match previous {
            None => 0,
            Some(p) if record.is_released() || p.holder_identity == record.holder_identity => {
                p.leader_transitions
            }
            Some(p) => p.leader_transitions + 1,
        };
        if record.leader_transitions != expected {
            self.bad_transitions
                .push(format!("{previous:?} -> {record:?}"));
        }
        let version = Version(self.next_version);
        self.next_version += 1;
        self.store = Some(Stored { record, version });
        version
    }

    /// What a driver does after any input: fire timers, send the due request, log events, and
    /// arm the wake-up timer.
    fn drive(&mut self, node: usize) {
        let real = self.real;
        let n = &mut self.nodes[node];
        let local = n.clock.local(real);
        let Some(e) = &mut n.elector else { return };
        e.handle_timeout(local);
        let action = e.poll_action(local, wall(local));
        while let Some(event) = e.poll_event() {
            match event {
                Event::StartedLeading { .. } => self.log.push(Log::Started { node, real }),
                Event::StoppedLeading { .. } => self.log.push(Log::Stopped { node, real }),
                Event::NewLeader(_) => {}
            }
        }
        let timeout = e.config().request_timeout();
        let wake = e.poll_timeout().map(|t| n.clock.real(t).max(real));
        let incarnation = n.incarnation;
        let index = n.requests;
        if let Some(action) = action {
            n.requests += 1;
            let request = Request { node, index };
            let delivery = self.adversary.deliver(&request);
            self.send(node, incarnation, action, delivery, timeout);
        }
        if let Some(wake) = wake {
            let n = &mut self.nodes[node];
            if n.wake.is_none_or(|w| wake < w || w < real) {
                n.wake = Some(wake);
                self.schedule(wake, Ev::Wake { node });
            }
        }
    }

    fn send(
        &mut self,
        node: usize,
        incarnation: u32,
        action: Action,
        delivery: Delivery,
        timeout: Duration,
    ) {
        let failed = match action {
            Action::Get => Answer::Get(Err(StoreError::Unavailable)),
            _ => Answer::Write(Err(StoreError::Unavailable)),
        };
        let in_time = match delivery {
            Delivery::Lost => false,
            Delivery::Delivered { request, response } => {
                let in_time = request + response <= timeout;
                let answer_after = in_time.then_some(response);
                self.schedule(
                    self.real + request.as_nanos(),
                    Ev::Commit {
                        node,
                        incarnation,
                        action,
                        answer_after,
                    },
                );
                in_time
            }
        };
        if !in_time {
            self.schedule(
                self.real + timeout.as_nanos(),
                Ev::Answer {
                    node,
                    incarnation,
                    answer: failed,
                },
            );
        }
    }

    /// Real time of the first `Started` at or after `from`, by any node.
    pub(crate) fn first_start_after(&self, from: u64) -> Option<u64> {
        self.log.iter().find_map(|l| match l {
            Log::Started { real, .. } if *real >= from => Some(*real),
            _ => None,
        })
    }

    /// A readable account of the log, for assertion messages.
    pub(crate) fn trace(&self) -> String {
        let lines: Vec<String> = self.log.iter().map(|l| format!("{l:?}")).collect();
        lines.join("\n")
    }
}

/// Seconds as virtual real-time nanoseconds.
pub(crate) const fn secs(s: u64) -> u64 {
    s * 1_000_000_000
}

/// Milliseconds as virtual real-time nanoseconds.
pub(crate) const fn millis(ms: u64) -> u64 {
    ms * 1_000_000
}

/// `count` configs named `node-0`, `node-1`, … with the given timings (seconds / millis).
pub(crate) fn configs(count: usize, ld: u64, rd_ms: u64, rp_ms: u64) -> Vec<Config> {
    (0..count)
        .map(|i| {
            Config::new(
                format!("node-{i}"),
                Duration::from_secs(ld),
                Duration::from_millis(rd_ms),
                Duration::from_millis(rp_ms),
            )
            .unwrap()
        })
        .collect()
}

/// Clocks at both ends of the drift bound, alternating, with different offsets.
pub(crate) fn extreme_clocks(count: usize, drift_ppm: u32) -> Vec<Clock> {
    let rate = i64::from(drift_ppm);
    (0..count)
        .map(|i| Clock {
            offset: secs(1000) * i as u64,
            rate_ppm: if i % 2 == 0 { -rate } else { rate },
        })
        .collect()
}
