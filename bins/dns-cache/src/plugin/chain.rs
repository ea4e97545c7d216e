//! The query chain of one server block: its plugins in the order of the list in
//! `config/registry.rs` (CoreDNS's `plugin.cfg`), whatever the Corefile's order, walked down
//! ([`Plugin::serve`]) until one answers, then back up ([`Plugin::reply`]).
//!
//! A cache hit goes down to the cache and back without allocating: the plugins are called
//! through one vtable each, and the reply is written once into the caller's buffer. A query
//! that must go upstream stops at `forward` ([`Step::Wait`]); the server runs the waiting
//! part ([`Chain::resolve`], or `forward`'s detached first attempt and [`Chain::settled`])
//! and the way back starts from `forward` when the reply is in.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::cache::Cache;
use super::forward::{Attempts, Forward};
use super::handler::{Failure, Plugin, Query, Reply, Serve, SubQuery};
use super::loop_detect::Loop;
use crate::query::request::{Admission, Proto, Request, admit};
use crate::query::stored::StoredReply;

/// The plugins of one server block, in execution order.
pub struct Chain {
    /// Every plugin, in list order.
    plugins: Vec<Arc<dyn Plugin>>,
    /// The cache and its position: a hit may ask for its entry to be refreshed by the
    /// plugins below it, and a query it covers goes upstream with AD set.
    cache: Option<(usize, Arc<Cache>)>,
    /// `forward`, whose waiting part the server runs.
    forward: Option<Arc<Forward>>,
    /// The block's loop detector, for the server to start.
    pub(crate) loop_detect: Option<Arc<Loop>>,
    /// How long the first start waits for the plugins to be ready (the longest a plugin
    /// asked for: `kubernetes`'s `startup_timeout`).
    pub(crate) startup_wait: Duration,
    /// The position of the topmost plugin that wants answers as they were made
    /// ([`Plugin::wants_raw`], the cache), or `usize::MAX` without one: the plugins above
    /// it see the reply the client gets, the ones from it down the answer as the plugin
    /// below made it.
    fitted_above: usize,
}

/// What [`Chain::begin`] did.
#[derive(Debug)]
pub enum Step {
    /// The reply (or the error reply) is in the output buffer.
    Done,
    /// The query must go upstream (run [`Chain::resolve`]) or a plugin asked for lookups
    /// (resolve [`Wait::lookups`], then run [`Chain::resume`]).
    Wait(Wait),
}

/// Where a query stopped to wait for upstream, or for lookups a plugin asked for.
#[derive(Debug)]
pub struct Wait {
    /// The position of the plugin that waits: the way back starts above it.
    at: usize,
    /// `serve_stale verify`: the expired entry to serve if upstream fails.
    stale: Option<StoredReply>,
    /// The questions the plugin asked ([`Serve::Lookup`]); empty when `forward` waits.
    lookups: Vec<SubQuery>,
}

impl Wait {
    /// Whether a stale entry waits with the query (such a query is not detached).
    pub fn has_stale(&self) -> bool {
        self.stale.is_some()
    }

    /// The questions to resolve before [`Chain::resume`]; empty when the query waits for
    /// `forward` ([`Chain::resolve`]).
    pub fn lookups(&self) -> &[SubQuery] {
        &self.lookups
    }
}

/// Builds a [`Chain`] plugin by plugin, in list order (what a setup function adds to).
#[derive(Default)]
pub struct ChainBuilder {
    chain: Vec<Arc<dyn Plugin>>,
    cache: Option<(usize, Arc<Cache>)>,
    forward: Option<Arc<Forward>>,
    loop_detect: Option<Arc<Loop>>,
    startup_wait: Duration,
}

impl ChainBuilder {
    /// Asks the first start to wait up to `wait` for the plugins to be ready
    /// ([`Plugin::ready`]).
    pub(crate) fn wait_at_startup(&mut self, wait: Duration) {
        self.startup_wait = self.startup_wait.max(wait);
    }

    /// Appends `plugin` to the chain.
    pub fn add(&mut self, plugin: Arc<dyn Plugin>) {
        self.chain.push(plugin);
    }

    /// Appends the cache.
    pub(crate) fn add_cache(&mut self, cache: Arc<Cache>) {
        self.cache = Some((self.chain.len(), Arc::clone(&cache)));
        self.chain.push(cache);
    }

    /// Appends `forward`.
    pub(crate) fn add_forward(&mut self, forward: Arc<Forward>) {
        self.forward = Some(Arc::clone(&forward));
        self.chain.push(forward);
    }

    /// Appends the loop detector.
    pub(crate) fn add_loop(&mut self, detector: Arc<Loop>) {
        self.loop_detect = Some(Arc::clone(&detector));
        self.chain.push(detector);
    }

    /// The names of the plugins added so far, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.chain.iter().map(|p| p.name())
    }

    /// The chain.
    pub fn build(self) -> Chain {
        let fitted_above = self
            .chain
            .iter()
            .position(|p| p.wants_raw())
            .unwrap_or(usize::MAX);
        Chain {
            fitted_above,
            plugins: self.chain,
            cache: self.cache,
            forward: self.forward,
            loop_detect: self.loop_detect,
            startup_wait: self.startup_wait,
        }
    }
}

impl Chain {
    /// The plugins' names, in execution order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.plugins.iter().map(|p| p.name())
    }

    /// The plugins, in execution order.
    pub(crate) fn plugins(&self) -> &[Arc<dyn Plugin>] {
        &self.plugins
    }

    /// The block's `forward`, if any.
    pub fn forward(&self) -> Option<&Forward> {
        self.forward.as_deref()
    }

    /// Walks `req` (for the block of `zone`, read at `start`) down the chain; unless it
    /// must wait for upstream, back up too, leaving the reply in `out`.
    pub fn begin(
        self: &Arc<Self>,
        req: &Request<'_>,
        zone: &str,
        out: &mut Vec<u8>,
        start: Instant,
    ) -> Step {
        let mut query = Query::new(req, zone, start);
        self.walk(0, &mut query, out)
    }

    /// Goes on after the lookups `wait` asked for: the waiting plugin's
    /// [`Plugin::resume`] with their replies (`looked_up`, in the order asked), then on
    /// down or back up as from [`Chain::begin`].
    pub fn resume(
        self: &Arc<Self>,
        req: &Request<'_>,
        zone: &str,
        start: Instant,
        wait: Wait,
        looked_up: &[Option<Vec<u8>>],
        out: &mut Vec<u8>,
    ) -> Step {
        let mut query = Query::new(req, zone, start);
        query.now = Instant::now();
        query.stale = wait.stale;
        out.clear();
        let Some(plugin) = self.plugins.get(wait.at) else {
            return self.walk(self.plugins.len(), &mut query, out);
        };
        let serve = plugin.resume(&mut query, looked_up, out);
        match self.step(wait.at, &**plugin, serve, &mut query, out) {
            Some(step) => step,
            None => self.walk(wait.at + 1, &mut query, out),
        }
    }

    /// The way down from position `from`: each plugin's `serve` until one answers, fails
    /// or waits; with none left, the chain fails as CoreDNS's last plugin does.
    #[inline]
    fn walk(self: &Arc<Self>, from: usize, query: &mut Query<'_, '_>, out: &mut Vec<u8>) -> Step {
        let below = self.plugins.get(from..).unwrap_or_default();
        for (at, plugin) in below.iter().enumerate() {
            out.clear();
            let serve = plugin.serve(query, out);
            if let Some(step) = self.step(from + at, &**plugin, serve, query, out) {
                return step;
            }
        }
        out.clear();
        let failure = self.no_next_plugin();
        self.unwind(self.plugins.len(), query, out, Reply::failed(failure));
        Step::Done
    }

    /// What `plugin`, at `at`, said with `serve`: `None` to go on down; otherwise
    /// the wait, or the way back (leaving the reply in `out`). Inlined into the walk: a
    /// cache hit goes through here.
    #[inline(always)]
    fn step(
        self: &Arc<Self>,
        at: usize,
        plugin: &dyn Plugin,
        serve: Serve,
        query: &mut Query<'_, '_>,
        out: &mut Vec<u8>,
    ) -> Option<Step> {
        let reply = match serve {
            Serve::Next => return None,
            Serve::Answer => Reply::raw(plugin.name()),
            Serve::Written => Reply::written(plugin.name()),
            Serve::Failed(failure) => Reply::failed(failure),
            Serve::Wait => return Some(self.wait(at, query, Vec::new())),
            Serve::Lookup(lookups) => return Some(self.wait(at, query, lookups)),
        };
        if query.refresh {
            self.spawn_refresh(query.req);
        }
        self.unwind(at, query, out, reply);
        Some(Step::Done)
    }

    /// The query waits at `at`, for `forward` or for `lookups`.
    fn wait(&self, at: usize, query: &mut Query<'_, '_>, lookups: Vec<SubQuery>) -> Step {
        Step::Wait(Wait {
            at,
            stale: query.stale.take(),
            lookups,
        })
    }

    /// The waiting part: forwards the query (or goes on with `resume`, the attempts of a
    /// detached forward), then the way back, leaving the reply in `out`.
    pub async fn resolve(
        &self,
        req: &Request<'_>,
        zone: &str,
        start: Instant,
        wait: Wait,
        resume: Option<Attempts>,
        out: &mut Vec<u8>,
    ) {
        let query = self.upstream_query(req);
        let query = query.as_deref().unwrap_or(req.bytes());
        let result = match (resume, &self.forward) {
            (Some(attempts), Some(forward)) => forward.resume(query, attempts).await,
            (None, Some(forward)) => forward.resolve(req, query).await,
            (_, None) => Err(Failure::servfail("plugin/forward: no next plugin found")),
        };
        self.settled(req, zone, start, wait, result, out);
    }

    /// The way back from `forward` with its `result`, leaving the reply in `out`.
    pub fn settled(
        &self,
        req: &Request<'_>,
        zone: &str,
        start: Instant,
        wait: Wait,
        result: Result<Vec<u8>, Failure>,
        out: &mut Vec<u8>,
    ) {
        let mut query = Query::new(req, zone, start);
        query.now = Instant::now();
        query.stale = wait.stale;
        let reply = match result {
            Ok(raw) => {
                put(out, raw);
                Reply::raw(self.forward.as_ref().map_or("forward", |f| f.name()))
            }
            Err(failure) => {
                out.clear();
                Reply::failed(failure)
            }
        };
        self.unwind(wait.at, &mut query, out, reply);
    }

    /// The way back: the reply hooks of the plugins above position `at`, nearest first;
    /// then `out` is made the client's reply.
    #[inline]
    fn unwind(&self, at: usize, query: &mut Query<'_, '_>, out: &mut Vec<u8>, mut reply: Reply) {
        let above = self.plugins.get(..at).unwrap_or_default();
        for (position, plugin) in above.iter().enumerate().rev() {
            if position < self.fitted_above {
                reply.settle(query.req, out);
            }
            plugin.reply(query, out, &mut reply);
        }
        reply.settle(query.req, out);
    }

    /// CoreDNS's `plugin.NextOrFailure` at the end of the chain: the last plugin has no next.
    fn no_next_plugin(&self) -> Failure {
        let last = self.plugins.last().map_or("whoami", |p| p.name());
        Failure::servfail(format!("plugin/{last}: no next plugin found"))
    }

    /// The query to send upstream in place of `req`'s bytes, if it differs: CoreDNS's cache
    /// passes on the queries it handles with AD set (handler.go
    /// `authenticatedRefreshState`), so that a validating upstream says whether the answer
    /// is authenticated and the entry can tell later clients that ask with AD or DO. The
    /// client's own AD still decides what it is told (`reply::replay`).
    pub fn upstream_query(&self, req: &Request<'_>) -> Option<Vec<u8>> {
        if req.header.ad || !self.cache.as_ref().is_some_and(|(_, c)| c.covers(req)) {
            return None;
        }
        let mut query = req.bytes().to_vec();
        let flags = query.get_mut(3)?;
        *flags |= 0x20;
        Some(query)
    }

    /// Refreshes a cache entry in the background (prefetch, `serve_stale immediate`).
    fn spawn_refresh(self: &Arc<Self>, req: &Request<'_>) {
        let chain = Arc::clone(self);
        let query = Bytes::copy_from_slice(req.bytes());
        let (proto, client) = (req.proto, req.client);
        tokio::spawn(async move { chain.refresh(query, proto, client).await });
    }

    async fn refresh(&self, query: Bytes, proto: Proto, client: SocketAddr) {
        let Admission::Query(req) = admit(&query, proto, client) else {
            return;
        };
        let Some((at, cache)) = &self.cache else {
            return;
        };
        let result = self.below(at + 1, &req).await;
        cache.refreshed(&req, result.as_deref().ok(), Instant::now());
    }

    /// The answer of the plugins from position `from` down, waiting for upstream if
    /// needed, as they make it (a background refresh stores it; no reply hook runs).
    async fn below(&self, from: usize, req: &Request<'_>) -> Result<Vec<u8>, Failure> {
        let mut query = Query::new(req, "", Instant::now());
        let mut out = Vec::new();
        for plugin in self.plugins.get(from..).unwrap_or_default() {
            out.clear();
            match plugin.serve(&mut query, &mut out) {
                Serve::Next => {}
                Serve::Answer | Serve::Written => return Ok(out),
                Serve::Failed(failure) => return Err(failure),
                // A background refresh has no server to ask: the entry is refreshed when
                // a client's query misses it.
                Serve::Lookup(_) => {
                    return Err(Failure::servfail(format!(
                        "plugin/{}: lookups are not made in a background refresh",
                        plugin.name()
                    )));
                }
                Serve::Wait => {
                    let Some(forward) = &self.forward else { break };
                    let upstream = self.upstream_query(req);
                    return forward
                        .resolve(req, upstream.as_deref().unwrap_or(req.bytes()))
                        .await;
                }
            }
        }
        Err(self.no_next_plugin())
    }
}

/// Puts `bytes` in `out`, in `out`'s buffer when it is large enough.
fn put(out: &mut Vec<u8>, bytes: Vec<u8>) {
    if out.capacity() >= bytes.len() {
        out.clear();
        out.extend_from_slice(&bytes);
    } else {
        *out = bytes;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Instant;

    use dns_wire::{Class, Message, OwnedMessage, OwnedRecord, Type};

    use super::Step;
    use crate::config::{Empty, build};
    use crate::metrics::Metrics;
    use crate::query::request::tests::{client, query};
    use crate::query::request::{Admission, Proto, admit};

    /// Runs `check` on the chain of `corefile`'s block, inside a runtime (plugins start
    /// tasks when they are set up).
    fn with_chain<T>(corefile: &str, check: impl FnOnce(&Arc<super::Chain>) -> T) -> T {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = rt.enter();
        let plan = build(
            corefile.as_bytes(),
            "Corefile",
            53,
            Empty::Refuse,
            &Arc::new(Metrics::new()),
        )
        .unwrap();
        let route = plan.listeners[0].table.routes.targets().next().unwrap();
        check(&route.chain)
    }

    /// An answer from upstream is stored by the cache even when a plugin without a reply
    /// hook (`loop`) sits between the two, and the next query is a hit.
    #[test]
    fn the_cache_stores_what_forward_brings_back_across_loop() {
        let corefile = ". {\n    errors\n    cache 30\n    loop\n    forward . 127.0.0.1:1\n}\n";
        with_chain(corefile, |chain| {
            let q = query("up.example.", Type::A, None);
            let Admission::Query(req) = admit(&q, Proto::Udp, client()) else {
                panic!("not admitted");
            };
            let mut out = Vec::new();
            let Step::Wait(wait) = chain.begin(&req, ".", &mut out, Instant::now()) else {
                panic!("a miss must wait for upstream");
            };
            let mut answer = OwnedMessage::parse(&q).unwrap();
            answer.header.qr = true;
            answer.answers.push(OwnedRecord {
                name: "up.example.".parse().unwrap(),
                rtype: Type::A,
                class: Class::IN,
                ttl: 300,
                rdata: vec![192, 0, 2, 9].into(),
            });
            let raw = answer.to_vec().unwrap();
            chain.settled(&req, ".", Instant::now(), wait, Ok(raw), &mut out);
            assert_eq!(Message::parse(&out).unwrap().counts().answers, 1);
            out.clear();
            let step = chain.begin(&req, ".", &mut out, Instant::now());
            assert!(matches!(step, Step::Done), "{step:?}");
            assert_eq!(Message::parse(&out).unwrap().counts().answers, 1);
        });
    }

    /// The chain runs in the list's order (CoreDNS's `plugin.cfg`), not the Corefile's.
    #[test]
    fn the_plugin_order_follows_the_list_not_the_corefile() {
        let corefile = ". {\n    whoami\n    forward . 127.0.0.1:5300\n    loop\n    hosts {\n        fallthrough\n    }\n    cache 30\n    loadbalance\n    log\n    errors\n    prometheus 127.0.0.1:0\n    example\n}\n";
        let names: Vec<&str> = with_chain(corefile, |chain| chain.names().collect());
        // The chain plugins of the list that the Corefile uses (all but `kubernetes`).
        let listed: Vec<&str> = crate::config::PLUGINS
            .iter()
            .filter(|p| p.setup.is_some() && p.name != "kubernetes")
            .map(|p| p.name)
            .collect();
        assert_eq!(names, listed);
        assert_eq!(
            names,
            [
                "example",
                "prometheus",
                "errors",
                "log",
                "loadbalance",
                "cache",
                "hosts",
                "loop",
                "forward",
                "whoami"
            ]
        );
    }
}
