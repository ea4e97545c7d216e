//! The server layer: the DNS listeners, and the HTTP endpoints of `health`, `ready` and
//! `prometheus` ([`http`]).
//!
//! Per address, one UDP socket and one TCP listener per worker thread (SO_REUSEPORT,
//! `socket.rs`), all reading the same routing table, which a reload swaps atomically. TCP
//! connections are bounded in number and in time ([`TcpLimits`], `tcp.rs`). UDP
//! is read and answered in batches (`batch.rs`), and a busy socket's reader yields to the
//! other tasks now and then ([`burst`]).
//!
//! Every packet goes through `handle`: admission (drop, FORMERR, NOTIMP, BADVERS,
//! REFUSED), routing by zone, then the block's chain. Queries that must wait for upstream
//! run in their own task, at most [`MAX_IN_FLIGHT`] per listener (beyond that: REFUSED).

mod accept;
pub(crate) mod batch;
pub mod burst;
pub mod http;
mod lookup;
mod slots;
mod socket;
mod tcp;
mod udp;

pub use tcp::TcpLimits;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use dns_wire::Rcode;
use tokio::net::UdpSocket;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinHandle;

use crate::config::{Route, Table};
use crate::plugin::forward::{Attempts, Delivery, Detached, Judged};
use crate::plugin::{Step, Wait, report};
use crate::query::reply::{bad_version_reply, rcode_reply, reject_reply};
use crate::query::request::{Admission, Proto, Request, admit};
use crate::server::batch::Outgoing;

/// Queries waiting for upstream, per listener.
pub const MAX_IN_FLIGHT: usize = 10_000;

/// What `handle` did with a packet.
// Not boxed: a pending query moves on into its upstream's reader or a task, which box it
// once there.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Handled {
    /// The reply is in the output buffer.
    Reply,
    /// Nothing to send.
    Nothing,
    /// Upstream work to run in a task.
    Pending(Pending),
}

/// A query waiting for upstream, owning its bytes.
pub(crate) struct Pending {
    /// The listener's routing table, for the lookups a plugin asks for.
    table: Arc<Table>,
    route: Arc<Route>,
    query: Bytes,
    /// The query to send upstream when it differs from `query` (`Chain::upstream_query`).
    upstream: Option<Bytes>,
    proto: Proto,
    client: SocketAddr,
    start: Instant,
    /// Where the chain stopped, to go on from.
    wait: Wait,
    /// The first attempt, when `forward` can make it without a task.
    detached: Option<Detached>,
}

impl Pending {
    /// Resolves the query in a task of its own; returns the reply to send (empty if none).
    pub(crate) async fn run(self) -> Vec<u8> {
        self.run_from(None).await
    }

    async fn run_from(self, resume: Option<Attempts>) -> Vec<u8> {
        let mut out = Vec::new();
        let Admission::Query(req) = admit(&self.query, self.proto, self.client) else {
            return out;
        };
        let made = std::sync::atomic::AtomicUsize::new(0);
        lookup::Lookups::new(&self.table, &made)
            .finish(&self.route, &req, self.start, self.wait, resume, &mut out)
            .await;
        out
    }

    /// Serves a UDP query: when `forward` can send it at once, no task waits for the
    /// upstream and its reader completes the query; otherwise in a task of its own.
    /// The query to the upstream goes out when `outgoing` is flushed, and so does the
    /// reply when the upstream could not be asked. `permit` counts the query in flight
    /// until its reply is queued.
    pub(crate) fn serve_udp(
        mut self,
        socket: &Arc<UdpSocket>,
        permit: OwnedSemaphorePermit,
        outgoing: &mut Outgoing,
    ) {
        let Some(detached) = self.detached.take() else {
            return self.spawn_udp(None, Arc::clone(socket), permit);
        };
        let query = self.upstream.clone().unwrap_or_else(|| self.query.clone());
        let socket = Arc::clone(socket);
        detached.send(&query, outgoing, move |detached, delivery, outgoing| {
            self.complete_udp(detached, delivery, socket, permit, outgoing);
        });
    }

    /// Finishes a detached query in the upstream's reader (or, when the upstream could not
    /// be asked, in the listener), queueing the reply in `outgoing`; or goes on in a task.
    fn complete_udp(
        self,
        detached: Detached,
        delivery: Delivery,
        socket: Arc<UdpSocket>,
        permit: OwnedSemaphorePermit,
        outgoing: &mut Outgoing,
    ) {
        let Admission::Query(req) = admit(&self.query, self.proto, self.client) else {
            return;
        };
        let chain = &self.route.chain;
        let Some(forward) = chain.forward() else {
            return;
        };
        let result = match forward.judge(detached, req.bytes(), delivery) {
            Judged::Reply(reply) => Ok(reply),
            Judged::Failed(failure) => Err(failure),
            Judged::Resume(attempts) => return self.spawn_udp(Some(attempts), socket, permit),
        };
        // Room for the upstream's reply plus a mirrored OPT record: no growth on the way.
        let room = result.as_ref().map_or(0, Vec::len) + 64;
        let mut out = Vec::with_capacity(room);
        let zone = &self.route.zone;
        chain.settled(&req, zone, self.start, self.wait, result, &mut out);
        // Queued replies are few (one batch) and go out before the queue's owner reads on.
        drop(permit);
        outgoing.push(&socket, &out, self.client);
    }

    fn spawn_udp(
        self,
        resume: Option<Attempts>,
        socket: Arc<UdpSocket>,
        permit: OwnedSemaphorePermit,
    ) {
        let client = self.client;
        tokio::spawn(async move {
            let reply = self.run_from(resume).await;
            if !reply.is_empty() {
                let _ = socket.send_to(&reply, client).await;
            }
            drop(permit);
        });
    }

    /// The reply when too many queries wait already: REFUSED.
    pub(crate) fn refuse(&self, out: &mut Vec<u8>) {
        if let Admission::Query(req) = admit(&self.query, self.proto, self.client) {
            rcode_reply(&req, Rcode::REFUSED, out);
        }
    }
}

/// Admits, routes and serves one packet.
pub(crate) fn handle(
    table: &Arc<Table>,
    bytes: &[u8],
    proto: Proto,
    client: SocketAddr,
    out: &mut Vec<u8>,
) -> Handled {
    let refuse = |req: &Request<'_>, out: &mut Vec<u8>| {
        rcode_reply(req, Rcode::REFUSED, out);
        dropped(table, req, Rcode::REFUSED, out.len());
        Handled::Reply
    };
    // Matched by reference: a request (with its lower-cased name) is not copied again.
    match &admit(bytes, proto, client) {
        Admission::Drop => Handled::Nothing,
        Admission::Reject { header, rcode } => {
            reject_reply(bytes, header, *rcode, out);
            Handled::Reply
        }
        Admission::BadVersion(req) => {
            bad_version_reply(req, out);
            dropped(table, req, Rcode::BADVERS, out.len());
            Handled::Reply
        }
        Admission::Refused(req) => refuse(req, out),
        Admission::Query(req) => {
            let Some(route) = table.routes.find(&req.name, req.question.qtype) else {
                return refuse(req, out);
            };
            let start = Instant::now();
            match route.chain.begin(req, &route.zone, out, start) {
                Step::Done => Handled::Reply,
                Step::Wait(wait) => {
                    let detached = match (route.chain.forward(), proto) {
                        (Some(forward), Proto::Udp)
                            if !wait.has_stale() && wait.lookups().is_empty() =>
                        {
                            forward.detach(req, start)
                        }
                        _ => None,
                    };
                    // Only a detached first attempt sends the bytes kept here; the waiting
                    // path asks the chain again.
                    let upstream = detached
                        .as_ref()
                        .and_then(|_| route.chain.upstream_query(req))
                        .map(Bytes::from);
                    Handled::Pending(Pending {
                        table: Arc::clone(table),
                        detached,
                        upstream,
                        route: Arc::clone(route),
                        query: Bytes::copy_from_slice(bytes),
                        proto,
                        client,
                        start,
                        wait,
                    })
                }
            }
        }
    }
}

/// Counts a query no block took (`zone="dropped"`), when metrics are on.
fn dropped(table: &Table, req: &Request<'_>, rcode: Rcode, size: usize) {
    if let Some(metrics) = &table.metrics {
        report(
            metrics,
            &table.server,
            "dropped",
            req,
            rcode,
            "",
            size,
            Instant::now(),
        );
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A running listen address.
pub struct Listener {
    /// The address actually bound.
    pub addr: SocketAddr,
    table: watch::Sender<Arc<Table>>,
    _tasks: Vec<AbortOnDrop>,
}

impl Listener {
    /// Binds `addr` (UDP and TCP, `workers` sockets each) and serves `table`. An
    /// unspecified IPv6 address falls back to `0.0.0.0` where IPv6 is unavailable.
    pub fn start(addr: SocketAddr, table: Arc<Table>, workers: usize) -> io::Result<Self> {
        Self::start_with(addr, table, workers, TcpLimits::default())
    }

    /// [`Listener::start`] with other TCP limits than the defaults (tests use small ones).
    pub fn start_with(
        addr: SocketAddr,
        table: Arc<Table>,
        workers: usize,
        limits: TcpLimits,
    ) -> io::Result<Self> {
        match Self::bind(addr, Arc::clone(&table), workers, limits) {
            Err(e) if addr.ip().is_unspecified() && addr.is_ipv6() => {
                let v4 = SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), addr.port());
                Self::bind(v4, table, workers, limits).map_err(|_| e)
            }
            other => other,
        }
    }

    fn bind(
        addr: SocketAddr,
        table: Arc<Table>,
        workers: usize,
        limits: TcpLimits,
    ) -> io::Result<Self> {
        let (sender, receiver) = watch::channel(table);
        let in_flight = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
        let slots = Arc::new(slots::Slots::new(limits.connections, limits.per_client));
        let mut udp_sockets = Vec::new();
        let mut tcp_listeners = Vec::new();
        for _ in 0..workers.max(1) {
            udp_sockets.push(tokio::net::UdpSocket::from_std(socket::udp(addr)?)?);
            tcp_listeners.push(tokio::net::TcpListener::from_std(socket::tcp(addr)?)?);
        }
        let mut tasks = Vec::new();
        for socket in udp_sockets {
            let task = udp::serve(
                Arc::new(socket),
                addr.is_ipv6(),
                receiver.clone(),
                Arc::clone(&in_flight),
            );
            tasks.push(AbortOnDrop(tokio::spawn(task)));
        }
        for listener in tcp_listeners {
            let task = tcp::serve(listener, receiver.clone(), Arc::clone(&slots), limits);
            tasks.push(AbortOnDrop(tokio::spawn(task)));
        }
        Ok(Self {
            addr,
            table: sender,
            _tasks: tasks,
        })
    }

    /// Serves `table` from now on.
    pub fn update(&self, table: Arc<Table>) {
        self.table.send_replace(table);
    }
}
