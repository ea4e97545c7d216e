//! `hosts [FILE [ZONES...]] { [INLINE ENTRIES]; ttl SECONDS; no_reverse; reload DURATION;
//! fallthrough [ZONES...] }`.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::net::IpAddr;

use super::{PluginConfig, line, once, words};
use crate::dispenser::{Dispenser, PluginError};
use crate::go::Duration;
use crate::syntax::Line;

/// `hosts`: answers from a hosts file and inline entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hosts {
    /// The hosts file (CoreDNS default `/etc/hosts`); not read here.
    pub path: Option<String>,
    /// Zones served (as written); empty means the block's zones.
    pub zones: Vec<String>,
    /// Inline entries, in order.
    pub inline: Vec<HostEntry>,
    /// TTL of answers in seconds (1..=65535; default 3600).
    pub ttl: Option<u16>,
    /// Do not synthesize PTR records.
    pub no_reverse: bool,
    /// How often to re-read the file (`0s` disables).
    pub reload: Option<Duration>,
    /// `fallthrough` and its zones, when present.
    pub fallthrough: Option<Vec<String>>,
}

/// An inline hosts entry: an address and its names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostEntry {
    /// The address.
    pub address: IpAddr,
    /// The names.
    pub names: Vec<String>,
}

impl PluginConfig for Hosts {
    const NAME: &'static str = "hosts";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        let mut hosts = Hosts::default();
        let mut seen = false;
        while d.next_token() {
            once(d, &mut seen)?;
            let args = d.remaining_args();
            if let Some((path, zones)) = args.split_first() {
                hosts.path = Some(path.to_string());
                hosts.zones = zones.iter().map(|z| z.to_string()).collect();
            }
            while d.next_block() {
                match d.val() {
                    "fallthrough" => {
                        let zones = d.remaining_args();
                        hosts.fallthrough = Some(zones.iter().map(|z| z.to_string()).collect());
                    }
                    "no_reverse" => hosts.no_reverse = true,
                    "ttl" => {
                        let args = d.remaining_args();
                        let Some(value) = args.first() else {
                            return Err(d.err("ttl needs a time in second"));
                        };
                        let value: i64 = value
                            .parse()
                            .map_err(|_| d.err("ttl needs a number of second"))?;
                        let ttl = u16::try_from(value)
                            .ok()
                            .filter(|t| *t > 0)
                            .ok_or_else(|| d.err("ttl provided is invalid"))?;
                        hosts.ttl = Some(ttl);
                    }
                    "reload" => {
                        let args = d.remaining_args();
                        let [value] = args.as_slice() else {
                            return Err(d.err("reload needs a duration (zero seconds to disable)"));
                        };
                        let reload = Duration::parse(value)
                            .map_err(|_| d.err(format!("invalid duration for reload '{value}'")))?;
                        if reload.0 < 0 {
                            return Err(
                                d.err(format!("invalid negative duration for reload '{value}'"))
                            );
                        }
                        hosts.reload = Some(reload);
                    }
                    first => {
                        let Ok(address) = first.parse::<IpAddr>() else {
                            return Err(d.err(format!("unknown property '{first}'")));
                        };
                        let names = d.remaining_args().iter().map(|n| n.to_string()).collect();
                        hosts.inline.push(HostEntry { address, names });
                    }
                }
            }
        }
        Ok(hosts)
    }

    fn to_lines(&self) -> Vec<Line> {
        let mut head = vec!["hosts".to_string()];
        head.extend(self.path.clone());
        if self.path.is_some() {
            head.extend(self.zones.iter().cloned());
        }
        let mut block: Vec<Line> = self
            .inline
            .iter()
            .map(|e| {
                let address = e.address.to_string();
                Line::words(core::iter::once(address).chain(e.names.iter().cloned()))
            })
            .collect();
        if let Some(ttl) = self.ttl {
            block.push(Line::words(["ttl".to_string(), ttl.to_string()]));
        }
        if self.no_reverse {
            block.push(Line::words(["no_reverse"]));
        }
        if let Some(reload) = self.reload {
            block.push(Line::words(["reload".to_string(), reload.to_string()]));
        }
        if let Some(zones) = &self.fallthrough {
            block.push(Line::words(words(
                "fallthrough",
                zones.iter().map(String::as_str),
            )));
        }
        vec![line(head, block)]
    }
}
