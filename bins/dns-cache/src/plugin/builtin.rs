//! The built-in plugins as members of a query chain: each one's [`Plugin`] implementation,
//! what it does on the way down and on the way back.
//!
//! - `errors` logs the error of a failed chain on the way back.
//! - `log` logs every query on the way back.
//! - `cache` answers hits on the way down; on the way back it stores what came from below
//!   (it sees the reply before it is fitted to the client) and serves a stale entry when
//!   that failed.
//! - `hosts`, `kubernetes` and `whoami` answer (`kubernetes` also says when it is ready:
//!   its first objects are in); `loop` fails the chain on a loop; `forward` waits for
//!   upstream ([`Serve::Wait`]).

use dns_wire::{Message, OwnedMessage, Rcode};

use super::cache::{Cache, Lookup};
use super::errors::Errors;
use super::forward::Forward;
use super::handler::{Failure, Plugin, Query, Reply, Serve, keep_larger};
use super::hosts::{self, Hosts};
use super::kubernetes::{self, Kubernetes};
use super::log::{Log, Logged};
use super::loop_detect::Loop;
use super::whoami;
use crate::query::classify::ReplyType;
use crate::query::reply::ReplyInfo;

impl Plugin for Errors {
    fn name(&self) -> &'static str {
        "errors"
    }

    fn reply(&self, query: &mut Query<'_, '_>, _out: &mut Vec<u8>, reply: &mut Reply) {
        if let Some(failure) = reply.failure() {
            self.log(query.req, failure.rcode, &failure.error);
        }
    }
}

impl Plugin for Log {
    fn name(&self) -> &'static str {
        "log"
    }

    fn reply(&self, query: &mut Query<'_, '_>, out: &mut Vec<u8>, reply: &mut Reply) {
        let info = ReplyInfo::of(out);
        let kind = Message::parse(out)
            .map(|m| ReplyType::of(&m))
            .unwrap_or(ReplyType::OtherError);
        let chain_rcode = reply.failure().map_or(Rcode::SERVFAIL, |f| f.rcode);
        self.log(
            query.req,
            &Logged {
                rcode: info.map_or(chain_rcode, |i| i.rcode),
                header: info.map(|i| i.header),
                rsize: out.len(),
                kind,
                duration: query.start.elapsed(),
            },
        );
    }
}

impl Plugin for Cache {
    fn name(&self) -> &'static str {
        "cache"
    }

    fn serve(&self, query: &mut Query<'_, '_>, out: &mut Vec<u8>) -> Serve {
        match self.lookup(query.req, out, query.now) {
            Lookup::Hit => Serve::Written,
            Lookup::HitRefresh => {
                query.refresh = true;
                Serve::Written
            }
            Lookup::Verify(stale) => {
                query.stale = Some(stale);
                Serve::Next
            }
            Lookup::Miss => Serve::Next,
        }
    }

    fn wants_raw(&self) -> bool {
        true
    }

    fn reply(&self, query: &mut Query<'_, '_>, out: &mut Vec<u8>, reply: &mut Reply) {
        let req = query.req;
        let stale = query.stale.take();
        if reply.is_raw() {
            let raw = std::mem::take(out);
            // serve_stale verify: only a reply that refreshes the entry replaces it.
            if let Some(stale) = stale
                && !self.refreshes(req, &raw)
                && self.serve_stale(&stale, req, out)
            {
                reply.set_written(self.name());
                keep_larger(out, raw);
            } else if self.store(req, &raw, query.now, Some(out)) {
                reply.set_ready();
                keep_larger(out, raw);
            } else {
                // Not stored: passed on as it came, to be fitted to the client.
                *out = raw;
            }
        } else if reply.failure().is_some()
            && let Some(stale) = stale
            && self.serve_stale(&stale, req, out)
        {
            reply.set_written(self.name());
        }
    }
}

impl Plugin for Hosts {
    fn name(&self) -> &'static str {
        "hosts"
    }

    fn serve(&self, query: &mut Query<'_, '_>, out: &mut Vec<u8>) -> Serve {
        match self.answer(query.req) {
            hosts::Answer::Reply(msg) => encoded(&msg, self.name(), out),
            hosts::Answer::Next => Serve::Next,
        }
    }
}

impl Plugin for Kubernetes {
    fn name(&self) -> &'static str {
        "kubernetes"
    }

    fn serve(&self, query: &mut Query<'_, '_>, out: &mut Vec<u8>) -> Serve {
        served(self.answer(query.req, out))
    }

    fn resume(
        &self,
        query: &mut Query<'_, '_>,
        looked_up: &[Option<Vec<u8>>],
        out: &mut Vec<u8>,
    ) -> Serve {
        served(Self::resume(self, query.req, looked_up, out))
    }

    fn ready(&self) -> Option<bool> {
        Some(Self::ready(self))
    }
}

/// What the chain does with what `kubernetes` did.
fn served(answered: kubernetes::Answered) -> Serve {
    match answered {
        kubernetes::Answered::Written => Serve::Answer,
        kubernetes::Answered::Failed(error) => Serve::Failed(Failure::servfail(error)),
        kubernetes::Answered::Next => Serve::Next,
        kubernetes::Answered::Lookup(lookups) => Serve::Lookup(lookups),
    }
}

impl Plugin for Loop {
    fn name(&self) -> &'static str {
        "loop"
    }

    fn serve(&self, query: &mut Query<'_, '_>, _out: &mut Vec<u8>) -> Serve {
        match self.check(query.req) {
            Ok(()) => Serve::Next,
            Err(failure) => Serve::Failed(failure),
        }
    }
}

impl Plugin for Forward {
    fn name(&self) -> &'static str {
        "forward"
    }

    fn serve(&self, query: &mut Query<'_, '_>, _out: &mut Vec<u8>) -> Serve {
        if self.handles(query.req) {
            Serve::Wait
        } else {
            Serve::Next
        }
    }
}

/// `whoami`: answers every query with the client's address.
pub struct Whoami;

impl Plugin for Whoami {
    fn name(&self) -> &'static str {
        "whoami"
    }

    fn serve(&self, query: &mut Query<'_, '_>, out: &mut Vec<u8>) -> Serve {
        encoded(&whoami::answer(query.req), self.name(), out)
    }
}

/// `msg` as `plugin`'s answer in `out`.
fn encoded(msg: &OwnedMessage, plugin: &'static str, out: &mut Vec<u8>) -> Serve {
    match msg.to_vec() {
        Ok(raw) => {
            out.extend_from_slice(&raw);
            Serve::Answer
        }
        Err(e) => Serve::Failed(Failure::servfail(format!("plugin/{plugin}: {e}"))),
    }
}
