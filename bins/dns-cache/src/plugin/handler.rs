//! The plugin API: the [`Plugin`] trait every plugin of a query chain implements, the
//! counterpart of CoreDNS's `plugin.Handler` (`plugin/plugin.go`).
//!
//! A CoreDNS handler's `ServeDNS` either writes a reply or calls the next handler, and a
//! wrapping plugin sees the reply by wrapping the `ResponseWriter` it passes on. Here the
//! chain ([`Chain`](super::Chain)) does the walking, so that a query that must wait for the
//! network can stop half-way and go on later in a task of its own:
//!
//! 1. On the way down, [`Plugin::serve`] is called in list order. A plugin answers
//!    ([`Serve::Answer`]: it wrote its reply into `out`), fails ([`Serve::Failed`]) or
//!    lets the next plugin have the query ([`Serve::Next`], the default).
//! 2. On the way back, [`Plugin::reply`] is called on every plugin above the one that
//!    answered, nearest first, with `out` holding the reply the client gets and a
//!    [`Reply`] that says who wrote it or how the chain failed. A wrapper (`log`,
//!    `errors`, `loadbalance`, metrics, `example`) acts here; it may rewrite `out`.
//!
//! Only `forward` waits on the network: its `serve` says [`Serve::Wait`], the server runs
//! the waiting part in a task (or in the upstream's reader), and the way back starts from
//! `forward` when the reply is in.
//!
//! A plugin that needs other names resolved before it can answer (CoreDNS's
//! `upstream.Lookup`: `kubernetes` completing an ExternalName's CNAME with its target's
//! records) says [`Serve::Lookup`] with the questions. The server asks each of them of its
//! own routing table, as a client's query with the same header and EDNS would be asked
//! (the block of the name's zone, its whole chain), then calls [`Plugin::resume`] on the
//! same plugin with the replies; from there the query goes on as if `serve` had said what
//! `resume` says. The cache sees a reply before it is fitted to the client
//! ([`Plugin::wants_raw`]), because it stores the reply as it came; so do the plugins
//! between the cache and the one that answered.
//!
//! # Writing a plugin
//!
//! An answering plugin (one that owns names, as `hosts` or a `kubernetes` plugin does)
//! needs the request, the output buffer and the time:
//!
//! ```ignore
//! impl Plugin for MyPlugin {
//!     fn name(&self) -> &'static str {
//!         "myplugin"
//!     }
//!     fn serve(&self, query: &mut Query<'_, '_>, out: &mut Vec<u8>) -> Serve {
//!         if !self.owns(&query.req.name) {
//!             return Serve::Next;
//!         }
//!         out.clear();
//!         self.write_reply(query.req, query.now, out); // a whole DNS message
//!         Serve::Answer
//!     }
//! }
//! ```
//!
//! The reply is written as the plugin makes it, for any size: the chain caches it (when
//! `cache` is above) and fits it to the client (OPT mirrored, truncation), as CoreDNS's
//! server does. A wrapping plugin implements [`Plugin::reply`] instead (see `example.rs`).
//! Then the plugin gets a line in the list of `config/registry.rs`, at its `plugin.cfg`
//! position, naming its setup function; that function reads the plugin's Corefile
//! arguments and adds it to the block's chain (`Setup::add`).

use std::time::Instant;

use dns_wire::{Name, Rcode, Type};

use crate::query::reply::{rcode_reply, scrub};
use crate::query::request::Request;
use crate::query::stored::StoredReply;

/// A plugin of a server block's query chain.
pub trait Plugin: Send + Sync {
    /// The plugin's name as the Corefile writes it (`plugin` label of the metrics, the
    /// `no next plugin found` error).
    fn name(&self) -> &'static str;

    /// The way down: answer `query` into `out`, fail, or pass it on. `out` is empty.
    fn serve(&self, query: &mut Query<'_, '_>, out: &mut Vec<u8>) -> Serve {
        let _ = (query, out);
        Serve::Next
    }

    /// The way back, for a plugin above the one that answered: `out` holds the reply the
    /// client gets (or the error reply of a failed chain, see [`Reply::failure`]).
    fn reply(&self, query: &mut Query<'_, '_>, out: &mut Vec<u8>, reply: &mut Reply) {
        let _ = (query, out, reply);
    }

    /// The way down, after [`Serve::Lookup`]: `looked_up` holds, in the order they were
    /// asked, the reply to each question as a client would have got it (`None` when the
    /// server made none: no route, too deep a chain of lookups). `out` is empty. A plugin
    /// that never asks for lookups keeps the default, which fails the query.
    fn resume(
        &self,
        query: &mut Query<'_, '_>,
        looked_up: &[Option<Vec<u8>>],
        out: &mut Vec<u8>,
    ) -> Serve {
        let _ = (query, looked_up, out);
        Serve::Failed(Failure::servfail(format!(
            "plugin/{}: no lookup was asked for",
            self.name()
        )))
    }

    /// Whether the plugin is ready to serve (CoreDNS's `ready.Readiness`): `None` for a
    /// plugin that does not report. `ready` answers 503, naming the plugins not ready, until
    /// each says it is.
    fn ready(&self) -> Option<bool> {
        None
    }

    /// Whether [`Plugin::reply`] wants the reply as the plugin below made it, before it is
    /// fitted to the client ([`Reply::is_raw`]). Only the cache does; the plugins between it
    /// and the one that answered see that form too.
    fn wants_raw(&self) -> bool {
        false
    }
}

/// What a plugin did with a query on the way down.
#[derive(Debug)]
pub enum Serve {
    /// Not this plugin's: the next one's turn.
    Next,
    /// `out` holds this plugin's answer, to be cached and fitted to the client.
    Answer,
    /// `out` holds the reply exactly as the client gets it (a cache hit).
    Written,
    /// The chain fails: nothing is written, the server replies with the rcode.
    Failed(Failure),
    /// The reply must come from the network: the server runs `forward`'s waiting part.
    Wait,
    /// The plugin needs these questions answered first (through the whole server, as a
    /// client's would be); [`Plugin::resume`] gets the replies.
    Lookup(Vec<SubQuery>),
}

/// A question a plugin asks the server on its own behalf ([`Serve::Lookup`]), with the
/// client's class, header flags and EDNS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubQuery {
    /// The name to resolve.
    pub name: Name,
    /// The type wanted.
    pub qtype: Type,
}

/// One query on its way through a chain.
pub struct Query<'q, 'r> {
    /// The request.
    pub req: &'q Request<'r>,
    /// The zone of the server block that took it (`zone` label of the metrics).
    pub zone: &'q str,
    /// When the server read it.
    pub start: Instant,
    /// The time of this step: `start` on the way down, the time the reply came on the way
    /// back from the network.
    pub now: Instant,
    /// `serve_stale verify`: the expired entry to serve if what comes from below does not
    /// replace it (set by the cache).
    pub(crate) stale: Option<StoredReply>,
    /// The cache's hit asks for its entry to be refreshed in the background.
    pub(crate) refresh: bool,
}

impl<'q, 'r> Query<'q, 'r> {
    /// `req`, read at `start`, for the block of `zone`.
    pub fn new(req: &'q Request<'r>, zone: &'q str, start: Instant) -> Self {
        Self {
            req,
            zone,
            start,
            now: start,
            stale: None,
            refresh: false,
        }
    }
}

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

/// The reply on its way back: who wrote it, or why the chain failed.
#[derive(Debug)]
pub struct Reply {
    /// The plugin that wrote the reply (`""` when the server writes it).
    plugin: &'static str,
    /// What went wrong, when no plugin wrote a reply.
    failure: Option<Failure>,
    /// `out` holds the reply for the client (not the answer of a plugin below the cache,
    /// nor nothing at all).
    ready: bool,
}

impl Reply {
    /// An answer of `plugin`, not yet fitted to the client.
    pub(crate) fn raw(plugin: &'static str) -> Self {
        Self {
            plugin,
            failure: None,
            ready: false,
        }
    }

    /// A reply `plugin` wrote for the client.
    pub(crate) fn written(plugin: &'static str) -> Self {
        Self {
            plugin,
            failure: None,
            ready: true,
        }
    }

    /// A failed chain, its error reply not written yet.
    pub(crate) fn failed(failure: Failure) -> Self {
        Self {
            plugin: "",
            failure: Some(failure),
            ready: false,
        }
    }

    /// The plugin that wrote the reply, `""` when the server wrote an error reply.
    pub fn plugin(&self) -> &'static str {
        self.plugin
    }

    /// Why the chain failed, if it did (`out` then holds the error reply).
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// Whether `out` still holds an answer as the plugin below made it (only a plugin
    /// that [`wants_raw`](Plugin::wants_raw) sees one).
    pub fn is_raw(&self) -> bool {
        !self.ready && self.failure.is_none()
    }

    /// `out` now holds a reply `plugin` wrote for the client (the cache replacing a failure
    /// by a stale entry, or storing an answer).
    pub(crate) fn set_written(&mut self, plugin: &'static str) {
        *self = Self::written(plugin);
    }

    /// Marks the answer in `out` as fitted to the client.
    pub(crate) fn set_ready(&mut self) {
        self.ready = true;
    }

    /// Makes `out` the reply the client gets: an answer from below is fitted to the client
    /// (`request/writer.go`'s scrub), a failure gets its error reply. Inlined: on a cache
    /// hit the reply is ready already, and this is one test.
    #[inline]
    pub(crate) fn settle(&mut self, req: &Request<'_>, out: &mut Vec<u8>) {
        if !self.ready {
            self.fit(req, out);
        }
    }

    /// [`Reply::settle`] of a reply that is not ready.
    #[cold]
    fn fit(&mut self, req: &Request<'_>, out: &mut Vec<u8>) {
        self.ready = true;
        if self.failure.is_none() {
            let raw = std::mem::take(out);
            match scrub(&raw, req, out) {
                Ok(()) => {
                    keep_larger(out, raw);
                    return;
                }
                Err(e) => {
                    *out = raw;
                    *self = Self::failed(Failure::servfail(e.to_string()));
                    self.ready = true;
                }
            }
        }
        if let Some(failure) = &self.failure {
            rcode_reply(req, failure.rcode, out);
        }
    }
}

/// Leaves in `out` its bytes in whichever of `out` and `spare` has the larger buffer, so
/// that a listener's output buffer keeps its size (and a later reply does not allocate).
pub(crate) fn keep_larger(out: &mut Vec<u8>, mut spare: Vec<u8>) {
    if spare.capacity() > out.capacity() {
        spare.clear();
        spare.extend_from_slice(out);
        *out = spare;
    }
}
