//! The driver loop: real time, a real store, and the state machine in between.

use std::future::Future;
use std::hash::{BuildHasher as _, RandomState};
use std::pin::{Pin, pin};

use leader_lease::{Action, Config, Elector, Event, Stored, Version};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::clock::Clock;
use crate::status::{Notice, Request, Status, Term};
use crate::store::{RequestError, Store};

/// Runs one candidate: carries out the [`Elector`]'s store requests, each bounded by
/// [`Config::request_timeout`], wakes it when its timers are due, publishes a [`Status`] and
/// reports [`Notice`]s, and hands the lease back on shutdown.
#[derive(Debug)]
pub struct Driver<S> {
    elector: Elector,
    store: S,
    clock: Clock,
    status: watch::Sender<Status>,
}

/// The answer to one request, tagged with its kind.
type Answer = (Request, Outcome);

#[expect(
    clippy::large_enum_variant,
    reason = "one answer is in flight at a time; records are stored inline"
)]
enum Outcome {
    Get(Result<Option<Stored>, RequestError>),
    Write(Result<Version, RequestError>),
}

type InFlight<'a> = Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;

impl<S: Store> Driver<S> {
    /// A candidate with `config` campaigning on `store`; its retry jitter is seeded from the
    /// process's random hasher keys, so candidates do not retry in lock step.
    pub fn new(config: Config, store: S) -> Self {
        let seed = RandomState::new().hash_one(std::process::id());
        Self {
            elector: Elector::new(config, seed),
            store,
            clock: Clock::new(),
            status: watch::Sender::new(Status::default()),
        }
    }

    /// Leadership as the driver last saw it; check [`Status::is_leading`] before side effects.
    pub fn status(&self) -> watch::Receiver<Status> {
        self.status.subscribe()
    }

    /// Campaigns until `shutdown` completes, then releases the lease (client-go's
    /// `ReleaseOnCancel`) and returns the state machine once the release is done or has given
    /// up (after at most the renew deadline). Every event and failed request is passed to
    /// `on_notice` as it happens. Aborting the task instead is a crash: others take over once the
    /// lease expires.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()>,
        mut on_notice: impl FnMut(Notice),
    ) -> Elector {
        let Self {
            mut elector,
            store,
            clock,
            status,
        } = self;
        let limit = std::time::Duration::from_nanos(elector.config().request_timeout().as_nanos());
        let mut shutdown = pin!(shutdown);
        let mut stopping = false;
        let mut in_flight: Option<InFlight<'_>> = None;
        let mut term = None;
        loop {
            if in_flight.is_none()
                && let Some(action) = elector.poll_action(clock.now(), clock.wall())
            {
                in_flight = Some(Box::pin(execute(&store, action, limit)));
            }
            term = publish(&mut elector, &clock, &status, term, &mut on_notice);
            if elector.is_released() {
                return elector;
            }
            let wake = elector.poll_timeout().map(|t| clock.to_tokio(t));
            tokio::select! {
                () = &mut shutdown, if !stopping => {
                    stopping = true;
                    elector.request_release(clock.now());
                }
                (request, outcome) = answer(&mut in_flight) => {
                    in_flight = None;
                    let now = clock.now();
                    let error = match outcome {
                        Outcome::Get(result) => {
                            let (result, error) = split(result);
                            elector.handle_get(now, result);
                            error
                        }
                        Outcome::Write(result) => {
                            let (result, error) = split(result);
                            elector.handle_write(now, result);
                            error
                        }
                    };
                    if let Some(error) = error {
                        on_notice(Notice::RequestFailed { request, error, at: clock.to_tokio(now) });
                    }
                }
                () = sleep_until(wake) => elector.handle_timeout(clock.now()),
            }
        }
    }
}

/// Carries out one action, failing it with [`RequestError::TimedOut`] after `limit`.
async fn execute<S: Store>(store: &S, action: Action, limit: std::time::Duration) -> Answer {
    async fn bounded<T>(
        limit: std::time::Duration,
        request: impl Future<Output = Result<T, RequestError>>,
    ) -> Result<T, RequestError> {
        tokio::time::timeout(limit, request)
            .await
            .unwrap_or(Err(RequestError::TimedOut(limit)))
    }
    match action {
        Action::Get => (
            Request::Get,
            Outcome::Get(bounded(limit, store.get()).await),
        ),
        Action::Create(record) => (
            Request::Create,
            Outcome::Write(bounded(limit, store.create(&record)).await),
        ),
        Action::Update { record, expected } => (
            Request::Update,
            Outcome::Write(bounded(limit, store.update(&record, expected)).await),
        ),
    }
}

/// The in-flight request's answer; never resolves when nothing is in flight.
async fn answer(in_flight: &mut Option<InFlight<'_>>) -> Answer {
    match in_flight {
        Some(request) => request.await,
        None => std::future::pending().await,
    }
}

/// Sleeps until `wake`, or forever when nothing is scheduled.
async fn sleep_until(wake: Option<Instant>) {
    match wake {
        Some(wake) => tokio::time::sleep_until(wake).await,
        None => std::future::pending().await,
    }
}

/// The state machine's view of a result, and the detailed error to report.
fn split<T>(
    result: Result<T, RequestError>,
) -> (Result<T, leader_lease::StoreError>, Option<RequestError>) {
    match result {
        Ok(value) => (Ok(value), None),
        Err(error) => (Err(error.kind()), Some(error)),
    }
}

/// Publishes the status and reports the pending events; returns the current term, which the
/// next call needs to describe a term that ended.
fn publish(
    elector: &mut Elector,
    clock: &Clock,
    status: &watch::Sender<Status>,
    previous: Option<Term>,
    on_notice: &mut impl FnMut(Notice),
) -> Option<Term> {
    let current = elector
        .fencing_token()
        .zip(elector.valid_until())
        .map(|(token, valid_until)| Term {
            token,
            valid_until: clock.to_tokio(valid_until),
        });
    let next = Status {
        leader: elector.leader().map(String::from),
        term: current,
    };
    status.send_if_modified(|shown| {
        let changed = *shown != next;
        *shown = next;
        changed
    });
    let at = Instant::now();
    while let Some(event) = elector.poll_event() {
        let term = match event {
            Event::StartedLeading { .. } => current,
            Event::StoppedLeading { .. } => previous,
            Event::NewLeader(_) => None,
        };
        on_notice(Notice::Event { event, at, term });
    }
    current
}
