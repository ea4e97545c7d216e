//! One upstream server: a connected UDP socket shared by every query in flight (each query
//! gets a free random ID, replies are matched by ID and question), a pool of idle TCP
//! connections reused until they are `expire` old, and the health state (consecutive
//! failures; a probe loop that marks the upstream healthy again).

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use dns_wire::cache::set_id;
use dns_wire::{Class, Header, Message, Name, OwnedMessage, OwnedQuestion, Type};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::Histogram;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};
use tokio::sync::{OnceCell, oneshot};
use tokio::task::JoinHandle;

use crate::metrics::Metrics;

/// Most queries one upstream socket carries at once (IDs are 16 bits).
const MAX_PENDING: usize = 32_768;

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

type Pending = Arc<Mutex<HashMap<u16, oneshot::Sender<io::Result<Vec<u8>>>>>>;

/// The shared UDP socket and its reader task.
struct UdpMux {
    socket: Arc<UdpSocket>,
    local: String,
    pending: Pending,
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
        let reader = tokio::spawn(read_replies(Arc::clone(&socket), Arc::clone(&pending)));
        Ok(Self {
            socket,
            local,
            pending,
            _reader: AbortOnDrop(reader),
        })
    }
}

/// Hands each reply to the query waiting for its ID. A socket error (an ICMP port
/// unreachable shows up as ECONNREFUSED) fails every query waiting.
async fn read_replies(socket: Arc<UdpSocket>, pending: Pending) {
    let mut buf = vec![0u8; 65_535];
    loop {
        match socket.recv(&mut buf).await {
            Ok(n) => {
                let Some(reply) = buf.get(..n) else { continue };
                let Some(&[hi, lo]) = reply.first_chunk::<2>() else {
                    continue;
                };
                let id = u16::from_be_bytes([hi, lo]);
                let waiter = pending.lock().ok().and_then(|mut p| p.remove(&id));
                if let Some(waiter) = waiter {
                    let _ = waiter.send(Ok(reply.to_vec()));
                }
            }
            Err(e) => {
                let waiters: Vec<_> = match pending.lock() {
                    Ok(mut p) => p.drain().map(|(_, w)| w).collect(),
                    Err(_) => Vec::new(),
                };
                for waiter in waiters {
                    let _ = waiter.send(Err(io::Error::new(e.kind(), e.to_string())));
                }
            }
        }
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
            p.remove(&self.id);
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
    tcp_idle: Mutex<Vec<(TcpStream, Instant)>>,
    expire: Duration,
    fails: AtomicU32,
    checking: AtomicBool,
    rng: AtomicU64,
    conn_hits: [Counter; 2],
    conn_misses: [Counter; 2],
    /// `coredns_proxy_request_duration_seconds` series resolved so far, by rcode.
    durations: Mutex<Vec<(String, Histogram)>>,
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
            tcp_idle: Mutex::new(Vec::new()),
            expire,
            fails: AtomicU32::new(0),
            checking: AtomicBool::new(false),
            rng: AtomicU64::new(RandomState::new().hash_one(addr)),
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
        let rcode = rcode.map_or_else(String::new, |r| r.to_string());
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
                ("rcode", rcode.clone()),
            ])
            .clone();
        histogram.observe(seconds);
        known.push((rcode, histogram));
    }

    /// Whether `max_fails` consecutive failures mark it down (0: never).
    pub fn is_down(&self, max_fails: u32) -> bool {
        max_fails > 0 && self.fails.load(Ordering::Relaxed) >= max_fails
    }

    fn random(&self) -> u64 {
        let mut x = self.rng.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ (x >> 31)
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
        if !answers(query, &reply) {
            return Err(ExchangeError::Mismatch(self.addr));
        }
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
        let io = |op, source| ExchangeError::Io {
            op,
            proto: "udp",
            local: format!("{}->", mux.local),
            remote: self.addr,
            syscall: op,
            source,
        };
        if fresh {
            self.conn_misses[0].inc();
        } else {
            self.conn_hits[0].inc();
        }
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut pending = mux
                .pending
                .lock()
                .map_err(|_| ExchangeError::Busy(self.addr))?;
            if pending.len() >= MAX_PENDING {
                return Err(ExchangeError::Busy(self.addr));
            }
            let mut id = self.random() as u16;
            while pending.contains_key(&id) {
                id = self.random() as u16;
            }
            pending.insert(id, tx);
            id
        };
        let _guard = PendingGuard {
            pending: &mux.pending,
            id,
        };
        let mut wire = query.to_vec();
        let original = u16::from_be_bytes([wire[0], wire[1]]);
        let _ = set_id(&mut wire, id);
        mux.socket.send(&wire).await.map_err(|e| io("write", e))?;
        let timed_out = || ExchangeError::Timeout {
            proto: "udp",
            local: mux.local.clone(),
            remote: self.addr,
        };
        let mut reply = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(reply))) => reply,
            Ok(Ok(Err(e))) => return Err(io("read", e)),
            Ok(Err(_)) | Err(_) => return Err(timed_out()),
        };
        let _ = set_id(&mut reply, original);
        Ok(reply)
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
                        idle.push((stream, Instant::now()));
                    }
                    return Ok(reply);
                }
                Err(_) if reused => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn idle_tcp(&self) -> Option<TcpStream> {
        let mut idle = self.tcp_idle.lock().ok()?;
        let now = Instant::now();
        idle.retain(|(_, since)| now.saturating_duration_since(*since) < self.expire);
        idle.pop().map(|(s, _)| s)
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
        self.fails.fetch_add(1, Ordering::Relaxed);
        if max_fails == 0 || self.checking.swap(true, Ordering::AcqRel) {
            return;
        }
        tokio::spawn(probe_until_healthy(Arc::downgrade(self), check.clone()));
    }

    /// A probe: `DOMAIN IN NS`; any reply counts as healthy.
    async fn probe(&self, check: &HealthCheck) -> Result<(), ExchangeError> {
        let msg = OwnedMessage {
            header: Header {
                id: self.random() as u16,
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
                up.fails.store(0, Ordering::Relaxed);
                up.checking.store(false, Ordering::Release);
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
                up.fails.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Whether `reply` is a response to `query`'s question (CoreDNS `state.Match`).
fn answers(query: &[u8], reply: &[u8]) -> bool {
    let (Ok(q), Ok(r)) = (Message::parse(query), Message::parse(reply)) else {
        return false;
    };
    let (Some(qq), Some(rq)) = (q.question(), r.question()) else {
        // A reply without a question (some FORMERR) still answers.
        return r.header().qr;
    };
    r.header().qr
        && qq.qtype == rq.qtype
        && qq.qclass == rq.qclass
        && qq.name.eq_ignore_case(&rq.name)
}
