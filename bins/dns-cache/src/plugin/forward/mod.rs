//! `forward`: sends queries to up to 15 upstreams (addresses or resolv.conf files), over the
//! client's transport unless `force_tcp` or `prefer_udp` (UDP first, TCP when the reply is
//! truncated). Upstreams are tried in policy order (`random`, `round_robin`,
//! `sequential`), skipping those down after `max_fails` failures (all down: a random one),
//! each attempt waiting 2 s, for at most 5 s and 2 × the upstreams' attempts in all
//! (CoreDNS's `max_connect_attempts` default). `max_concurrent` refuses queries
//! beyond the limit; `except` names go to the next plugin.
//!
//! This file holds the stanzas and the attempts of one query. Each upstream is an
//! [`Upstream`] (`upstream.rs`): its exchanges over the UDP socket its queries share
//! (`mux.rs`) or over TCP. What those decide is socket-free and tested on its own: the
//! waiting queries by ID (`pending.rs`), the idle TCP connections (`idle.rs`), the failure
//! count (`health.rs`), the query and reply bytes (`wire.rs`) and the error texts
//! (`error.rs`).

mod error;
mod health;
mod idle;
mod mux;
mod pending;
mod upstream;
mod wire;

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use corefile::plugins::{Forward as ForwardConfig, ForwardStanza, Policy};
use dns_wire::{Message, Name, Rcode};

pub use error::ExchangeError;
pub use mux::Delivery;
pub use upstream::{HealthCheck, Transport, Upstream};

use super::Failure;
use crate::duration::from_go;
use crate::metrics::Metrics;
use crate::query::names::{Zone, in_any};
use crate::query::request::{Proto, Request};
use crate::server::batch::Outgoing;

/// Time one attempt waits for a reply.
const READ_TIMEOUT: Duration = Duration::from_secs(2);
/// Time all attempts of one query may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);
/// Default `expire` of idle connections.
const DEFAULT_EXPIRE: Duration = Duration::from_secs(10);
/// Default `max_fails`.
const DEFAULT_MAX_FAILS: u32 = 2;
/// Default health check interval.
const DEFAULT_HEALTH_CHECK: Duration = Duration::from_millis(500);

/// A configuration `forward` cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    /// An upstream is not an address, a resolvable host or a readable file.
    #[error("plugin/forward: not an IP address or file: {0:?}")]
    Upstream(String),
    /// A resolv.conf file names no server.
    #[error("plugin/forward: no nameservers found in {0}")]
    EmptyFile(String),
    /// DNS over TLS or HTTPS upstreams.
    #[error("plugin/forward: {0}: only plain DNS upstreams (dns://) are supported")]
    Transport(String),
    /// A zone is not a domain name.
    #[error("plugin/forward: invalid name {0:?}")]
    Zone(String),
}

/// One `forward` line.
struct Stanza {
    from: Zone,
    except: Vec<Zone>,
    upstreams: Vec<Arc<Upstream>>,
    policy: Policy,
    force_tcp: bool,
    prefer_udp: bool,
    max_fails: u32,
    health: HealthCheck,
    max_concurrent: Option<u32>,
    inflight: AtomicU32,
    failfast: bool,
    round_robin: AtomicUsize,
}

/// The `forward` plugin of a block.
pub struct Forward {
    stanzas: Vec<Stanza>,
    metrics: Arc<Metrics>,
}

impl Forward {
    /// The plugin; upstream sockets open on first use.
    pub fn new(config: &ForwardConfig, metrics: &Arc<Metrics>) -> Result<Self, ForwardError> {
        let stanzas = config
            .stanzas
            .iter()
            .map(|s| Stanza::new(s, metrics))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            stanzas,
            metrics: Arc::clone(metrics),
        })
    }

    /// The index of the stanza that takes `req`.
    fn stanza_of(&self, req: &Request<'_>) -> Option<usize> {
        let name = &req.name;
        self.stanzas
            .iter()
            .position(|s| name.is_in(&s.from) && !in_any(name, &s.except))
    }

    /// Whether a stanza takes `req` (its name is under FROM and not excepted).
    pub fn handles(&self, req: &Request<'_>) -> bool {
        self.stanza_of(req).is_some()
    }

    /// Forwards `req` as `query` (its bytes, or a copy the cache changed); the reply
    /// carries the client's ID.
    pub async fn resolve(&self, req: &Request<'_>, query: &[u8]) -> Result<Vec<u8>, Failure> {
        let Some((index, stanza)) = self
            .stanza_of(req)
            .and_then(|i| Some((i, self.stanzas.get(i)?)))
        else {
            return Err(Failure::servfail("plugin/forward: no next plugin found"));
        };
        let _slot = match stanza.max_concurrent {
            Some(max) => match Slot::take(&stanza.inflight, max) {
                Some(slot) => Some(slot),
                None => {
                    self.metrics.forward_max_concurrent_rejects.inc();
                    return Err(Failure {
                        rcode: Rcode::REFUSED,
                        error: format!("concurrent queries exceeded maximum {max}"),
                    });
                }
            },
            None => None,
        };
        let attempts = Attempts::new(stanza, index, req, Instant::now());
        stanza.attempt(query, attempts, &self.metrics).await
    }

    /// Starts `req` (received at `now`) on its first upstream without a task waiting (see
    /// `Upstream::send_detached`), when the waiting path would start the same way: over
    /// UDP, with no `max_concurrent` limit. `None`: use [`Forward::resolve`].
    pub fn detach(&self, req: &Request<'_>, now: Instant) -> Option<Detached> {
        let index = self.stanza_of(req)?;
        let stanza = self.stanzas.get(index)?;
        if stanza.max_concurrent.is_some() {
            return None;
        }
        let mut attempts = Attempts::new(stanza, index, req, now);
        if attempts.transport != Transport::Udp {
            return None;
        }
        let upstream = Arc::clone(attempts.next(stanza, &self.metrics).ok()??);
        Some(Detached {
            attempts,
            upstream,
            sent: now,
        })
    }

    /// Judges what became of a detached query: the reply to serve, or the attempts
    /// to go on with on the waiting path ([`Forward::resume`]).
    pub fn judge(&self, detached: Detached, query: &[u8], delivery: Delivery) -> Judged {
        let Detached {
            mut attempts,
            upstream,
            sent,
        } = detached;
        let Some(stanza) = self.stanzas.get(attempts.stanza) else {
            return Judged::Failed(Failure::servfail("plugin/forward: no next plugin found"));
        };
        let result = match delivery {
            Delivery::Reply(reply) => upstream.check(query, &reply).map(|()| reply),
            Delivery::Failed(e) => Err(e),
            Delivery::NotSent => {
                attempts.undo();
                return Judged::Resume(attempts);
            }
        };
        match attempts.judge(stanza, &upstream, sent, result) {
            Verdict::Reply(reply) => Judged::Reply(reply),
            Verdict::Again => Judged::Resume(attempts),
        }
    }

    /// The waiting path, going on after a detached attempt, with `query` as
    /// [`Forward::resolve`] takes it.
    pub async fn resume(&self, query: &[u8], attempts: Attempts) -> Result<Vec<u8>, Failure> {
        match self.stanzas.get(attempts.stanza) {
            Some(stanza) => stanza.attempt(query, attempts, &self.metrics).await,
            None => Err(Failure::servfail("plugin/forward: no next plugin found")),
        }
    }
}

/// A query's first attempt, to be sent with `Detached::send`.
pub struct Detached {
    attempts: Attempts,
    upstream: Arc<Upstream>,
    sent: Instant,
}

impl Detached {
    /// Sends `query` to the upstream when `outgoing` is flushed; its reader calls
    /// `on_reply` (with this attempt, for [`Forward::judge`], and the reader's queue of
    /// datagrams to send) when the reply comes, the attempt fails or times out. When the
    /// query cannot be sent at once, `on_reply` runs with `outgoing`, before this returns
    /// or during that flush.
    pub(crate) fn send(
        self,
        query: &[u8],
        outgoing: &mut Outgoing,
        on_reply: impl FnOnce(Self, Delivery, &mut Outgoing) + Send + 'static,
    ) {
        let upstream = Arc::clone(&self.upstream);
        let deadline = self.sent + READ_TIMEOUT;
        upstream.send_detached(
            query,
            deadline,
            outgoing,
            Box::new(move |delivery, outgoing| on_reply(self, delivery, outgoing)),
        );
    }
}

/// What [`Forward::judge`] made of a detached query.
pub enum Judged {
    /// The upstream's reply, to serve.
    Reply(Vec<u8>),
    /// Go on with [`Forward::resume`].
    Resume(Attempts),
    /// The chain fails.
    Failed(Failure),
}

/// One query's way through a stanza's upstreams: tried in policy order, skipping those
/// down, each attempt waiting `READ_TIMEOUT`, for at most `QUERY_TIMEOUT` and twice
/// as many attempts as upstreams.
pub struct Attempts {
    stanza: usize,
    list: Vec<usize>,
    next: usize,
    fails: usize,
    attempts: usize,
    start: Instant,
    transport: Transport,
    last_error: Option<ExchangeError>,
}

/// The verdict on one attempt.
enum Verdict {
    /// Serve this reply.
    Reply(Vec<u8>),
    /// Try again.
    Again,
}

impl Attempts {
    fn new(stanza: &Stanza, index: usize, req: &Request<'_>, start: Instant) -> Self {
        let seed = u64::from(req.header.id) << 32 ^ u64::from(req.client.port());
        Self {
            stanza: index,
            list: stanza.order(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ random_seed()),
            next: 0,
            fails: 0,
            attempts: 0,
            start,
            transport: if stanza.force_tcp {
                Transport::Tcp
            } else if stanza.prefer_udp || req.proto == Proto::Udp {
                Transport::Udp
            } else {
                Transport::Tcp
            },
            last_error: None,
        }
    }

    /// The upstream to try next; `None` when time or attempts are used up.
    fn next<'s>(
        &mut self,
        stanza: &'s Stanza,
        metrics: &Metrics,
    ) -> Result<Option<&'s Arc<Upstream>>, Failure> {
        let n = stanza.upstreams.len();
        while self.attempts < 2 * n && (self.attempts == 0 || self.start.elapsed() < QUERY_TIMEOUT)
        {
            if self.next >= n {
                self.next = 0;
                self.fails = 0;
            }
            let Some(mut upstream) = self
                .list
                .get(self.next)
                .and_then(|&k| stanza.upstreams.get(k))
            else {
                break;
            };
            self.next += 1;
            if upstream.is_down(stanza.max_fails) {
                self.fails += 1;
                if self.fails < n {
                    continue;
                }
                if stanza.failfast {
                    return Err(Failure::servfail("no healthy upstreams"));
                }
                metrics.forward_healthcheck_broken.inc();
                let pick = (random_seed() % n as u64) as usize;
                upstream = stanza.upstreams.get(pick).unwrap_or(upstream);
            }
            self.attempts += 1;
            return Ok(Some(upstream));
        }
        Ok(None)
    }

    /// Forgets the last attempt, which never left (the upstream is tried again).
    fn undo(&mut self) {
        self.next = self.next.saturating_sub(1);
        self.attempts = self.attempts.saturating_sub(1);
    }

    /// Judges one attempt's result: a truncated UDP reply with `prefer_udp` is asked
    /// again over TCP; an error counts against the upstream.
    fn judge(
        &mut self,
        stanza: &Stanza,
        upstream: &Arc<Upstream>,
        sent: Instant,
        result: Result<Vec<u8>, ExchangeError>,
    ) -> Verdict {
        match result {
            Ok(reply) => {
                let (rcode, truncated) = rcode_and_tc(&reply);
                if self.transport == Transport::Udp && stanza.prefer_udp && truncated {
                    self.transport = Transport::Tcp;
                    self.undo();
                    return Verdict::Again;
                }
                upstream.observe(rcode, sent.elapsed().as_secs_f64());
                Verdict::Reply(reply)
            }
            Err(e) => {
                upstream.failed(stanza.max_fails, &stanza.health);
                self.last_error = Some(e);
                Verdict::Again
            }
        }
    }

    /// The failure once nothing is left to try.
    fn failure(self) -> Failure {
        Failure::servfail(
            self.last_error
                .map_or_else(|| "no healthy proxies".to_owned(), |e| e.to_string()),
        )
    }
}

/// A counted in-flight query.
struct Slot<'a>(&'a AtomicU32);

impl<'a> Slot<'a> {
    fn take(counter: &'a AtomicU32, max: u32) -> Option<Self> {
        if counter.fetch_add(1, Ordering::AcqRel) >= max {
            counter.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(Self(counter))
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Stanza {
    fn new(s: &ForwardStanza, metrics: &Arc<Metrics>) -> Result<Self, ForwardError> {
        let expire = s.expire.map_or(DEFAULT_EXPIRE, from_go);
        let mut upstreams = Vec::new();
        for to in &s.to {
            for addr in upstream_addresses(to)? {
                upstreams.push(Arc::new(Upstream::new(addr, expire, metrics)));
            }
        }
        let zone = |z: &str| Zone::parse(z).map_err(|_| ForwardError::Zone(z.to_owned()));
        let (interval, options) = s
            .health_check
            .as_ref()
            .map_or((DEFAULT_HEALTH_CHECK, &[][..]), |(d, o)| {
                (from_go(*d), &o[..])
            });
        let domain = options
            .iter()
            .position(|o| o == "domain")
            .and_then(|i| options.get(i + 1))
            .map_or(Ok(Name::root()), |d| {
                d.parse::<Name>().map_err(|_| ForwardError::Zone(d.clone()))
            })?;
        Ok(Self {
            from: zone(&s.from)?,
            except: s.except.iter().map(|e| zone(e)).collect::<Result<_, _>>()?,
            upstreams,
            policy: s.policy.unwrap_or(Policy::Random),
            force_tcp: s.force_tcp,
            prefer_udp: s.prefer_udp,
            max_fails: s.max_fails.unwrap_or(DEFAULT_MAX_FAILS),
            health: HealthCheck {
                interval: interval.max(Duration::from_millis(10)),
                recursion_desired: !options.iter().any(|o| o == "no_rec"),
                domain,
                tcp: s.force_tcp,
            },
            max_concurrent: s.max_concurrent,
            inflight: AtomicU32::new(0),
            failfast: s.failfast_all_unhealthy_upstreams,
            round_robin: AtomicUsize::new(0),
        })
    }

    /// The upstreams in the order to try them.
    fn order(&self, seed: u64) -> Vec<usize> {
        let n = self.upstreams.len();
        let mut list: Vec<usize> = (0..n).collect();
        match self.policy {
            Policy::Sequential => {}
            Policy::RoundRobin => {
                let start = self.round_robin.fetch_add(1, Ordering::Relaxed);
                list.rotate_left(start % n.max(1));
            }
            Policy::Random => {
                let mut x = seed | 1;
                for i in (1..n).rev() {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    list.swap(i, (x % (i as u64 + 1)) as usize);
                }
            }
        }
        list
    }

    /// Tries upstreams until one answers or the attempts run out.
    async fn attempt(
        &self,
        query: &[u8],
        mut attempts: Attempts,
        metrics: &Metrics,
    ) -> Result<Vec<u8>, Failure> {
        while let Some(upstream) = attempts.next(self, metrics)? {
            let sent = Instant::now();
            let result = upstream
                .exchange(query, attempts.transport, READ_TIMEOUT)
                .await;
            if let Verdict::Reply(reply) = attempts.judge(self, upstream, sent, result) {
                return Ok(reply);
            }
        }
        Err(attempts.failure())
    }
}

/// A reply's rcode (extended by its OPT record, if any) and TC bit; no rcode when it
/// does not parse.
fn rcode_and_tc(reply: &[u8]) -> (Option<Rcode>, bool) {
    match dns_wire::Header::parse(reply) {
        // Without an additional section there is no OPT to extend the rcode.
        Ok((header, counts)) if counts.additional == 0 => {
            (Some(Rcode(u16::from(header.rcode))), header.tc)
        }
        _ => Message::parse(reply)
            .map(|m| (Some(m.rcode()), m.header().tc))
            .unwrap_or((None, false)),
    }
}

/// A random number for upstream order: xorshift64* per thread, seeded from the OS.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    thread_local! {
        static STATE: std::cell::Cell<u64> =
            std::cell::Cell::new(RandomState::new().hash_one(0u8) | 1);
    }
    STATE.with(|state| {
        let mut x = state.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    })
}

/// The addresses of one TO: `[dns://]IP[:PORT]`, a host name, or a resolv.conf file.
fn upstream_addresses(to: &str) -> Result<Vec<SocketAddr>, ForwardError> {
    if let Some((scheme, _)) = to.split_once("://")
        && scheme != "dns"
    {
        return Err(ForwardError::Transport(to.to_owned()));
    }
    let host = to.strip_prefix("dns://").unwrap_or(to);
    if let Some(addr) = parse_address(host) {
        return Ok(vec![addr]);
    }
    if let Ok(text) = std::fs::read_to_string(host) {
        let servers: Vec<SocketAddr> = resolv_conf_servers(&text);
        if servers.is_empty() {
            return Err(ForwardError::EmptyFile(host.to_owned()));
        }
        return Ok(servers);
    }
    let with_port = if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:53")
    };
    with_port
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .map(|a| vec![a])
        .ok_or_else(|| ForwardError::Upstream(to.to_owned()))
}

/// `IP`, `IP:PORT`, `[IPv6]:PORT` or `IPv6`; port 53 by default.
fn parse_address(text: &str) -> Option<SocketAddr> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Some(addr);
    }
    let ip = text.parse::<IpAddr>().ok()?;
    Some(SocketAddr::new(ip, 53))
}

/// The `nameserver` lines of a resolv.conf file.
pub fn resolv_conf_servers(text: &str) -> Vec<SocketAddr> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next()? == "nameserver").then_some(())?;
            let ip = words.next()?.split('%').next()?;
            parse_address(ip)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_forms() {
        assert_eq!(
            upstream_addresses("10.0.0.1").unwrap(),
            vec!["10.0.0.1:53".parse().unwrap()]
        );
        assert_eq!(
            upstream_addresses("dns://127.0.0.1:5300").unwrap(),
            vec!["127.0.0.1:5300".parse().unwrap()]
        );
        assert_eq!(
            upstream_addresses("[::1]:5353").unwrap(),
            vec!["[::1]:5353".parse().unwrap()]
        );
        assert!(matches!(
            upstream_addresses("tls://1.1.1.1"),
            Err(ForwardError::Transport(_))
        ));
    }

    #[test]
    fn resolv_conf_nameservers() {
        let text = "# comment\nsearch example\nnameserver 10.0.0.2\nnameserver fe80::1%eth0\noptions ndots:5\n";
        assert_eq!(
            resolv_conf_servers(text),
            vec![
                "10.0.0.2:53".parse().unwrap(),
                "[fe80::1]:53".parse().unwrap()
            ]
        );
    }

    fn stanza(policy: Policy, n: usize) -> Stanza {
        let metrics = Arc::new(Metrics::new());
        let config = ForwardStanza {
            from: ".".into(),
            to: (0..n).map(|i| format!("10.0.0.{}", i + 1)).collect(),
            policy: Some(policy),
            ..ForwardStanza::default()
        };
        Stanza::new(&config, &metrics).unwrap()
    }

    #[test]
    fn policies_order_upstreams() {
        let s = stanza(Policy::Sequential, 3);
        assert_eq!(s.order(7), vec![0, 1, 2]);
        let s = stanza(Policy::RoundRobin, 3);
        assert_eq!(s.order(0), vec![0, 1, 2]);
        assert_eq!(s.order(0), vec![1, 2, 0]);
        let s = stanza(Policy::Random, 5);
        let mut seen = std::collections::HashSet::new();
        for seed in 0..50 {
            let mut o = s.order(seed);
            seen.insert(o[0]);
            o.sort();
            assert_eq!(o, vec![0, 1, 2, 3, 4]);
        }
        assert!(seen.len() > 1);
    }

    #[test]
    fn max_concurrent_slots() {
        let counter = AtomicU32::new(0);
        let a = Slot::take(&counter, 1);
        assert!(a.is_some());
        assert!(Slot::take(&counter, 1).is_none());
        drop(a);
        assert!(Slot::take(&counter, 1).is_some());
    }
}
