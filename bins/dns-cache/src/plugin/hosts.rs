//! `hosts`: A, AAAA and PTR answers from a hosts file (re-read when it changes, every
//! `reload`, 5 s by default) and from inline entries, which win over the file. A leftmost
//! `*` matches exactly one more label and makes no PTR. A known name asked for another type
//! gets an authoritative NODATA; an unknown name gets NXDOMAIN unless `fallthrough` covers it.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, SystemTime};

use corefile::plugins::Hosts as HostsConfig;
use dns_wire::{Class, Name, OwnedMessage, OwnedRecord, Rcode, Type};

use crate::duration::from_go;
use crate::metrics::Metrics;
use crate::query::names::{LowerName, Zone, in_any};
use crate::query::reply::reply_to;
use crate::query::request::Request;

/// The default hosts file.
const DEFAULT_PATH: &str = "/etc/hosts";
/// Default TTL of answers.
const DEFAULT_TTL: u32 = 3600;
/// Default re-read interval.
const DEFAULT_RELOAD: Duration = Duration::from_secs(5);

/// Addresses of one name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Addresses {
    v4: Vec<Ipv4Addr>,
    v6: Vec<Ipv6Addr>,
}

/// Names and addresses from one source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    names: HashMap<Vec<u8>, Addresses>,
    /// Wildcards keyed by the name after `*.`.
    wildcards: HashMap<Vec<u8>, Addresses>,
    /// PTR targets keyed by the reverse name.
    reverse: HashMap<Vec<u8>, Vec<Name>>,
    entries: usize,
}

impl Table {
    /// Reads hosts-file text: `ADDRESS NAME...` per line, `#` comments.
    pub fn parse(text: &str) -> Self {
        let mut table = Self::default();
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or_default();
            let mut fields = line.split_whitespace();
            let Some(address) = fields.next() else {
                continue;
            };
            let address = address.split('%').next().unwrap_or(address);
            let Ok(ip) = address.parse::<IpAddr>() else {
                continue;
            };
            let names: Vec<&str> = fields.collect();
            table.add(ip, &names);
        }
        table
    }

    /// Adds one entry.
    pub fn add(&mut self, ip: IpAddr, names: &[impl AsRef<str>]) {
        for name in names {
            let name = name.as_ref();
            let (wildcard, host) = match name.strip_prefix("*.") {
                Some(rest) => (true, rest),
                None => (false, name),
            };
            let Ok(parsed) = host.parse::<Name>() else {
                continue;
            };
            let key = parsed.to_lowercase().as_wire().to_vec();
            let map = if wildcard {
                &mut self.wildcards
            } else {
                &mut self.names
            };
            let addresses = map.entry(key).or_default();
            match ip.to_canonical() {
                IpAddr::V4(v4) if !addresses.v4.contains(&v4) => addresses.v4.push(v4),
                IpAddr::V6(v6) if !addresses.v6.contains(&v6) => addresses.v6.push(v6),
                _ => continue,
            }
            self.entries += 1;
            if !wildcard && let Ok(reverse) = reverse_name(ip).parse::<Name>() {
                let targets = self.reverse.entry(reverse.as_wire().to_vec()).or_default();
                if !targets.contains(&parsed) {
                    targets.push(parsed);
                }
            }
        }
    }

    fn addresses(&self, name: &LowerName) -> Option<&Addresses> {
        if let Some(found) = self.names.get(name.as_wire()) {
            return Some(found);
        }
        let mut suffixes = name.suffixes();
        suffixes.next();
        let parent = suffixes.next()?;
        self.wildcards.get(parent)
    }
}

/// The reverse-lookup name of `ip` (`4.3.2.1.in-addr.arpa.`, nibbles under `ip6.arpa.`).
pub fn reverse_name(ip: IpAddr) -> String {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            format!("{d}.{c}.{b}.{a}.in-addr.arpa.")
        }
        IpAddr::V6(v6) => {
            let mut out = String::with_capacity(73);
            for byte in v6.octets().iter().rev() {
                out.push_str(&format!("{:x}.{:x}.", byte & 0xF, byte >> 4));
            }
            out.push_str("ip6.arpa.");
            out
        }
    }
}

/// What `hosts` does with a query.
#[derive(Debug)]
pub enum Answer {
    /// This reply.
    Reply(OwnedMessage),
    /// Pass to the next plugin.
    Next,
}

/// A configuration hosts cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum HostsError {
    /// A zone is not a domain name.
    #[error("plugin/hosts: invalid zone {0:?}")]
    Zone(String),
}

/// The `hosts` plugin of a block.
pub struct Hosts {
    zones: Vec<Zone>,
    ttl: u32,
    no_reverse: bool,
    fallthrough: Option<Vec<Zone>>,
    inline: Table,
    file: Arc<RwLock<Table>>,
}

impl Hosts {
    /// The plugin; starts re-reading its file in the background (inside a tokio runtime).
    pub fn new(
        config: &HostsConfig,
        block_zones: &[String],
        metrics: &Arc<Metrics>,
    ) -> Result<Self, HostsError> {
        let parse_zones = |names: &[String]| -> Result<Vec<Zone>, HostsError> {
            names
                .iter()
                .map(|z| Zone::parse(z).map_err(|_| HostsError::Zone(z.clone())))
                .collect()
        };
        let zones = if config.zones.is_empty() {
            parse_zones(block_zones)?
        } else {
            parse_zones(&config.zones)?
        };
        let fallthrough = match &config.fallthrough {
            None => None,
            Some(z) if z.is_empty() => Some(vec![
                Zone::parse(".").map_err(|_| HostsError::Zone(".".into()))?,
            ]),
            Some(z) => Some(parse_zones(z)?),
        };
        let mut inline = Table::default();
        for entry in &config.inline {
            inline.add(entry.address, &entry.names);
        }
        let path = PathBuf::from(config.path.as_deref().unwrap_or(DEFAULT_PATH));
        let file = Arc::new(RwLock::new(Table::default()));
        let reload = config.reload.map_or(DEFAULT_RELOAD, from_go);
        let mut watcher = FileWatch {
            path,
            table: Arc::downgrade(&file),
            seen: None,
            inline_entries: inline.entries,
            metrics: Arc::clone(metrics),
        };
        watcher.poll();
        if !reload.is_zero() {
            tokio::spawn(watcher.run(reload));
        }
        Ok(Self {
            zones,
            ttl: config.ttl.map_or(DEFAULT_TTL, u32::from),
            no_reverse: config.no_reverse,
            fallthrough,
            inline,
            file,
        })
    }

    /// Answers `req`, or passes it on.
    pub fn answer(&self, req: &Request<'_>) -> Answer {
        let name = &req.name;
        if !in_any(name, &self.zones) {
            return Answer::Next;
        }
        let Ok(file) = self.file.read() else {
            return Answer::Next;
        };
        let addresses = self.inline.addresses(name).or_else(|| file.addresses(name));
        let owner = req.question.name.to_name();
        let class = Class::IN;
        let ttl = self.ttl;
        let record = |rtype, rdata: Vec<u8>| OwnedRecord {
            name: owner,
            rtype,
            class,
            ttl,
            rdata: rdata.into(),
        };
        let answers: Vec<OwnedRecord> = match req.question.qtype {
            Type::A => addresses.map_or_else(Vec::new, |a| {
                a.v4.iter()
                    .map(|ip| record(Type::A, ip.octets().to_vec()))
                    .collect()
            }),
            Type::AAAA => addresses.map_or_else(Vec::new, |a| {
                a.v6.iter()
                    .map(|ip| record(Type::AAAA, ip.octets().to_vec()))
                    .collect()
            }),
            Type::PTR if !self.no_reverse => {
                let targets = self
                    .inline
                    .reverse
                    .get(name.as_wire())
                    .or_else(|| file.reverse.get(name.as_wire()));
                targets.map_or_else(Vec::new, |t| {
                    t.iter()
                        .map(|n| record(Type::PTR, n.as_wire().to_vec()))
                        .collect()
                })
            }
            _ => Vec::new(),
        };
        let known = addresses.is_some();
        if answers.is_empty() && !known {
            if self.fallthrough.as_ref().is_some_and(|z| in_any(name, z)) {
                return Answer::Next;
            }
            let mut msg = reply_to(req, Rcode::NXDOMAIN);
            msg.header.aa = true;
            return Answer::Reply(msg);
        }
        let mut msg = reply_to(req, Rcode::NOERROR);
        msg.header.aa = true;
        msg.answers = answers;
        Answer::Reply(msg)
    }
}

/// Re-reads the hosts file when its modification time or size changes.
struct FileWatch {
    path: PathBuf,
    table: Weak<RwLock<Table>>,
    seen: Option<(SystemTime, u64)>,
    inline_entries: usize,
    metrics: Arc<Metrics>,
}

impl FileWatch {
    async fn run(mut self, every: Duration) {
        let mut tick = tokio::time::interval(every);
        tick.tick().await;
        loop {
            tick.tick().await;
            if self.table.strong_count() == 0 {
                return;
            }
            self.poll();
        }
    }

    fn poll(&mut self) {
        let Ok(meta) = std::fs::metadata(&self.path) else {
            return;
        };
        let stamp = (
            meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            meta.len(),
        );
        if self.seen == Some(stamp) {
            return;
        }
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            tracing::warn!(
                plugin = "hosts",
                "File cannot be read: {}",
                self.path.display()
            );
            return;
        };
        self.seen = Some(stamp);
        let table = Table::parse(&text);
        let entries = table.entries + self.inline_entries;
        if let Some(shared) = self.table.upgrade()
            && let Ok(mut current) = shared.write()
        {
            *current = table;
        }
        self.metrics.hosts_entries.set(entries as i64);
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        self.metrics.hosts_reload_timestamp.set(now.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::request::tests::{client, query};
    use crate::query::request::{Admission, Proto, admit};
    use corefile::plugins::HostEntry;
    use dns_wire::Message;

    fn hosts(config: HostsConfig) -> Hosts {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = rt.enter();
        Hosts::new(&config, &[".".into()], &Arc::new(Metrics::new())).unwrap()
    }

    fn ask(h: &Hosts, name: &str, qtype: Type) -> Option<Vec<u8>> {
        let q = query(name, qtype, None);
        let Admission::Query(req) = admit(&q, Proto::Udp, client()) else {
            panic!()
        };
        match h.answer(&req) {
            Answer::Reply(m) => Some(m.to_vec().unwrap()),
            Answer::Next => None,
        }
    }

    fn config(fallthrough: bool) -> HostsConfig {
        let dir = std::env::temp_dir().join(format!("dns-cache-hosts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("hosts-{fallthrough}"));
        std::fs::write(
            &path,
            "10.0.0.1 db.example  # the db\n::1 db.example\n10.0.0.9 *.wild.example\n",
        )
        .unwrap();
        HostsConfig {
            path: Some(path.display().to_string()),
            inline: vec![HostEntry {
                address: "192.0.2.7".parse().unwrap(),
                names: vec!["web.example".into()],
            }],
            reload: Some(corefile::go::Duration(0)),
            fallthrough: fallthrough.then(Vec::new),
            ..HostsConfig::default()
        }
    }

    #[test]
    fn a_aaaa_ptr_wildcard_and_inline() {
        let h = hosts(config(false));
        let m = ask(&h, "DB.example.", Type::A).unwrap();
        let m = Message::parse(&m).unwrap();
        assert!(m.header().aa);
        assert_eq!(m.answers().next().unwrap().rdata(), &[10, 0, 0, 1]);
        assert_eq!(m.answers().next().unwrap().ttl(), 3600);
        let m = ask(&h, "db.example.", Type::AAAA).unwrap();
        assert_eq!(Message::parse(&m).unwrap().counts().answers, 1);
        let m = ask(&h, "1.0.0.10.in-addr.arpa.", Type::PTR).unwrap();
        let m = Message::parse(&m).unwrap();
        assert_eq!(
            m.answers().next().unwrap().data().unwrap().to_string(),
            "db.example."
        );
        let m = ask(&h, "x.wild.example.", Type::A).unwrap();
        assert_eq!(Message::parse(&m).unwrap().counts().answers, 1);
        let m = ask(&h, "y.x.wild.example.", Type::A).unwrap();
        assert_eq!(Message::parse(&m).unwrap().rcode(), Rcode::NXDOMAIN);
        let m = ask(&h, "web.example.", Type::A).unwrap();
        assert_eq!(
            Message::parse(&m)
                .unwrap()
                .answers()
                .next()
                .unwrap()
                .rdata(),
            &[192, 0, 2, 7]
        );
    }

    #[test]
    fn nodata_nxdomain_and_fallthrough() {
        let h = hosts(config(false));
        let m = ask(&h, "db.example.", Type::MX).unwrap();
        let m = Message::parse(&m).unwrap();
        assert_eq!((m.rcode(), m.counts().answers), (Rcode::NOERROR, 0));
        let m = ask(&h, "nope.example.", Type::A).unwrap();
        assert_eq!(Message::parse(&m).unwrap().rcode(), Rcode::NXDOMAIN);
        let h = hosts(config(true));
        assert!(ask(&h, "nope.example.", Type::A).is_none());
    }

    #[test]
    fn reverse_names() {
        assert_eq!(
            reverse_name("10.0.0.1".parse().unwrap()),
            "1.0.0.10.in-addr.arpa."
        );
        assert!(reverse_name("::1".parse().unwrap()).starts_with("1.0.0.0."));
        assert!(reverse_name("::1".parse().unwrap()).ends_with(".ip6.arpa."));
    }
}
