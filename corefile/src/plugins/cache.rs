//! `cache [TTL] [ZONES...] { success|denial CAPACITY [TTL [MINTTL]]; prefetch AMOUNT
//! [DURATION [PERCENTAGE%]]; serve_stale [DURATION [REFRESH_MODE]]; servfail DURATION;
//! disable success|denial [ZONES...]; keepttl }`.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::{PluginConfig, line, once, words};
use crate::dispenser::{Dispenser, PluginError};
use crate::go::Duration;
use crate::syntax::Line;

/// `cache`: the response cache.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cache {
    /// Maximum TTL in seconds for both tiers (CoreDNS default 3600).
    pub ttl: Option<u32>,
    /// Zones to cache (as written); empty means the block's zones.
    pub zones: Vec<String>,
    /// The positive-answer tier.
    pub success: Option<CacheTier>,
    /// The negative-answer tier.
    pub denial: Option<CacheTier>,
    /// Prefetching of popular names.
    pub prefetch: Option<Prefetch>,
    /// Serve expired entries for up to this long, with an optional refresh mode.
    pub serve_stale: Option<(Option<Duration>, Option<String>)>,
    /// How long to cache SERVFAIL answers (at most 5m).
    pub servfail: Option<Duration>,
    /// Tiers disabled for some zones: `success` or `denial`, and the zones.
    pub disable: Vec<(String, Vec<String>)>,
    /// Serve the original TTL instead of the remaining one.
    pub keepttl: bool,
}

/// A `success` or `denial` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheTier {
    /// Maximum number of entries.
    pub capacity: u64,
    /// Maximum TTL in seconds.
    pub ttl: Option<u32>,
    /// Minimum TTL in seconds.
    pub min_ttl: Option<u32>,
}

/// A `prefetch` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefetch {
    /// Queries needed within `duration` to trigger prefetching.
    pub amount: u64,
    /// The window (default 1m).
    pub duration: Option<Duration>,
    /// Prefetch when this percentage of the TTL remains (default 10).
    pub percentage: Option<u8>,
}

/// Go's `strconv.Atoi` with its error text.
fn atoi(d: &Dispenser<'_>, s: &str) -> Result<i64, PluginError> {
    crate::go::atoi(s).map_err(|e| d.plain(e))
}

fn seconds(d: &Dispenser<'_>, s: &str, what: &str) -> Result<u32, PluginError> {
    let value = atoi(d, s)?;
    if value <= 0 {
        return Err(d.plain(format!("cache {what} can not be zero or negative: {value}")));
    }
    u32::try_from(value).map_err(|_| d.plain(format!("cache {what} is too large: {value}")))
}

fn tier(d: &mut Dispenser<'_>) -> Result<CacheTier, PluginError> {
    let args = d.remaining_args();
    let Some(capacity) = args.first() else {
        return Err(d.arg_err());
    };
    if args.len() > 3 {
        return Err(d.arg_err());
    }
    let capacity = atoi(d, capacity)?;
    let capacity = u64::try_from(capacity)
        .map_err(|_| d.plain(format!("cache capacity can not be negative: {capacity}")))?;
    let ttl = args.get(1).map(|t| seconds(d, t, "TTL")).transpose()?;
    let min_ttl = match args.get(2) {
        Some(t) => {
            let v = atoi(d, t)?;
            Some(
                u32::try_from(v)
                    .map_err(|_| d.plain(format!("cache min TTL can not be negative: {v}")))?,
            )
        }
        None => None,
    };
    Ok(CacheTier {
        capacity,
        ttl,
        min_ttl,
    })
}

fn prefetch(d: &mut Dispenser<'_>) -> Result<Prefetch, PluginError> {
    let args = d.remaining_args();
    let Some(amount) = args.first() else {
        return Err(d.arg_err());
    };
    if args.len() > 3 {
        return Err(d.arg_err());
    }
    let amount = atoi(d, amount)?;
    let amount = u64::try_from(amount)
        .map_err(|_| d.plain(format!("prefetch amount should be positive: {amount}")))?;
    let duration = args
        .get(1)
        .map(|t| Duration::parse(t).map_err(|e| d.plain(e)))
        .transpose()?;
    let percentage = match args.get(2) {
        Some(p) => {
            let Some(number) = p.strip_suffix('%') else {
                let last = p.chars().last().map(String::from).unwrap_or_default();
                return Err(d.plain(format!(
                    "last character of percentage should be `%`, but is: {last:?}"
                )));
            };
            let value = atoi(d, number)?;
            let value = u8::try_from(value)
                .ok()
                .filter(|v| *v <= 100)
                .ok_or_else(|| {
                    d.plain(format!("percentage should fall in range [0, 100]: {value}"))
                })?;
            Some(value)
        }
        None => None,
    };
    Ok(Prefetch {
        amount,
        duration,
        percentage,
    })
}

impl PluginConfig for Cache {
    const NAME: &'static str = "cache";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        let mut cache = Cache::default();
        let mut seen = false;
        while d.next_token() {
            once(d, &mut seen)?;
            let mut args = d.remaining_args();
            if let Some(first) = args.first()
                && let Ok(ttl) = atoi(d, first)
            {
                if ttl <= 0 {
                    return Err(d.plain(format!("cache TTL can not be zero or negative: {ttl}")));
                }
                cache.ttl = Some(u32::try_from(ttl).unwrap_or(u32::MAX));
                args.remove(0);
            }
            cache.zones = args.iter().map(|z| z.to_string()).collect();
            while d.next_block() {
                match d.val() {
                    "success" => cache.success = Some(tier(d)?),
                    "denial" => cache.denial = Some(tier(d)?),
                    "prefetch" => cache.prefetch = Some(prefetch(d)?),
                    "serve_stale" => cache.serve_stale = Some(serve_stale(d)?),
                    "servfail" => cache.servfail = Some(servfail(d)?),
                    "disable" => {
                        let args = d.remaining_args();
                        let Some((kind, zones)) = args.split_first() else {
                            return Err(d.arg_err());
                        };
                        if *kind != "success" && *kind != "denial" {
                            return Err(d.plain(
                                "cache type for disable must be \"success\" or \"denial\"",
                            ));
                        }
                        let zones = zones.iter().map(|z| z.to_string()).collect();
                        cache.disable.push((kind.to_string(), zones));
                    }
                    "keepttl" => {
                        if !d.remaining_args().is_empty() {
                            return Err(d.arg_err());
                        }
                        cache.keepttl = true;
                    }
                    _ => return Err(d.arg_err()),
                }
            }
        }
        Ok(cache)
    }

    fn to_lines(&self) -> Vec<Line> {
        let mut head = vec!["cache".to_string()];
        head.extend(self.ttl.map(|t| t.to_string()));
        head.extend(self.zones.iter().cloned());
        let mut block = Vec::new();
        for (name, tier) in [("success", &self.success), ("denial", &self.denial)] {
            if let Some(tier) = tier {
                let mut w = vec![name.to_string(), tier.capacity.to_string()];
                w.extend(tier.ttl.map(|t| t.to_string()));
                w.extend(tier.min_ttl.map(|t| t.to_string()));
                block.push(Line::words(w));
            }
        }
        if let Some(p) = &self.prefetch {
            let mut w = vec!["prefetch".to_string(), p.amount.to_string()];
            w.extend(p.duration.map(|t| t.to_string()));
            w.extend(p.percentage.map(|t| format!("{t}%")));
            block.push(Line::words(w));
        }
        if let Some((duration, mode)) = &self.serve_stale {
            let mut w = vec!["serve_stale".to_string()];
            w.extend(duration.map(|t| t.to_string()));
            w.extend(mode.clone());
            block.push(Line::words(w));
        }
        if let Some(s) = self.servfail {
            block.push(Line::words(["servfail".to_string(), s.to_string()]));
        }
        for (kind, zones) in &self.disable {
            let rest = core::iter::once(kind.as_str()).chain(zones.iter().map(String::as_str));
            block.push(Line::words(words("disable", rest)));
        }
        if self.keepttl {
            block.push(Line::words(["keepttl"]));
        }
        vec![line(head, block)]
    }
}

fn serve_stale(d: &mut Dispenser<'_>) -> Result<(Option<Duration>, Option<String>), PluginError> {
    let args = d.remaining_args();
    if args.len() > 2 {
        return Err(d.arg_err());
    }
    let duration = match args.first() {
        Some(t) => {
            let value = Duration::parse(t).map_err(|e| d.plain(e))?;
            if value.0 < 0 {
                return Err(d.plain("invalid negative duration for serve_stale"));
            }
            Some(value)
        }
        None => None,
    };
    let mode = match args.get(1) {
        Some(&m) if m == "immediate" || m == "verify" => Some(m.to_string()),
        Some(m) => {
            return Err(d.plain(format!("invalid value for serve_stale refresh mode: {m}")));
        }
        None => None,
    };
    Ok((duration, mode))
}

fn servfail(d: &mut Dispenser<'_>) -> Result<Duration, PluginError> {
    let args = d.remaining_args();
    let [value] = args.as_slice() else {
        return Err(d.arg_err());
    };
    let value = Duration::parse(value).map_err(|e| d.plain(e))?;
    if value.0 < 0 {
        return Err(d.plain("invalid negative ttl for servfail"));
    }
    if value > Duration::from_secs(300) {
        return Err(d.plain("caching SERVFAIL responses over 5 minutes is not permitted"));
    }
    Ok(value)
}
