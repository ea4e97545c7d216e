//! From entries to resource records, per query type, as CoreDNS v1.14.7's
//! `plugin/backend_lookup.go` builds them for the kubernetes backend: A and AAAA (with a
//! CNAME followed inside the zone, and outside it through `upstream.rs`), SRV with weights
//! shared out per priority and the targets' addresses as additionals, TXT, CNAME, PTR, NS
//! with their addresses, and the zone's SOA.

use std::collections::HashSet;
use std::net::IpAddr;

use dns_wire::{Class, Name, OwnedRecord, Type};

use super::lookup::{Found, Host, Lookup, NameError};
use super::upstream::Upstream;

/// CNAMEs followed at most (CoreDNS's `maxCnameChainLength`).
const MAX_CNAME_CHAIN: usize = 10;
/// The SOA's refresh, retry and expire (CoreDNS's constants).
const SOA_TIMERS: [u32; 3] = [7200, 1800, 86400];

/// A record of `name` with `rdata`.
pub(super) fn record(name: Name, rtype: Type, ttl: u32, rdata: Vec<u8>) -> OwnedRecord {
    OwnedRecord {
        name,
        rtype,
        class: Class::IN,
        ttl,
        rdata: rdata.into(),
    }
}

/// The A or AAAA record of `ip` for `name`.
pub(super) fn address(name: Name, ip: IpAddr, ttl: u32) -> OwnedRecord {
    match ip {
        IpAddr::V4(v4) => record(name, Type::A, ttl, v4.octets().to_vec()),
        IpAddr::V6(v6) => record(name, Type::AAAA, ttl, v6.octets().to_vec()),
    }
}

fn name_record(owner: Name, rtype: Type, ttl: u32, target: &Name) -> OwnedRecord {
    record(owner, rtype, ttl, target.as_wire().to_vec())
}

/// The lower-case labels of `name` below `zone` (the query's spelling of it), if `name`
/// is in the zone.
pub(super) fn below_zone(name: &Name, zone: &[Vec<u8>]) -> Option<Vec<String>> {
    let labels: Vec<&[u8]> = name.labels().collect();
    let split = labels.len().checked_sub(zone.len())?;
    let (base, tail) = labels.split_at(split);
    if !tail
        .iter()
        .zip(zone)
        .all(|(a, b)| a.eq_ignore_ascii_case(b))
    {
        return None;
    }
    Some(
        base.iter()
            .map(|l| String::from_utf8_lossy(l).to_ascii_lowercase())
            .collect(),
    )
}

impl Lookup<'_> {
    /// CoreDNS's `plugin.A` and `plugin.AAAA` (`qtype` says which): the addresses of
    /// `qname`, an ExternalName's CNAME first. A CNAME into the zone is followed here; one
    /// out of it is followed by what `upstream` has for its target.
    pub(super) fn addresses(
        &self,
        qname: &Name,
        base: &[String],
        qtype: Type,
        chain: &mut Vec<OwnedRecord>,
        upstream: &mut Upstream<'_>,
    ) -> Result<Vec<OwnedRecord>, NameError> {
        let found = self.services(qname, base, qtype)?;
        let mut records = Vec::new();
        let mut seen = HashSet::new();
        for f in found {
            match f.host {
                Host::Name(target) => {
                    if *target == *qname || chain.len() > MAX_CNAME_CHAIN {
                        continue;
                    }
                    let cname = name_record(*qname, Type::CNAME, f.ttl, &target);
                    if chain.contains(&cname) {
                        continue;
                    }
                    match below_zone(&target, self.zone) {
                        Some(target_base) => {
                            chain.push(cname.clone());
                            let next =
                                self.addresses(&target, &target_base, qtype, chain, upstream);
                            if let Ok(next) = next
                                && !next.is_empty()
                            {
                                records.push(cname);
                                records.extend(next);
                            }
                        }
                        None => {
                            if let Some(answers) = upstream.follow(&target, qtype) {
                                records.push(cname);
                                records.extend(answers);
                            }
                        }
                    }
                }
                Host::Ip(ip) => {
                    let wanted = match ip {
                        IpAddr::V4(_) => qtype == Type::A,
                        IpAddr::V6(_) => qtype == Type::AAAA,
                    };
                    if wanted && seen.insert(ip) {
                        records.push(address(*qname, ip, f.ttl));
                    }
                }
                Host::Text(_) => {}
            }
        }
        Ok(records)
    }

    /// CoreDNS's `plugin.SRV`: one record per target and port, weights shared out among
    /// the entries (all of priority 0), and each target's address as an additional.
    pub(super) fn srv(
        &self,
        qname: &Name,
        base: &[String],
    ) -> Result<(Vec<OwnedRecord>, Vec<OwnedRecord>), NameError> {
        let found = self.services(qname, base, Type::SRV)?;
        // Every entry weighs 100: each record gets floor(100 / (100 × entries) × 100), at
        // least 1, computed in floating point as CoreDNS does.
        let total = 100.0 * found.len() as f64;
        let weight = ((100.0 / total) * 100.0).floor().clamp(1.0, 100.0) as u16;
        let (mut records, mut extra) = (Vec::new(), Vec::new());
        let mut seen_targets = HashSet::new();
        let mut seen_addresses = HashSet::new();
        for Found {
            host,
            port,
            target,
            ttl,
        } in found
        {
            let (Host::Ip(ip), Ok(port)) = (host, u16::try_from(port)) else {
                continue;
            };
            if seen_targets.insert((target, port)) {
                let mut rdata = Vec::with_capacity(6 + target.wire_len());
                rdata.extend_from_slice(&0u16.to_be_bytes());
                rdata.extend_from_slice(&weight.to_be_bytes());
                rdata.extend_from_slice(&port.to_be_bytes());
                rdata.extend_from_slice(target.as_wire());
                records.push(record(*qname, Type::SRV, ttl, rdata));
            }
            if seen_addresses.insert((target, ip)) {
                extra.push(address(target, ip, ttl));
            }
        }
        Ok((records, extra))
    }

    /// CoreDNS's `plugin.TXT` for this backend: `dns-version.ZONE`.
    pub(super) fn txt(&self, qname: &Name, base: &[String]) -> Result<Vec<OwnedRecord>, NameError> {
        let found = self.services(qname, base, Type::TXT)?;
        let mut records = Vec::new();
        for f in found {
            if let Host::Text(text) = f.host {
                let mut rdata = vec![u8::try_from(text.len()).unwrap_or(u8::MAX)];
                rdata.extend_from_slice(text.as_bytes());
                records.push(record(*qname, Type::TXT, f.ttl, rdata));
            }
        }
        Ok(records)
    }

    /// CoreDNS's `plugin.CNAME`: the first entry's name, if it is one.
    pub(super) fn cname(
        &self,
        qname: &Name,
        base: &[String],
    ) -> Result<Vec<OwnedRecord>, NameError> {
        let found = self.services(qname, base, Type::CNAME)?;
        Ok(match found.into_iter().next() {
            Some(Found {
                host: Host::Name(target),
                ttl,
                ..
            }) => vec![name_record(*qname, Type::CNAME, ttl, &target)],
            _ => Vec::new(),
        })
    }

    /// CoreDNS's `plugin.PTR` with the backend's `Reverse`: the names of a full reverse
    /// address; any other name below a reverse zone is looked up as a name.
    pub(super) fn ptr(
        &self,
        qname: &Name,
        base: &[String],
        all_labels: &[String],
    ) -> Result<Vec<OwnedRecord>, NameError> {
        let Some(ip) = super::lookup::reverse_address(all_labels) else {
            self.records(base)?;
            return Ok(Vec::new());
        };
        let targets = self.reverse(ip);
        if targets.is_empty() {
            return Err(NameError);
        }
        let mut seen = HashSet::new();
        let ttl = self.settings.ttl;
        Ok(targets
            .into_iter()
            .filter(|t| seen.insert(*t))
            .map(|t| name_record(*qname, Type::PTR, ttl, &t))
            .collect())
    }

    /// CoreDNS's `plugin.NS`: the NS records of the apex and their addresses.
    pub(super) fn ns(&self, qname: &Name) -> (Vec<OwnedRecord>, Vec<OwnedRecord>) {
        let (mut records, mut extra) = (Vec::new(), Vec::new());
        let mut seen = HashSet::new();
        for f in self.ns_addresses() {
            let Host::Ip(ip) = f.host else {
                continue;
            };
            extra.push(address(f.target, ip, f.ttl));
            if seen.insert(f.target) {
                records.push(name_record(*qname, Type::NS, f.ttl, &f.target));
            }
        }
        (records, extra)
    }

    /// CoreDNS's `plugin.SOA`: owned by the zone as the query spells it, TTL the smaller of
    /// `ttl` and 300, minimum `ttl`, serial the time of the last change.
    pub(super) fn soa(&self) -> OwnedRecord {
        let ttl = self.settings.ttl;
        let mut rdata = Vec::new();
        rdata.extend_from_slice(self.name([b"ns".as_slice(), b"dns"]).as_wire());
        rdata.extend_from_slice(self.name([b"hostmaster".as_slice()]).as_wire());
        for value in [
            self.index.serial,
            SOA_TIMERS[0],
            SOA_TIMERS[1],
            SOA_TIMERS[2],
            ttl,
        ] {
            rdata.extend_from_slice(&value.to_be_bytes());
        }
        record(self.name([]), Type::SOA, ttl.min(300), rdata)
    }
}
