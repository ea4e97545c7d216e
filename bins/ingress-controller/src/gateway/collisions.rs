//! Who serves what on an nginx listening socket that several claim (docs/gateway-api.md §8
//! item 9, S-IG.1): the Gateways' servers placed on their sockets, an Ingress host and a
//! Gateway server of the same name merged location by location, and every loss as a
//! [`Collision`] or a [`PathConflict`], so that it is logged and reported rather than silent.
//!
//! nginx serves one `server` per name and socket. The rule as built:
//! - On the shared listen address, an Ingress host holds its name on the HTTP port, and on the
//!   HTTPS port when the Ingress lists it under `tls`. A Gateway server of the same exact name
//!   on that port joins it: one `server` with the locations of both. Where both claim the same
//!   nginx location, the older claimant keeps it (S-0.4: creation time, a missing one first;
//!   the Ingress of the location against the oldest route with a match there), a tie going to
//!   the Ingress. A location only one claims is its; a location neither claims (`location /`
//!   without a rule there) is the Ingress's default backend, else 404.
//! - The Ingress catch-all (a rule without host, a default backend) keeps the default server of
//!   both ports, and an Ingress `*.s` keeps a Gateway `*.s` (the two wildcards do not cover the
//!   same names): the Gateway server is left out whole there.
//! - Between Gateways, the older (creation time, then key: the plan's order) keeps a name
//!   both claim on a socket (S-GW.4); so does the first listener of one Gateway whose two
//!   ports land on the same socket.
//! - A socket speaks one protocol: a Gateway socket whose TLS differs from the Ingress port's
//!   (HTTPS on the HTTP port, say) or from an older Gateway's on the same socket is left out.
//!
//! Pure: `decide` takes where each Gateway socket asks to listen and what the Ingresses
//! hold; `gateway/render.rs` writes the seats it returns.

use std::collections::{BTreeMap, BTreeSet};

use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::Time;
use cluster_state::{Kind, ObjectRef};

use super::hostname::Hostname;
use super::plan::{Server, Socket};
use crate::hosts::Host;
use crate::paths::LocationKey;
use crate::reports::{Finding, Subject};

/// One Gateway socket, and where it asks to listen.
pub(crate) struct Ask<'a> {
    /// The Gateway.
    pub(crate) gateway: &'a ObjectRef,
    /// Its socket (port, protocol, servers).
    pub(crate) socket: &'a Socket,
    /// The nginx `listen` address and port.
    pub(crate) listen: String,
    /// Whether the Ingress servers listen there too, and if so whether that port is their
    /// HTTPS one (`Some(true)`) or their HTTP one.
    pub(crate) ingress: Option<bool>,
}

/// The host names the Ingress servers hold on the shared listen address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IngressHosts<'a> {
    /// Per host name (`None`: the catch-all), what holds it.
    hosts: BTreeMap<Option<Hostname>, Held<'a>>,
    /// The creation time of each Ingress (see [`crate::model::Model::ingress_created`]).
    created: Option<&'a BTreeMap<String, Option<Time>>>,
}

/// An Ingress server on the shared listen address.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Held<'a> {
    /// The server.
    server: &'a crate::model::Server,
    /// The Ingresses with a location there (none: a default backend alone).
    ingresses: Vec<String>,
    /// Whether it is served on the HTTPS port too.
    https: bool,
}

impl<'a> IngressHosts<'a> {
    /// The names of the Ingress `servers` (see [`crate::model::Model::servers`]), whose
    /// Ingresses were created at `created`.
    pub fn of(
        servers: &'a [crate::model::Server],
        created: &'a BTreeMap<String, Option<Time>>,
    ) -> Self {
        let hosts = servers
            .iter()
            .map(|s| {
                let (name, https) = match &s.host {
                    // The catch-all is the default server of both ports.
                    Host::Any => (None, true),
                    Host::Exact(name) => (
                        Some(Hostname::Exact(name.clone())),
                        s.certificate.is_some() || s.default_tls,
                    ),
                    Host::Wildcard(suffix) => (
                        Some(Hostname::Wildcard(suffix.clone())),
                        s.certificate.is_some() || s.default_tls,
                    ),
                };
                let ingresses: BTreeSet<&str> = s
                    .locations
                    .iter()
                    .map(|l| l.ingress.as_str())
                    .filter(|i| !i.is_empty())
                    .collect();
                let ingresses = ingresses.into_iter().map(str::to_owned).collect();
                let held = Held {
                    server: s,
                    ingresses,
                    https,
                };
                (name, held)
            })
            .collect();
        Self {
            hosts,
            created: Some(created),
        }
    }

    /// What holds `name` on the Ingresses' port of protocol `tls`, if anything does.
    fn holder(&self, name: Option<&Hostname>, tls: bool) -> Option<&Held<'a>> {
        let held = self.hosts.get(&name.cloned())?;
        (!tls || held.https).then_some(held)
    }

    /// The creation time of `ingress` (a missing or unknown one counts as the oldest).
    fn created(&self, ingress: &str) -> Option<Time> {
        self.created?.get(ingress).cloned().flatten()
    }
}

/// Which locations of an Ingress host and a Gateway server of the same name one merged
/// `server` keeps (by key).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Split {
    /// The Ingress locations kept.
    pub(crate) ingress: BTreeSet<LocationKey>,
    /// Whether the Ingress server's `location /` for what no location takes (its default
    /// backend, else 404) is kept: it has no rule for `/`, nor has the Gateway server.
    pub(crate) fallback: bool,
    /// The Gateway locations kept.
    pub(crate) gateway: BTreeSet<LocationKey>,
}

/// An Ingress host and the Gateway server of the same name on one socket, as one `server`.
pub(crate) struct Merged<'a> {
    /// The Gateway server.
    pub(crate) gateway: &'a Server,
    /// The Ingress server.
    pub(crate) ingress: &'a crate::model::Server,
    /// The locations each keeps.
    pub(crate) split: Split,
}

/// A location an Ingress and HTTPRoutes claim on the same host and socket; the older keeps it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PathConflict {
    /// The Gateway whose server has the routes' location.
    pub gateway: ObjectRef,
    /// Its listener.
    pub listener: String,
    /// The host name.
    pub host: String,
    /// The socket (`address:port`).
    pub listen: String,
    /// The nginx location, as written (`= /p`, `/p/`).
    pub location: String,
    /// The Ingress of the location (`namespace/name`).
    pub ingress: String,
    /// The routes with a match served there.
    pub routes: BTreeSet<ObjectRef>,
    /// Whether the Ingress keeps it (older, or as old); otherwise the routes do.
    pub ingress_kept: bool,
}

impl PathConflict {
    /// What both claim, and where.
    fn what(&self) -> String {
        format!(
            "location {:?} of host {:?} on {}",
            self.location, self.host, self.listen
        )
    }

    /// The routes, `namespace/name`, joined.
    fn routes(&self) -> String {
        let routes: Vec<String> = self.routes.iter().map(ToString::to_string).collect();
        routes.join(", ")
    }

    /// The events of the losers: `IngressConflict` on each route, or `HTTPRouteConflict` on
    /// the Ingress.
    pub fn findings(&self) -> Vec<Finding> {
        let what = self.what();
        if self.ingress_kept {
            let message = format!(
                "{what} is served by Ingress {} (older, or as old), not by Gateway {} listener \
                 {:?}",
                self.ingress, self.gateway, self.listener
            );
            self.routes
                .iter()
                .map(|route| Finding {
                    subject: Subject {
                        kind: Kind::HttpRoute,
                        key: route.clone(),
                    },
                    reason: "IngressConflict",
                    message: message.clone(),
                })
                .collect()
        } else {
            let (namespace, name) = self.ingress.split_once('/').unwrap_or_default();
            vec![Finding {
                subject: Subject::ingress(ObjectRef::new(namespace, name)),
                reason: "HTTPRouteConflict",
                message: format!(
                    "{what} is served by HTTPRoute {} (older) of Gateway {}, not by this Ingress",
                    self.routes(),
                    self.gateway
                ),
            }]
        }
    }
}

impl std::fmt::Display for PathConflict {
    /// The log line: both sides, the location, the host and the socket, and who keeps it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keeper = if self.ingress_kept {
            "the Ingress keeps it (older, or as old)"
        } else {
            "the routes keep it (older)"
        };
        write!(
            f,
            "Ingress {:?} and HTTPRoute {} (Gateway {:?} listener {:?}) claim {}: {keeper}",
            self.ingress,
            self.routes(),
            self.gateway.to_string(),
            self.listener,
            self.what()
        )
    }
}

/// Everything lost on the sockets: Gateway servers left out, and locations an Ingress and
/// HTTPRoutes both claim.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Collisions {
    /// The Gateway servers left out.
    pub servers: Vec<Collision>,
    /// The locations claimed by both APIs on one host and socket.
    pub paths: Vec<PathConflict>,
}

impl Collisions {
    /// The events of every loser.
    pub fn findings(&self) -> Vec<Finding> {
        let servers = self.servers.iter().flat_map(Collision::findings);
        servers
            .chain(self.paths.iter().flat_map(PathConflict::findings))
            .collect()
    }

    /// The log lines, one per loss.
    pub fn lines(&self) -> Vec<String> {
        let servers = self.servers.iter().map(ToString::to_string);
        servers
            .chain(self.paths.iter().map(ToString::to_string))
            .collect()
    }
}

/// `location`'s key as nginx reads it: `= /p`, `/p/`, `~ PATTERN`.
fn spelling(key: &LocationKey) -> String {
    match key {
        LocationKey::Exact(p) => format!("= {p}"),
        LocationKey::Prefix(p) => p.clone(),
        LocationKey::Regex(r) => format!("~ {r}"),
    }
}

/// A location both APIs claim: its key, its Ingress, the routes, whether the Ingress keeps it.
type Both = (LocationKey, String, BTreeSet<ObjectRef>, bool);

/// The locations the merged `server` of the Ingress host `ingress` and the Gateway server
/// `gateway` keeps, and each location both claim.
fn split(
    hosts: &IngressHosts<'_>,
    ingress: &crate::model::Server,
    gateway: &Server,
) -> (Split, Vec<Both>) {
    let root = LocationKey::Prefix("/".into());
    let own: BTreeMap<&LocationKey, &crate::model::Location> =
        ingress.locations.iter().map(|l| (&l.key, l)).collect();
    let mut out = Split {
        ingress: own
            .keys()
            .filter(|k| !gateway.locations.iter().any(|l| l.key == ***k))
            .map(|k| (*k).clone())
            .collect(),
        fallback: false,
        gateway: BTreeSet::new(),
    };
    let mut both = Vec::new();
    for location in &gateway.locations {
        let key = &location.key;
        let claim = gateway.claims.get(key);
        // A location of the Ingress without an Ingress is a filler (404, or the default
        // backend beside an Exact `/p/`): any claim takes it.
        let theirs = own.get(key).filter(|l| !l.ingress.is_empty());
        match (theirs, claim) {
            (Some(l), Some(claim)) => {
                let kept = hosts.created(&l.ingress) <= claim.created;
                let winner = if kept {
                    &mut out.ingress
                } else {
                    &mut out.gateway
                };
                winner.insert(key.clone());
                both.push((key.clone(), l.ingress.clone(), claim.routes.clone(), kept));
            }
            (Some(_), None) => {
                out.ingress.insert(key.clone());
            }
            (None, Some(_)) => {
                out.gateway.insert(key.clone());
            }
            (None, None) if own.contains_key(key) => {
                out.ingress.insert(key.clone());
            }
            (None, None) if *key == root => out.fallback = true,
            (None, None) => {
                out.gateway.insert(key.clone());
            }
        }
    }
    (out, both)
}

/// One nginx listening socket of the Gateways, and the servers it serves.
pub(crate) struct Seat<'a> {
    /// The `listen` address and port.
    pub(crate) listen: String,
    /// Whether it speaks TLS.
    pub(crate) tls: bool,
    /// Whether the Ingress servers listen on it too.
    pub(crate) ingress: bool,
    /// The listener port of the first Gateway placed on it (redirects keep it).
    pub(crate) port: i32,
    /// The Gateway placed on it first, whose protocol it speaks.
    owner: ObjectRef,
    /// Each host name taken (`None`: the catch-all), and by which Gateway.
    pub(crate) names: BTreeMap<Option<Hostname>, ObjectRef>,
    /// The servers, in the Gateways' order.
    pub(crate) servers: Vec<&'a Server>,
    /// The servers that share their name with an Ingress host, as one `server` each.
    pub(crate) merged: Vec<Merged<'a>>,
}

/// Who keeps what a Gateway server is left out for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Holder {
    /// The Ingresses of the same host name (empty: a default backend alone).
    Ingress(Vec<String>),
    /// An older Gateway (or another listener of the same one) with the same host name.
    Gateway(ObjectRef),
    /// The socket speaks the other protocol: the Ingress port (`None`) or an older Gateway's.
    Protocol(Option<ObjectRef>),
}

/// A Gateway server left out of its socket.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Collision {
    /// The Gateway.
    pub gateway: ObjectRef,
    /// The listener that would serve it.
    pub listener: String,
    /// Its host name (`None`: any).
    pub name: Option<Hostname>,
    /// The socket (`address:port`).
    pub listen: String,
    /// The routes with rules on the server, which lose them there.
    pub routes: BTreeSet<ObjectRef>,
    /// Their kind: GRPCRoutes on a gRPC server, else HTTPRoutes (S-GR.2: a server has one).
    pub route_kind: Kind,
    /// Who keeps the socket or the name.
    pub holder: Holder,
}

impl Collision {
    /// The event reason: `IngressConflict`, `HostnameConflict` or `ProtocolConflict` (the
    /// last two are the Gateway API's listener reasons for the same situations).
    pub fn reason(&self) -> &'static str {
        match self.holder {
            Holder::Ingress(_) => "IngressConflict",
            Holder::Gateway(_) => "HostnameConflict",
            Holder::Protocol(_) => "ProtocolConflict",
        }
    }

    /// The host name as written (`*` for any).
    fn host(&self) -> String {
        self.name
            .as_ref()
            .map_or_else(|| "*".to_owned(), ToString::to_string)
    }

    /// Why the server is left out: who keeps the name or the socket.
    fn why(&self) -> String {
        let host = self.host();
        let listen = &self.listen;
        match &self.holder {
            Holder::Ingress(ingresses) if ingresses.is_empty() => {
                format!("host {host:?} on {listen} is served by an Ingress default backend")
            }
            Holder::Ingress(ingresses) => format!(
                "host {host:?} on {listen} is served by Ingress {}",
                ingresses.join(", ")
            ),
            Holder::Gateway(gateway) if *gateway == self.gateway => {
                format!("host {host:?} on {listen} is served by another listener of this Gateway")
            }
            Holder::Gateway(gateway) => {
                format!("host {host:?} on {listen} is served by Gateway {gateway} (older)")
            }
            Holder::Protocol(None) => {
                format!("{listen} serves the Ingresses in the other protocol (HTTP or HTTPS)")
            }
            Holder::Protocol(Some(gateway)) => {
                format!("{listen} speaks the other protocol for Gateway {gateway} (older)")
            }
        }
    }

    /// The events of the losers: one on the Gateway, one on each route.
    pub fn findings(&self) -> Vec<Finding> {
        let why = self.why();
        let gateway = Finding {
            subject: Subject {
                kind: Kind::Gateway,
                key: self.gateway.clone(),
            },
            reason: self.reason(),
            message: format!("listener {:?}: {why}; not served there", self.listener),
        };
        let routes = self.routes.iter().map(|route| Finding {
            subject: Subject {
                kind: self.route_kind,
                key: route.clone(),
            },
            reason: self.reason(),
            message: format!(
                "Gateway {} listener {:?}: {why}; this route is not served there",
                self.gateway, self.listener
            ),
        });
        std::iter::once(gateway).chain(routes).collect()
    }
}

impl std::fmt::Display for Collision {
    /// The log line: both sides, the host and the socket.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let routes: Vec<String> = self.routes.iter().map(ToString::to_string).collect();
        write!(
            f,
            "Gateway {:?} listener {:?}: {}; not served there (routes: {})",
            self.gateway.to_string(),
            self.listener,
            self.why(),
            if routes.is_empty() {
                "none".to_owned()
            } else {
                routes.join(", ")
            }
        )
    }
}

/// Why a listener serves nothing: the `Conflicted=True` reason (`HostnameConflict`,
/// `ProtocolConflict`) and message of its status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The condition's reason.
    pub reason: &'static str,
    /// The condition's message.
    pub message: String,
}

/// The listeners of `plan` every server of which `collisions` leaves out, by (Gateway,
/// listener name): their names are all held by others on their socket, or the socket speaks
/// the other protocol. A listener that keeps one of its names is not conflicted; the routes
/// that lose the others are told by events.
pub fn conflicted_listeners(
    plan: &super::plan::Plan,
    collisions: &[Collision],
) -> BTreeMap<(ObjectRef, String), Conflict> {
    let mut out = BTreeMap::new();
    for gateway in &plan.gateways {
        let servers = gateway.sockets.iter().flat_map(|s| &s.servers);
        let mut listeners: BTreeMap<&str, Vec<&Server>> = BTreeMap::new();
        for server in servers {
            listeners
                .entry(server.listener.as_str())
                .or_default()
                .push(server);
        }
        for (listener, servers) in listeners {
            let lost: Vec<&Collision> = servers
                .iter()
                .filter_map(|server| {
                    collisions.iter().find(|c| {
                        c.gateway == gateway.gateway
                            && c.listener == listener
                            && c.name == server.name
                    })
                })
                .collect();
            let Some(first) = lost.first() else {
                continue;
            };
            if lost.len() < servers.len() {
                continue;
            }
            let reason = match first.holder {
                Holder::Protocol(_) => "ProtocolConflict",
                Holder::Ingress(_) | Holder::Gateway(_) => "HostnameConflict",
            };
            let conflict = Conflict {
                reason,
                message: format!("{}; the listener serves nothing", first.why()),
            };
            out.insert((gateway.gateway.clone(), listener.to_owned()), conflict);
        }
    }
    out
}

/// The seats of the Gateway sockets `asks` (oldest Gateway first), beside the Ingresses'
/// `hosts`, and every loss.
pub(crate) fn decide<'a>(
    asks: &[Ask<'a>],
    hosts: &IngressHosts<'a>,
) -> (Vec<Seat<'a>>, Collisions) {
    let mut seats: Vec<Seat<'a>> = Vec::new();
    let mut lost_all = Collisions::default();
    for ask in asks {
        let socket = ask.socket;
        let lost = |holder: Holder, server: &Server| Collision {
            gateway: ask.gateway.clone(),
            listener: server.listener.clone(),
            name: server.name.clone(),
            listen: ask.listen.clone(),
            routes: server.routes.clone(),
            route_kind: if server.grpc {
                Kind::GrpcRoute
            } else {
                Kind::HttpRoute
            },
            holder,
        };
        if ask.ingress.is_some_and(|https| https != socket.tls) {
            let servers = socket.servers.iter();
            lost_all
                .servers
                .extend(servers.map(|s| lost(Holder::Protocol(None), s)));
            continue;
        }
        let index = match seats.iter().position(|s| s.listen == ask.listen) {
            Some(index) => index,
            None => {
                seats.push(Seat {
                    listen: ask.listen.clone(),
                    tls: socket.tls,
                    ingress: ask.ingress.is_some(),
                    port: socket.port,
                    owner: ask.gateway.clone(),
                    names: BTreeMap::new(),
                    servers: Vec::new(),
                    merged: Vec::new(),
                });
                seats.len() - 1
            }
        };
        let Some(seat) = seats.get_mut(index) else {
            continue;
        };
        if seat.tls != socket.tls {
            let owner = &seat.owner;
            lost_all.servers.extend(
                socket
                    .servers
                    .iter()
                    .map(|s| lost(Holder::Protocol(Some(owner.clone())), s)),
            );
            continue;
        }
        for server in &socket.servers {
            let held = seat
                .ingress
                .then(|| hosts.holder(server.name.as_ref(), socket.tls))
                .flatten();
            let older = seat.names.get(&server.name);
            match (held, older, &server.name) {
                (_, Some(older), _) => {
                    lost_all
                        .servers
                        .push(lost(Holder::Gateway(older.clone()), server));
                }
                // A gRPC server is not joined with an Ingress's HTTP/1 locations: the Ingress
                // keeps the name whole.
                (Some(held), None, Some(Hostname::Exact(host))) if !server.grpc => {
                    let (split, both) = split(hosts, held.server, server);
                    let paths = both
                        .into_iter()
                        .map(|(key, ingress, routes, kept)| PathConflict {
                            gateway: ask.gateway.clone(),
                            listener: server.listener.clone(),
                            host: host.clone(),
                            listen: ask.listen.clone(),
                            location: spelling(&key),
                            ingress,
                            routes,
                            ingress_kept: kept,
                        });
                    lost_all.paths.extend(paths);
                    seat.names.insert(server.name.clone(), ask.gateway.clone());
                    seat.merged.push(Merged {
                        gateway: server,
                        ingress: held.server,
                        split,
                    });
                }
                (Some(held), None, _) => {
                    let holder = Holder::Ingress(held.ingresses.clone());
                    lost_all.servers.push(lost(holder, server));
                }
                (None, None, _) => {
                    seat.names.insert(server.name.clone(), ask.gateway.clone());
                    seat.servers.push(server);
                }
            }
        }
    }
    (seats, lost_all)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::model::{Location, Target};
    use crate::paths::{Kind as PathKind, LocationKey, PathRule};

    /// A Gateway server for `name` (`""`: any) of listener `listener`, with rules of `routes`.
    fn server(name: &str, listener: &str, routes: &[&str]) -> Server {
        Server {
            name: Hostname::new(name),
            listener: listener.into(),
            certificates: Vec::new(),
            locations: Vec::new(),
            routes: routes.iter().map(|r| ObjectRef::new("gw", *r)).collect(),
            claims: BTreeMap::new(),
            grpc: false,
        }
    }

    fn socket(port: i32, tls: bool, servers: Vec<Server>) -> Socket {
        Socket { port, tls, servers }
    }

    /// An Ingress server for `host` (`""`: the catch-all) with a location of `ingress`, under
    /// `tls` or not.
    fn ingress_server(host: &str, ingress: &str, tls: bool) -> crate::model::Server {
        let host = match host {
            "" => Host::Any,
            wild if wild.starts_with("*.") => Host::Wildcard(wild[2..].to_owned()),
            exact => Host::Exact(exact.to_owned()),
        };
        crate::model::Server {
            host,
            certificate: tls.then(|| "ns/cert".to_owned()),
            default_tls: false,
            default_target: Target::NotFound,
            locations: vec![Location {
                key: LocationKey::Prefix("/".into()),
                rule: PathRule {
                    kind: PathKind::Prefix,
                    path: "/".into(),
                },
                ingress: ingress.into(),
                target: Target::Backend("ns/web:80".into()),
                ssl_redirect: false,
                annotations: Arc::default(),
            }],
        }
    }

    /// `(gateway, listen, ingress)` asks for the sockets of `sockets`, each its Gateway's.
    fn asks<'a>(sockets: &'a [(ObjectRef, Socket, &str, Option<bool>)]) -> Vec<Ask<'a>> {
        sockets
            .iter()
            .map(|(gateway, socket, listen, ingress)| Ask {
                gateway,
                socket,
                listen: (*listen).to_owned(),
                ingress: *ingress,
            })
            .collect()
    }

    /// What each seat serves, `listen: name@gateway` (`+ingress` when joined with an Ingress
    /// host), and each collision, `name@gateway < holder`.
    fn summary(seats: &[Seat<'_>], collisions: &[Collision]) -> (Vec<String>, Vec<String>) {
        let name = |n: &Option<Hostname>| n.as_ref().map_or("*".to_owned(), ToString::to_string);
        let served = seats
            .iter()
            .flat_map(|seat| {
                seat.names.iter().map(move |(n, g)| {
                    let joined = seat.merged.iter().any(|m| m.gateway.name == *n);
                    let joined = if joined { "+ingress" } else { "" };
                    format!("{}: {}@{}{joined}", seat.listen, name(n), g.name)
                })
            })
            .collect();
        let lost = collisions
            .iter()
            .map(|c| {
                let holder = match &c.holder {
                    Holder::Ingress(list) => format!("ingress {}", list.join(",")),
                    Holder::Gateway(g) => format!("gateway {}", g.name),
                    Holder::Protocol(None) => "ingress port".to_owned(),
                    Holder::Protocol(Some(g)) => format!("protocol of {}", g.name),
                };
                format!("{}@{} < {holder}", name(&c.name), c.gateway.name)
            })
            .collect();
        (served, lost)
    }

    const HTTP: &str = "127.0.0.1:8080";
    const HTTPS: &str = "127.0.0.1:8443";

    fn gateway(name: &str) -> ObjectRef {
        ObjectRef::new("gw", name)
    }

    /// The decision table: each case's Gateway sockets (oldest Gateway first) beside the
    /// Ingress servers, what is served and what is left out.
    #[test]
    fn who_keeps_a_host_name_on_a_socket() {
        type Case = (
            &'static str,
            Vec<(ObjectRef, Socket, &'static str, Option<bool>)>,
            Vec<crate::model::Server>,
            Vec<&'static str>,
            Vec<&'static str>,
        );
        let cases: Vec<Case> = vec![
            (
                "an Ingress host and the Gateway server of its name are one server",
                vec![(
                    gateway("a"),
                    socket(
                        80,
                        false,
                        vec![
                            server("web.example.com", "http", &["r"]),
                            server("api.example.com", "http", &["r"]),
                        ],
                    ),
                    HTTP,
                    Some(false),
                )],
                vec![ingress_server("web.example.com", "shop/web", false)],
                vec![
                    "127.0.0.1:8080: api.example.com@a",
                    "127.0.0.1:8080: web.example.com@a+ingress",
                ],
                vec![],
            ),
            (
                "on HTTPS only when the Ingress lists the host under tls",
                vec![(
                    gateway("a"),
                    socket(
                        443,
                        true,
                        vec![
                            server("web.example.com", "https", &["r"]),
                            server("tls.example.com", "https", &["r"]),
                        ],
                    ),
                    HTTPS,
                    Some(true),
                )],
                vec![
                    ingress_server("web.example.com", "shop/web", false),
                    ingress_server("tls.example.com", "shop/tls", true),
                ],
                vec![
                    "127.0.0.1:8443: tls.example.com@a+ingress",
                    "127.0.0.1:8443: web.example.com@a",
                ],
                vec![],
            ),
            (
                "the Ingress catch-all keeps the default server of both ports",
                vec![
                    (
                        gateway("a"),
                        socket(80, false, vec![server("", "http", &["r"])]),
                        HTTP,
                        Some(false),
                    ),
                    (
                        gateway("a"),
                        socket(443, true, vec![server("", "https", &[])]),
                        HTTPS,
                        Some(true),
                    ),
                ],
                vec![ingress_server("", "shop/default", false)],
                vec![],
                vec!["*@a < ingress shop/default", "*@a < ingress shop/default"],
            ),
            (
                "the same wildcard is the same name; a wildcard beside an exact name is not",
                vec![(
                    gateway("a"),
                    socket(
                        80,
                        false,
                        vec![
                            server("*.example.com", "http", &["r"]),
                            server("*.example.org", "http", &["r"]),
                        ],
                    ),
                    HTTP,
                    Some(false),
                )],
                vec![
                    ingress_server("*.example.com", "shop/wild", false),
                    ingress_server("a.example.org", "shop/exact", false),
                ],
                vec!["127.0.0.1:8080: *.example.org@a"],
                vec!["*.example.com@a < ingress shop/wild"],
            ),
            (
                "off the shared address the Ingress hosts do not count",
                vec![(
                    gateway("a"),
                    socket(80, false, vec![server("web.example.com", "http", &["r"])]),
                    "127.0.1.1:8080",
                    None,
                )],
                vec![ingress_server("web.example.com", "shop/web", false)],
                vec!["127.0.1.1:8080: web.example.com@a"],
                vec![],
            ),
            (
                "between Gateways the older keeps a name (S-GW.4); other names coexist",
                vec![
                    (
                        gateway("old"),
                        socket(80, false, vec![server("web.example.com", "http", &["r"])]),
                        HTTP,
                        Some(false),
                    ),
                    (
                        gateway("new"),
                        socket(
                            80,
                            false,
                            vec![
                                server("web.example.com", "http", &["s"]),
                                server("", "http", &["s"]),
                            ],
                        ),
                        HTTP,
                        Some(false),
                    ),
                ],
                vec![],
                vec![
                    "127.0.0.1:8080: *@new",
                    "127.0.0.1:8080: web.example.com@old",
                ],
                vec!["web.example.com@new < gateway old"],
            ),
            (
                "a name an older Gateway shares with an Ingress is the older Gateway's",
                vec![
                    (
                        gateway("old"),
                        socket(80, false, vec![server("web.example.com", "http", &["r"])]),
                        HTTP,
                        Some(false),
                    ),
                    (
                        gateway("new"),
                        socket(80, false, vec![server("web.example.com", "http", &["s"])]),
                        HTTP,
                        Some(false),
                    ),
                ],
                vec![ingress_server("web.example.com", "shop/web", false)],
                vec!["127.0.0.1:8080: web.example.com@old+ingress"],
                vec!["web.example.com@new < gateway old"],
            ),
            (
                "HTTPS on the Ingresses' HTTP port, and HTTP after an older HTTPS socket",
                vec![
                    (
                        gateway("a"),
                        socket(80, true, vec![server("web.example.com", "https", &["r"])]),
                        HTTP,
                        Some(false),
                    ),
                    (
                        gateway("old"),
                        socket(9000, true, vec![server("", "https", &[])]),
                        "127.0.0.1:9000",
                        None,
                    ),
                    (
                        gateway("new"),
                        socket(9000, false, vec![server("api.example.com", "http", &["s"])]),
                        "127.0.0.1:9000",
                        None,
                    ),
                ],
                vec![],
                vec!["127.0.0.1:9000: *@old"],
                vec![
                    "web.example.com@a < ingress port",
                    "api.example.com@new < protocol of old",
                ],
            ),
        ];
        for (what, sockets, ingress, served, lost) in cases {
            let created = BTreeMap::new();
            let hosts = IngressHosts::of(&ingress, &created);
            let (seats, collisions) = decide(&asks(&sockets), &hosts);
            let (got_served, got_lost) = summary(&seats, &collisions.servers);
            assert_eq!(got_served, served, "{what}");
            assert_eq!(got_lost, lost, "{what}");
        }
    }

    /// A Gateway server left out is reported on the Gateway and on each route that had
    /// rules there.
    #[test]
    fn losers_are_reported_on_the_gateway_and_each_route() {
        let sockets = [(
            gateway("a"),
            socket(80, false, vec![server("", "http", &["r1", "r2"])]),
            HTTP,
            Some(false),
        )];
        let ingress = [ingress_server("", "shop/web", false)];
        let created = BTreeMap::new();
        let hosts = IngressHosts::of(&ingress, &created);
        let (_, collisions) = decide(&asks(&sockets), &hosts);
        let [collision] = collisions.servers.as_slice() else {
            panic!("{collisions:?}");
        };
        let findings = collision.findings();
        let got: Vec<(Kind, String, &str)> = findings
            .iter()
            .map(|f| (f.subject.kind, f.subject.key.to_string(), f.reason))
            .collect();
        assert_eq!(
            got,
            [
                (Kind::Gateway, "gw/a".to_owned(), "IngressConflict"),
                (Kind::HttpRoute, "gw/r1".to_owned(), "IngressConflict"),
                (Kind::HttpRoute, "gw/r2".to_owned(), "IngressConflict"),
            ]
        );
        assert_eq!(
            findings[1].message,
            "Gateway gw/a listener \"http\": host \"*\" on 127.0.0.1:8080 is served by \
             Ingress shop/web; this route is not served there"
        );
        assert_eq!(
            collision.to_string(),
            "Gateway \"gw/a\" listener \"http\": host \"*\" on 127.0.0.1:8080 is served by \
             Ingress shop/web; not served there (routes: gw/r1, gw/r2)"
        );
    }

    /// A listener is conflicted when every name it has on its socket is left out, not when
    /// one of several is.
    #[test]
    fn conflicted_listeners_serve_nothing() {
        use super::super::plan::{GatewayPlan, Plan};
        let old = socket(80, false, vec![server("web.example.com", "http", &["r"])]);
        let new = socket(
            80,
            false,
            vec![
                server("web.example.com", "one", &["s"]),
                server("web.example.com", "two", &["s"]),
                server("api.example.com", "two", &["s"]),
            ],
        );
        let plan = Plan {
            gateways: vec![
                GatewayPlan {
                    gateway: gateway("old"),
                    status_addresses: Vec::new(),
                    requested_addresses: Vec::new(),
                    sockets: vec![old.clone()],
                },
                GatewayPlan {
                    gateway: gateway("new"),
                    status_addresses: Vec::new(),
                    requested_addresses: Vec::new(),
                    sockets: vec![new.clone()],
                },
            ],
            ..Plan::default()
        };
        let sockets = [
            (gateway("old"), old, HTTP, Some(false)),
            (gateway("new"), new, HTTP, Some(false)),
        ];
        let (_, collisions) = decide(&asks(&sockets), &IngressHosts::default());
        assert_eq!(collisions.servers.len(), 2, "{collisions:?}");
        let conflicts = conflicted_listeners(&plan, &collisions.servers);
        let got: Vec<(&str, &str, &str)> = conflicts
            .iter()
            .map(|((g, l), c)| (g.name.as_str(), l.as_str(), c.reason))
            .collect();
        assert_eq!(got, [("new", "one", "HostnameConflict")]);
        assert_eq!(
            conflicts.values().next().unwrap().message,
            "host \"web.example.com\" on 127.0.0.1:8080 is served by Gateway gw/old (older); \
             the listener serves nothing"
        );
    }

    /// The time `second` seconds after a fixed instant.
    fn at(second: i64) -> Time {
        Time(cluster_state::k8s::jiff::Timestamp::from_second(1_800_000_000 + second).unwrap())
    }

    /// What a shared host keeps: the Ingress's locations, its fallback, the Gateway's, and
    /// each location both claim with whether the Ingress keeps it.
    type Kept = (Vec<String>, bool, Vec<String>, Vec<(String, bool)>);

    /// The per-location rule (S-IG.1) on a host the Ingress `shop/web` (created at `ingress`)
    /// and the route `gw/r` (created at `route`) share: what each keeps, whether the Ingress's
    /// fallback `location /` is kept, and the locations both claim with whether the Ingress
    /// keeps them.
    fn shared(ingress: Option<Time>, route: Option<Time>, gateway_root: bool) -> Kept {
        let location = |key: LocationKey, ingress: &str| Location {
            key,
            rule: PathRule {
                kind: PathKind::Prefix,
                path: "/".into(),
            },
            ingress: ingress.into(),
            target: Target::Backend("shop/web:80".into()),
            ssl_redirect: false,
            annotations: Arc::default(),
        };
        let exact = |p: &str| LocationKey::Exact(p.into());
        let prefix = |p: &str| LocationKey::Prefix(p.into());
        let mut ingress_server = ingress_server("web.example.com", "shop/web", false);
        ingress_server.locations = vec![
            location(exact("/both"), "shop/web"),
            location(prefix("/both/"), "shop/web"),
            location(exact("/ingress"), "shop/web"),
            location(prefix("/ingress/"), "shop/web"),
            // A shield without an Ingress (nginx's `/p` → `/p/` redirect avoided): a filler.
            location(exact("/filler"), ""),
        ];
        let mut gateway_server = server("web.example.com", "http", &["r"]);
        let mut claimed = vec![exact("/both"), prefix("/both/"), exact("/gateway")];
        claimed.push(exact("/filler"));
        if gateway_root {
            claimed.push(prefix("/"));
        }
        let keys = [
            prefix("/"),
            exact("/both"),
            prefix("/both/"),
            exact("/gateway"),
            exact("/filler"),
        ];
        gateway_server.locations = keys
            .iter()
            .map(|key| super::super::plan::Location {
                key: key.clone(),
                candidates: Vec::new(),
            })
            .collect();
        gateway_server.claims = claimed
            .into_iter()
            .map(|key| {
                let claim = super::super::plan::Claim {
                    routes: BTreeSet::from([ObjectRef::new("gw", "r")]),
                    created: route.clone(),
                };
                (key, claim)
            })
            .collect();
        let created = BTreeMap::from([("shop/web".to_owned(), ingress)]);
        let servers = [ingress_server];
        let hosts = IngressHosts::of(&servers, &created);
        let Some(first) = servers.first() else {
            panic!("no server");
        };
        let (split, both) = split(&hosts, first, &gateway_server);
        let spelled = |keys: &BTreeSet<LocationKey>| keys.iter().map(spelling).collect();
        let both = both
            .into_iter()
            .map(|(key, _, _, kept)| (spelling(&key), kept))
            .collect();
        (
            spelled(&split.ingress),
            split.fallback,
            spelled(&split.gateway),
            both,
        )
    }

    /// Same location both ways by age, a tie, a missing time, different locations, fillers.
    #[test]
    fn the_older_claimant_keeps_a_location_both_claim() {
        let both = |ingress_kept: bool| {
            vec![
                ("= /both".to_owned(), ingress_kept),
                ("/both/".to_owned(), ingress_kept),
            ]
        };
        let ingress_keeps_both = vec!["= /both", "= /ingress", "/both/", "/ingress/"];
        let ingress_alone = vec!["= /ingress", "/ingress/"];
        // The Ingress older, as old (a tie goes to it), or both without a time.
        for (ingress, route) in [
            (Some(at(1)), Some(at(2))),
            (Some(at(1)), Some(at(1))),
            (None, None),
            (None, Some(at(1))),
        ] {
            let (kept, fallback, gateway, conflicts) = shared(ingress, route, false);
            assert_eq!(kept, ingress_keeps_both);
            assert!(fallback);
            assert_eq!(gateway, ["= /filler", "= /gateway"]);
            assert_eq!(conflicts, both(true));
        }
        // The route older (a missing time is the oldest).
        for (ingress, route) in [(Some(at(2)), Some(at(1))), (Some(at(1)), None)] {
            let (kept, fallback, gateway, conflicts) = shared(ingress, route, false);
            assert_eq!(kept, ingress_alone);
            assert!(fallback);
            assert_eq!(gateway, ["= /both", "= /filler", "= /gateway", "/both/"]);
            assert_eq!(conflicts, both(false));
        }
        // A route that claims `/` takes it from the Ingress's fallback (no Ingress rule there).
        let (_, fallback, gateway, _) = shared(Some(at(1)), Some(at(2)), true);
        assert!(!fallback);
        assert!(gateway.contains(&"/".to_owned()), "{gateway:?}");
    }

    /// A location lost to the Ingress is told to each route; one lost to the routes, to the
    /// Ingress.
    #[test]
    fn path_conflicts_are_reported_on_the_loser() {
        let conflict = |ingress_kept: bool| PathConflict {
            gateway: gateway("a"),
            listener: "http".into(),
            host: "web.example.com".into(),
            listen: HTTP.into(),
            location: "/both/".into(),
            ingress: "shop/web".into(),
            routes: BTreeSet::from([ObjectRef::new("gw", "r1"), ObjectRef::new("gw", "r2")]),
            ingress_kept,
        };
        let summary = |findings: Vec<Finding>| -> Vec<(Kind, String, &str)> {
            findings
                .iter()
                .map(|f| (f.subject.kind, f.subject.key.to_string(), f.reason))
                .collect()
        };
        assert_eq!(
            summary(conflict(true).findings()),
            [
                (Kind::HttpRoute, "gw/r1".to_owned(), "IngressConflict"),
                (Kind::HttpRoute, "gw/r2".to_owned(), "IngressConflict"),
            ]
        );
        let lost = conflict(false).findings();
        assert_eq!(
            summary(lost.clone()),
            [(Kind::Ingress, "shop/web".to_owned(), "HTTPRouteConflict")]
        );
        assert_eq!(
            lost[0].message,
            "location \"/both/\" of host \"web.example.com\" on 127.0.0.1:8080 is served by \
             HTTPRoute gw/r1, gw/r2 (older) of Gateway gw/a, not by this Ingress"
        );
        assert_eq!(
            conflict(true).to_string(),
            "Ingress \"shop/web\" and HTTPRoute gw/r1, gw/r2 (Gateway \"gw/a\" listener \"http\") \
             claim location \"/both/\" of host \"web.example.com\" on 127.0.0.1:8080: the \
             Ingress keeps it (older, or as old)"
        );
    }
}
