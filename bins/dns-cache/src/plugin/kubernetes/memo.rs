//! The plugin's memo of encoded replies: a repeated question is answered by replaying the
//! reply built the first time (the cache's [`StoredReply`] and [`replay`]: ID and flags
//! patched in place), not by looking it up and encoding it again.
//!
//! A reply depends on the question (name, type, class), on the index and on whether the
//! first snapshot is in; nothing else of the request changes it (the OPT record is the
//! server's, added when the reply is fitted to the client). The name is the key as the
//! client wrote it, case included: records may repeat the question's name in its case or
//! point to it, and which of them do depends on the encoder's name compression, so a reply
//! built for one case is not another case's reply with the question patched. The memo therefore
//! belongs to one index: each snapshot swaps a new index in, and the first query that sees
//! it empties the memo, so that no reply outlives the objects it was built from. It holds
//! at most [`CAPACITY`] replies and is emptied when full, so that hostile names cannot grow
//! it; replies that are not memoized are built as before.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::{Arc, Mutex};

use dns_wire::Opcode;
use dns_wire::cache::TtlCursor;

use super::index::Index;
use crate::query::reply::{Replay, replay};
use crate::query::request::Request;
use crate::query::stored::StoredReply;

/// The most replies the memo holds.
pub(super) const CAPACITY: usize = 10_000;
/// The length of the option-less OPT record the server appends for an EDNS client.
const OPT_LEN: usize = 11;

/// Replies built from one index, by the hash of their question.
#[derive(Debug, Default)]
struct Generation {
    /// The index the replies were built from (kept, so that its address is not reused).
    index: Option<Arc<Index>>,
    replies: HashMap<u64, StoredReply>,
}

/// The memo of a plugin.
#[derive(Debug, Default)]
pub(super) struct Memo {
    generation: Mutex<Generation>,
    hasher: RandomState,
}

impl Memo {
    /// The key of `req`, if its reply may be memoized: a standard query (the flags of other
    /// opcodes' replies are not the query's) whose name is not compressed (a question's
    /// never is in practice).
    fn key(&self, req: &Request<'_>) -> Option<u64> {
        if req.header.opcode != Opcode::QUERY {
            return None;
        }
        let name = req.question.name.uncompressed()?;
        let mut h = self.hasher.build_hasher();
        h.write(name);
        h.write_u16(req.question.qtype.0);
        h.write_u16(req.question.qclass.0);
        Some(h.finish())
    }

    /// Writes the memoized reply to `req` built from `index` into `out`, as the plugin
    /// would build it, with the client's OPT record if it sent one. False (and `out` to be
    /// cleared) if there is none, or if it would not fit the client without truncation
    /// (then it is built and fitted as any other reply).
    pub(super) fn replay(&self, req: &Request<'_>, index: &Arc<Index>, out: &mut Vec<u8>) -> bool {
        let Some(key) = self.key(req) else {
            return false;
        };
        let reply = {
            let Ok(generation) = self.generation.lock() else {
                return false;
            };
            if !generation
                .index
                .as_ref()
                .is_some_and(|i| Arc::ptr_eq(i, index))
            {
                return false;
            }
            let Some(reply) = generation.replies.get(&key) else {
                return false;
            };
            reply.clone()
        };
        let opt = if req.edns.is_some() { OPT_LEN } else { 0 };
        if reply.message().len() + opt > req.max_reply() {
            return false;
        }
        let how = Replay {
            age: 0,
            stale_ttl: None,
            hit: false,
        };
        replay(&reply, req, how, out)
    }

    /// Keeps `wire`, the reply to `req` built from `index`, if every TTL in it is `ttl`
    /// (the stored form gives all records one TTL).
    pub(super) fn keep(&self, req: &Request<'_>, index: &Arc<Index>, wire: &[u8], ttl: u32) {
        let Some(key) = self.key(req) else {
            return;
        };
        let Ok(mut ttls) = TtlCursor::new(wire) else {
            return;
        };
        let cursor = ttls.clone();
        while let Some(at) = ttls.next(wire) {
            let same = wire
                .get(at..)
                .and_then(|f| f.first_chunk::<4>())
                .is_some_and(|f| u32::from_be_bytes(*f) == ttl);
            if !same {
                return;
            }
        }
        let Some(reply) = StoredReply::new(wire.to_vec(), cursor, ttl) else {
            return;
        };
        let Ok(mut generation) = self.generation.lock() else {
            return;
        };
        let current = generation
            .index
            .as_ref()
            .is_some_and(|i| Arc::ptr_eq(i, index));
        if !current || generation.replies.len() >= CAPACITY {
            generation.replies.clear();
            generation.index = Some(Arc::clone(index));
        }
        generation.replies.insert(key, reply);
    }

    /// How many replies are memoized.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.generation.lock().map_or(0, |g| g.replies.len())
    }
}
