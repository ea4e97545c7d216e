//! The lookups a plugin asks for ([`Serve::Lookup`](crate::plugin::Serve::Lookup)):
//! each question is asked of the listener's own routing table, through the chain of the
//! block its name belongs to, as CoreDNS's `upstream.Lookup` sends a query through its
//! server again (`plugin/pkg/upstream`). The sub-query keeps the client's header flags,
//! class, EDNS record, transport and address, so that it is answered (and fitted) as the
//! client's own query for that name would be.
//!
//! Lookups nest (a sub-query's chain may ask for lookups in turn); a chain of them deeper
//! than [`MAX_DEPTH`] is cut, its question answered with no reply, so that ExternalName
//! Services pointing at each other across two zones cannot loop.

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use dns_wire::{OwnedMessage, OwnedQuestion, Rcode};

use crate::config::{Route, Table};
use crate::plugin::forward::Attempts;
use crate::plugin::{Step, SubQuery, Wait};
use crate::query::reply::rcode_reply;
use crate::query::request::{Admission, Request, admit};

/// How deep lookups nest at most (a lookup asked while answering a lookup is one deeper).
pub(crate) const MAX_DEPTH: usize = 8;

/// The listener's routing table, seen from a query `depth` lookups deep.
#[derive(Clone, Copy)]
pub(crate) struct Lookups<'a> {
    /// The routing table lookups are asked of.
    pub table: &'a Table,
    /// How many lookups deep the query being finished is (0: a client's).
    pub depth: usize,
}

impl Lookups<'_> {
    /// Takes a query that waits (`wait`, at `route`'s chain) to its reply in `out`:
    /// `forward`'s waiting part (`resume`: its detached attempts), or the lookups asked and
    /// the plugin resumed, as often as the chain waits again.
    pub(crate) async fn finish(
        self,
        route: &Route,
        req: &Request<'_>,
        start: Instant,
        mut wait: Wait,
        mut resume: Option<Attempts>,
        out: &mut Vec<u8>,
    ) {
        loop {
            if wait.lookups().is_empty() {
                let chain = &route.chain;
                chain
                    .resolve(req, &route.zone, start, wait, resume.take(), out)
                    .await;
                return;
            }
            let mut looked_up = Vec::with_capacity(wait.lookups().len());
            for sub in wait.lookups() {
                looked_up.push(self.ask(req, sub).await);
            }
            match route
                .chain
                .resume(req, &route.zone, start, wait, &looked_up, out)
            {
                Step::Done => return,
                Step::Wait(next) => wait = next,
            }
        }
    }

    /// The reply to `sub`, asked on behalf of `req`, as a client would get it; `None` past
    /// [`MAX_DEPTH`] or when nothing would be sent.
    fn ask<'a>(
        self,
        req: &'a Request<'_>,
        sub: &'a SubQuery,
    ) -> Pin<Box<dyn Future<Output = Option<Vec<u8>>> + Send + 'a>>
    where
        Self: 'a,
    {
        let deeper = Lookups {
            table: self.table,
            depth: self.depth + 1,
        };
        Box::pin(async move {
            if deeper.depth > MAX_DEPTH {
                tracing::debug!(name = %sub.name, "lookup not made: lookups nested too deep");
                return None;
            }
            let bytes = sub_query(req, sub)?;
            let Admission::Query(sub_req) = admit(&bytes, req.proto, req.client) else {
                return None;
            };
            let mut out = Vec::new();
            let Some(route) = deeper
                .table
                .routes
                .find(&sub_req.name, sub_req.question.qtype)
            else {
                rcode_reply(&sub_req, Rcode::REFUSED, &mut out);
                return Some(out);
            };
            let start = Instant::now();
            if let Step::Wait(wait) = route.chain.begin(&sub_req, &route.zone, &mut out, start) {
                deeper
                    .finish(route, &sub_req, start, wait, None, &mut out)
                    .await;
            }
            (!out.is_empty()).then_some(out)
        })
    }
}

/// `req`'s message with `sub`'s question in place of its own: same ID, flags, class and
/// EDNS record; no other records.
fn sub_query(req: &Request<'_>, sub: &SubQuery) -> Option<Vec<u8>> {
    let mut msg = OwnedMessage::parse(req.bytes()).ok()?;
    msg.questions = vec![OwnedQuestion {
        name: sub.name,
        qtype: sub.qtype,
        qclass: req.question.qclass,
    }];
    msg.answers.clear();
    msg.authority.clear();
    msg.additional.clear();
    msg.to_vec().ok()
}
