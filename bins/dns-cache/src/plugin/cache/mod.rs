//! `cache`: whole replies stored as bytes in two sharded tables (success and denial), and
//! replayed by patching ID, flags, question case and TTLs in place (no message is built on a
//! hit, and nothing is allocated once the output buffer has grown).
//!
//! As CoreDNS v1.14.7's `plugin/cache` (the differences that remain are listed in
//! docs/dns-cache.md): the key is the lower-cased name, type, class, DO and CD bits;
//! capacity is split into 256 shards and a full shard evicts a random entry; an entry lives
//! for the smallest TTL of the reply clamped to the tier's `[MINTTL, TTL]`, and every TTL
//! served is the entry's remaining lifetime; SERVFAIL and NOTIMP are kept `servfail` long
//! (5 s by default). Every reply that passes through the cache for its zones gets that
//! lifetime as its TTLs, stored or not.

mod answers;
mod shard;

use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use corefile::plugins::{Cache as CacheConfig, CacheTier};
use dns_wire::cache::TtlCursor;
use dns_wire::{Message, Rcode, Type};
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
/// TTL of replies with no records at all, and of replies that are neither answers nor
/// denials (CoreDNS `MinimalDefaultTTL`).
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
    /// Hits in a row, each within the prefetch window of the one before (CoreDNS `freq`).
    hits: u64,
    last_hit: Instant,
    refreshing: bool,
}

impl Entry {
    fn new(reply: StoredReply, now: Instant, ttl: u32) -> Self {
        Self {
            reply,
            stored: now,
            ttl,
            hits: 0,
            last_hit: now,
            refreshing: false,
        }
    }

    /// Whole seconds since the entry was stored.
    fn age(&self, now: Instant) -> u32 {
        u32::try_from(now.saturating_duration_since(self.stored).as_secs()).unwrap_or(u32::MAX)
    }
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

    /// Whether `req`'s name is in the cache's zones (the queries it handles).
    pub fn covers(&self, req: &Request<'_>) -> bool {
        in_any(&req.name, &self.zones)
    }

    /// The key of `req`, if the cache serves its name.
    fn key(&self, req: &Request<'_>) -> Option<u64> {
        if !in_any(&req.name, &self.zones) {
            return None;
        }
        let mut h = self.hasher.build_hasher();
        h.write(req.name.as_wire());
        h.write_u16(req.question.qtype.0);
        h.write_u16(req.question.qclass.0);
        h.write_u8(u8::from(req.dnssec_ok()) | u8::from(req.header.cd) << 1);
        Some(h.finish())
    }

    /// Looks `req` up and, on a hit, writes the reply to `out`.
    pub fn lookup(&self, req: &Request<'_>, out: &mut Vec<u8>, now: Instant) -> Lookup {
        let Some(key) = self.key(req) else {
            return Lookup::Miss;
        };
        self.requests.inc();
        // A key is in at most one table (storing removes it from the other), except that a
        // SERVFAIL is stored beside a success entry; CoreDNS's getIfNotStale then prefers
        // the success entry while it is usable, which looking at success first does.
        for tier in [&self.success, &self.denial] {
            let Some(mut shard) = tier.shard(key).and_then(|s| s.lock().ok()) else {
                continue;
            };
            let Some(entry) = shard.get_mut(key) else {
                continue;
            };
            let age_secs = entry.age(now);
            if age_secs < entry.ttl {
                let refresh = self.should_prefetch(entry, now, entry.ttl - age_secs);
                let reply = entry.reply.clone();
                drop(shard);
                let how = Replay {
                    age: if self.keepttl { 0 } else { age_secs },
                    stale_ttl: None,
                    hit: true,
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
            // getIfNotStale: whole seconds past expiry, strictly below the window.
            if u64::from(age_secs.saturating_sub(entry.ttl)) >= stale.window.as_secs() {
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

    /// Counts a hit for prefetching (CoreDNS `shouldPrefetch` and `freq.Update`); true when
    /// this hit should trigger a refresh.
    fn should_prefetch(&self, entry: &mut Entry, now: Instant, remaining: u32) -> bool {
        let Some(rule) = &self.prefetch else {
            return false;
        };
        // A hit more than the window after the one before starts the count again.
        if now.saturating_duration_since(entry.last_hit) > rule.window {
            entry.hits = 0;
        }
        entry.last_hit = now;
        entry.hits += 1;
        if entry.hits >= rule.amount
            && u64::from(remaining) <= prefetch_threshold(rule.percentage, entry.ttl)
            && !entry.refreshing
        {
            entry.refreshing = true;
            return true;
        }
        false
    }

    /// Writes a stale reply for `req`: every TTL 0, or with `keepttl` the stored TTLs
    /// (handler.go moves the clock to the expiry for a stale item, then `keepttl` moves it
    /// back to the time the item was stored).
    pub fn serve_stale(&self, reply: &StoredReply, req: &Request<'_>, out: &mut Vec<u8>) -> bool {
        let how = Replay {
            age: 0,
            stale_ttl: if self.keepttl { None } else { Some(0) },
            hit: true,
        };
        let served = replay(reply, req, how, out);
        if served {
            self.served_stale.inc();
        }
        served
    }

    /// Whether `raw` may replace an expired entry of `req` (CoreDNS
    /// `verifyStaleResponseWriter`, RFC 8767 §4): a complete reply to the question, NOERROR
    /// or NXDOMAIN. Anything else leaves the stale entry to be served.
    pub fn refreshes(&self, req: &Request<'_>, raw: &[u8]) -> bool {
        let Ok(msg) = Message::parse(raw) else {
            return false;
        };
        !msg.header().tc
            && answers_request(&msg, req)
            && !matches!(
                ReplyType::of(&msg),
                ReplyType::OtherError | ReplyType::Meta | ReplyType::Update
            )
            && matches!(msg.rcode(), Rcode::NOERROR | Rcode::NXDOMAIN)
    }

    /// Ends the background refresh of `req`'s entry (prefetch, `serve_stale immediate`)
    /// with its reply, if one came. An expired entry is replaced only by a reply that
    /// [`Cache::refreshes`] it; the new entry keeps the old one's hit count (CoreDNS
    /// `doPrefetch`: `i1.Reset(now, i.Hits())`).
    pub fn refreshed(&self, req: &Request<'_>, raw: Option<&[u8]>, now: Instant) {
        let Some(key) = self.key(req) else {
            return;
        };
        let mut previous = None;
        for tier in [&self.success, &self.denial] {
            if let Some(mut shard) = tier.shard(key).and_then(|s| s.lock().ok())
                && let Some(entry) = shard.get_mut(key)
            {
                entry.refreshing = false;
                if previous.is_none() {
                    previous = Some((entry.age(now) >= entry.ttl, entry.hits));
                }
            }
        }
        let Some(raw) = raw else {
            return;
        };
        let (stale, hits) = previous.unwrap_or((false, 0));
        if stale && !self.refreshes(req, raw) {
            return;
        }
        self.store(req, raw, now, None);
        for tier in [&self.success, &self.denial] {
            if let Some(mut shard) = tier.shard(key).and_then(|s| s.lock().ok())
                && let Some(entry) = shard.get_mut(key)
                && entry.stored == now
            {
                entry.hits = hits;
            }
        }
    }

    /// Handles `raw`, a reply to `req` from below the cache, as CoreDNS's cache
    /// `ResponseWriter.WriteMsg`: its lifetime is computed, every TTL set to it, and it is
    /// stored if cacheable. With `out`, also writes the reply the client gets now (the
    /// upstream's flags kept, AD cleared unless DO or AD was asked for). Returns whether
    /// `out` holds that reply; if not, the caller passes `raw` on as it is.
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
        // An extended rcode (BADCOOKIE, BADVERS) lives in the OPT record, which the stored
        // form drops: such a reply, an error never stored, is passed on by `scrub`, which
        // keeps it.
        if msg.rcode().0 > 0xF {
            return false;
        }
        let kind = cache_reply_type(&msg);
        // The table, the table whose entry the stored one replaces, and the lifetime. A
        // SERVFAIL leaves a success entry in place (CoreDNS keeps both and prefers the
        // success entry while it is usable).
        let (tier, other, ttl) = match kind {
            ReplyType::NameError | ReplyType::NoData => (
                &self.denial,
                Some(&self.success),
                self.denial
                    .clamp(minimal_ttl(&msg, kind, self.denial.max_ttl)),
            ),
            ReplyType::ServerError => (&self.denial, None, self.servfail_ttl),
            _ => (
                &self.success,
                Some(&self.denial),
                self.success
                    .clamp(minimal_ttl(&msg, kind, self.success.max_ttl)),
            ),
        };
        let excepted = match kind {
            ReplyType::NoError | ReplyType::Delegation => in_any(&req.name, &self.no_success),
            _ => in_any(&req.name, &self.no_denial),
        };
        let cacheable = cacheable(&msg, kind) && ttl > 0;
        let matches = answers_request(&msg, req);
        if cacheable && !matches {
            self.drops.inc();
        }
        let Some(stored) = stored_form(&msg, ttl) else {
            self.drops.inc();
            return false;
        };
        let fresh = Replay {
            age: 0,
            stale_ttl: None,
            hit: false,
        };
        // Written before the entry is shared: the bytes move into the table uncloned.
        let served = out.is_some_and(|out| replay(&stored, req, fresh, out));
        if !cacheable || !matches || excepted {
            return served;
        }
        if let Some(other) = other {
            other.remove(key);
        }
        tier.insert(key, Entry::new(stored, now, ttl));
        served
    }
}

/// CoreDNS `cacheResponseType`: `Typify`, except that a NOERROR whose answers do not
/// answer the question is a NODATA when an SOA gives it a denial TTL.
fn cache_reply_type(msg: &Message<'_>) -> ReplyType {
    let kind = ReplyType::of(msg);
    if kind == ReplyType::NoError && has_soa(msg) && answers::is_nodata(msg) {
        return ReplyType::NoData;
    }
    kind
}

/// CoreDNS `key()`'s refusals: truncated replies, errors other than SERVFAIL and NOTIMP,
/// zone transfers, notifies and updates, an NXDOMAIN without SOA, and a NOERROR whose
/// answers do not answer the question without an SOA (RFC 2308 §5).
fn cacheable(msg: &Message<'_>, kind: ReplyType) -> bool {
    !msg.header().tc
        && match kind {
            ReplyType::OtherError | ReplyType::Meta | ReplyType::Update => false,
            ReplyType::NameError => has_soa(msg),
            ReplyType::NoError => has_soa(msg) || !answers::is_nodata(msg),
            _ => true,
        }
}

/// An SOA record in the authority section.
fn has_soa(msg: &Message<'_>) -> bool {
    msg.authority().any(|r| r.rtype() == Type::SOA)
}

/// CoreDNS `request.Match`: a response (QR set) with one question, the request's name
/// (case aside), type and class.
fn answers_request(msg: &Message<'_>, req: &Request<'_>) -> bool {
    msg.header().qr
        && msg.counts().questions == 1
        && msg.question().is_some_and(|q| {
            q.qtype == req.question.qtype
                && q.qclass == req.question.qclass
                && q.name.eq_ignore_case(&req.question.name)
        })
}

/// CoreDNS `shouldPrefetch`'s threshold, `math.Ceil(float64(percentage) / 100 *
/// float64(origTTL))`, in the same floating point: 14 % of 50 s is 8 s there, not 7.
fn prefetch_threshold(percentage: u64, ttl: u32) -> u64 {
    (percentage as f64 / 100.0 * f64::from(ttl)).ceil() as u64
}

/// The smallest TTL of a reply (CoreDNS `MinimalTTLWithMaximum`): over every record but
/// OPT, at most `max`; 5 s for a reply without records, or one that is neither an answer
/// nor a denial (a delegation, a SERVFAIL, an error).
fn minimal_ttl(msg: &Message<'_>, kind: ReplyType, max: u32) -> u32 {
    if !matches!(
        kind,
        ReplyType::NoError | ReplyType::NameError | ReplyType::NoData
    ) {
        return EMPTY_REPLY_TTL;
    }
    let counts = msg.counts();
    let opt = u16::from(msg.opt().is_some());
    if counts.answers + counts.authority == 0 && counts.additional <= opt {
        return EMPTY_REPLY_TTL;
    }
    msg.records()
        .filter(|(_, r)| r.rtype() != Type::OPT)
        .map(|(_, r)| r.ttl())
        .fold(max, u32::min)
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
    use dns_wire::{Class, Name, OwnedEdns, OwnedMessage, OwnedRecord, RData};

    /// The request of `bytes`; other classes are refused at admission, after parsing.
    fn req(bytes: &[u8]) -> Request<'_> {
        match admit(bytes, Proto::Udp, client()) {
            Admission::Query(r) | Admission::Refused(r) => r,
            _ => panic!(),
        }
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

    /// CoreDNS v1.14.7 cache.go `key()` refuses an NXDOMAIN without SOA; the denial's
    /// lifetime is `MinimalTTLWithMaximum` over every record (the SOA's MINIMUM field
    /// plays no part), as cache_test.go's "test dns.RcodeNameError cache" case.
    #[test]
    fn denial_needs_an_soa_and_lives_its_smallest_ttl() {
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
        assert_eq!(m.authority().next().unwrap().ttl(), 900);
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

    /// A reply as upstream sends it: `answer`'s, then changed by `edit`.
    fn upstream(q: &[u8], ttl: u32, edit: impl FnOnce(&mut OwnedMessage)) -> Vec<u8> {
        let mut m = OwnedMessage::from_message(
            &Message::parse(&answer(q, ttl, Rcode::NOERROR, false)).unwrap(),
        )
        .unwrap();
        edit(&mut m);
        m.to_vec().unwrap()
    }

    fn header(out: &[u8]) -> dns_wire::Header {
        Message::parse(out).unwrap().header()
    }

    fn ttls(out: &[u8]) -> Vec<u32> {
        Message::parse(out)
            .unwrap()
            .records()
            .filter(|(_, r)| r.rtype() != Type::OPT)
            .map(|(_, r)| r.ttl())
            .collect()
    }

    /// CoreDNS v1.14.7 plugin/cache/item.go `toMsgWithTTL` sets `m1.Authoritative = true`
    /// on every hit (cache_test.go: "Cache entries are always Authoritative"); cache.go
    /// `WriteMsg` passes the upstream's AA through on a miss.
    #[test]
    fn a_hit_is_authoritative_and_a_miss_keeps_the_upstreams_aa() {
        let c = cache(CacheConfig::default());
        let t0 = Instant::now();
        let mut out = Vec::new();
        let q = query("aa.example.", Type::A, None);
        let plain = upstream(&q, 300, |_| {});
        assert!(c.store(&req(&q), &plain, t0, Some(&mut out)));
        assert!(!header(&out).aa, "a miss keeps the upstream's AA=0");
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Hit));
        assert!(header(&out).aa, "a hit is authoritative");
        let q = query("aa2.example.", Type::A, None);
        let authoritative = upstream(&q, 300, |m| m.header.aa = true);
        assert!(c.store(&req(&q), &authoritative, t0, Some(&mut out)));
        assert!(header(&out).aa, "a miss keeps the upstream's AA=1");
    }

    /// CoreDNS v1.14.7 cache.go `hash()` writes the class; item.go `matches` compares it.
    #[test]
    fn the_class_is_part_of_the_key() {
        let c = cache(CacheConfig::default());
        let t0 = Instant::now();
        let mut out = Vec::new();
        let q_in = query("c.example.", Type::A, None);
        let mut q_ch = q_in.clone();
        let at = q_ch.len() - 1;
        q_ch[at] = 3;
        c.store(&req(&q_in), &upstream(&q_in, 300, |_| {}), t0, None);
        let chaos = upstream(&q_ch, 300, |m| {
            m.questions[0].qclass = Class::CH;
            m.answers[0].class = Class::CH;
        });
        // The server refuses other classes before the cache (docs/dns-cache.md); the
        // cache itself keys them apart as CoreDNS does.
        let r_ch = req(&q_ch);
        c.store(&r_ch, &chaos, t0, None);
        assert!(matches!(c.lookup(&req(&q_in), &mut out, t0), Lookup::Hit));
        assert_eq!(
            Message::parse(&out).unwrap().question().unwrap().qclass,
            Class::IN
        );
        assert!(matches!(c.lookup(&r_ch, &mut out, t0), Lookup::Hit));
        assert_eq!(
            Message::parse(&out).unwrap().question().unwrap().qclass,
            Class::CH
        );
    }

    /// CoreDNS v1.14.7 cache.go `WriteMsg`: every reply passing through gets its computed
    /// lifetime as TTLs and loses AD unless DO or AD was asked for, cached or not;
    /// cache_test.go "test truncated responses shouldn't cache".
    #[test]
    fn uncached_replies_are_capped_too_and_truncated_ones_are_not_stored() {
        let c = cache(CacheConfig {
            ttl: Some(30),
            ..CacheConfig::default()
        });
        let t0 = Instant::now();
        let mut out = Vec::new();
        let q = query("tc.example.", Type::A, None);
        let truncated = upstream(&q, 1800, |m| {
            m.header.tc = true;
            m.header.ad = true;
        });
        assert!(c.store(&req(&q), &truncated, t0, Some(&mut out)));
        let h = header(&out);
        assert!(h.tc && !h.ad);
        assert_eq!(ttls(&out), [30]);
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Miss));
        // With AD in the query, the upstream's AD stays (RFC 6840 §5.7).
        let mut q_ad = query("ad.example.", Type::A, None);
        q_ad[3] |= 0x20;
        let authenticated = upstream(&q_ad, 300, |m| m.header.ad = true);
        assert!(c.store(&req(&q_ad), &authenticated, t0, Some(&mut out)));
        assert!(header(&out).ad);
        assert!(matches!(c.lookup(&req(&q_ad), &mut out, t0), Lookup::Hit));
        assert!(header(&out).ad && header(&out).aa);
    }

    /// CoreDNS v1.14.7 pkg/dnsutil/ttl.go `MinimalTTLWithMaximum` gives a delegation (and
    /// anything but an answer or a denial) `MinimalDefaultTTL`, 5 s.
    #[test]
    fn a_delegation_lives_five_seconds() {
        let c = cache(CacheConfig::default());
        let t0 = Instant::now();
        let mut out = Vec::new();
        let q = query("sub.example.", Type::A, None);
        let referral = upstream(&q, 3000, |m| {
            let ns = m.answers.remove(0);
            m.authority.push(OwnedRecord {
                rtype: Type::NS,
                rdata: vec![0].into(),
                ..ns
            });
        });
        assert!(c.store(&req(&q), &referral, t0, Some(&mut out)));
        assert_eq!(ttls(&out), [5]);
        assert!(matches!(
            c.lookup(&req(&q), &mut out, t0 + Duration::from_secs(4)),
            Lookup::Hit
        ));
        assert!(matches!(
            c.lookup(&req(&q), &mut out, t0 + Duration::from_secs(5)),
            Lookup::Miss
        ));
    }

    fn cname(owner: &str, target: &str) -> OwnedRecord {
        let target: Name = target.parse().unwrap();
        OwnedRecord::new(
            owner.parse().unwrap(),
            Class::IN,
            300,
            &RData::Cname(target.as_ref()),
        )
    }

    /// CoreDNS v1.14.7 cache.go `key()` (an unfinished CNAME chain without SOA is not
    /// cached) and `cacheResponseType` (with an SOA it is a NODATA;
    /// cache_test.go `TestCNAMEWithSOAStoredAsNODATA`).
    #[test]
    fn an_unfinished_cname_chain_is_nodata() {
        let c = cache(CacheConfig::default());
        let t0 = Instant::now();
        let mut out = Vec::new();
        let q = query("alias.example.", Type::A, None);
        let chain = upstream(&q, 300, |m| {
            m.answers = vec![cname("alias.example.", "target.example.")];
        });
        c.store(&req(&q), &chain, t0, None);
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Miss));
        let with_soa = {
            let soa = answer(&q, 60, Rcode::NOERROR, true);
            let soa = Message::parse(&soa).unwrap();
            let soa = OwnedMessage::from_message(&soa).unwrap().authority;
            upstream(&q, 300, |m| {
                m.answers = vec![cname("alias.example.", "target.example.")];
                m.authority = soa;
            })
        };
        c.store(&req(&q), &with_soa, t0, None);
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Hit));
        assert_eq!(ttls(&out), [60, 60]);
        assert_eq!(c.denial.entries.get(), 1);
        assert_eq!(c.success.entries.get(), 0);
    }

    /// CoreDNS v1.14.7 cache_test.go `TestServfailDoesNotShadowPositiveCache`: a SERVFAIL
    /// (a prefetch's) does not hide a usable success entry, and is served once that has
    /// expired; NOTIMP is kept as a SERVFAIL (typify.go).
    #[test]
    fn servfail_does_not_shadow_a_success_entry() {
        let c = cache(CacheConfig::default());
        let t0 = Instant::now();
        let mut out = Vec::new();
        let q = query("sf.example.", Type::A, None);
        c.store(&req(&q), &upstream(&q, 10, |_| {}), t0, None);
        let fail = t0 + Duration::from_secs(8);
        c.store(&req(&q), &answer(&q, 0, Rcode::SERVFAIL, false), fail, None);
        assert!(matches!(c.lookup(&req(&q), &mut out, fail), Lookup::Hit));
        assert_eq!(Message::parse(&out).unwrap().rcode(), Rcode::NOERROR);
        let later = t0 + Duration::from_secs(11);
        assert!(matches!(c.lookup(&req(&q), &mut out, later), Lookup::Hit));
        assert_eq!(Message::parse(&out).unwrap().rcode(), Rcode::SERVFAIL);
        let q = query("ni.example.", Type::A, None);
        c.store(&req(&q), &answer(&q, 0, Rcode::NOTIMP, false), t0, None);
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Hit));
        assert_eq!(Message::parse(&out).unwrap().rcode(), Rcode::NOTIMP);
    }

    /// CoreDNS v1.14.7 cache.go `set()`: the denial exceptions (`disable denial`) cover
    /// SERVFAIL too.
    #[test]
    fn disable_denial_covers_servfail() {
        let c = cache(CacheConfig {
            disable: vec![("denial".into(), vec![])],
            ..CacheConfig::default()
        });
        let t0 = Instant::now();
        let mut out = Vec::new();
        let q = query("sf.example.", Type::A, None);
        c.store(&req(&q), &answer(&q, 0, Rcode::SERVFAIL, false), t0, None);
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Miss));
    }

    /// CoreDNS v1.14.7 handler.go `getIfNotStale`: served stale while the whole seconds
    /// past expiry are strictly below the window (`-ttl < staleUpTo`).
    #[test]
    fn the_stale_window_ends_at_its_last_second() {
        let c = cache(CacheConfig {
            serve_stale: Some((Some(corefile::go::Duration(10_000_000_000)), None)),
            ..CacheConfig::default()
        });
        let t0 = Instant::now();
        let mut out = Vec::new();
        let q = query("w.example.", Type::A, None);
        c.store(&req(&q), &upstream(&q, 10, |_| {}), t0, None);
        assert!(!matches!(
            c.lookup(&req(&q), &mut out, t0 + Duration::from_millis(19_999)),
            Lookup::Miss
        ));
        assert!(header(&out).aa);
        assert_eq!(ttls(&out), [0]);
        assert!(matches!(
            c.lookup(&req(&q), &mut out, t0 + Duration::from_secs(20)),
            Lookup::Miss
        ));
    }

    /// CoreDNS v1.14.7 handler.go `shouldPrefetch`: `math.Ceil(float64(14) / 100 * 50)` is
    /// 8 (floating point), and freq.go counts hits each within `duration` of the last.
    #[test]
    fn prefetch_threshold_and_hit_window_as_coredns() {
        assert_eq!(prefetch_threshold(10, 30), 3);
        assert_eq!(prefetch_threshold(14, 50), 8);
        assert_eq!(prefetch_threshold(50, 1), 1);
        let c = cache(CacheConfig {
            prefetch: Some(corefile::plugins::Prefetch {
                amount: 3,
                duration: Some(corefile::go::Duration(10_000_000_000)),
                percentage: Some(90),
            }),
            ..CacheConfig::default()
        });
        let q = query("pf.example.", Type::A, None);
        let t0 = Instant::now();
        c.store(&req(&q), &upstream(&q, 30, |_| {}), t0, None);
        let mut out = Vec::new();
        // Three hits 8 s apart: each within 10 s of the one before (a fixed window from
        // the first would have restarted the count).
        for s in [4, 12] {
            let at = t0 + Duration::from_secs(s);
            assert!(matches!(c.lookup(&req(&q), &mut out, at), Lookup::Hit));
        }
        let at = t0 + Duration::from_secs(20);
        assert!(matches!(
            c.lookup(&req(&q), &mut out, at),
            Lookup::HitRefresh
        ));
        // The refresh keeps the count: the next hit prefetches again.
        c.refreshed(&req(&q), Some(&upstream(&q, 30, |_| {})), at);
        assert!(matches!(
            c.lookup(&req(&q), &mut out, at + Duration::from_secs(5)),
            Lookup::HitRefresh
        ));
    }

    /// CoreDNS v1.14.7 cache.go `verifyStaleResponseWriter` (RFC 8767 §4): only a complete
    /// NOERROR or NXDOMAIN to the question replaces an expired entry.
    #[test]
    fn only_noerror_or_nxdomain_refresh_a_stale_entry() {
        let c = cache(CacheConfig {
            serve_stale: Some((None, None)),
            ..CacheConfig::default()
        });
        let t0 = Instant::now();
        let mut out = Vec::new();
        let q = query("v.example.", Type::A, None);
        let r = req(&q);
        c.store(&r, &upstream(&q, 10, |_| {}), t0, None);
        let servfail = answer(&q, 0, Rcode::SERVFAIL, false);
        let truncated = upstream(&q, 10, |m| m.header.tc = true);
        let refused = answer(&q, 0, Rcode::REFUSED, false);
        for raw in [&servfail, &truncated, &refused] {
            assert!(!c.refreshes(&r, raw));
        }
        assert!(c.refreshes(&r, &upstream(&q, 10, |_| {})));
        assert!(c.refreshes(&r, &answer(&q, 10, Rcode::NXDOMAIN, true)));
        let late = t0 + Duration::from_secs(20);
        c.refreshed(&r, Some(&servfail), late);
        assert!(matches!(c.lookup(&r, &mut out, late), Lookup::HitRefresh));
        assert_eq!(Message::parse(&out).unwrap().rcode(), Rcode::NOERROR);
    }

    /// CoreDNS v1.14.7 typify.go `typifyExpired`: a DO reply with an expired RRSIG is an
    /// `OtherError`, so cache.go `key()` does not store it.
    #[test]
    fn an_expired_signature_is_not_cached() {
        let c = cache(CacheConfig::default());
        let t0 = Instant::now();
        let mut out = Vec::new();
        let q = query("sig.example.", Type::A, Some((1232, true)));
        let expired = upstream(&q, 300, |m| {
            let mut rdata = vec![0, 1, 8, 2, 0, 0, 0, 60, 0, 0, 0, 2, 0, 0, 0, 1];
            rdata.extend_from_slice(&[0x12, 0x34, 0, 1, 2, 3]);
            m.answers.push(OwnedRecord {
                name: "sig.example.".parse().unwrap(),
                rtype: Type::RRSIG,
                class: Class::IN,
                ttl: 300,
                rdata: rdata.into(),
            });
            if let Some(edns) = &mut m.edns {
                edns.dnssec_ok = true;
            }
        });
        assert!(c.store(&req(&q), &expired, t0, Some(&mut out)));
        assert_eq!(ttls(&out), [5, 5]);
        assert!(matches!(c.lookup(&req(&q), &mut out, t0), Lookup::Miss));
    }

    /// CoreDNS v1.14.7 handler.go `ServeDNS`: for a stale item `now` becomes its expiry,
    /// then `keepttl` sets it to the time the item was stored, so a stale answer under
    /// `keepttl` carries the original TTL rather than 0.
    #[test]
    fn keepttl_applies_to_stale_answers_too() {
        let c = cache(CacheConfig {
            keepttl: true,
            serve_stale: Some((None, None)),
            ..CacheConfig::default()
        });
        let t0 = Instant::now();
        let mut out = Vec::new();
        let q = query("ks.example.", Type::A, None);
        c.store(&req(&q), &upstream(&q, 100, |_| {}), t0, None);
        let late = t0 + Duration::from_secs(150);
        assert!(matches!(
            c.lookup(&req(&q), &mut out, late),
            Lookup::HitRefresh
        ));
        assert_eq!(ttls(&out), [100]);
    }

    /// An extended rcode is not lost: the reply goes to `scrub` (which writes it into the
    /// mirrored OPT record, as miekg/dns packs `Rcode > 0xF`) rather than through the
    /// stored form, which has no OPT record.
    #[test]
    fn an_extended_rcode_is_passed_on() {
        let c = cache(CacheConfig::default());
        let t0 = Instant::now();
        let mut out = Vec::new();
        let q = query("cookie.example.", Type::A, Some((1232, false)));
        let badcookie = upstream(&q, 300, |m| {
            m.answers.clear();
            m.header.rcode = (Rcode::BADCOOKIE.0 & 0xF) as u8;
            if let Some(edns) = &mut m.edns {
                edns.ext_rcode = (Rcode::BADCOOKIE.0 >> 4) as u8;
            }
        });
        assert_eq!(
            Message::parse(&badcookie).unwrap().rcode(),
            Rcode::BADCOOKIE
        );
        assert!(!c.store(&req(&q), &badcookie, t0, Some(&mut out)));
        crate::query::reply::scrub(&badcookie, &req(&q), &mut out).unwrap();
        assert_eq!(Message::parse(&out).unwrap().rcode(), Rcode::BADCOOKIE);
    }
}
