//! The per-service chains in one index: whether the kernel holds each (as far as the
//! proxier knows), how many written Services want it, and the last sync that added it. A
//! full sync counts again from zero without emptying the index (a chain wanted again is
//! found where it is), and the chains the kernel holds that no Service wants are then read
//! from the index, not looked up one by one in a second one.

use alloc::vec::Vec;

use hashbrown::HashMap;
use hashbrown::hash_map::Entry;

use crate::name::Name;

/// One chain.
#[derive(Clone, Copy, Debug, Default)]
struct State {
    /// The kernel holds it.
    kernel: bool,
    /// How many written Services want it, counted since full sync `since`.
    wanted: u32,
    since: u64,
    /// The last sync that added it.
    added_in: u64,
}

/// Counts one more Service wanting the chain of `state` in full sync `full_syncs`
/// ([`Chains::want`]); whether sync `adding` (if it adds it) has not added it yet: then it has.
fn count(state: &mut State, full_syncs: u64, adding: Option<u64>) -> bool {
    if state.since != full_syncs {
        state.since = full_syncs;
        state.wanted = 0;
    }
    state.wanted = state.wanted.saturating_add(1);
    match adding {
        Some(sync) if state.added_in != sync => {
            state.added_in = sync;
            true
        }
        _ => false,
    }
}

/// The per-service chains.
#[derive(Clone, Debug, Default)]
pub(crate) struct Chains {
    map: HashMap<Name, State>,
    /// How many full syncs began: counts from an earlier one count nothing.
    full_syncs: u64,
}

impl Chains {
    fn wanted_now(&self, state: &State) -> bool {
        state.since == self.full_syncs && state.wanted > 0
    }

    /// Starts a full sync: no chain is wanted until it is counted again. `room`: about how
    /// many chains it will want.
    pub(crate) fn recount(&mut self, room: usize) {
        self.full_syncs += 1;
        self.map.reserve(room.saturating_sub(self.map.len()));
    }

    /// Counts one more Service wanting `chain`, as a sync writes it; whether sync `adding`
    /// (if it adds it) has not added it yet (kube-proxy's `ensureChain`: each chain is added
    /// once per transaction): then it has.
    pub(crate) fn want(&mut self, chain: &Name, adding: Option<u64>) -> bool {
        let full_syncs = self.full_syncs;
        match self.map.entry(chain.clone()) {
            Entry::Occupied(entry) => count(entry.into_mut(), full_syncs, adding),
            // A chain new to the index is counted first and written once, not read back: a
            // new proxier's first sync adds every chain, each to a line of the table that is
            // not yet in the cache, and reading it back would wait for it.
            Entry::Vacant(entry) => {
                let mut state = State::default();
                let added = count(&mut state, full_syncs, adding);
                entry.insert(state);
                added
            }
        }
    }

    /// Counts `chain` down (a Service that wanted it changed or went); whether no Service
    /// wants it any more.
    pub(crate) fn release(&mut self, chain: &Name) -> bool {
        let full_syncs = self.full_syncs;
        let Some(state) = self.map.get_mut(chain) else {
            return false;
        };
        if state.since != full_syncs || state.wanted == 0 {
            return false;
        }
        state.wanted -= 1;
        if state.wanted > 0 {
            return false;
        }
        if !state.kernel {
            self.map.remove(chain);
        }
        true
    }

    /// Whether a written Service wants `chain`.
    pub(crate) fn wanted(&self, chain: &Name) -> bool {
        self.map.get(chain).is_some_and(|s| self.wanted_now(s))
    }

    /// Whether the kernel holds `chain`.
    pub(crate) fn in_kernel(&self, chain: &Name) -> bool {
        self.map.get(chain).is_some_and(|s| s.kernel)
    }

    /// Whether the kernel holds any chain (a scan, which stops at the first: a new proxier's
    /// index is empty, a restarted one's starts with those found in the kernel).
    pub(crate) fn any_in_kernel(&self) -> bool {
        self.map.values().any(|s| s.kernel)
    }

    /// Notes that the kernel holds `chain`.
    pub(crate) fn held(&mut self, chain: Name) {
        self.map.entry(chain).or_default().kernel = true;
    }

    /// Notes that the kernel no longer holds `chain` (it was deleted).
    pub(crate) fn deleted(&mut self, chain: &Name) {
        let full_syncs = self.full_syncs;
        if let Some(state) = self.map.get_mut(chain) {
            state.kernel = false;
            if !(state.since == full_syncs && state.wanted > 0) {
                self.map.remove(chain);
            }
        }
    }

    /// Notes that sync `sync`, a full one, was applied: the chains it added are in the
    /// kernel.
    pub(crate) fn added_by(&mut self, sync: u64) {
        for state in self.map.values_mut() {
            if state.added_in == sync {
                state.kernel = true;
            }
        }
    }

    /// At the end of a full sync: the chains the kernel holds that no Service wants, in name
    /// order. The index forgets those neither held nor wanted.
    pub(crate) fn unwanted(&mut self) -> Vec<Name> {
        let full_syncs = self.full_syncs;
        let now = |s: &State| s.since == full_syncs && s.wanted > 0;
        self.map.retain(|_, s| s.kernel || now(s));
        let mut unwanted: Vec<Name> = self
            .map
            .iter()
            .filter(|(_, s)| !now(s))
            .map(|(chain, _)| chain.clone())
            .collect();
        unwanted.sort_unstable();
        unwanted
    }
}
