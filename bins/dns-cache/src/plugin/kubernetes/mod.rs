//! `kubernetes`: answers the names of the Kubernetes DNS specification
//! (`kubernetes/dns` `docs/specification.md`) from the cluster's Services, EndpointSlices
//! and Namespaces, as CoreDNS v1.14.7's `plugin/kubernetes` does: its handler
//! (`handler.go`) is [`Kubernetes::serve`].
//!
//! - `options.rs`: the directive's settings, in CoreDNS's syntax and error texts;
//! - `name.rs`: what a name below the zone asks for (`parse.go`);
//! - `index.rs`: the objects, reduced and indexed as CoreDNS's controller indexes them;
//! - `lookup.rs`: what a name leads to, or a name error (`kubernetes.go`, `reverse.go`,
//!   `ns.go`);
//! - `records.rs`: the records of each query type (`plugin/backend_lookup.go`);
//! - `upstream.rs`: ExternalName targets outside the zones, resolved through the server;
//! - `memo.rs`: the replies already built from the current index, replayed;
//! - `programming.rs`: the DNS programming latency of EndpointSlice changes (a metric);
//! - `objects.rs`: the `cluster-state` source behind the index, and readiness.

mod index;
mod lookup;
mod memo;
mod name;
mod objects;
pub mod options;
mod programming;
mod records;
#[cfg(test)]
mod tests;
mod upstream;

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use corefile::dispenser::PluginError;
use dns_wire::{Name, OwnedMessage, OwnedRecord, Rcode, Type};
use tokio::sync::oneshot;

use crate::metrics::Metrics;
use crate::plugin::SubQuery;
use crate::query::names::{LowerName, Zone, in_any};
use crate::query::reply::reply_to;
use crate::query::request::Request;
use index::{Index, Selection};
use lookup::{Lookup, NameError, Settings};
pub use objects::read_manifests_from;
use objects::{Origin, Shared};
use options::{KubernetesConfig, PodMode};
use upstream::{Targets, Upstream};

/// Every kind of object the plugin may read: EndpointSlices unless `noendpoints`, Pods only
/// with `pods verified` (the API calls of the source, and so the RBAC the plugin needs, follow
/// from it: `cluster_state::api_calls`).
pub const KINDS: &[cluster_state::Kind] = &[
    cluster_state::Kind::Service,
    cluster_state::Kind::Namespace,
    cluster_state::Kind::EndpointSlice,
    cluster_state::Kind::Pod,
];

/// The default TTL of answers (CoreDNS's `defaultTTL`).
const DEFAULT_TTL: u32 = 5;
/// How long start-up waits for the objects by default (CoreDNS's `startupTimeout`).
const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(5);

/// What the plugin does with a query.
#[derive(Debug)]
pub enum Served {
    /// This reply, encoded (untruncated: the server fits it to the client).
    Reply(Vec<u8>),
    /// A reply that cannot be encoded (over 65,535 bytes): SERVFAIL, with this error.
    Failed(String),
    /// Not the plugin's: the next plugin's.
    Next,
    /// The reply needs these ExternalName targets outside the zones resolved first.
    Lookup(Vec<SubQuery>),
}

/// What [`Kubernetes::answer`] did with a query.
#[derive(Debug)]
pub enum Answered {
    /// The reply is in the output buffer (untruncated, as [`Served::Reply`]).
    Written,
    /// A reply that cannot be encoded: SERVFAIL, with this error.
    Failed(String),
    /// Not the plugin's: the next plugin's.
    Next,
    /// The reply needs these names resolved first ([`Kubernetes::resume`] then builds it).
    Lookup(Vec<SubQuery>),
}

/// The largest reply most names get: encoding starts in a buffer of this size, so that the
/// common reply costs no 64 KiB buffer.
const USUAL_REPLY: usize = 4096;

/// The `kubernetes` plugin of a server block.
pub struct Kubernetes {
    /// Its zones, lower-case.
    zones: Vec<Zone>,
    /// `fallthrough` zones (the root for all).
    fallthrough: Option<Vec<Zone>>,
    settings: Settings,
    /// `startup_timeout`.
    startup_timeout: Duration,
    shared: Arc<Shared>,
    /// Dropping it stops the object source.
    _watch: oneshot::Sender<()>,
}

impl Kubernetes {
    /// The plugin of a block serving `block_zones` on `listen`; starts reading objects in
    /// the background (inside a tokio runtime), recording into `metrics`. Options parsed but
    /// not served are named.
    pub fn new(
        config: &KubernetesConfig,
        block_zones: &[String],
        listen: SocketAddr,
        metrics: &Arc<Metrics>,
    ) -> Result<Self, PluginError> {
        let refuse = |message: String| PluginError {
            plugin: "kubernetes",
            position: None,
            message,
        };
        let names = if config.zones.is_empty() {
            block_zones
        } else {
            &config.zones
        };
        let mut zones = Vec::new();
        let mut primary_zone = None;
        for text in names {
            let parsed: Name = text
                .parse()
                .map_err(|_| refuse(format!("invalid zone {text:?}")))?;
            let parsed = parsed.to_lowercase();
            let labels: Vec<Vec<u8>> = parsed.labels().map(<[u8]>::to_vec).collect();
            if !name::is_reverse(&labels) && primary_zone.is_none() {
                primary_zone = Some(labels);
            }
            zones.push(Zone::parse(text).map_err(|_| refuse(format!("invalid zone {text:?}")))?);
        }
        let primary_zone =
            primary_zone.ok_or_else(|| refuse("non-reverse zone name must be used".into()))?;
        let fallthrough = match &config.fallthrough {
            None => None,
            Some(list) if list.is_empty() => Some(vec![
                Zone::parse(".").map_err(|_| refuse("invalid zone \".\"".into()))?,
            ]),
            Some(list) => Some(
                list.iter()
                    .map(|z| Zone::parse(z).map_err(|_| refuse(format!("invalid zone {z:?}"))))
                    .collect::<Result<_, _>>()?,
            ),
        };
        for option in &config.not_implemented {
            tracing::warn!(
                plugin = "kubernetes",
                "{option} is not implemented by dns-cache: ignored"
            );
        }
        let settings = Settings {
            ttl: config.ttl.unwrap_or(DEFAULT_TTL),
            namespaces: config.namespaces.clone(),
            pods: config.pods,
            ignore_empty_service: config.ignore_empty_service,
            primary_zone,
            local_ips: local_ips(listen.ip()),
        };
        let selection = Selection {
            labels: config.labels.clone(),
            namespace_labels: config.namespace_labels.clone(),
            endpoints: !config.noendpoints,
            endpoint_pod_names: config.endpoint_pod_names,
            pods: config.pods == PodMode::Verified,
        };
        let origin = Origin::choose(
            config.kubeconfig.as_ref(),
            config.endpoint.as_ref(),
            config.tls.as_ref(),
        );
        let shared = Arc::new(Shared::default());
        let watch = objects::watch(origin, selection, Arc::clone(&shared), Arc::clone(metrics));
        Ok(Self {
            zones,
            fallthrough,
            settings,
            startup_timeout: config
                .startup_timeout
                .map_or(DEFAULT_STARTUP_TIMEOUT, crate::duration::from_go),
            shared,
            _watch: watch,
        })
    }

    /// Whether the first snapshot of objects is in (the `ready` plugin asks).
    pub fn ready(&self) -> bool {
        self.shared.synced()
    }

    /// How long the server's start waits for the first snapshot (`startup_timeout`).
    pub fn startup_timeout(&self) -> Duration {
        self.startup_timeout
    }

    /// CoreDNS's `ServeDNS`: answers `req` if it is in the plugin's zones, else passes it on
    /// (or asks for the ExternalName targets outside the zones first).
    pub fn serve(&self, req: &Request<'_>) -> Served {
        self.serve_from(req, &self.shared.index(), Targets::Collected)
    }

    /// The reply to `req` built with `looked_up`, the replies to the lookups
    /// [`Answered::Lookup`] asked for, in `out` (empty). Not memoized: it depends on more
    /// than the objects (the cache above keeps it, as CoreDNS's does).
    pub fn resume(
        &self,
        req: &Request<'_>,
        looked_up: &[Option<Vec<u8>>],
        out: &mut Vec<u8>,
    ) -> Answered {
        let index = self.shared.index();
        Self::written(
            self.serve_from(req, &index, Targets::Answered(looked_up)),
            out,
        )
    }

    /// [`Kubernetes::serve`] into `out` (empty), replaying the reply built for the same
    /// question from the same index when there is one, and memoizing the reply otherwise.
    pub fn answer(&self, req: &Request<'_>, out: &mut Vec<u8>) -> Answered {
        // Before the first snapshot a name error is a SERVFAIL, a state not memoized. The
        // flag is set after the index is swapped in, so the index read next is that one.
        if !self.shared.synced() {
            return Self::written(self.serve(req), out);
        }
        let index = self.shared.index();
        if self.shared.memo.replay(req, &index, out) {
            return Answered::Written;
        }
        out.clear();
        let served = self.serve_from(req, &index, Targets::Collected);
        if let Served::Reply(wire) = &served {
            self.shared.memo.keep(req, &index, wire, self.settings.ttl);
        }
        Self::written(served, out)
    }

    /// `served` as [`Kubernetes::answer`] says it, its reply in `out`.
    fn written(served: Served, out: &mut Vec<u8>) -> Answered {
        match served {
            Served::Reply(wire) => {
                out.extend_from_slice(&wire);
                Answered::Written
            }
            Served::Failed(error) => Answered::Failed(error),
            Served::Next => Answered::Next,
            Served::Lookup(lookups) => Answered::Lookup(lookups),
        }
    }

    /// [`Kubernetes::serve`] from `index`, out-of-zone targets treated as `targets` says.
    fn serve_from(&self, req: &Request<'_>, index: &Index, targets: Targets<'_>) -> Served {
        let mut upstream = Upstream::new(targets);
        let Some(mut reply) = self.reply(req, index, &mut upstream) else {
            return Served::Next;
        };
        reply.header.tc |= upstream.truncated;
        if let Some(lookups) = upstream.lookups() {
            return Served::Lookup(lookups);
        }
        let mut wire = vec![0; USUAL_REPLY];
        match reply.encode(&mut wire) {
            Ok(len) => {
                wire.truncate(len);
                Served::Reply(wire)
            }
            Err(_) => match reply.to_vec() {
                Ok(wire) => Served::Reply(wire),
                Err(e) => Served::Failed(format!("plugin/kubernetes: {e}")),
            },
        }
    }

    /// The reply to `req`, or `None` for the next plugin; `upstream` follows the A and
    /// AAAA answers' CNAMEs out of the zones.
    fn reply(
        &self,
        req: &Request<'_>,
        index: &Index,
        upstream: &mut Upstream<'_>,
    ) -> Option<OwnedMessage> {
        let zone = self.zone_of(&req.name)?;
        let qname = req.question.name.to_name();
        let labels: Vec<&[u8]> = qname.labels().collect();
        let split = labels.len().saturating_sub(zone);
        let (base_labels, zone_labels) = labels.split_at(split);
        let zone_labels: Vec<Vec<u8>> = zone_labels.iter().map(|l| l.to_vec()).collect();
        let lower = |l: &&[u8]| String::from_utf8_lossy(l).to_ascii_lowercase();
        let base: Vec<String> = base_labels.iter().map(lower).collect();
        let lookup = Lookup {
            settings: &self.settings,
            index,
            zone: &zone_labels,
        };
        let mut answer = Vec::new();
        let mut extra = Vec::new();
        let result: Result<(), NameError> = match req.question.qtype {
            Type::A | Type::AAAA => lookup
                .addresses(&qname, &base, req.question.qtype, &mut Vec::new(), upstream)
                .map(|r| answer = r),
            Type::TXT => lookup.txt(&qname, &base).map(|r| answer = r),
            Type::CNAME => lookup.cname(&qname, &base).map(|r| answer = r),
            Type::PTR => {
                let all: Vec<String> = labels.iter().map(lower).collect();
                lookup.ptr(&qname, &base, &all).map(|r| answer = r)
            }
            Type::MX => lookup.services(&qname, &base, Type::MX).map(|_| ()),
            Type::SRV => lookup.srv(&qname, &base).map(|(r, e)| {
                answer = r;
                extra = e;
            }),
            Type::SOA => {
                if base.is_empty() {
                    answer = vec![lookup.soa()];
                }
                Ok(())
            }
            Type::AXFR | Type(251) => return Some(reply_to(req, Rcode::REFUSED)),
            Type::NS if base.is_empty() => {
                (answer, extra) = lookup.ns(&qname);
                Ok(())
            }
            // Anything else: whether the name exists, by an A lookup (whose targets outside
            // the zones need not be resolved: only the name error counts).
            _ => {
                let mut ignored = Upstream::new(Targets::Ignored);
                lookup
                    .addresses(&qname, &base, Type::A, &mut Vec::new(), &mut ignored)
                    .map(|_| ())
            }
        };
        let soa = || vec![lookup.soa()];
        if result.is_err() {
            if self
                .fallthrough
                .as_ref()
                .is_some_and(|z| in_any(&req.name, z))
            {
                return None;
            }
            let rcode = if self.shared.synced() {
                Rcode::NXDOMAIN
            } else {
                Rcode::SERVFAIL
            };
            return Some(authoritative(req, rcode, Vec::new(), soa(), Vec::new()));
        }
        if answer.is_empty() {
            return Some(authoritative(
                req,
                Rcode::NOERROR,
                answer,
                soa(),
                Vec::new(),
            ));
        }
        Some(authoritative(
            req,
            Rcode::NOERROR,
            answer,
            Vec::new(),
            extra,
        ))
    }

    /// The label count of the longest zone `name` is in.
    fn zone_of(&self, name: &LowerName) -> Option<usize> {
        let zone = self
            .zones
            .iter()
            .filter(|z| name.is_in(z))
            .max_by_key(|z| z.as_wire().len())?;
        Some(label_count(zone))
    }
}

fn label_count(zone: &Zone) -> usize {
    Name::from_wire(zone.as_wire()).map_or(0, |n| n.labels().count())
}

fn authoritative(
    req: &Request<'_>,
    rcode: Rcode,
    answers: Vec<OwnedRecord>,
    authorities: Vec<OwnedRecord>,
    additionals: Vec<OwnedRecord>,
) -> OwnedMessage {
    let mut msg = reply_to(req, rcode);
    msg.header.aa = true;
    msg.answers = answers;
    msg.authority = authorities;
    msg.additional = additionals;
    msg
}

/// The addresses the server answers on that are not loopback (CoreDNS's `boundIPs`): the
/// listen address if it is one, else the addresses the host reaches its default routes
/// from, IPv4 and IPv6 (found by connecting a UDP socket, which sends nothing).
fn local_ips(listen: IpAddr) -> Vec<IpAddr> {
    if !listen.is_unspecified() {
        return if listen.is_loopback() {
            Vec::new()
        } else {
            vec![listen]
        };
    }
    let probe = |bind: &str, peer: &str| {
        let socket = UdpSocket::bind(bind).ok()?;
        socket.connect(peer).ok()?;
        let ip = socket.local_addr().ok()?.ip();
        (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
    };
    [
        probe("0.0.0.0:0", "192.0.2.1:53"),
        probe("[::]:0", "[2001:db8::1]:53"),
    ]
    .into_iter()
    .flatten()
    .collect()
}
