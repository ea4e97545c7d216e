//! The lookups a plugin asks for ([`Serve::Lookup`](crate::plugin::Serve::Lookup)):
//! each question is asked of the listener's own routing table, through the chain of the
//! block its name belongs to, as CoreDNS's `upstream.Lookup` sends a query through its
//! server again (`plugin/pkg/upstream`). The sub-query keeps the client's header flags,
//! class, EDNS record, transport and address, so that it is answered (and fitted) as the
//! client's own query for that name would be.
//!
//! Lookups nest (a sub-query's chain may ask for lookups in turn); a chain of them deeper
//! than [`MAX_DEPTH`] is cut, its question answered with no reply, so that ExternalName
//! Services pointing at each other across two zones cannot loop. One client's query makes at
//! most [`MAX_LOOKUPS`] lookups in all, at every depth: past that a question gets no reply,
//! and a plugin that still asks (from `resume`) fails the query with SERVFAIL, so that neither
//! nesting nor a plugin asking again and again can multiply the work.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use dns_wire::{OwnedMessage, OwnedQuestion, Rcode};

use crate::config::{Route, Table};
use crate::plugin::forward::Attempts;
use crate::plugin::{Failure, Step, SubQuery, Wait};
use crate::query::reply::rcode_reply;
use crate::query::request::{Admission, Request, admit};

/// How deep lookups nest at most (a lookup asked while answering a lookup is one deeper).
pub(crate) const MAX_DEPTH: usize = 8;
/// How many lookups one client's query makes at most, at every depth together.
pub(crate) const MAX_LOOKUPS: usize = 16;

/// The listener's routing table, seen from a query `depth` lookups deep.
#[derive(Clone, Copy)]
pub(crate) struct Lookups<'a> {
    /// The routing table lookups are asked of.
    table: &'a Table,
    /// How many lookups deep the query being finished is (0: a client's).
    depth: usize,
    /// The lookups made so far for the client's query.
    made: &'a AtomicUsize,
}

impl<'a> Lookups<'a> {
    /// The lookups of a client's query, asked of `table`, counted in `made` (0 at first).
    pub(crate) fn new(table: &'a Table, made: &'a AtomicUsize) -> Self {
        Self {
            table,
            depth: 0,
            made,
        }
    }

    /// Whether the query's budget of lookups is spent.
    fn spent(&self) -> bool {
        self.made.load(Ordering::Relaxed) >= MAX_LOOKUPS
    }

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
            if self.spent() {
                let failure = Failure::servfail(format!(
                    "more than {MAX_LOOKUPS} lookups asked for one query"
                ));
                let chain = &route.chain;
                chain.settled(req, &route.zone, start, wait, Err(failure), out);
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
    fn ask<'q>(
        self,
        req: &'q Request<'_>,
        sub: &'q SubQuery,
    ) -> Pin<Box<dyn Future<Output = Option<Vec<u8>>> + Send + 'q>>
    where
        'a: 'q,
    {
        let deeper = Lookups {
            depth: self.depth + 1,
            ..self
        };
        Box::pin(async move {
            // Every question asked counts, made or not: a plugin resumed with no reply that
            // asks again still spends the budget.
            if deeper.made.fetch_add(1, Ordering::Relaxed) >= MAX_LOOKUPS {
                tracing::debug!(name = %sub.name, "lookup not made: the query made {MAX_LOOKUPS}");
                return None;
            }
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use dns_wire::{Message, Type};

    use super::*;
    use crate::config::Route;
    use crate::plugin::{ChainBuilder, Plugin, Query, Serve};
    use crate::query::request::tests::{client, query};
    use crate::query::request::{Admission, Proto};

    /// A plugin that asks for a lookup of its own zone's name whenever it is called, on the
    /// way down and when resumed: the worst a plugin can do to the lookup machinery.
    struct AlwaysAsks(AtomicUsize);

    impl AlwaysAsks {
        fn ask(&self) -> Serve {
            self.0.fetch_add(1, Ordering::Relaxed);
            Serve::Lookup(vec![SubQuery {
                name: "again.example.".parse().unwrap(),
                qtype: Type::A,
            }])
        }
    }

    impl Plugin for AlwaysAsks {
        fn name(&self) -> &'static str {
            "always-asks"
        }
        fn serve(&self, _: &mut Query<'_, '_>, _: &mut Vec<u8>) -> Serve {
            self.ask()
        }
        fn resume(&self, _: &mut Query<'_, '_>, _: &[Option<Vec<u8>>], _: &mut Vec<u8>) -> Serve {
            self.ask()
        }
    }

    /// However the plugin asks, one client's query makes at most [`MAX_LOOKUPS`] lookups and
    /// ends: SERVFAIL once the budget is spent and the plugin still asks.
    #[test]
    fn a_plugin_asking_forever_is_stopped_by_the_budget() {
        let plugin = Arc::new(AlwaysAsks(AtomicUsize::new(0)));
        let mut chain = ChainBuilder::default();
        chain.add(plugin.clone());
        let route = Arc::new(Route {
            zone: ".".into(),
            chain: Arc::new(chain.build()),
        });
        let mut table = Table {
            server: "dns://:53".into(),
            routes: Default::default(),
            metrics: None,
        };
        table.routes.insert(".", Arc::clone(&route)).unwrap();
        let bytes = query("first.example.", Type::A, None);
        let Admission::Query(req) = admit(&bytes, Proto::Udp, client()) else {
            panic!("not admitted");
        };
        let mut out = Vec::new();
        let start = Instant::now();
        let Step::Wait(wait) = route.chain.begin(&req, ".", &mut out, start) else {
            panic!("the plugin asks");
        };
        let made = AtomicUsize::new(0);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(Lookups::new(&table, &made).finish(&route, &req, start, wait, None, &mut out));
        assert_eq!(Message::parse(&out).unwrap().rcode(), Rcode::SERVFAIL);
        assert_eq!(made.load(Ordering::Relaxed), MAX_LOOKUPS);
        // Every serve or resume asked once; each one past the budget was answered at once.
        assert!(
            plugin.0.load(Ordering::Relaxed) <= 2 * MAX_LOOKUPS + 2,
            "{:?}",
            plugin.0
        );
    }
}
