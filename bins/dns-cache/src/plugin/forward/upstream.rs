//! One upstream server: exchanges over the UDP socket its queries share ([`mux`](super::mux),
//! each query under a free random ID, the reply matched by ID and question), or over TCP
//! connections reused until they are `expire` old (those the upstream closes are dropped
//! within a second, not left in CLOSE-WAIT), and the probe loop that marks the upstream
//! healthy again.
//!
//! The decisions are made by socket-free parts, tested without a runtime: the table of
//! waiting queries and their expiry ([`pending`](super::pending)), the idle connections
//! ([`idle`](super::idle)), the failure count ([`health`](super::health)) and the bytes
//! ([`wire`](super::wire)). This file holds the sockets, the tasks and the clock, and
//! calls them.

use std::hash::{BuildHasher, RandomState};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use dns_wire::cache::set_id;
use dns_wire::{Class, Header, Name, OwnedMessage, OwnedQuestion, Type};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::Histogram;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{OnceCell, oneshot};

use super::error::ExchangeError;
use super::health::Health;
use super::idle::IdlePool;
use super::mux::{Delivery, OnReply, PendingGuard, UdpMux, Waiter};
use super::pending::RandomIds;
use super::wire::{Rewritten, answers, original_id};
use crate::metrics::Metrics;
use crate::server::batch::{Deferred, Outgoing};

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
    tcp_idle: Arc<Mutex<IdlePool<TcpStream>>>,
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
            tcp_idle: Arc::new(Mutex::new(IdlePool::new(expire))),
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
                    let sweep = self
                        .tcp_idle
                        .lock()
                        .is_ok_and(|mut idle| idle.put(stream, Instant::now()));
                    if sweep {
                        tokio::spawn(sweep_idle(Arc::downgrade(&self.tcp_idle)));
                    }
                    return Ok(reply);
                }
                Err(_) if reused => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn idle_tcp(&self) -> Option<TcpStream> {
        self.tcp_idle.lock().ok()?.take(Instant::now(), peer_open)
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

/// How often the idle TCP connections are checked while there are any.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Drops idle connections the upstream closed or that expired, every [`SWEEP_EVERY`],
/// until none is left (or the upstream is gone).
async fn sweep_idle(pool: Weak<Mutex<IdlePool<TcpStream>>>) {
    loop {
        tokio::time::sleep(SWEEP_EVERY).await;
        let Some(pool) = pool.upgrade() else {
            return;
        };
        let Ok(mut pool) = pool.lock() else {
            return;
        };
        if !pool.sweep(Instant::now(), peer_open) {
            return;
        }
    }
}

/// Whether the upstream may still use `stream`: false once it closed its side (EOF), on
/// an error, and when it sent bytes no query asked for.
fn peer_open(stream: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(stream.try_read(&mut byte), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
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
