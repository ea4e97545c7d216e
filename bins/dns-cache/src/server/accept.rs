//! Backing off when `accept` fails. Out of file descriptors (EMFILE, ENFILE) the pending
//! connection stays in the queue and the listener stays readable, so retrying at once
//! would spin a core until a descriptor is freed. Each failure in a row waits twice as
//! long as the one before, from [`FIRST_DELAY`] up to [`MAX_DELAY`] (the delays Go's
//! `net/http` server uses for the same situation); one line is logged when an episode
//! starts and one when accepting works again.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

/// The wait after the first failure.
const FIRST_DELAY: Duration = Duration::from_millis(5);
/// The longest wait.
const MAX_DELAY: Duration = Duration::from_secs(1);

/// The state of one accept loop.
#[derive(Default)]
pub(super) struct Backoff {
    /// The wait after the last failure; `None` while accepting works.
    delay: Option<Duration>,
}

impl Backoff {
    /// Waits after a failed accept on `addr`.
    pub(super) async fn failed(&mut self, addr: SocketAddr, error: &io::Error) {
        let delay = match self.delay {
            None => {
                tracing::warn!("accepting connections on {addr}: {error}; backing off");
                FIRST_DELAY
            }
            Some(last) => (last * 2).min(MAX_DELAY),
        };
        self.delay = Some(delay);
        tokio::time::sleep(delay).await;
    }

    /// Notes a successful accept on `addr`.
    pub(super) fn accepted(&mut self, addr: SocketAddr) {
        if self.delay.take().is_some() {
            tracing::info!("accepting connections on {addr} again");
        }
    }
}
