//! `forward FROM TO... { except NAMES...; force_tcp; prefer_udp; expire DURATION;
//! max_fails N; tls [CERT KEY CA]; tls_servername NAME; policy random|round_robin|sequential;
//! health_check DURATION [no_rec] [domain NAME]; max_concurrent N; next RCODE...;
//! failover RCODE...;
//! failfast_all_unhealthy_upstreams }`.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::net::IpAddr;

use super::{PluginConfig, line, words};
use crate::dispenser::{Dispenser, PluginError};
use crate::go::Duration;
use crate::syntax::Line;

/// Most upstreams one `forward` takes.
pub const MAX_UPSTREAMS: usize = 15;

/// `forward`: one stanza per occurrence (several may forward different names).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Forward {
    /// The stanzas, in order.
    pub stanzas: Vec<ForwardStanza>,
}

/// One `forward` line and its options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForwardStanza {
    /// The name to match (as written).
    pub from: String,
    /// Upstreams: `[dns://|tls://]IP[:PORT]`, or a resolv.conf-style path (see
    /// [`files`](Self::files) and [`resolv_conf_upstreams`](super::resolv_conf_upstreams)).
    pub to: Vec<String>,
    /// Names not forwarded.
    pub except: Vec<String>,
    /// Always use TCP upstream.
    pub force_tcp: bool,
    /// Prefer UDP even for TCP queries.
    pub prefer_udp: bool,
    /// Idle connection lifetime.
    pub expire: Option<Duration>,
    /// Failures before an upstream is down.
    pub max_fails: Option<u32>,
    /// `tls` arguments (certificate, key, CA), possibly none.
    pub tls: Option<Vec<String>>,
    /// TLS server name.
    pub tls_servername: Option<String>,
    /// Upstream selection policy.
    pub policy: Option<Policy>,
    /// Health check interval and its trailing options, as written.
    pub health_check: Option<(Duration, Vec<String>)>,
    /// Most concurrent queries.
    pub max_concurrent: Option<u32>,
    /// Response codes that make the query go to the next plugin.
    pub next: Vec<String>,
    /// Response codes that make the query go to the next upstream.
    pub failover: Vec<String>,
    /// Fail fast when every upstream is down.
    pub failfast_all_unhealthy_upstreams: bool,
}

/// How `forward` picks an upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Random.
    Random,
    /// Round robin.
    RoundRobin,
    /// In order.
    Sequential,
}

impl Policy {
    /// The Corefile word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Random => "random",
            Self::RoundRobin => "round_robin",
            Self::Sequential => "sequential",
        }
    }
}

/// The one argument of an option read with `NextArg` (anything after it on the line is read
/// as the next option, as in CoreDNS).
fn next_arg<'a>(d: &mut Dispenser<'a>) -> Result<&'a str, PluginError> {
    if !d.next_arg() {
        return Err(d.arg_err());
    }
    Ok(d.val())
}

/// `max_fails N`: Go's `strconv.ParseUint(N, 10, 32)`.
fn max_fails(d: &mut Dispenser<'_>) -> Result<u32, PluginError> {
    let value = next_arg(d)?;
    let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
    match value.parse::<u32>() {
        Ok(n) if digits => Ok(n),
        _ if digits => Err(d.plain(format!(
            "strconv.ParseUint: parsing {value:?}: value out of range"
        ))),
        _ => Err(d.plain(format!(
            "strconv.ParseUint: parsing {value:?}: invalid syntax"
        ))),
    }
}

/// `max_concurrent N`: Go's `strconv.Atoi`, then no negative value.
fn max_concurrent(d: &mut Dispenser<'_>) -> Result<u32, PluginError> {
    let value = next_arg(d)?;
    let n = crate::go::atoi(value).map_err(|e| d.plain(e))?;
    if n < 0 {
        return Err(d.plain(format!("max_concurrent can't be negative: {n}")));
    }
    // Larger values than a u32 holds are accepted by CoreDNS and mean "no practical limit".
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// `health_check DURATION [no_rec] [domain NAME]`: the interval and its options as written.
fn health_check(d: &mut Dispenser<'_>) -> Result<(Duration, Vec<String>), PluginError> {
    let interval = next_arg(d)?;
    let interval = duration(d, interval)?;
    if interval.0 < 0 {
        // Go prints the Duration with %d: its nanoseconds.
        return Err(d.plain(format!("health_check can't be negative: {}", interval.0)));
    }
    let mut options = Vec::new();
    while d.next_arg() {
        match d.val() {
            "no_rec" => options.push("no_rec".to_string()),
            "domain" => {
                let name = next_arg(d)?;
                if !crate::zone::is_domain_name(name) {
                    return Err(d.plain(format!("health_check: invalid domain name {name}")));
                }
                options.extend(["domain".to_string(), name.to_string()]);
            }
            other => return Err(d.plain(format!("health_check: unknown option {other}"))),
        }
    }
    Ok((interval, options))
}

fn duration(d: &mut Dispenser<'_>, text: &str) -> Result<Duration, PluginError> {
    Duration::parse(text).map_err(|e| d.plain(e))
}

/// Whether `to` is an upstream address `[SCHEME://]IP[:PORT]` (otherwise it names a file).
fn is_address(to: &str) -> bool {
    let host = to
        .strip_prefix("dns://")
        .or_else(|| to.strip_prefix("tls://"))
        .unwrap_or(to);
    if is_ip(host) {
        return true;
    }
    crate::go::split_host_port(host).is_ok_and(|(h, _)| is_ip(h))
}

/// Whether `host` is an IP address once an IPv6 zone (`%eth0`) is cut off (CoreDNS
/// `stripZone` then `net.ParseIP`).
fn is_ip(host: &str) -> bool {
    let address = host.split_once('%').map_or(host, |(address, _)| address);
    address.parse::<IpAddr>().is_ok()
}

fn stanza(d: &mut Dispenser<'_>) -> Result<ForwardStanza, PluginError> {
    if !d.next_arg() {
        return Err(d.arg_err());
    }
    let mut f = ForwardStanza {
        from: d.val().to_string(),
        ..ForwardStanza::default()
    };
    if crate::zone::normalize_key(&f.from, "53").is_err() {
        return Err(d.plain(format!("unable to normalize '{}'", f.from)));
    }
    let to = d.remaining_args();
    if to.is_empty() {
        return Err(d.arg_err());
    }
    if to.len() > MAX_UPSTREAMS {
        return Err(d.plain(format!(
            "more than {MAX_UPSTREAMS} TOs configured: {}",
            to.len()
        )));
    }
    f.to = to.iter().map(|t| t.to_string()).collect();
    while d.next_block() {
        match d.val() {
            "except" => {
                let names = d.remaining_args();
                if names.is_empty() {
                    return Err(d.arg_err());
                }
                f.except.extend(names.iter().map(|n| n.to_string()));
            }
            "force_tcp" | "prefer_udp" | "failfast_all_unhealthy_upstreams" => {
                let option = d.val();
                if d.next_arg() {
                    return Err(d.arg_err());
                }
                match option {
                    "force_tcp" => f.force_tcp = true,
                    "prefer_udp" => f.prefer_udp = true,
                    _ => f.failfast_all_unhealthy_upstreams = true,
                }
            }
            "expire" => {
                let value = next_arg(d)?;
                let value = duration(d, value)?;
                if value.0 < 0 {
                    return Err(d.plain(format!("expire can't be negative: {value}")));
                }
                f.expire = Some(value);
            }
            "max_fails" => f.max_fails = Some(max_fails(d)?),
            "max_concurrent" => f.max_concurrent = Some(max_concurrent(d)?),
            "tls" => {
                let args = d.remaining_args();
                if args.len() > 3 {
                    return Err(d.arg_err());
                }
                f.tls = Some(args.iter().map(|a| a.to_string()).collect());
            }
            "tls_servername" => f.tls_servername = Some(next_arg(d)?.to_string()),
            "policy" => {
                let value = next_arg(d)?;
                f.policy = Some(match value {
                    "random" => Policy::Random,
                    "round_robin" => Policy::RoundRobin,
                    "sequential" => Policy::Sequential,
                    other => return Err(d.err(format!("unknown policy '{other}'"))),
                });
            }
            "health_check" => f.health_check = Some(health_check(d)?),
            "next" | "failover" => {
                let option = d.val();
                let codes = d.remaining_args();
                if codes.is_empty() {
                    return Err(d.arg_err());
                }
                let list = if option == "next" {
                    &mut f.next
                } else {
                    &mut f.failover
                };
                list.extend(codes.iter().map(|c| c.to_string()));
            }
            other => return Err(d.err(format!("unknown property '{other}'"))),
        }
    }
    Ok(f)
}

impl ForwardStanza {
    /// The upstreams that name a resolv.conf-style file rather than an address; CoreDNS
    /// reads each with [`resolv_conf_upstreams`](super::resolv_conf_upstreams).
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.to
            .iter()
            .map(String::as_str)
            .filter(|t| !is_address(t))
    }
}

impl PluginConfig for Forward {
    const NAME: &'static str = "forward";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        let mut forward = Forward::default();
        while d.next_token() {
            forward.stanzas.push(stanza(d)?);
        }
        Ok(forward)
    }

    fn to_lines(&self) -> Vec<Line> {
        self.stanzas.iter().map(stanza_line).collect()
    }
}

fn stanza_line(f: &ForwardStanza) -> Line {
    let mut block = Vec::new();
    let mut push = |w: Vec<String>| block.push(Line::words(w));
    if !f.except.is_empty() {
        push(
            words("except", f.except.iter().map(String::as_str))
                .into_iter()
                .map(String::from)
                .collect(),
        );
    }
    for (on, name) in [(f.force_tcp, "force_tcp"), (f.prefer_udp, "prefer_udp")] {
        if on {
            push(vec![name.to_string()]);
        }
    }
    if let Some(e) = f.expire {
        push(vec!["expire".to_string(), e.to_string()]);
    }
    if let Some(n) = f.max_fails {
        push(vec!["max_fails".to_string(), n.to_string()]);
    }
    if let Some(tls) = &f.tls {
        push(
            core::iter::once("tls".to_string())
                .chain(tls.iter().cloned())
                .collect(),
        );
    }
    if let Some(name) = &f.tls_servername {
        push(vec!["tls_servername".to_string(), name.clone()]);
    }
    if let Some(p) = f.policy {
        push(vec!["policy".to_string(), p.as_str().to_string()]);
    }
    if let Some((interval, rest)) = &f.health_check {
        push(
            ["health_check".to_string(), interval.to_string()]
                .into_iter()
                .chain(rest.iter().cloned())
                .collect(),
        );
    }
    if let Some(n) = f.max_concurrent {
        push(vec!["max_concurrent".to_string(), n.to_string()]);
    }
    if !f.next.is_empty() {
        push(
            core::iter::once("next".to_string())
                .chain(f.next.iter().cloned())
                .collect(),
        );
    }
    if !f.failover.is_empty() {
        push(
            core::iter::once("failover".to_string())
                .chain(f.failover.iter().cloned())
                .collect(),
        );
    }
    if f.failfast_all_unhealthy_upstreams {
        push(vec!["failfast_all_unhealthy_upstreams".to_string()]);
    }
    let head = ["forward", f.from.as_str()]
        .into_iter()
        .chain(f.to.iter().map(String::as_str));
    line(head, block)
}
