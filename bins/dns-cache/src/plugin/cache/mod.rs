//! `cache`: whole replies stored as bytes in two sharded tables (success and denial), and
//! replayed by patching ID, flags, question case and TTLs in place (no message is built on a
//! hit, and nothing is allocated once the output buffer has grown).
//!
//! As CoreDNS: the key is the lower-cased name, type, DO and CD bits; capacity is split
//! into 256 shards and a full shard evicts a random entry; an entry lives for the smallest
//! TTL of the reply clamped to the tier's `[MINTTL, TTL]`, and every TTL served is the
//! entry's remaining lifetime; SERVFAIL is kept `servfail` long (5 s by default).

mod shard;

use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use corefile::plugins::{Cache as CacheConfig, CacheTier};
use dns_wire::cache::TtlCursor;
use dns_wire::{Message, RData, Type};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;

use crate::duration::from_go;
use crate::metrics::{Labels, Metrics};
use crate::query::classify::ReplyType;
use crate::query::names::{Zone, in_any};
use crate::query::reply::{Replay, replay};
use crate::query::request::Request;
use crate::query::stored::StoredReply;
use shard::{Inserted, Shard};

/// Shards per table (CoreDNS: 256).
const SHARDS: usize = 256;
/// Default capacity per table (256 × 39).
pub const DEFAULT_CAPACITY: u64 = 9984;
/// Smallest capacity per table.
const MIN_CAPACITY: u64 = 1024;
/// Default maximum TTL of the success table.
const MAX_SUCCESS_TTL: u32 = 3600;
/// Default maximum TTL of the denial table.
const MAX_DENIAL_TTL: u32 = 1800;
/// Default minimum TTL of both tables.
const MIN_TTL: u32 = 5;
/// TTL of replies with no records at all (CoreDNS `MinimalDefaultTTL`).
const EMPTY_REPLY_TTL: u32 = 5;
/// Default SERVFAIL caching time.
const SERVFAIL_TTL: u32 = 5;

/// The result of a lookup.
#[derive(Debug)]
pub enum Lookup {
    /// A fresh (or immediately served stale) entry was written to the output.
    Hit,
    /// As `Hit`, and the entry should be refreshed in the background.
    HitRefresh,
    /// An expired entry within `serve_stale verify`: ask upstream first, serve this on failure.
    Verify(StoredReply),
    /// Nothing usable.
    Miss,
}

struct Entry {
    reply: StoredReply,
    stored: Instant,
    ttl: u32,
    hits: u64,
    window_start: Instant,
    refreshing: bool,
}

struct Tier {
    shards: Box<[Mutex<Shard<Entry>>]>,
    per_shard: usize,
    min_ttl: u32,
    max_ttl: u32,
    entries: Gauge,
    hits: Counter,
    evictions: Counter,
}

impl Tier {
    fn new(
        tier: Option<&CacheTier>,
        max_ttl: u32,
        metrics: &Metrics,
        labels: impl Fn(&'static str) -> Labels,
        name: &'static str,
    ) -> Self {
        let capacity = tier
            .map_or(DEFAULT_CAPACITY, |t| t.capacity)
            .max(MIN_CAPACITY);
        let per_shard = usize::try_from(capacity / SHARDS as u64).unwrap_or(usize::MAX);
        let seed = RandomState::new().hash_one(name);
        Self {
            shards: (0..SHARDS)
                .map(|i| {
                    Mutex::new(Shard::new(
                        seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    ))
                })
                .collect(),
            per_shard,
            min_ttl: tier.and_then(|t| t.min_ttl).unwrap_or(MIN_TTL),
            max_ttl: tier.and_then(|t| t.ttl).unwrap_or(max_ttl),
            entries: metrics.cache_entries.get_or_create(&labels(name)).clone(),
            hits: metrics.cache_hits.get_or_create(&labels(name)).clone(),
            evictions: metrics.cache_evictions.get_or_create(&labels(name)).clone(),
        }
    }

    fn shard(&self, key: u64) -> Option<&Mutex<Shard<Entry>>> {
        self.shards.get((key % SHARDS as u64) as usize)
    }

    fn clamp(&self, ttl: u32) -> u32 {
        ttl.clamp(self.min_ttl.min(self.max_ttl), self.max_ttl)
    }

    fn insert(&self, key: u64, entry: Entry) {
        let Some(mut shard) = self.shard(key).and_then(|s| s.lock().ok()) else {
            return;
        };
        match shard.insert(key, entry, self.per_shard) {
            Inserted::Replaced => {}
            Inserted::Added => {
                self.entries.inc();
            }
            Inserted::Evicted => {
                self.evictions.inc();
            }
        }
    }

    fn remove(&self, key: u64) {
        if let Some(mut shard) = self.shard(key).and_then(|s| s.lock().ok())
            && shard.remove(key)
        {
            self.entries.dec();
        }
    }
}

struct PrefetchRule {
    amount: u64,
    window: Duration,
    percentage: u64,
}

struct StaleRule {
    window: Duration,
    verify: bool,
}

/// The `cache` plugin of a block.
pub struct Cache {
    zones: Vec<Zone>,
    success: Tier,
    denial: Tier,
    servfail_ttl: u32,
    prefetch: Option<PrefetchRule>,
    stale: Option<StaleRule>,
    keepttl: bool,
    no_success: Vec<Zone>,
    no_denial: Vec<Zone>,
    hasher: RandomState,
    requests: Counter,
    misses: Counter,
    prefetches: Counter,
    drops: Counter,
    served_stale: Counter,
}

/// A configuration the cache cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// A zone is not a domain name.
    #[error("plugin/cache: invalid zone {0:?}")]
    Zone(String),
}

fn zones(names: &[String]) -> Result<Vec<Zone>, CacheError> {
    names
        .iter()
        .map(|z| Zone::parse(z).map_err(|_| CacheError::Zone(z.clone())))
        .collect()
}

impl Cache {
    /// The cache of a block serving `block_zones`, with its metrics labelled for `server`.
    pub fn new(
        config: &CacheConfig,
        block_zones: &[String],
        server: &str,
        metrics: &Metrics,
    ) -> Result<Self, CacheError> {
        let zone_names = if config.zones.is_empty() {
            block_zones.to_vec()
        } else {
            config
                .zones
                .iter()
                .map(|z| corefile::zone::fqdn(&corefile::zone::go_lowercase(z)))
                .collect()
        };
        let zones_label = zone_names.join(",");
        let labels = |kind: &'static str| -> Labels {
            vec![
                ("server", server.to_owned()),
                ("type", kind.to_owned()),
                ("zones", zones_label.clone()),
                ("view", String::new()),
            ]
        };
        let plain: Labels = vec![
            ("server", server.to_owned()),
            ("zones", zones_label.clone()),
            ("view", String::new()),
        ];
        let max_success = config.ttl.unwrap_or(MAX_SUCCESS_TTL);
        let max_denial = config.ttl.unwrap_or(MAX_DENIAL_TTL);
        let disabled = |kind: &str| -> Result<Vec<Zone>, CacheError> {
            let mut out = Vec::new();
            for (k, names) in &config.disable {
                if k == kind {
                    if names.is_empty() {
                        out.extend(zones(&zone_names)?);
                    } else {
                        out.extend(zones(names)?);
                    }
                }
            }
            Ok(out)
        };
        Ok(Self {
            zones: zones(&zone_names)?,
            success: Tier::new(
                config.success.as_ref(),
                max_success,
                metrics,
                labels,
                "success",
            ),
            denial: Tier::new(
                config.denial.as_ref(),
                max_denial,
                metrics,
                labels,
                "denial",
            ),
            servfail_ttl: config
                .servfail
                .map_or(SERVFAIL_TTL, |d| from_go(d).as_secs().min(300) as u32),
            prefetch: config.prefetch.as_ref().map(|p| PrefetchRule {
                amount: p.amount,
                window: p.duration.map_or(Duration::from_secs(60), from_go),
                percentage: u64::from(p.percentage.unwrap_or(10)),
            }),
            stale: config.serve_stale.as_ref().map(|(d, mode)| StaleRule {
                window: d.map_or(Duration::from_secs(3600), from_go),
                verify: mode.as_deref() == Some("verify"),
            }),
            keepttl: config.keepttl,
            no_success: disabled("success")?,
            no_denial: disabled("denial")?,
            hasher: RandomState::new(),
            requests: metrics.cache_requests.get_or_create(&plain).clone(),
            misses: metrics.cache_misses.get_or_create(&plain).clone(),
            prefetches: metrics.cache_prefetch.get_or_create(&plain).clone(),
            drops: metrics.cache_drops.get_or_create(&plain).clone(),
            served_stale: metrics.cache_served_stale.get_or_create(&plain).clone(),
        })
    }

    /// The key of `req`, if the cache serves its name.
    fn key(&self, req: &Request<'_>) -> Option<u64> {
        if !in_any(&req.name, &self.zones) {
            return None;
        }
        let mut h = self.hasher.build_hasher();
        h.write(req.name.as_wire());
        h.write_u16(req.question.qtype.0);
        h.write_u8(u8::from(req.dnssec_ok()) | u8::from(req.header.cd) << 1);
        Some(h.finish())
    }

    /// Looks `req` up and, on a hit, writes the reply to `out`.
    pub fn lookup(&self, req: &Request<'_>, out: &mut Vec<u8>, now: Instant) -> Lookup {
        let Some(key) = self.key(req) else {
            return Lookup::Miss;
        };
        self.requests.inc();
        // A key is in at most one table (storing removes it from the other).
        for tier in [&self.success, &self.denial] {
            let Some(mut shard) = tier.shard(key).and_then(|s| s.lock().ok()) else {
                continue;
            };
            let Some(entry) = shard.get_mut(key) else {
                continue;
            };
            let age = now.saturating_duration_since(entry.stored);
            let age_secs = u32::try_from(age.as_secs()).unwrap_or(u32::MAX);
            if age_secs < entry.ttl {
                let refresh = self.should_prefetch(entry, now, entry.ttl - age_secs);
                let reply = entry.reply.clone();
                drop(shard);
                let how = Replay {
                    age: if self.keepttl { 0 } else { age_secs },
                    stale_ttl: None,
                };
                if !replay(&reply, req, how, out) {
                    break;
                }
                tier.hits.inc();
                if refresh {
                    self.prefetches.inc();
                    return Lookup::HitRefresh;
                }
                return Lookup::Hit;
            }
            let Some(stale) = &self.stale else {
                continue;
            };
            if age > Duration::from_secs(u64::from(entry.ttl)) + stale.window {
                continue;
            }
            let reply = entry.reply.clone();
            if stale.verify {
                return Lookup::Verify(reply);
            }
            let refresh = !std::mem::replace(&mut entry.refreshing, true);
            drop(shard);
            if !self.serve_stale(&reply, req, out) {
                break;
            }
            tier.hits.inc();
            return if refresh {
                Lookup::HitRefresh
            } else {
                Lookup::Hit
            };
        }
        self.misses.inc();
        Lookup::Miss
    }

    /// Counts a hit for prefetching; true when this hit should trigger a refresh.
    fn should_prefetch(&self, entry: &mut Entry, now: Instant, remaining: u32) -> bool {
        let Some(rule) = &self.prefetch else {
            return false;
        };
        if now.saturating_duration_since(entry.window_start) >= rule.window {
            entry.window_start = now;
            entry.hits = 0;
        }
        entry.hits += 1;
        let threshold = (rule.percentage * u64::from(entry.ttl))
            .div_ceil(100)
            .max(1);
        if entry.hits >= rule.amount && u64::from(remaining) <= threshold && !entry.refreshing {
            entry.refreshing = true;
            return true;
        }
        false
    }

    /// Writes a stale reply (every TTL 0) for `req`.
    pub fn serve_stale(&self, reply: &StoredReply, req: &Request<'_>, out: &mut Vec<u8>) -> bool {
        let how = Replay {
            age: 0,
            stale_ttl: Some(0),
        };
        let served = replay(reply, req, how, out);
        if served {
            self.served_stale.inc();
        }
        served
    }

    /// Marks the refresh of `req`'s entry as finished (whatever its result).
    pub fn refreshed(&self, req: &Request<'_>) {
        let Some(key) = self.key(req) else {
            return;
        };
        for tier in [&self.denial, &self.success] {
            if let Some(mut shard) = tier.shard(key).and_then(|s| s.lock().ok())
                && let Some(entry) = shard.get_mut(key)
            {
                entry.refreshing = false;
            }
        }
    }

    /// Stores `raw`, a reply to `req` from below the cache, if it is cacheable. With `out`,
    /// also writes the reply the client should see now: the stored form, whose TTLs are
    /// capped as the entry's (CoreDNS caps the reply that fills the cache the same way).
    /// Returns whether `out` holds that reply.
    pub fn store(
        &self,
        req: &Request<'_>,
        raw: &[u8],
        now: Instant,
        out: Option<&mut Vec<u8>>,
    ) -> bool {
        let Some(key) = self.key(req) else {
            return false;
        };
        let Ok(msg) = Message::parse(raw) else {
            self.drops.inc();
            return false;
        };
        if msg.header().tc
            || msg.question().is_none_or(|q| {
                q.qtype != req.question.qtype || !q.name.eq_ignore_case(&req.question.name)
            })
        {
            return false;
        }
        let (tier, other, ttl) = match ReplyType::of(&msg) {
            ReplyType::NoError | ReplyType::Delegation if !in_any(&req.name, &self.no_success) => (
                &self.success,
                &self.denial,
                self.success.clamp(minimal_ttl(&msg, false)),
            ),
            ReplyType::NameError | ReplyType::NoData if !in_any(&req.name, &self.no_denial) => (
                &self.denial,
                &self.success,
                self.denial.clamp(minimal_ttl(&msg, true)),
            ),
            ReplyType::ServerError if self.servfail_ttl > 0 => {
                (&self.denial, &self.success, self.servfail_ttl)
            }
            _ => return false,
        };
        if ttl == 0 {
            return false;
        }
        let Some(stored) = stored_form(&msg, ttl) else {
            self.drops.inc();
            return false;
        };
        let fresh = Replay {
            age: 0,
            stale_ttl: None,
        };
        // Written before the entry is shared: the bytes move into the table uncloned.
        let served = out.is_some_and(|out| replay(&stored, req, fresh, out));
        other.remove(key);
        tier.insert(
            key,
            Entry {
                reply: stored,
                stored: now,
                ttl,
                hits: 0,
                window_start: now,
                refreshing: false,
            },
        );
        served
    }
}

/// The smallest TTL of a reply (CoreDNS `MinimalTTL`): for a denial, the SOA's TTL capped
/// by its MINIMUM field; a reply without records lives 5 s.
fn minimal_ttl(msg: &Message<'_>, denial: bool) -> u32 {
    let counts = msg.counts();
    let opt = u16::from(msg.opt().is_some());
    if counts.answers + counts.authority == 0 && counts.additional <= opt {
        return EMPTY_REPLY_TTL;
    }
    if denial {
        for record in msg.authority() {
            if let Ok(RData::Soa(soa)) = record.data() {
                return record.ttl().min(soa.minimum);
            }
        }
    }
    msg.records()
        .filter(|(_, r)| r.rtype() != Type::OPT)
        .map(|(_, r)| r.ttl())
        .fold(MAX_SUCCESS_TTL, u32::min)
}

/// The reply to store: ID 0, no OPT record, every TTL set to `ttl`. The OPT record is
/// almost always last and is cut off in place, so the copy is `msg` or a prefix of it,
/// whose TTLs `msg`'s cursor finds without parsing again (compression pointers only point
/// back, so the prefix is as valid as `msg`); otherwise the reply is re-encoded.
fn stored_form(msg: &Message<'_>, ttl: u32) -> Option<StoredReply> {
    let raw = msg.as_bytes();
    // Room for the two bytes of each TTL offset that StoredReply appends (OPT has none), so
    // that the buffer is neither grown nor shared separately.
    let counts = msg.counts();
    let opt = msg.opt();
    let offsets = [counts.answers, counts.authority, counts.additional]
        .into_iter()
        .map(usize::from)
        .sum::<usize>()
        .saturating_sub(usize::from(opt.is_some()));
    let copy = |bytes: &[u8]| {
        let mut out = Vec::with_capacity(bytes.len() + 2 * offsets);
        out.extend_from_slice(bytes);
        out
    };
    let (mut out, ttls) = match opt {
        None => (copy(raw), TtlCursor::of(msg)),
        Some(opt) if opt.rdata_end() == raw.len() => {
            let start = opt.ttl_offset().checked_sub(5)?;
            let mut out = copy(raw.get(..start)?);
            let arcount = counts.additional.checked_sub(1)?;
            out.get_mut(10..12)?.copy_from_slice(&arcount.to_be_bytes());
            (out, TtlCursor::of(msg))
        }
        Some(_) => {
            let mut owned = dns_wire::OwnedMessage::from_message(msg).ok()?;
            owned.edns = None;
            let mut buf = vec![0; raw.len() + 512];
            let len = owned.encode(&mut buf).ok()?;
            buf.truncate(len);
            let ttls = TtlCursor::new(&buf).ok()?;
            (buf, ttls)
        }
    };
    out.get_mut(..2)?.copy_from_slice(&[0, 0]);
    StoredReply::new(out, ttls, ttl)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::request::tests::{client, query};
    use crate::query::request::{Admission, Proto, admit};
    use dns_wire::{Class, Name, OwnedEdns, OwnedMessage, OwnedRecord, Rcode};

    fn req(bytes: &[u8]) -> Request<'_> {
        let Admission::Query(r) = admit(bytes, Proto::Udp, client()) else {
            panic!()
        };
        r
    }

    fn answer(q: &[u8], ttl: u32, rcode: Rcode, soa: bool) -> Vec<u8> {
        let r = req(q);
        let mut m = crate::query::reply::reply_to(&r, rcode);
        m.header.ra = true;
        let name: Name = r.question.name.to_name();
        if rcode == Rcode::NOERROR && !soa {
            m.answers.push(OwnedRecord {
                name,
                rtype: Type::A,
                class: Class::IN,
                ttl,
                rdata: vec![10, 0, 0, 1].into(),
            });
        }
        if soa {
            let mut rdata = vec![0, 0];
            rdata.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 60]);
            m.authority.push(OwnedRecord {
                name: ".".parse().unwrap(),
                rtype: Type::SOA,
                class: Class::IN,
                ttl,
                rdata: rdata.into(),
            });
        }
        m.edns = Some(OwnedEdns {
            udp_payload_size: 1232,
            ..OwnedEdns::default()
        });
        m.to_vec().unwrap()
    }

    fn cache(config: CacheConfig) -> Cache {
        Cache::new(&config, &[".".into()], "dns://:53", &Metrics::new()).unwrap()
    }

    #[test]
    fn hits_age_and_are_clamped() {
        let c = cache(CacheConfig {
            ttl: Some(30),
            ..CacheConfig::default()
        });
        let q = query("www.example.", Type::A, None);
        let t0 = Instant::now();
        let mut out = Vec::new();
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Miss));
        c.store(&req(&q), &answer(&q, 300, Rcode::NOERROR, false), t0, None);
        assert!(matches!(
            c.lookup(&req(&q), &mut out, t0 + Duration::from_secs(10)),
            Lookup::Hit
        ));
        let m = Message::parse(&out).unwrap();
        assert_eq!(m.answers().next().unwrap().ttl(), 20);
        assert!(m.opt().is_none());
        assert!(matches!(
            c.lookup(&req(&q), &mut out, t0 + Duration::from_secs(31)),
            Lookup::Miss
        ));
    }

    #[test]
    fn minimum_ttl_and_do_bit_in_the_key() {
        let c = cache(CacheConfig::default());
        let q = query("a.example.", Type::A, None);
        let t0 = Instant::now();
        c.store(&req(&q), &answer(&q, 1, Rcode::NOERROR, false), t0, None);
        let mut out = Vec::new();
        assert!(matches!(
            c.lookup(&req(&q), &mut out, t0 + Duration::from_secs(4)),
            Lookup::Hit
        ));
        let with_do = query("a.example.", Type::A, Some((1232, true)));
        assert!(matches!(
            c.lookup(&req(&with_do), &mut out, t0),
            Lookup::Miss
        ));
    }

    #[test]
    fn denial_needs_an_soa_and_uses_its_minimum() {
        let c = cache(CacheConfig::default());
        let q = query("nx.example.", Type::A, None);
        let t0 = Instant::now();
        c.store(&req(&q), &answer(&q, 900, Rcode::NXDOMAIN, false), t0, None);
        let mut out = Vec::new();
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Miss));
        c.store(&req(&q), &answer(&q, 900, Rcode::NXDOMAIN, true), t0, None);
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Hit));
        let m = Message::parse(&out).unwrap();
        assert_eq!(m.rcode(), Rcode::NXDOMAIN);
        assert_eq!(m.authority().next().unwrap().ttl(), 60);
    }

    #[test]
    fn servfail_is_cached_five_seconds_unless_disabled() {
        let c = cache(CacheConfig::default());
        let q = query("sf.example.", Type::A, None);
        let t0 = Instant::now();
        c.store(&req(&q), &answer(&q, 0, Rcode::SERVFAIL, false), t0, None);
        let mut out = Vec::new();
        assert!(matches!(
            c.lookup(&req(&q), &mut out, t0 + Duration::from_secs(4)),
            Lookup::Hit
        ));
        assert!(matches!(
            c.lookup(&req(&q), &mut out, t0 + Duration::from_secs(5)),
            Lookup::Miss
        ));
        let c = cache(CacheConfig {
            servfail: Some(corefile::go::Duration(0)),
            ..CacheConfig::default()
        });
        c.store(&req(&q), &answer(&q, 0, Rcode::SERVFAIL, false), t0, None);
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Miss));
    }

    #[test]
    fn a_full_shard_evicts_and_capacity_is_bounded() {
        let c = cache(CacheConfig::default());
        let t0 = Instant::now();
        for i in 0..30_000 {
            let q = query(&format!("n{i}.example."), Type::A, None);
            c.store(&req(&q), &answer(&q, 300, Rcode::NOERROR, false), t0, None);
        }
        let held: usize = c
            .success
            .shards
            .iter()
            .map(|s| s.lock().unwrap().len())
            .sum();
        assert_eq!(held, 9984);
        assert_eq!(c.success.entries.get(), 9984);
        assert_eq!(c.success.evictions.get(), 30_000 - 9984);
    }

    #[test]
    fn serve_stale_immediate_answers_with_ttl_zero_and_refreshes_once() {
        let c = cache(CacheConfig {
            serve_stale: Some((None, None)),
            ..CacheConfig::default()
        });
        let q = query("st.example.", Type::A, None);
        let t0 = Instant::now();
        c.store(&req(&q), &answer(&q, 10, Rcode::NOERROR, false), t0, None);
        let later = t0 + Duration::from_secs(20);
        let mut out = Vec::new();
        assert!(matches!(
            c.lookup(&req(&q), &mut out, later),
            Lookup::HitRefresh
        ));
        assert_eq!(
            Message::parse(&out)
                .unwrap()
                .answers()
                .next()
                .unwrap()
                .ttl(),
            0
        );
        assert!(matches!(c.lookup(&req(&q), &mut out, later), Lookup::Hit));
    }

    #[test]
    fn prefetch_after_enough_hits_near_expiry() {
        let c = cache(CacheConfig {
            prefetch: Some(corefile::plugins::Prefetch {
                amount: 2,
                duration: None,
                percentage: Some(50),
            }),
            ..CacheConfig::default()
        });
        let q = query("pf.example.", Type::A, None);
        let t0 = Instant::now();
        c.store(&req(&q), &answer(&q, 100, Rcode::NOERROR, false), t0, None);
        let mut out = Vec::new();
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Hit));
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Hit));
        let late = t0 + Duration::from_secs(55);
        assert!(matches!(
            c.lookup(&req(&q), &mut out, late),
            Lookup::HitRefresh
        ));
        assert!(matches!(c.lookup(&req(&q), &mut out, late), Lookup::Hit));
    }

    #[test]
    fn keepttl_serves_the_stored_ttl() {
        let c = cache(CacheConfig {
            keepttl: true,
            ..CacheConfig::default()
        });
        let q = query("k.example.", Type::A, None);
        let t0 = Instant::now();
        c.store(&req(&q), &answer(&q, 100, Rcode::NOERROR, false), t0, None);
        let mut out = Vec::new();
        c.lookup(&req(&q), &mut out, t0 + Duration::from_secs(50));
        assert_eq!(
            Message::parse(&out)
                .unwrap()
                .answers()
                .next()
                .unwrap()
                .ttl(),
            100
        );
    }

    #[test]
    fn disable_success_for_a_zone() {
        let c = cache(CacheConfig {
            disable: vec![("success".into(), vec!["example.".into()])],
            ..CacheConfig::default()
        });
        let q = query("d.example.", Type::A, None);
        let t0 = Instant::now();
        c.store(&req(&q), &answer(&q, 100, Rcode::NOERROR, false), t0, None);
        let mut out = Vec::new();
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Miss));
        let _ = OwnedMessage::default();
    }
}
