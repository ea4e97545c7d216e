//! The idle TCP connections of an upstream, kept for reuse until they are `expire` old or
//! the upstream closes them. Generic over the connection (the caller says which ones the
//! peer closed) and given `now` by the caller, so the rules are tested without a socket or
//! a clock.
//!
//! A connection the upstream closed stays half-open here (CLOSE-WAIT) until it is dropped,
//! so the pool is swept while it holds any: the caller starts a sweeper when [`put`]
//! says so, and the sweeper stops when [`sweep`] finds the pool empty.
//!
//! [`put`]: IdlePool::put
//! [`sweep`]: IdlePool::sweep

use std::time::{Duration, Instant};

/// Connections put back after an exchange, newest last.
#[derive(Debug)]
pub(crate) struct IdlePool<C> {
    idle: Vec<(C, Instant)>,
    expire: Duration,
    /// Whether a sweeper runs.
    sweeping: bool,
}

impl<C> IdlePool<C> {
    /// An empty pool whose connections may be reused while they are younger than
    /// `expire` (idle time counted from when they were put back).
    pub(crate) fn new(expire: Duration) -> Self {
        Self {
            idle: Vec::new(),
            expire,
            sweeping: false,
        }
    }

    /// Keeps `connection`, idle since `now`; true when the caller must start a sweeper.
    pub(crate) fn put(&mut self, connection: C, now: Instant) -> bool {
        self.idle.push((connection, now));
        !std::mem::replace(&mut self.sweeping, true)
    }

    /// Drops the connections that are `expire` old at `now` or that `open` says the peer
    /// closed, then takes the newest one left.
    pub(crate) fn take(&mut self, now: Instant, open: impl Fn(&C) -> bool) -> Option<C> {
        self.prune(now, open);
        self.idle.pop().map(|(connection, _)| connection)
    }

    /// The sweeper's round: drops what [`IdlePool::take`] would; false (and the sweeper
    /// stops) when no connection is left.
    pub(crate) fn sweep(&mut self, now: Instant, open: impl Fn(&C) -> bool) -> bool {
        self.prune(now, open);
        self.sweeping = !self.idle.is_empty();
        self.sweeping
    }

    fn prune(&mut self, now: Instant, open: impl Fn(&C) -> bool) {
        let expire = self.expire;
        self.idle.retain(|(connection, since)| {
            now.saturating_duration_since(*since) < expire && open(connection)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_connection_is_reused_first() {
        let now = Instant::now();
        let mut pool = IdlePool::new(Duration::from_secs(10));
        assert!(pool.put("old", now));
        assert!(!pool.put("new", now));
        assert_eq!(pool.take(now, |_| true), Some("new"));
        assert_eq!(pool.take(now, |_| true), Some("old"));
        assert_eq!(pool.take(now, |_| true), None);
    }

    #[test]
    fn connections_expire_once_they_are_expire_old() {
        let start = Instant::now();
        let mut pool = IdlePool::new(Duration::from_secs(10));
        pool.put("first", start);
        pool.put("second", start + Duration::from_secs(5));
        // At 10 s the first is exactly `expire` old: dropped; the second is kept.
        let at = start + Duration::from_secs(10);
        assert_eq!(pool.take(at, |_| true), Some("second"));
        pool.put("second", at);
        assert_eq!(pool.take(at + Duration::from_secs(10), |_| true), None);
    }

    #[test]
    fn a_zero_expire_reuses_nothing() {
        let now = Instant::now();
        let mut pool = IdlePool::new(Duration::ZERO);
        pool.put("c", now);
        assert_eq!(pool.take(now, |_| true), None);
    }

    #[test]
    fn connections_the_peer_closed_are_dropped() {
        let now = Instant::now();
        let mut pool = IdlePool::new(Duration::from_secs(10));
        pool.put("open", now);
        pool.put("closed", now);
        assert_eq!(pool.take(now, |c| *c == "open"), Some("open"));
        assert_eq!(pool.take(now, |_| true), None);
    }

    #[test]
    fn the_sweeper_runs_while_connections_are_kept() {
        let now = Instant::now();
        let mut pool = IdlePool::new(Duration::from_secs(10));
        assert!(pool.put("a", now));
        assert!(pool.sweep(now, |_| true));
        assert!(!pool.put("b", now));
        // Both closed by the peer: dropped, and the sweeper stops.
        assert!(!pool.sweep(now, |_| false));
        assert!(pool.put("c", now));
        // Expired: dropped too.
        assert!(!pool.sweep(now + Duration::from_secs(10), |_| true));
    }
}
