//! What the driver tells the application: the current leadership, and notices as it changes.

use leader_lease::{Event, FencingToken};
use tokio::time::Instant;

use crate::store::RequestError;

/// Leadership as of the driver's last step, published through a `tokio::sync::watch` channel
/// ([`Driver::status`](crate::Driver::status)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// The holder named by the last record seen, if any.
    pub leader: Option<String>,
    /// This candidate's term while it leads.
    pub term: Option<Term>,
}

impl Status {
    /// Whether this candidate may act as leader at `now`. Check it right before every side
    /// effect: it holds only until the term's `valid_until`, even if the driver is late to
    /// publish the end of the term.
    pub fn is_leading(&self, now: Instant) -> bool {
        self.term.is_some_and(|term| now < term.valid_until)
    }
}

/// One term of leadership, as of the last successful renewal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    /// Pass it to resources that can reject stale leaders.
    pub token: FencingToken,
    /// The instant leadership ends unless a renewal succeeds first
    /// ([`leader_lease::Elector::valid_until`] on tokio's clock).
    pub valid_until: Instant,
}

/// Something the driver reports to its callback.
#[derive(Debug)]
#[non_exhaustive]
#[expect(
    clippy::large_enum_variant,
    reason = "notices are rare; events carry the leader's name inline"
)]
pub enum Notice {
    /// The state machine reported an event.
    Event {
        /// The event.
        event: Event,
        /// When the driver saw it.
        at: Instant,
        /// For `StartedLeading`, the new term; for `StoppedLeading`, the term that ended (with
        /// its last `valid_until`); otherwise `None`.
        term: Option<Term>,
    },
    /// A store request failed; the state machine retries as its timings allow.
    RequestFailed {
        /// Which request.
        request: Request,
        /// Why it failed.
        error: RequestError,
        /// When the failure was seen.
        at: Instant,
    },
}

/// The kind of a store request, for [`Notice::RequestFailed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// [`Store::get`](crate::Store::get).
    Get,
    /// [`Store::create`](crate::Store::create).
    Create,
    /// [`Store::update`](crate::Store::update).
    Update,
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Get => "get",
            Self::Create => "create",
            Self::Update => "update",
        })
    }
}
