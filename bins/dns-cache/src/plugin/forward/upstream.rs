//! One upstream server, the socket side: a connected UDP socket shared by every query in
//! flight (each query gets a free random ID, replies are matched by ID and question), TCP
//! connections reused until they are `expire` old, and the probe loop that marks the
//! upstream healthy again.
//!
//! The decisions are made by socket-free parts, tested without a runtime: the table of
//! waiting queries and their expiry ([`pending`](super::pending)), the idle connections
//! ([`idle`](super::idle)) and the failure count ([`health`](super::health)). This file
//! holds the sockets, the tasks and the clock, and calls them.

use std::hash::{BuildHasher, RandomState};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use dns_wire::cache::set_id;
use dns_wire::{Class, Header, Message, Name, OwnedMessage, OwnedQuestion, Type};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::Histogram;
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::{TcpStream, UdpSocket};
use tokio::sync::{OnceCell, oneshot};
use tokio::task::JoinHandle;

use super::health::Health;
use super::idle::IdlePool;
use super::pending::{self, RandomIds, Waiters, message_id};
use crate::metrics::Metrics;
use crate::server::batch::{Deferred, Inbox, Outgoing, Queue};
use crate::server::burst::Burst;

/// An exchange that failed, with Go's wording (`read udp A->B: i/o timeout`).
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// No reply in time.
    #[error("read {proto} {local}->{remote}: i/o timeout")]
    Timeout {
        /// `udp` or `tcp`.
        proto: &'static str,
        /// Our address.
        local: String,
        /// The upstream.
        remote: SocketAddr,
    },
    /// A socket error.
    #[error("{op} {proto} {local}{remote}: {syscall}: {}", errno_text(source))]
    Io {
        /// `dial`, `read` or `write`.
        op: &'static str,
        /// `udp` or `tcp`.
        proto: &'static str,
        /// `LOCAL->` when known, else empty.
        local: String,
        /// The upstream.
        remote: SocketAddr,
        /// The system call: `connect`, `read` or `write`.
        syscall: &'static str,
        /// The error.
        source: io::Error,
    },
    /// The reply does not answer the question.
    #[error("dns: reply from {0} does not match the question")]
    Mismatch(SocketAddr),
    /// Every query ID of the socket is in use.
    #[error("too many queries in flight to {0}")]
    Busy(SocketAddr),
}

/// An OS error as Go words it: `connection refused` (lower case, no error number).
fn errno_text(e: &io::Error) -> String {
    let text = e.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text);
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

/// Aborts a task when dropped.
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What became of a query sent with [`Upstream::send_detached`].
pub enum Delivery {
    /// The reply, with the query's ID put back; not yet checked with [`Upstream::check`].
    Reply(Vec<u8>),
    /// The exchange failed (socket error or timeout).
    Failed(ExchangeError),
    /// It could not be sent at once (no socket yet, every ID taken, the send would block):
    /// not the upstream's failure.
    NotSent,
}

/// What a detached query is completed with, called outside any lock.
pub(crate) type OnReply = Box<dyn FnOnce(Delivery, &mut Outgoing) + Send>;

/// How a task waiting on the shared socket gets its reply.
type TaskWaiter = oneshot::Sender<io::Result<Vec<u8>>>;

/// A query waiting for its reply on the shared socket: a task waits on the channel (and
/// times itself out), or no task waits and the reader completes the query (see
/// [`Upstream::send_detached`]), at the latest at its deadline.
type Waiter = pending::Waiter<TaskWaiter, OnReply>;

/// The queries waiting on the shared socket, shared with its reader.
type Pending = Arc<Mutex<Waiters<TaskWaiter, OnReply>>>;

/// How often the reader gives up on detached queries past their deadline.
const SWEEP_INTERVAL: Duration = Duration::from_millis(100);

/// The shared UDP socket and its reader task.
struct UdpMux {
    socket: Arc<UdpSocket>,
    local: String,
    pending: Pending,
    /// Detached queries registered and waiting to be sent together.
    queue: Queue,
    _reader: AbortOnDrop,
}

impl UdpMux {
    async fn open(remote: SocketAddr) -> io::Result<Self> {
        let bind: SocketAddr = if remote.is_ipv4() {
            "0.0.0.0:0".parse().map_err(io::Error::other)?
        } else {
            "[::]:0".parse().map_err(io::Error::other)?
        };
        let socket = UdpSocket::bind(bind).await?;
        socket.connect(remote).await?;
        let local = socket
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let socket = Arc::new(socket);
        let pending: Pending = Arc::default();
        let reader = tokio::spawn(read_replies(
            Arc::clone(&socket),
            Arc::clone(&pending),
            local.clone(),
            remote,
        ));
        Ok(Self {
            socket,
            local,
            pending,
            queue: Queue::new(),
            _reader: AbortOnDrop(reader),
        })
    }
}

/// Hands each reply to the query waiting for its ID, and every [`SWEEP_INTERVAL`] times out
/// the detached queries past their deadline. A socket error (an ICMP port unreachable shows
/// up as ECONNREFUSED) fails every query waiting. While the socket has replies they are
/// read in batches (one `recvmmsg` each) with plain non-blocking calls, no future per reply.
async fn read_replies(socket: Arc<UdpSocket>, pending: Pending, local: String, remote: SocketAddr) {
    let mut inbox = Inbox::new(remote.is_ipv6());
    let mut outgoing = Outgoing::new();
    let mut sweep = tokio::time::interval(SWEEP_INTERVAL);
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut burst = Burst::default();
    loop {
        tokio::select! {
            ready = socket.ready(Interest::READABLE | Interest::ERROR) => match ready {
                // The runtime's I/O driver is gone: shutdown.
                Err(_) => return,
                // A socket error (ECONNREFUSED after an ICMP port unreachable) is an error
                // event, not readability. Its readiness is cleared before the error is
                // taken, so that a later error wakes the reader again.
                Ok(ready) if ready.is_error() => {
                    let _ = socket.try_io(Interest::ERROR, || {
                        Err::<(), _>(io::ErrorKind::WouldBlock.into())
                    });
                    if let Ok(Some(e)) = socket.take_error() {
                        fail_all(&pending, &e, &local, remote, &mut outgoing);
                        outgoing.flush().await;
                    }
                }
                Ok(_) => {}
            },
            _ = sweep.tick() => {
                time_out_detached(&pending, &local, remote, &mut outgoing);
                outgoing.flush().await;
                continue;
            }
        }
        loop {
            let handled = match inbox.receive(&socket) {
                Ok(received) => {
                    for (reply, _) in inbox.datagrams() {
                        deliver(&pending, reply, &mut outgoing);
                    }
                    received
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    fail_all(&pending, &e, &local, remote, &mut outgoing);
                    1
                }
            };
            outgoing.flush().await;
            // After a burst (and a yield), back to the select, so that the sweep runs too.
            if burst.spend(handled).await {
                break;
            }
        }
    }
}

/// Hands a reply to the query waiting for its ID, if any; what a detached query sends on
/// is queued in `outgoing`.
fn deliver(pending: &Pending, reply: &[u8], outgoing: &mut Outgoing) {
    let Some(id) = message_id(reply) else {
        return;
    };
    let waiter = pending.lock().ok().and_then(|mut p| p.remove(id));
    match waiter {
        Some(Waiter::Task(waiter)) => {
            let _ = waiter.send(Ok(reply.to_vec()));
        }
        Some(Waiter::Detached {
            original_id,
            on_reply,
            ..
        }) => {
            let mut reply = reply.to_vec();
            let _ = set_id(&mut reply, original_id);
            on_reply(Delivery::Reply(reply), outgoing);
        }
        None => {}
    }
}

/// Fails every query waiting on the socket with its error.
fn fail_all(
    pending: &Pending,
    e: &io::Error,
    local: &str,
    remote: SocketAddr,
    outgoing: &mut Outgoing,
) {
    let waiters: Vec<_> = match pending.lock() {
        Ok(mut p) => p.drain(),
        Err(_) => Vec::new(),
    };
    for waiter in waiters {
        let error = io::Error::new(e.kind(), e.to_string());
        match waiter {
            Waiter::Task(waiter) => {
                let _ = waiter.send(Err(error));
            }
            Waiter::Detached { on_reply, .. } => {
                on_reply(
                    Delivery::Failed(ExchangeError::Io {
                        op: "read",
                        proto: "udp",
                        local: format!("{local}->"),
                        remote,
                        syscall: "read",
                        source: error,
                    }),
                    outgoing,
                );
            }
        }
    }
}

/// Fails the detached queries whose deadline has passed with Go's timeout error.
fn time_out_detached(pending: &Pending, local: &str, remote: SocketAddr, outgoing: &mut Outgoing) {
    let now = Instant::now();
    let expired = match pending.lock() {
        Ok(mut p) => p.expire(now),
        Err(_) => Vec::new(),
    };
    for on_reply in expired {
        on_reply(
            Delivery::Failed(ExchangeError::Timeout {
                proto: "udp",
                local: local.to_owned(),
                remote,
            }),
            outgoing,
        );
    }
}

/// The detached queries a listener registered during its batch go out together, with one
/// `sendmmsg`, when it flushes its replies.
impl Deferred for Upstream {
    fn send_now(&self, outgoing: &mut Outgoing) {
        let Some(mux) = self.udp.get() else {
            return;
        };
        mux.queue.send_now(
            &mux.socket,
            || {
                self.conn_hits[0].inc();
            },
            |datagram| Self::not_sent(mux, original_id(datagram), outgoing),
        );
    }
}

/// The ID of a query (0 if it has none).
fn original_id(query: &[u8]) -> u16 {
    message_id(query).unwrap_or(0)
}

/// A query with its ID replaced, on the stack when it fits in 512 bytes.
struct Rewritten {
    small: [u8; 512],
    large: Vec<u8>,
    len: usize,
}

impl Rewritten {
    fn new(query: &[u8], id: u16) -> Self {
        let mut wire = Self {
            small: [0; 512],
            large: Vec::new(),
            len: query.len(),
        };
        let bytes = match wire.small.get_mut(..query.len()) {
            Some(small) => {
                small.copy_from_slice(query);
                small
            }
            None => {
                wire.large = query.to_vec();
                wire.large.as_mut_slice()
            }
        };
        let _ = set_id(bytes, id);
        wire
    }

    fn bytes(&self) -> &[u8] {
        self.small
            .get(..self.len)
            .filter(|_| self.large.is_empty())
            .unwrap_or(&self.large)
    }
}

/// Removes a pending ID when the query stops waiting.
struct PendingGuard<'a> {
    pending: &'a Pending,
    id: u16,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.pending.lock() {
            p.remove(self.id);
        }
    }
}

/// The transport of one exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// UDP.
    Udp,
    /// TCP.
    Tcp,
}

/// How health probes are sent.
#[derive(Clone, Debug)]
pub struct HealthCheck {
    /// Time between probes (default 0.5 s).
    pub interval: Duration,
    /// Set RD in probes (off with `no_rec`).
    pub recursion_desired: bool,
    /// The name probed (`.` by default).
    pub domain: Name,
    /// Probe over TCP (with `force_tcp`).
    pub tcp: bool,
}

/// One upstream.
pub struct Upstream {
    /// Its address.
    pub addr: SocketAddr,
    label: String,
    udp: OnceCell<UdpMux>,
    tcp_idle: Mutex<IdlePool<TcpStream>>,
    health: Health,
    /// Query and probe IDs.
    ids: RandomIds,
    conn_hits: [Counter; 2],
    conn_misses: [Counter; 2],
    /// `coredns_proxy_request_duration_seconds` series resolved so far, by rcode.
    durations: Mutex<Vec<(Option<dns_wire::Rcode>, Histogram)>>,
    metrics: Arc<Metrics>,
}

impl Upstream {
    /// An upstream at `addr` whose idle TCP connections live `expire`.
    pub fn new(addr: SocketAddr, expire: Duration, metrics: &Arc<Metrics>) -> Self {
        let label = addr.to_string();
        let conn = |family: &prometheus_client::metrics::family::Family<_, Counter>,
                    proto: &str| {
            family
                .get_or_create(&vec![
                    ("proxy_name", "forward".to_owned()),
                    ("to", label.clone()),
                    ("proto", proto.to_owned()),
                ])
                .clone()
        };
        Self {
            conn_hits: [
                conn(&metrics.proxy_conn_hits, "udp"),
                conn(&metrics.proxy_conn_hits, "tcp"),
            ],
            conn_misses: [
                conn(&metrics.proxy_conn_misses, "udp"),
                conn(&metrics.proxy_conn_misses, "tcp"),
            ],
            addr,
            label,
            udp: OnceCell::new(),
            tcp_idle: Mutex::new(IdlePool::new(expire)),
            health: Health::default(),
            ids: RandomIds::new(RandomState::new().hash_one(addr)),
            durations: Mutex::new(Vec::new()),
            metrics: Arc::clone(metrics),
        }
    }

    /// The `to` label of its metrics.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Records how long an exchange that got `rcode` took.
    pub fn observe(&self, rcode: Option<dns_wire::Rcode>, seconds: f64) {
        let Ok(mut known) = self.durations.lock() else {
            return;
        };
        if let Some((_, histogram)) = known.iter().find(|(r, _)| *r == rcode) {
            histogram.observe(seconds);
            return;
        }
        let histogram = self
            .metrics
            .proxy_duration
            .get_or_create(&vec![
                ("proxy_name", "forward".to_owned()),
                ("to", self.label.clone()),
                ("rcode", rcode.map_or_else(String::new, |r| r.to_string())),
            ])
            .clone();
        histogram.observe(seconds);
        known.push((rcode, histogram));
    }

    /// Whether `max_fails` consecutive failures mark it down (0: never).
    pub fn is_down(&self, max_fails: u32) -> bool {
        self.health.is_down(max_fails)
    }

    /// Sends `query` and waits up to `timeout` for the reply, whose ID is then the query's.
    pub async fn exchange(
        &self,
        query: &[u8],
        transport: Transport,
        timeout: Duration,
    ) -> Result<Vec<u8>, ExchangeError> {
        let reply = match transport {
            Transport::Udp => self.exchange_udp(query, timeout).await?,
            Transport::Tcp => self.exchange_tcp(query, timeout).await?,
        };
        self.check(query, &reply)?;
        Ok(reply)
    }

    async fn exchange_udp(
        &self,
        query: &[u8],
        timeout: Duration,
    ) -> Result<Vec<u8>, ExchangeError> {
        let fresh = !self.udp.initialized();
        let mux = self
            .udp
            .get_or_try_init(|| UdpMux::open(self.addr))
            .await
            .map_err(|source| ExchangeError::Io {
                op: "dial",
                proto: "udp",
                local: String::new(),
                remote: self.addr,
                syscall: "socket",
                source,
            })?;
        if fresh {
            self.conn_misses[0].inc();
        } else {
            self.conn_hits[0].inc();
        }
        let (tx, rx) = oneshot::channel();
        let id = self
            .register(mux, Waiter::Task(tx))
            .map_err(|_| ExchangeError::Busy(self.addr))?;
        let _guard = PendingGuard {
            pending: &mux.pending,
            id,
        };
        mux.socket
            .send(Rewritten::new(query, id).bytes())
            .await
            .map_err(|e| self.udp_error(mux, "write", e))?;
        let mut reply = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(reply))) => reply,
            Ok(Ok(Err(e))) => return Err(self.udp_error(mux, "read", e)),
            Ok(Err(_)) | Err(_) => {
                return Err(ExchangeError::Timeout {
                    proto: "udp",
                    local: mux.local.clone(),
                    remote: self.addr,
                });
            }
        };
        let _ = set_id(&mut reply, original_id(query));
        Ok(reply)
    }

    /// Sends `query` over the shared UDP socket without a task waiting for it: the
    /// socket's reader calls `on_reply` with the reply or the error, at the latest at
    /// `deadline` (plus up to one sweep interval). The query is queued and goes out with
    /// the others of the batch when `outgoing` is flushed. When it cannot be sent at once,
    /// `on_reply` gets [`Delivery::NotSent`] (and `outgoing`): before this returns, or
    /// during that flush.
    pub(crate) fn send_detached(
        self: &Arc<Self>,
        query: &[u8],
        deadline: Instant,
        outgoing: &mut Outgoing,
        on_reply: OnReply,
    ) {
        let Some(mux) = self.udp.get() else {
            return on_reply(Delivery::NotSent, outgoing);
        };
        let waiter = Waiter::Detached {
            original_id: original_id(query),
            deadline,
            on_reply,
        };
        let id = match self.register(mux, waiter) {
            Ok(id) => id,
            Err(Waiter::Detached { on_reply, .. }) => {
                return on_reply(Delivery::NotSent, outgoing);
            }
            Err(Waiter::Task(_)) => return,
        };
        if mux.queue.push(Rewritten::new(query, id).bytes()) {
            outgoing.defer(self);
            return;
        }
        Self::not_sent(mux, id, outgoing);
    }

    /// Completes the detached query of `id` with [`Delivery::NotSent`], unless the reader
    /// completed it meanwhile.
    fn not_sent(mux: &UdpMux, id: u16, outgoing: &mut Outgoing) {
        let waiter = mux.pending.lock().ok().and_then(|mut p| p.remove(id));
        if let Some(Waiter::Detached { on_reply, .. }) = waiter {
            on_reply(Delivery::NotSent, outgoing);
        }
    }

    /// Takes a free random ID for `waiter`; gives the waiter back when every ID is in use.
    fn register(&self, mux: &UdpMux, waiter: Waiter) -> Result<u16, Waiter> {
        let Ok(mut pending) = mux.pending.lock() else {
            return Err(waiter);
        };
        pending.register(waiter, || self.ids.next() as u16)
    }

    fn udp_error(&self, mux: &UdpMux, op: &'static str, source: io::Error) -> ExchangeError {
        ExchangeError::Io {
            op,
            proto: "udp",
            local: format!("{}->", mux.local),
            remote: self.addr,
            syscall: op,
            source,
        }
    }

    /// Whether `reply` answers `query` (CoreDNS's `state.Match`); the error names us.
    pub fn check(&self, query: &[u8], reply: &[u8]) -> Result<(), ExchangeError> {
        if answers(query, reply) {
            Ok(())
        } else {
            Err(ExchangeError::Mismatch(self.addr))
        }
    }

    async fn exchange_tcp(
        &self,
        query: &[u8],
        timeout: Duration,
    ) -> Result<Vec<u8>, ExchangeError> {
        // A reused connection the upstream closed meanwhile fails at once: retry fresh.
        loop {
            let (stream, reused) = match self.idle_tcp() {
                Some(stream) => (stream, true),
                None => (self.dial_tcp(timeout).await?, false),
            };
            if reused {
                self.conn_hits[1].inc();
            } else {
                self.conn_misses[1].inc();
            }
            match self.roundtrip_tcp(stream, query, timeout).await {
                Ok((reply, stream)) => {
                    if let Ok(mut idle) = self.tcp_idle.lock() {
                        idle.put(stream, Instant::now());
                    }
                    return Ok(reply);
                }
                Err(_) if reused => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn idle_tcp(&self) -> Option<TcpStream> {
        self.tcp_idle.lock().ok()?.take(Instant::now())
    }

    async fn dial_tcp(&self, timeout: Duration) -> Result<TcpStream, ExchangeError> {
        match tokio::time::timeout(timeout, TcpStream::connect(self.addr)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                Ok(stream)
            }
            Ok(Err(source)) => Err(ExchangeError::Io {
                op: "dial",
                proto: "tcp",
                local: String::new(),
                remote: self.addr,
                syscall: "connect",
                source,
            }),
            Err(_) => Err(ExchangeError::Timeout {
                proto: "tcp",
                local: String::new(),
                remote: self.addr,
            }),
        }
    }

    async fn roundtrip_tcp(
        &self,
        mut stream: TcpStream,
        query: &[u8],
        timeout: Duration,
    ) -> Result<(Vec<u8>, TcpStream), ExchangeError> {
        let local = stream
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let io = |op, source| ExchangeError::Io {
            op,
            proto: "tcp",
            local: format!("{local}->"),
            remote: self.addr,
            syscall: op,
            source,
        };
        let mut framed = Vec::with_capacity(query.len() + 2);
        framed.extend_from_slice(&(query.len() as u16).to_be_bytes());
        framed.extend_from_slice(query);
        let exchange = async {
            stream
                .write_all(&framed)
                .await
                .map_err(|e| io("write", e))?;
            let len = stream.read_u16().await.map_err(|e| io("read", e))?;
            let mut reply = vec![0; usize::from(len)];
            stream
                .read_exact(&mut reply)
                .await
                .map_err(|e| io("read", e))?;
            Ok::<_, ExchangeError>(reply)
        };
        match tokio::time::timeout(timeout, exchange).await {
            Ok(Ok(reply)) => Ok((reply, stream)),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(ExchangeError::Timeout {
                proto: "tcp",
                local,
                remote: self.addr,
            }),
        }
    }

    /// Records a failed exchange; from the first failure on, probes until it answers.
    pub fn failed(self: &Arc<Self>, max_fails: u32, check: &HealthCheck) {
        if self.health.failed(max_fails) {
            tokio::spawn(probe_until_healthy(Arc::downgrade(self), check.clone()));
        }
    }

    /// A probe: `DOMAIN IN NS`; any reply counts as healthy.
    async fn probe(&self, check: &HealthCheck) -> Result<(), ExchangeError> {
        let msg = OwnedMessage {
            header: Header {
                id: self.ids.next() as u16,
                rd: check.recursion_desired,
                ..Header::default()
            },
            questions: vec![OwnedQuestion {
                name: check.domain,
                qtype: Type::NS,
                qclass: Class::IN,
            }],
            ..OwnedMessage::default()
        };
        let Ok(query) = msg.to_vec() else {
            return Ok(());
        };
        let transport = if check.tcp {
            Transport::Tcp
        } else {
            Transport::Udp
        };
        self.exchange(&query, transport, Duration::from_secs(1))
            .await
            .map(|_| ())
    }
}

/// Probes every `interval` until the upstream replies (or is dropped by a reload).
async fn probe_until_healthy(upstream: Weak<Upstream>, check: HealthCheck) {
    let mut tick = tokio::time::interval(check.interval);
    tick.tick().await;
    loop {
        tick.tick().await;
        let Some(up) = upstream.upgrade() else {
            return;
        };
        match up.probe(&check).await {
            Ok(()) => {
                up.health.probe_answered();
                return;
            }
            Err(_) => {
                up.metrics
                    .proxy_healthcheck_failures
                    .get_or_create(&vec![
                        ("proxy_name", "forward".to_owned()),
                        ("to", up.label.clone()),
                        ("rcode", String::new()),
                    ])
                    .inc();
                up.health.probe_failed();
            }
        }
    }
}

/// Whether `reply` is a response to `query`'s question (CoreDNS `state.Match`).
fn answers(query: &[u8], reply: &[u8]) -> bool {
    // Only the headers and questions are read: the reply's records are validated later,
    // where the reply is cached or scrubbed.
    let (Ok(q), Ok(r)) = (Message::walk(query), Message::walk(reply)) else {
        return false;
    };
    let (Some(qq), Some(rq)) = (q.questions().next(), r.questions().next()) else {
        // A reply without a question (some FORMERR) still answers.
        return r.header().qr;
    };
    r.header().qr
        && qq.qtype == rq.qtype
        && qq.qclass == rq.qclass
        && qq.name.eq_ignore_case(&rq.name)
}
