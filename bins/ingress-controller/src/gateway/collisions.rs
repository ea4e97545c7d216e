//! Who keeps a host name on an nginx listening socket that several claim (docs/gateway-api.md
//! §8 item 9, S-IG.1): the Gateways' servers placed on their sockets, and every server left out
//! as a [`Collision`], so that the loss is logged and reported rather than silent.
//!
//! nginx serves one `server` per name and socket. The rule as built:
//! - On the shared listen address, an Ingress host keeps its name on the HTTP port, and on the
//!   HTTPS port when the Ingress lists it under `tls`; the Ingress catch-all (a rule without
//!   host, a default backend) keeps the default server of both. A Gateway server of the same
//!   name (the same wildcard for a wildcard) on that port is left out whole, whatever the
//!   objects' ages: the Ingress locations and the route's are not merged.
//! - Between Gateways, the older (creation time, then key: the plan's order) keeps a name
//!   both claim on a socket (S-GW.4); so does the first listener of one Gateway whose two
//!   ports land on the same socket.
//! - A socket speaks one protocol: a Gateway socket whose TLS differs from the Ingress port's
//!   (HTTPS on the HTTP port, say) or from an older Gateway's on the same socket is left out.
//!
//! Pure: `decide` takes where each Gateway socket asks to listen and what the Ingresses
//! hold; `gateway/render.rs` writes the seats it returns.

use std::collections::{BTreeMap, BTreeSet};

use cluster_state::{Kind, ObjectRef};

use super::hostname::Hostname;
use super::plan::{Server, Socket};
use crate::hosts::Host;
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
pub struct IngressHosts {
    /// Per host name (`None`: the catch-all), the Ingresses with a location there (none
    /// named: a default backend alone) and whether the name is served on the HTTPS port too.
    hosts: BTreeMap<Option<Hostname>, (Vec<String>, bool)>,
}

impl IngressHosts {
    /// The names of the Ingress `servers` (see [`crate::model::Model::servers`]).
    pub fn of(servers: &[crate::model::Server]) -> Self {
        let hosts = servers
            .iter()
            .map(|s| {
                let (name, tls) = match &s.host {
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
                (name, (ingresses, tls))
            })
            .collect();
        Self { hosts }
    }

    /// The Ingresses holding `name` on their port of protocol `tls`, if they hold it.
    fn holder(&self, name: Option<&Hostname>, tls: bool) -> Option<&[String]> {
        let (ingresses, on_https) = self.hosts.get(&name.cloned())?;
        (!tls || *on_https).then_some(ingresses.as_slice())
    }
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
                kind: Kind::HttpRoute,
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
/// `hosts`, and every server left out.
pub(crate) fn decide<'a>(
    asks: &[Ask<'a>],
    hosts: &IngressHosts,
) -> (Vec<Seat<'a>>, Vec<Collision>) {
    let mut seats: Vec<Seat<'a>> = Vec::new();
    let mut collisions = Vec::new();
    for ask in asks {
        let socket = ask.socket;
        let lost = |holder: Holder, server: &Server| Collision {
            gateway: ask.gateway.clone(),
            listener: server.listener.clone(),
            name: server.name.clone(),
            listen: ask.listen.clone(),
            routes: server.routes.clone(),
            holder,
        };
        if ask.ingress.is_some_and(|https| https != socket.tls) {
            collisions.extend(
                socket
                    .servers
                    .iter()
                    .map(|s| lost(Holder::Protocol(None), s)),
            );
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
                });
                seats.len() - 1
            }
        };
        let Some(seat) = seats.get_mut(index) else {
            continue;
        };
        if seat.tls != socket.tls {
            let owner = &seat.owner;
            collisions.extend(
                socket
                    .servers
                    .iter()
                    .map(|s| lost(Holder::Protocol(Some(owner.clone())), s)),
            );
            continue;
        }
        for server in &socket.servers {
            let name = server.name.as_ref();
            let ingresses = seat
                .ingress
                .then(|| hosts.holder(name, socket.tls))
                .flatten();
            if let Some(ingresses) = ingresses {
                collisions.push(lost(Holder::Ingress(ingresses.to_vec()), server));
            } else if let Some(older) = seat.names.get(&server.name) {
                collisions.push(lost(Holder::Gateway(older.clone()), server));
            } else {
                seat.names.insert(server.name.clone(), ask.gateway.clone());
                seat.servers.push(server);
            }
        }
    }
    (seats, collisions)
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

    /// What each seat serves, `listen: name@gateway`, and each collision, `name@gateway <
    /// holder`.
    fn summary(seats: &[Seat<'_>], collisions: &[Collision]) -> (Vec<String>, Vec<String>) {
        let name = |n: &Option<Hostname>| n.as_ref().map_or("*".to_owned(), ToString::to_string);
        let served = seats
            .iter()
            .flat_map(|seat| {
                seat.names
                    .iter()
                    .map(move |(n, g)| format!("{}: {}@{}", seat.listen, name(n), g.name))
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
                "an Ingress host keeps its name on the HTTP port; other names coexist",
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
                vec!["127.0.0.1:8080: api.example.com@a"],
                vec!["web.example.com@a < ingress shop/web"],
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
                vec!["127.0.0.1:8443: web.example.com@a"],
                vec!["tls.example.com@a < ingress shop/tls"],
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
            let hosts = IngressHosts::of(&ingress);
            let (seats, collisions) = decide(&asks(&sockets), &hosts);
            let (got_served, got_lost) = summary(&seats, &collisions);
            assert_eq!(got_served, served, "{what}");
            assert_eq!(got_lost, lost, "{what}");
        }
    }

    /// The Ingress keeps its host whatever the ages (the rule as built: no per-location
    /// merge); the loss is reported on the Gateway and on each route that had rules there.
    #[test]
    fn losers_are_reported_on_the_gateway_and_each_route() {
        let sockets = [(
            gateway("a"),
            socket(
                80,
                false,
                vec![server("web.example.com", "http", &["r1", "r2"])],
            ),
            HTTP,
            Some(false),
        )];
        let hosts = IngressHosts::of(&[ingress_server("web.example.com", "shop/web", false)]);
        let (_, collisions) = decide(&asks(&sockets), &hosts);
        let [collision] = collisions.as_slice() else {
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
            "Gateway gw/a listener \"http\": host \"web.example.com\" on 127.0.0.1:8080 is \
             served by Ingress shop/web; this route is not served there"
        );
        assert_eq!(
            collision.to_string(),
            "Gateway \"gw/a\" listener \"http\": host \"web.example.com\" on 127.0.0.1:8080 is \
             served by Ingress shop/web; not served there (routes: gw/r1, gw/r2)"
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
                    sockets: vec![old.clone()],
                },
                GatewayPlan {
                    gateway: gateway("new"),
                    status_addresses: Vec::new(),
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
        assert_eq!(collisions.len(), 2, "{collisions:?}");
        let conflicts = conflicted_listeners(&plan, &collisions);
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
}
