//! The queries waiting on an upstream's shared UDP socket, by the ID they were sent with:
//! a free random ID for each new one, the waiter of a reply's ID, and the detached waiters
//! whose deadline has passed at a `now` the caller gives. No socket, no clock, no lock: the
//! shared socket's glue ([`mux`](super::mux), [`upstream`](super::upstream)) holds the
//! table behind a mutex and decides what to do with the waiters it gets back.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::plugin::prehashed::BuildPreHashed;

/// Most queries one upstream socket carries at once (IDs are 16 bits).
pub(crate) const MAX_PENDING: usize = 32_768;

/// A query waiting for its reply: `T` is how a waiting task is told, `D` what completes a
/// query that no task waits for.
pub(crate) enum Waiter<T, D> {
    /// A task waits (and times itself out).
    Task(T),
    /// No task waits: whoever reads the reply completes the query.
    Detached {
        /// The client's ID, to put back into the reply.
        original_id: u16,
        /// When the query is given up if no reply has come.
        deadline: Instant,
        /// What completes the query.
        on_reply: D,
    },
}

/// The waiting queries of one socket, by ID.
pub(crate) struct Waiters<T, D> {
    by_id: HashMap<u16, Waiter<T, D>, BuildPreHashed>,
}

impl<T, D> Default for Waiters<T, D> {
    fn default() -> Self {
        Self {
            by_id: HashMap::default(),
        }
    }
}

impl<T, D> Waiters<T, D> {
    /// Files `waiter` under an ID drawn from `random` that no other query holds; gives the
    /// waiter back when [`MAX_PENDING`] queries are waiting already.
    pub(crate) fn register(
        &mut self,
        waiter: Waiter<T, D>,
        mut random: impl FnMut() -> u16,
    ) -> Result<u16, Waiter<T, D>> {
        if self.by_id.len() >= MAX_PENDING {
            return Err(waiter);
        }
        let mut id = random();
        while self.by_id.contains_key(&id) {
            id = random();
        }
        self.by_id.insert(id, waiter);
        Ok(id)
    }

    /// Takes the waiter of `id`, if a query still waits under it.
    pub(crate) fn remove(&mut self, id: u16) -> Option<Waiter<T, D>> {
        self.by_id.remove(&id)
    }

    /// Takes every waiter (the socket failed, so none will get a reply).
    pub(crate) fn drain(&mut self) -> Vec<Waiter<T, D>> {
        self.by_id.drain().map(|(_, waiter)| waiter).collect()
    }

    /// Takes the detached waiters whose deadline is `now` or earlier, and returns what
    /// completes each; waiting tasks are left alone, they time themselves out.
    pub(crate) fn expire(&mut self, now: Instant) -> Vec<D> {
        let ids: Vec<u16> = self
            .by_id
            .iter()
            .filter(|(_, w)| matches!(w, Waiter::Detached { deadline, .. } if *deadline <= now))
            .map(|(&id, _)| id)
            .collect();
        ids.into_iter()
            .filter_map(|id| match self.by_id.remove(&id) {
                Some(Waiter::Detached { on_reply, .. }) => Some(on_reply),
                _ => None,
            })
            .collect()
    }

    /// How many queries are waiting.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.by_id.len()
    }
}

/// A stream of random numbers (SplitMix64) that threads share without a lock: the IDs of
/// queries and probes sent to one upstream.
pub(crate) struct RandomIds(AtomicU64);

impl RandomIds {
    /// A stream starting from `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self(AtomicU64::new(seed))
    }

    /// The next number.
    pub(crate) fn next(&self) -> u64 {
        let mut x = self.0.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ (x >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    type Table = Waiters<&'static str, &'static str>;

    fn detached(on_reply: &'static str, deadline: Instant) -> Waiter<&'static str, &'static str> {
        Waiter::Detached {
            original_id: 7,
            deadline,
            on_reply,
        }
    }

    /// `random` yields these IDs in turn.
    fn ids(list: &[u16]) -> impl FnMut() -> u16 + '_ {
        let mut at = 0;
        move || {
            let id = list[at % list.len()];
            at += 1;
            id
        }
    }

    #[test]
    fn a_taken_id_is_drawn_again() {
        let mut table = Table::default();
        assert_eq!(table.register(Waiter::Task("a"), ids(&[5])).ok(), Some(5));
        assert_eq!(
            table.register(Waiter::Task("b"), ids(&[5, 5, 9])).ok(),
            Some(9)
        );
        assert!(matches!(table.remove(5), Some(Waiter::Task("a"))));
        assert!(table.remove(5).is_none());
        assert!(matches!(table.remove(9), Some(Waiter::Task("b"))));
    }

    #[test]
    fn a_full_table_gives_the_waiter_back() {
        let mut table = Table::default();
        let mut next = 0u16;
        for _ in 0..MAX_PENDING {
            let id = table.register(Waiter::Task("t"), || {
                next = next.wrapping_add(1);
                next
            });
            assert!(id.is_ok());
        }
        assert_eq!(table.len(), MAX_PENDING);
        assert!(matches!(
            table.register(Waiter::Task("late"), || 0),
            Err(Waiter::Task("late"))
        ));
    }

    #[test]
    fn only_detached_waiters_past_their_deadline_expire() {
        let start = Instant::now();
        let later = start + Duration::from_secs(2);
        let mut table = Table::default();
        table.register(detached("due", start), ids(&[1])).ok();
        table.register(detached("not yet", later), ids(&[2])).ok();
        table.register(Waiter::Task("task"), ids(&[3])).ok();

        assert_eq!(table.expire(start), ["due"]);
        assert_eq!(table.len(), 2);
        assert!(table.expire(start).is_empty());
        assert_eq!(table.expire(later), ["not yet"]);
        assert!(matches!(table.remove(3), Some(Waiter::Task("task"))));
    }

    #[test]
    fn drain_takes_every_waiter() {
        let mut table = Table::default();
        table.register(Waiter::Task("task"), ids(&[1])).ok();
        table
            .register(detached("detached", Instant::now()), ids(&[2]))
            .ok();
        assert_eq!(table.drain().len(), 2);
        assert_eq!(table.len(), 0);
    }

    #[test]
    fn random_ids_follow_from_the_seed() {
        let (a, b) = (RandomIds::new(42), RandomIds::new(42));
        let first: Vec<u64> = (0..4).map(|_| a.next()).collect();
        let second: Vec<u64> = (0..4).map(|_| b.next()).collect();
        assert_eq!(first, second);
        assert_eq!(
            first.iter().collect::<std::collections::HashSet<_>>().len(),
            4
        );
    }
}
