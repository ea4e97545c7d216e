//! The idle TCP connections of an upstream, kept for reuse until they are `expire` old.
//! Generic over the connection and given `now` by the caller, so the expiry rules are
//! tested without a socket or a clock.

use std::time::{Duration, Instant};

/// Connections put back after an exchange, newest last.
#[derive(Debug)]
pub(crate) struct IdlePool<C> {
    idle: Vec<(C, Instant)>,
    expire: Duration,
}

impl<C> IdlePool<C> {
    /// An empty pool whose connections may be reused while they are younger than
    /// `expire` (idle time counted from when they were put back).
    pub(crate) fn new(expire: Duration) -> Self {
        Self {
            idle: Vec::new(),
            expire,
        }
    }

    /// Keeps `connection`, idle since `now`.
    pub(crate) fn put(&mut self, connection: C, now: Instant) {
        self.idle.push((connection, now));
    }

    /// Drops the connections that are `expire` old at `now`, then takes the newest one
    /// left.
    pub(crate) fn take(&mut self, now: Instant) -> Option<C> {
        let expire = self.expire;
        self.idle
            .retain(|(_, since)| now.saturating_duration_since(*since) < expire);
        self.idle.pop().map(|(connection, _)| connection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_connection_is_reused_first() {
        let now = Instant::now();
        let mut pool = IdlePool::new(Duration::from_secs(10));
        pool.put("old", now);
        pool.put("new", now);
        assert_eq!(pool.take(now), Some("new"));
        assert_eq!(pool.take(now), Some("old"));
        assert_eq!(pool.take(now), None);
    }

    #[test]
    fn connections_expire_once_they_are_expire_old() {
        let start = Instant::now();
        let mut pool = IdlePool::new(Duration::from_secs(10));
        pool.put("first", start);
        pool.put("second", start + Duration::from_secs(5));
        // At 10 s the first is exactly `expire` old: dropped; the second is kept.
        let at = start + Duration::from_secs(10);
        assert_eq!(pool.take(at), Some("second"));
        pool.put("second", at);
        assert_eq!(pool.take(at + Duration::from_secs(10)), None);
    }

    #[test]
    fn a_zero_expire_reuses_nothing() {
        let now = Instant::now();
        let mut pool = IdlePool::new(Duration::ZERO);
        pool.put("c", now);
        assert_eq!(pool.take(now), None);
    }
}
