//! What a name leads to in the index, decided as CoreDNS v1.14.7's `Services`, `Records`,
//! `findServices`, `findPods`, `Reverse` and `nsAddrs` (`plugin/kubernetes/kubernetes.go`,
//! `reverse.go`, `ns.go`) decide it: a list of [`Found`] entries (its `msg.Service`), or a
//! name error (NXDOMAIN, or the next plugin with `fallthrough`).

use std::net::IpAddr;

use dns_wire::{Name, Type};

use super::index::{Index, Port, ServiceKind, key};
use super::name::{self, Invalid, Parsed, Subtree};
use super::options::PodMode;

/// The TXT record of `dns-version.ZONE`: the version of the specification served.
pub(super) const DNS_SCHEMA_VERSION: &str = "1.1.0";
/// The TTL of `dns-version.ZONE`.
pub(super) const DNS_VERSION_TTL: u32 = 28800;

/// The name does not exist (CoreDNS's `errNoItems`, `errNsNotExposed` and
/// `errInvalidRequest`: all three are name errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct NameError;

impl From<Invalid> for NameError {
    fn from(_: Invalid) -> Self {
        NameError
    }
}

/// What an entry answers with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Host {
    /// An address: A or AAAA (and SRV targets).
    Ip(IpAddr),
    /// A name: CNAME (ExternalName Services).
    Name(Box<Name>),
    /// A text: TXT (`dns-version`).
    Text(&'static str),
}

/// One entry a name leads to (CoreDNS's `msg.Service`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Found {
    /// What it answers with.
    pub host: Host,
    /// Its port (-1: none, no SRV record).
    pub port: i32,
    /// The name of the entry itself: the owner of its address in SRV additionals.
    pub target: Name,
    /// Its TTL.
    pub ttl: u32,
}

/// The settings lookups read.
#[derive(Clone, Debug)]
pub(super) struct Settings {
    /// `ttl`.
    pub ttl: u32,
    /// `namespaces` (empty: all).
    pub namespaces: Vec<String>,
    /// `pods`.
    pub pods: PodMode,
    /// `ignore empty_service`.
    pub ignore_empty_service: bool,
    /// The first zone that is not a reverse zone (lower-case labels): PTR targets are in it.
    pub primary_zone: Vec<Vec<u8>>,
    /// The addresses this server answers on (not loopback), for `ns.dns.ZONE`.
    pub local_ips: Vec<IpAddr>,
}

/// One query's view: the settings, the index, and the zone in the query's case.
pub(super) struct Lookup<'a> {
    /// Settings.
    pub settings: &'a Settings,
    /// Objects.
    pub index: &'a Index,
    /// The zone's labels as the query spells them.
    pub zone: &'a [Vec<u8>],
}

impl Lookup<'_> {
    /// The name `labels` (leftmost first, then the zone's labels).
    pub(super) fn name<'l>(&self, labels: impl IntoIterator<Item = &'l [u8]>) -> Name {
        let mut all: Vec<&[u8]> = labels.into_iter().collect();
        all.extend(self.zone.iter().map(Vec::as_slice));
        Name::from_labels(all).unwrap_or_default()
    }

    fn in_zone<'l>(&self, labels: impl IntoIterator<Item = &'l str>) -> Name {
        self.name(labels.into_iter().map(str::as_bytes))
    }

    /// CoreDNS's `Services`: the entries of `qname` (`base`: its lower-case labels below
    /// the zone) for a query of `qtype`.
    pub(super) fn services(
        &self,
        qname: &Name,
        base: &[String],
        qtype: Type,
    ) -> Result<Vec<Found>, NameError> {
        if qtype == Type::TXT {
            if base == ["dns-version"] {
                return Ok(vec![Found {
                    host: Host::Text(DNS_SCHEMA_VERSION),
                    port: 0,
                    target: *qname,
                    ttl: DNS_VERSION_TTL,
                }]);
            }
            // NODATA when the name has records of another type.
            return match self.records(base) {
                Ok(found) if !found.is_empty() => Ok(Vec::new()),
                _ => Err(NameError),
            };
        }
        if qtype == Type::NS {
            return Ok(self.ns_addresses());
        }
        if base == ["ns", "dns"] {
            let family = |ip: &IpAddr| match ip {
                IpAddr::V4(_) => qtype == Type::A,
                IpAddr::V6(_) => qtype == Type::AAAA,
            };
            let mut found = self.ns_addresses();
            found.retain(|f| matches!(&f.host, Host::Ip(ip) if family(ip)));
            for f in &mut found {
                f.target = *qname;
            }
            return Ok(found);
        }
        let mut found = self.records(base)?;
        // No SRV records for ExternalName Services.
        if qtype == Type::SRV {
            found.retain(|f| !matches!(f.host, Host::Name(_)));
        }
        Ok(found)
    }

    /// CoreDNS's `Records`.
    pub(super) fn records(&self, base: &[String]) -> Result<Vec<Found>, NameError> {
        let parsed = name::parse(base)?;
        let Some(subtree) = parsed.subtree else {
            return Ok(Vec::new());
        };
        if name::is_reverse(self.zone) {
            return Err(NameError);
        }
        if !self.namespace_exposed(&parsed.namespace) {
            return Err(NameError);
        }
        match subtree {
            Subtree::Pod => self.pods(&parsed),
            Subtree::Service => self.find_services(&parsed),
        }
    }

    /// Listed by `namespaces` (if given) and existing (and matching `namespace_labels`).
    fn namespace_exposed(&self, namespace: &str) -> bool {
        self.configured(namespace) && self.index.has_namespace(namespace)
    }

    fn configured(&self, namespace: &str) -> bool {
        let listed = &self.settings.namespaces;
        listed.is_empty() || listed.iter().any(|n| n == namespace)
    }

    /// CoreDNS's `findPods`.
    fn pods(&self, r: &Parsed) -> Result<Vec<Found>, NameError> {
        if self.settings.pods == PodMode::Disabled {
            return Err(NameError);
        }
        if r.service.is_empty() {
            return Ok(Vec::new());
        }
        let label = &r.service;
        let text = if label.matches('-').count() == 3 && !label.contains("--") {
            label.replace('-', ".")
        } else {
            label.replace('-', ":")
        };
        let ip: IpAddr = text.parse().map_err(|_| NameError)?;
        // `verified`: only the address of a pod of that namespace.
        if self.settings.pods == PodMode::Verified && !self.index.has_pod(ip, &r.namespace) {
            return Err(NameError);
        }
        Ok(vec![Found {
            host: Host::Ip(ip),
            port: 0,
            target: self.in_zone([label.as_str(), &r.namespace, name::POD]),
            ttl: self.settings.ttl,
        }])
    }

    /// CoreDNS's `findServices`.
    fn find_services(&self, r: &Parsed) -> Result<Vec<Found>, NameError> {
        if r.service.is_empty() {
            return Ok(Vec::new());
        }
        let service_key = key(&r.service, &r.namespace);
        let Some(service) = self.index.service(&service_key) else {
            return Err(NameError);
        };
        let ttl = self.settings.ttl;
        let slices = self.index.slices(&service_key);
        let headless = service.kind == ServiceKind::Headless;
        if self.settings.ignore_empty_service
            && !headless
            && !matches!(service.kind, ServiceKind::ExternalName(_))
            && slices.iter().all(|s| s.addresses.is_empty())
        {
            return Err(NameError);
        }
        let mut found = Vec::new();
        let mut exists = false;
        let service_name = [service.name.as_str(), &service.namespace, name::SVC];
        if let ServiceKind::ExternalName(target) = &service.kind {
            if !(r.endpoint.is_empty() && r.port.is_empty() && r.protocol.is_empty()) {
                return Err(NameError);
            }
            // An address as the external name is no CNAME (and nothing at all).
            if target.parse::<IpAddr>().is_ok() {
                return Err(NameError);
            }
            let target: Name = target.parse().map_err(|_| NameError)?;
            found.push(Found {
                host: Host::Name(Box::new(target)),
                port: 0,
                target: self.in_zone(service_name),
                ttl,
            });
            return Ok(found);
        }
        if headless || !r.endpoint.is_empty() {
            for slice in slices {
                for address in &slice.addresses {
                    if !r.endpoint.is_empty() && !address.label.eq_ignore_ascii_case(&r.endpoint) {
                        continue;
                    }
                    for port in &slice.ports {
                        if !port_matches(r, port) {
                            continue;
                        }
                        exists = true;
                        let mut labels = vec![address.label.as_str()];
                        labels.extend(service_name);
                        found.push(Found {
                            host: Host::Ip(address.ip),
                            port: port.port,
                            target: self.in_zone(labels),
                            ttl,
                        });
                    }
                }
            }
        } else if let ServiceKind::ClusterIp(ips) = &service.kind {
            for port in &service.ports {
                if !port_matches(r, port) {
                    continue;
                }
                exists = true;
                for ip in ips {
                    found.push(Found {
                        host: Host::Ip(*ip),
                        port: port.port,
                        target: self.in_zone(service_name),
                        ttl,
                    });
                }
            }
        }
        if exists { Ok(found) } else { Err(NameError) }
    }

    /// CoreDNS's `serviceRecordForIP`: the PTR targets of `ip`.
    pub(super) fn reverse(&self, ip: IpAddr) -> Vec<Name> {
        let primary = self.settings.primary_zone.iter().map(Vec::as_slice);
        let in_primary = |labels: [&str; 4]| {
            let labels = labels.into_iter().filter(|l| !l.is_empty());
            Name::from_labels(labels.map(str::as_bytes).chain(primary.clone())).ok()
        };
        for service_key in self.index.services_with_ip(ip) {
            let Some(service) = self.index.service(service_key) else {
                continue;
            };
            if !self.configured(&service.namespace) {
                continue;
            }
            let labels = ["", service.name.as_str(), &service.namespace, name::SVC];
            return in_primary(labels).into_iter().collect();
        }
        let mut targets = Vec::new();
        for (label, service_key, namespace) in self.index.endpoints_with_ip(ip) {
            if !self.configured(namespace) {
                continue;
            }
            let Some((service, _)) = service_key.split_once('.') else {
                continue;
            };
            targets.extend(in_primary([label, service, namespace, name::SVC]));
        }
        targets
    }

    /// CoreDNS's `nsAddrs`: the Services whose endpoints are this server's addresses, else
    /// `ns.dns.ZONE` with those addresses.
    pub(super) fn ns_addresses(&self) -> Vec<Found> {
        let ttl = self.settings.ttl;
        let mut found = Vec::new();
        let mut endpoint_seen = false;
        for local in &self.settings.local_ips {
            for (label, service_key, _) in self.index.endpoints_with_ip(*local) {
                endpoint_seen = true;
                let Some(service) = self.index.service(service_key) else {
                    continue;
                };
                let service_name = [service.name.as_str(), &service.namespace, name::SVC];
                match &service.kind {
                    ServiceKind::Headless => {
                        let mut labels = vec![label.as_str()];
                        labels.extend(service_name);
                        found.push(Found {
                            host: Host::Ip(*local),
                            port: 0,
                            target: self.in_zone(labels),
                            ttl,
                        });
                    }
                    ServiceKind::ClusterIp(ips) => {
                        for ip in ips {
                            found.push(Found {
                                host: Host::Ip(*ip),
                                port: 0,
                                target: self.in_zone(service_name),
                                ttl,
                            });
                        }
                    }
                    ServiceKind::ExternalName(_) => {}
                }
            }
        }
        if !endpoint_seen {
            for local in &self.settings.local_ips {
                found.push(Found {
                    host: Host::Ip(*local),
                    port: 0,
                    target: self.in_zone(["ns", "dns"]),
                    ttl,
                });
            }
        }
        found
    }
}

/// CoreDNS's `matchPortAndProtocol`: an empty port or protocol in the name matches any.
fn port_matches(r: &Parsed, port: &Port) -> bool {
    (r.port.is_empty() || r.port.eq_ignore_ascii_case(&port.name))
        && (r.protocol.is_empty() || r.protocol.eq_ignore_ascii_case(&port.protocol))
}

/// The address a full reverse name stands for (`4.3.2.1.in-addr.arpa`, 32 nibbles under
/// `ip6.arpa`), from its lower-case labels; `None` for anything shorter or malformed.
pub(super) fn reverse_address(labels: &[String]) -> Option<IpAddr> {
    let (arpa, rest) = labels.split_last()?;
    let (kind, digits) = rest.split_last()?;
    if arpa != "arpa" {
        return None;
    }
    match kind.as_str() {
        "in-addr" if digits.len() == 4 => {
            let mut octets = [0u8; 4];
            for (octet, label) in octets.iter_mut().rev().zip(digits) {
                *octet = label.parse().ok()?;
            }
            Some(IpAddr::from(octets))
        }
        "ip6" if digits.len() == 32 => {
            let mut value: u128 = 0;
            for label in digits.iter().rev() {
                let nibble = u8::from_str_radix(label, 16)
                    .ok()
                    .filter(|_| label.len() == 1)?;
                value = (value << 4) | u128::from(nibble);
            }
            Some(IpAddr::from(value.to_be_bytes()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str) -> Vec<String> {
        text.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn reverse_names_to_addresses() {
        assert_eq!(
            reverse_address(&labels("1.0.0.10.in-addr.arpa")),
            Some("10.0.0.1".parse().unwrap())
        );
        let v6 = "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.c.b.a.4.3.2.1.ip6.arpa";
        assert_eq!(
            reverse_address(&labels(v6)),
            Some("1234:abcd::1".parse().unwrap())
        );
        assert_eq!(reverse_address(&labels("0.10.in-addr.arpa")), None);
        assert_eq!(reverse_address(&labels("1.0.0.300.in-addr.arpa")), None);
    }
}
