//! The TCP connection slots of one listener: at most `connections` open at once, and at
//! most `per_client` from one client address. A connection over a limit takes the slot of
//! the connection that has been idle longest (among the same client's connections when
//! that client is over its own limit); it is refused only when every candidate is busy
//! answering queries. Without this, a client that opens connections and never finishes a
//! query would keep every slot, and answering clients would be refused.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;

/// What an open connection tells the registry about itself.
pub(super) struct Activity {
    /// The registry's clock origin.
    epoch: Instant,
    /// Queries read and not yet answered.
    outstanding: AtomicUsize,
    /// When `outstanding` last fell to zero (or the connection opened), in milliseconds
    /// since `epoch`.
    idle_since: AtomicU64,
    /// Notified when another connection took this slot.
    evicted: Notify,
}

impl Activity {
    fn new(epoch: Instant) -> Self {
        let activity = Self {
            epoch,
            outstanding: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            evicted: Notify::new(),
        };
        activity.touch();
        activity
    }

    fn touch(&self) {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.idle_since.store(now, Ordering::Relaxed);
    }

    /// A query was read: the connection is busy until it is answered.
    pub(super) fn begin(&self) {
        self.outstanding.fetch_add(1, Ordering::Relaxed);
    }

    /// A query was answered (or needs no answer).
    pub(super) fn end(&self) {
        if self.outstanding.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.touch();
        }
    }

    /// Completes when another connection took this slot.
    pub(super) async fn evicted(&self) {
        self.evicted.notified().await;
    }

    /// Since when the connection is idle; `None` while it answers queries.
    fn idle_since(&self) -> Option<u64> {
        (self.outstanding.load(Ordering::Relaxed) == 0)
            .then(|| self.idle_since.load(Ordering::Relaxed))
    }
}

struct Open {
    client: IpAddr,
    activity: Arc<Activity>,
}

#[derive(Default)]
struct Registry {
    next_id: u64,
    open: HashMap<u64, Open>,
    per_client: HashMap<IpAddr, usize>,
}

impl Registry {
    fn remove(&mut self, id: u64) -> Option<Open> {
        let open = self.open.remove(&id)?;
        if let Some(count) = self.per_client.get_mut(&open.client) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.per_client.remove(&open.client);
            }
        }
        Some(open)
    }

    /// Closes the connection idle longest among those `candidate` accepts; false if all
    /// of them are busy.
    fn evict(&mut self, candidate: impl Fn(&Open) -> bool) -> bool {
        let oldest = self
            .open
            .iter()
            .filter(|(_, open)| candidate(open))
            .filter_map(|(id, open)| Some((open.activity.idle_since()?, *id)))
            .min();
        let Some(open) = oldest.and_then(|(_, id)| self.remove(id)) else {
            return false;
        };
        open.activity.evicted.notify_one();
        true
    }
}

/// The slots of one listener (shared by its worker sockets).
pub(super) struct Slots {
    connections: usize,
    per_client: usize,
    epoch: Instant,
    registry: Mutex<Registry>,
}

impl Slots {
    /// At most `connections` open, `per_client` from one address.
    pub(super) fn new(connections: usize, per_client: usize) -> Self {
        Self {
            connections,
            per_client,
            epoch: Instant::now(),
            registry: Mutex::default(),
        }
    }

    /// A slot for a new connection from `client`, freeing the slot of an idle connection
    /// if a limit is reached; `None` when no slot can be freed.
    pub(super) fn admit(self: &Arc<Self>, client: IpAddr) -> Option<Slot> {
        let mut registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        let from_client = registry.per_client.get(&client).copied().unwrap_or(0);
        if from_client >= self.per_client {
            if !registry.evict(|open| open.client == client) {
                return None;
            }
        } else if registry.open.len() >= self.connections && !registry.evict(|_| true) {
            return None;
        }
        let id = registry.next_id;
        registry.next_id = id.wrapping_add(1);
        let activity = Arc::new(Activity::new(self.epoch));
        registry.open.insert(
            id,
            Open {
                client,
                activity: Arc::clone(&activity),
            },
        );
        *registry.per_client.entry(client).or_insert(0) += 1;
        Some(Slot {
            slots: Arc::clone(self),
            id,
            activity,
        })
    }
}

/// One connection's slot, given back on drop.
pub(super) struct Slot {
    slots: Arc<Slots>,
    id: u64,
    /// What the connection reports.
    pub(super) activity: Arc<Activity>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots
            .registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn a_full_listener_frees_the_slot_idle_longest() {
        let slots = Arc::new(Slots::new(2, 10));
        let first = slots.admit(ip(1)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let second = slots.admit(ip(2)).unwrap();
        let _third = slots.admit(ip(3)).unwrap();
        let registry = slots.registry.lock().unwrap();
        assert!(!registry.open.contains_key(&first.id));
        assert!(registry.open.contains_key(&second.id));
    }

    #[test]
    fn busy_connections_keep_their_slots() {
        let slots = Arc::new(Slots::new(1, 10));
        let busy = slots.admit(ip(1)).unwrap();
        busy.activity.begin();
        assert!(slots.admit(ip(2)).is_none());
        busy.activity.end();
        assert!(slots.admit(ip(2)).is_some());
    }

    #[test]
    fn a_client_over_its_limit_loses_its_own_idle_connection() {
        let slots = Arc::new(Slots::new(10, 2));
        let other = slots.admit(ip(9)).unwrap();
        let first = slots.admit(ip(1)).unwrap();
        let _second = slots.admit(ip(1)).unwrap();
        let _third = slots.admit(ip(1)).unwrap();
        let registry = slots.registry.lock().unwrap();
        assert!(!registry.open.contains_key(&first.id));
        assert!(registry.open.contains_key(&other.id));
        assert_eq!(registry.per_client.get(&ip(1)), Some(&2));
    }

    #[test]
    fn dropped_slots_are_given_back() {
        let slots = Arc::new(Slots::new(1, 1));
        let busy = slots.admit(ip(1)).unwrap();
        busy.activity.begin();
        drop(busy);
        assert!(slots.admit(ip(1)).is_some());
        assert!(slots.registry.lock().unwrap().open.len() <= 1);
    }
}
