//! The plugin chain of one server block.
//!
//! CoreDNS runs plugins in the fixed order of its `plugin.cfg`, whatever the Corefile's
//! order; for the plugins served here that is `errors, log, cache, hosts, kubernetes, loop,
//! forward, whoami`. The chain is therefore a struct with one optional slot per plugin, walked in
//! that order, rather than a list of boxed handlers: a cache hit costs no dynamic dispatch
//! and no allocation. Wrapping plugins (`errors`, `log`, `cache`, metrics) act when the
//! reply comes back ([`Chain::finish`]); answering plugins are asked in order until one
//! answers ([`Chain::begin`]). Only `forward` needs to wait, and the server runs that part
//! ([`Chain::resolve`]) in its own task.
//!
//! Each plugin has its module here; [`prehashed`] is the hasher of the maps that `cache`
//! and `forward` key by values that are random already.

pub mod cache;
pub mod errors;
pub mod forward;
pub mod hosts;
pub mod kubernetes;
pub mod log;
pub mod loop_detect;
pub mod prehashed;
pub mod whoami;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use dns_wire::{Message, Rcode};

use crate::metrics::{Metrics, qtype_label};
use crate::query::classify::ReplyType;
use crate::query::reply::{ReplyInfo, rcode_reply, scrub};
use crate::query::request::{Admission, Proto, Request, admit};
use crate::query::stored::StoredReply;

/// A chain's failure: the rcode it returns and the error the `errors` plugin logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// SERVFAIL, REFUSED, ...
    pub rcode: Rcode,
    /// The error text.
    pub error: String,
}

impl Failure {
    /// SERVFAIL with `error`.
    pub fn servfail(error: impl Into<String>) -> Self {
        Self {
            rcode: Rcode::SERVFAIL,
            error: error.into(),
        }
    }
}

/// How the chain finished with a query.
#[derive(Debug)]
pub struct Outcome {
    /// The plugin that wrote the reply (`""` when the server writes it).
    plugin: &'static str,
    /// What went wrong, when nothing was written.
    failure: Option<Failure>,
}

impl Outcome {
    fn written(plugin: &'static str) -> Self {
        Self {
            plugin,
            failure: None,
        }
    }

    fn failed(failure: Failure) -> Self {
        Self {
            plugin: "",
            failure: Some(failure),
        }
    }
}

/// What [`Chain::begin`] did.
#[derive(Debug)]
pub enum Step {
    /// A reply is ready (or the chain failed); call [`Chain::finish`].
    Done(Outcome),
    /// The query must go upstream: run [`Chain::resolve`]. `stale` is a cached reply to
    /// serve if upstream fails (`serve_stale verify`).
    Forward {
        /// The stale entry, if any.
        stale: Option<StoredReply>,
    },
}

/// The answering plugins' verdict below the cache.
enum Below {
    Reply(Vec<u8>, &'static str),
    Forward,
    Fail(Failure),
}

/// The plugins of one server block, in execution order.
pub struct Chain {
    /// `server` label of the metrics: `dns://:PORT` or `dns://ADDR:PORT`.
    pub(crate) server: String,
    pub(crate) errors: Option<errors::Errors>,
    pub(crate) log: Option<log::Log>,
    pub(crate) cache: Option<cache::Cache>,
    pub(crate) hosts: Option<hosts::Hosts>,
    pub(crate) kubernetes: Option<kubernetes::Kubernetes>,
    pub(crate) loop_detect: Option<Arc<loop_detect::Loop>>,
    pub(crate) forward: Option<forward::Forward>,
    pub(crate) whoami: bool,
    /// Set when the block uses `prometheus`.
    pub(crate) metrics: Option<Arc<Metrics>>,
    /// The plugin that reports "no next plugin found".
    pub(crate) last: &'static str,
}

impl Chain {
    /// Runs the plugins that answer at once. A cache hit is written to `out` here.
    pub fn begin(self: &Arc<Self>, req: &Request<'_>, out: &mut Vec<u8>, now: Instant) -> Step {
        if let Some(cache) = &self.cache {
            match cache.lookup(req, out, now) {
                cache::Lookup::Hit => return Step::Done(Outcome::written("cache")),
                cache::Lookup::HitRefresh => {
                    self.spawn_refresh(req);
                    return Step::Done(Outcome::written("cache"));
                }
                cache::Lookup::Verify(stale) => return Step::Forward { stale: Some(stale) },
                cache::Lookup::Miss => {}
            }
        }
        match self.below(req) {
            Below::Reply(raw, plugin) => match self.settle(req, &raw, out, now) {
                Ok(()) => Step::Done(Outcome::written(plugin)),
                Err(failure) => Step::Done(Outcome::failed(failure)),
            },
            Below::Forward => Step::Forward { stale: None },
            Below::Fail(failure) => Step::Done(Outcome::failed(failure)),
        }
    }

    /// The waiting part: forwards the query (or goes on with `resume`, the attempts of a
    /// detached forward), caches and scrubs the reply into `out`.
    pub async fn resolve(
        self: &Arc<Self>,
        req: &Request<'_>,
        stale: Option<StoredReply>,
        resume: Option<forward::Attempts>,
        out: &mut Vec<u8>,
    ) -> Outcome {
        let result = match (resume, &self.forward) {
            (Some(attempts), Some(forward)) => {
                let query = self.upstream_query(req);
                let query = query.as_deref().unwrap_or(req.bytes());
                forward.resume(query, attempts).await
            }
            _ => self.forwarded(req).await,
        };
        self.settled(req, result, stale, out)
    }

    /// Caches and scrubs a reply from below the cache into `out`; on failure, serves
    /// `stale` when the cache allows it.
    pub fn settled(
        &self,
        req: &Request<'_>,
        result: Result<Vec<u8>, Failure>,
        stale: Option<StoredReply>,
        out: &mut Vec<u8>,
    ) -> Outcome {
        match result {
            // serve_stale verify: only a reply that refreshes the entry replaces it.
            Ok(raw) => match (stale, &self.cache) {
                (Some(stale), Some(cache))
                    if !cache.refreshes(req, &raw) && cache.serve_stale(&stale, req, out) =>
                {
                    Outcome::written("cache")
                }
                _ => match self.settle(req, &raw, out, Instant::now()) {
                    Ok(()) => Outcome::written("forward"),
                    Err(failure) => Outcome::failed(failure),
                },
            },
            Err(failure) => match (stale, &self.cache) {
                (Some(stale), Some(cache)) if cache.serve_stale(&stale, req, out) => {
                    Outcome::written("cache")
                }
                _ => Outcome::failed(failure),
            },
        }
    }

    /// Logs, counts and (when nothing was written) writes the error reply.
    pub fn finish(
        &self,
        req: &Request<'_>,
        zone: &str,
        outcome: Outcome,
        out: &mut Vec<u8>,
        start: Instant,
    ) {
        let chain_rcode = outcome.failure.as_ref().map(|f| f.rcode);
        if let Some(failure) = &outcome.failure {
            rcode_reply(req, failure.rcode, out);
            if let Some(errors) = &self.errors {
                errors.log(req, failure.rcode, &failure.error);
            }
        }
        if self.log.is_none() && self.metrics.is_none() {
            return;
        }
        let info = ReplyInfo::of(out);
        if let Some(log) = &self.log {
            let kind = Message::parse(out)
                .map(|m| ReplyType::of(&m))
                .unwrap_or(ReplyType::OtherError);
            log.log(
                req,
                &log::Logged {
                    rcode: info.map_or(chain_rcode.unwrap_or(Rcode::SERVFAIL), |i| i.rcode),
                    header: info.map(|i| i.header),
                    rsize: out.len(),
                    kind,
                    duration: start.elapsed(),
                },
            );
        }
        if let Some(metrics) = &self.metrics {
            let rcode = info.map_or(Rcode::SERVFAIL, |i| i.rcode);
            report(
                metrics,
                &self.server,
                zone,
                req,
                rcode,
                outcome.plugin,
                out.len(),
                start,
            );
        }
    }

    /// Hosts, kubernetes, loop detection, forward and whoami, in that order.
    fn below(&self, req: &Request<'_>) -> Below {
        if let Some(hosts) = &self.hosts {
            match hosts.answer(req) {
                hosts::Answer::Reply(msg) => return encoded(&msg, "hosts"),
                hosts::Answer::Next => {}
            }
        }
        if let Some(k8s) = &self.kubernetes {
            match k8s.serve(req) {
                kubernetes::Served::Reply(raw) => return Below::Reply(raw, "kubernetes"),
                kubernetes::Served::Failed(error) => return Below::Fail(Failure::servfail(error)),
                kubernetes::Served::Next => {}
            }
        }
        if let Some(detector) = &self.loop_detect
            && let Err(failure) = detector.check(req)
        {
            return Below::Fail(failure);
        }
        if let Some(forward) = &self.forward
            && forward.handles(req)
        {
            return Below::Forward;
        }
        if self.whoami {
            return encoded(&whoami::answer(req), "whoami");
        }
        Below::Fail(Failure::servfail(format!(
            "plugin/{}: no next plugin found",
            self.last
        )))
    }

    /// The query to send upstream in place of `req`'s bytes, if it differs: CoreDNS's cache
    /// passes on the queries it handles with AD set (handler.go
    /// `authenticatedRefreshState`), so that a validating upstream says whether the answer
    /// is authenticated and the entry can tell later clients that ask with AD or DO. The
    /// client's own AD still decides what it is told (`reply::replay`).
    pub fn upstream_query(&self, req: &Request<'_>) -> Option<Vec<u8>> {
        if req.header.ad || !self.cache.as_ref().is_some_and(|c| c.covers(req)) {
            return None;
        }
        let mut query = req.bytes().to_vec();
        let flags = query.get_mut(3)?;
        *flags |= 0x20;
        Some(query)
    }

    /// Everything below the cache, waiting for upstream if needed.
    async fn forwarded(&self, req: &Request<'_>) -> Result<Vec<u8>, Failure> {
        match self.below(req) {
            Below::Reply(raw, _) => Ok(raw),
            Below::Fail(failure) => Err(failure),
            Below::Forward => match &self.forward {
                Some(forward) => {
                    let query = self.upstream_query(req);
                    forward
                        .resolve(req, query.as_deref().unwrap_or(req.bytes()))
                        .await
                }
                None => Err(Failure::servfail("plugin/forward: no next plugin found")),
            },
        }
    }

    /// Caches `raw` (a reply from below the cache) and writes it for the client.
    fn settle(
        &self,
        req: &Request<'_>,
        raw: &[u8],
        out: &mut Vec<u8>,
        now: Instant,
    ) -> Result<(), Failure> {
        if self
            .cache
            .as_ref()
            .is_some_and(|c| c.store(req, raw, now, Some(out)))
        {
            return Ok(());
        }
        scrub(raw, req, out).map_err(|e| Failure::servfail(e.to_string()))
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
        let result = self.forwarded(&req).await;
        if let Some(cache) = &self.cache {
            cache.refreshed(&req, result.as_deref().ok(), Instant::now());
        }
    }
}

fn encoded(msg: &dns_wire::OwnedMessage, plugin: &'static str) -> Below {
    match msg.to_vec() {
        Ok(raw) => Below::Reply(raw, plugin),
        Err(e) => Below::Fail(Failure::servfail(format!("plugin/{plugin}: {e}"))),
    }
}

/// CoreDNS's `vars.Report`: the per-query server metrics.
#[allow(clippy::too_many_arguments)]
pub fn report(
    metrics: &Metrics,
    server: &str,
    zone: &str,
    req: &Request<'_>,
    rcode: Rcode,
    plugin: &str,
    size: usize,
    start: Instant,
) {
    let proto = req.proto.as_str();
    let base = || {
        vec![
            ("server", server.to_owned()),
            ("zone", zone.to_owned()),
            ("view", String::new()),
        ]
    };
    if req.dnssec_ok() {
        metrics
            .do_requests
            .get_or_create(&vec![
                ("server", server.to_owned()),
                ("view", String::new()),
                ("zone", zone.to_owned()),
            ])
            .inc();
    }
    let mut labels = base();
    labels.push(("proto", proto.to_owned()));
    labels.push(("family", req.family().to_string()));
    labels.push(("type", qtype_label(req.question.qtype).to_owned()));
    metrics.requests.get_or_create(&labels).inc();
    metrics
        .request_duration
        .get_or_create(&base())
        .observe(start.elapsed().as_secs_f64());
    let mut with_proto = base();
    with_proto.push(("proto", proto.to_owned()));
    metrics
        .response_size
        .get_or_create(&with_proto)
        .observe(size as f64);
    metrics
        .request_size
        .get_or_create(&with_proto)
        .observe(req.bytes().len() as f64);
    let mut labels = base();
    let rcode = rcode
        .mnemonic()
        .map_or_else(|| rcode.0.to_string(), str::to_owned);
    labels.push(("rcode", rcode));
    labels.push(("plugin", plugin.to_owned()));
    metrics.responses.get_or_create(&labels).inc();
}
