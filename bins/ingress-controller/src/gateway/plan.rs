//! What nginx serves for the Gateways (rendering notes §2.1, §2.2, §5): from the evaluation's
//! served listeners, per Gateway its sockets (listener port and protocol), one server per
//! host name, and for each server the nginx locations with the action of the candidate that
//! wins the requests nginx sends there; the rules' weighted backendRefs as splits for the Lua
//! balancer.
//!
//! Precedence is settled here, once per build: the evaluation's candidates are already in
//! S-PR order, and a location keeps, in that order, the candidates that can match a request
//! nginx sends to it (nginx itself picks the location by path: `=` first, then the longest
//! prefix), up to the first without conditions, which matches every such request. When that
//! first one has no conditions the location serves it inline; otherwise the Lua dispatcher
//! tries the list (§4).
//!
//! A match nginx cannot serve ([`matches::servable`]: regexes outside the checked subset,
//! values over the caps, paths S-PM.3 refuses) is left out and reported, and its
//! rule is invalid (its other matches answer 500, the status drops it). Fail closed (S-IR.2, S-F.8): a rule whose filters or timeouts [`rules::rule_actions`]
//! refuses answers 500, since serving it without them would bypass them; so does a
//! ReplacePrefixMatch on a match without a literal prefix (a RegularExpression path).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::IpAddr;

use cluster_state::ObjectRef;
use cluster_state::gateway::HttpRoute;
use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::Time;

use super::addresses::{self, Pool, Request};
use super::backend_filters::{self, BackendRoute};
use super::backend_refs::{self, Context};
use super::filters::{Filter, HeaderEdits, PathChange, Redirect};
use super::hostname::{Hostname, Specificity};
use super::matches;
use super::mirror;
use super::precedence::{Candidate, RouteKind};
use super::rules::{self, RuleActions};
use super::{Evaluation, Fault, ServedListener};
use crate::hosts::is_dns_name;
use crate::objects::Objects;
use crate::paths::{Kind, LocationKey, PathRule};

/// The largest weight of a backendRef (the CRD's maximum).
const MAX_WEIGHT: i32 = 1_000_000;

/// What the Gateways serve, independent of addresses (see [`Plan::addresses`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Each Gateway with servable listeners, oldest first (creation time, then key).
    pub gateways: Vec<GatewayPlan>,
    /// The weighted splits of the rules, by name (`gw:NAMESPACE/ROUTE#RULE`, a GRPCRoute's
    /// `gw:grpc:NAMESPACE/ROUTE#RULE`).
    pub splits: BTreeMap<String, Vec<Share>>,
    /// The Service ports the splits name (Service, port number).
    pub backends: BTreeSet<(ObjectRef, i32)>,
    /// What is not served, and why.
    pub problems: Vec<Problem>,
}

/// One Gateway's sockets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayPlan {
    /// The Gateway.
    pub gateway: ObjectRef,
    /// The addresses its status holds (a pool address there is kept).
    pub status_addresses: Vec<String>,
    /// The values of its `spec.addresses` (S-GW.7; an empty one asks for any address).
    pub requested_addresses: Vec<String>,
    /// Its sockets, by listener port.
    pub sockets: Vec<Socket>,
}

/// The listeners of one Gateway on one port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Socket {
    /// The listeners' port, as the Gateway writes it (80 and 443 are served on the controller's
    /// HTTP and HTTPS ports).
    pub port: i32,
    /// Whether the listeners are HTTPS.
    pub tls: bool,
    /// One server per host name, most specific first.
    pub servers: Vec<Server>,
}

/// One nginx `server`: a host name of a socket, served by the listener S-LI.1 picks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    /// The host name; `None` for any (the socket's catch-all).
    pub name: Option<Hostname>,
    /// The listener that serves it.
    pub listener: String,
    /// Whether its routes are GRPCRoutes (S-AT.9 keeps the routes of one host name of one
    /// kind): it forwards with `grpc_pass`, and answers what no route matches, or what would
    /// get 500, with gRPC statuses (S-GR.3).
    pub grpc: bool,
    /// The listener's certificate Secrets (`namespace/name`), HTTPS only.
    pub certificates: Vec<String>,
    /// Its locations, by key; `location /` always among them.
    pub locations: Vec<Location>,
    /// The routes with a match on it (those that lose it when it is not served, see
    /// [`super::collisions`]).
    pub routes: BTreeSet<ObjectRef>,
    /// The routes whose matches each location serves, by key (a location absent here answers
    /// 404): what the location is claimed by when an Ingress has the same (S-IG.1).
    pub claims: BTreeMap<LocationKey, Claim>,
}

/// The routes that claim a location, and the creation time of the oldest (S-0.4: a missing
/// time counts as the oldest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The routes.
    pub routes: BTreeSet<ObjectRef>,
    /// The oldest one's creation time.
    pub created: Option<Time>,
}

/// One nginx `location` and what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The location.
    pub key: LocationKey,
    /// The candidates, in precedence order: a request gets the action of the first whose
    /// conditions hold, 404 when none does (S-PR.8). Only the last may be unconditional.
    pub candidates: Vec<Choice>,
}

/// A candidate of a location: its conditions besides the path nginx matched, and its action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// What the request must also satisfy.
    pub conditions: Conditions,
    /// What it then gets.
    pub action: Action,
}

/// The conditions of a match that nginx's locations do not express (S-MM, S-PM.4), all to hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Conditions {
    /// The request method (upper case).
    pub method: Option<String>,
    /// Headers, by name (`[A-Za-z0-9-]`, lower-cased; the first entry of a name only), with the
    /// exact value the first of the request's must have.
    pub headers: Vec<(String, String)>,
    /// Query parameters, by exact name (the first entry of a name only), with the exact value
    /// the first of the request's must have, decoded.
    pub query: Vec<(String, String)>,
    /// RegularExpression header and query-parameter conditions (S-MM.1, S-MM.2).
    pub regexes: Vec<ValueRegex>,
    /// The PCRE the whole decoded path must match: anchored, under the match limit.
    pub path: Option<String>,
}

/// A RegularExpression header or query-parameter condition: the first value the request has
/// under `name` (as in [`Conditions::headers`] and [`Conditions::query`]) must match `pattern`
/// whole, a missing one never does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueRegex {
    /// A header (`true`: `name` lower-cased) or a query parameter.
    pub header: bool,
    /// The header or parameter name.
    pub name: String,
    /// The PCRE: anchored at both ends, under the match limit (as a regex path's).
    pub pattern: String,
}

impl Conditions {
    /// Whether there is none: every request that reaches the location matches.
    pub fn is_empty(&self) -> bool {
        self.method.is_none()
            && self.headers.is_empty()
            && self.query.is_empty()
            && self.regexes.is_empty()
            && self.path.is_none()
    }
}

/// What a location does with a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Proxied to a backend of split `split` (a rule of `route`), by weight.
    Forward {
        /// The split's name.
        split: String,
        /// The route.
        route: ObjectRef,
        /// The path value of the match (for the request metrics' `path` label).
        path: String,
        /// The rule's filters and timeouts (no redirect among the filters).
        actions: RuleActions,
        /// The match's Exact or PathPrefix path, decoded and without its trailing `/` (what a
        /// ReplacePrefixMatch replaces); `None` for a RegularExpression path.
        prefix: Option<String>,
    },
    /// Answered with a redirect (S-F.3), whatever the rule's backends.
    Redirect {
        /// The redirect.
        redirect: Redirect,
        /// The rule's ResponseHeaderModifier edits, applied to the redirect too.
        response: Vec<HeaderEdits>,
        /// As [`Action::Forward`]'s `prefix`.
        prefix: Option<String>,
    },
    /// Answered 500: the rule has no usable backend, or uses what is not implemented
    /// (S-BR.3, S-IR.2).
    Fail,
}

/// A member of a split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Share {
    /// A backend (`namespace/service:port`) and its weight.
    Backend {
        /// The backend's name in the table, or, for a backend with request header edits of
        /// its own, the named location that serves it (`@…`, S-F.9).
        name: String,
        /// Its weight.
        weight: u32,
    },
    /// The weight of the rule's invalid backendRefs, answered 500 (S-BR.3).
    Invalid {
        /// Their weight.
        weight: u32,
    },
}

/// Something of a Gateway API object that is not served, for the operator.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    /// The object's kind (Gateway, HTTPRoute).
    pub kind: cluster_state::Kind,
    /// The object.
    pub object: ObjectRef,
    /// What is not served and why.
    pub message: String,
}

impl std::fmt::Display for Problem {
    /// `KIND "namespace/name": message`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {:?}: {}",
            self.kind,
            self.object.to_string(),
            self.message
        )
    }
}

/// Where a Gateway is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Served {
    /// On its own address from `--gateway-addresses`.
    Own(IpAddr),
    /// On `--listen-address`, shared with the Ingresses.
    Shared,
}

impl Plan {
    /// The Gateways the configuration serves and where: with a `pool`, each Gateway on its own
    /// address (see [`addresses::assign`]; a Gateway the pool has no address for is not
    /// served); without, every Gateway on the shared listen address.
    pub fn addresses(&self, pool: Option<&Pool>) -> BTreeMap<ObjectRef, Served> {
        match pool {
            None => self
                .gateways
                .iter()
                .map(|g| (g.gateway.clone(), Served::Shared))
                .collect(),
            Some(pool) => self
                .assign(pool)
                .into_iter()
                .filter_map(|(gateway, verdict)| Some((gateway, Served::Own(verdict.ok()?))))
                .collect(),
        }
    }

    /// Why the pool has no address for some Gateways (S-GW.7), the reason of their
    /// `Programmed=False`; empty without a pool.
    pub fn address_faults(&self, pool: Option<&Pool>) -> BTreeMap<ObjectRef, Fault> {
        let Some(pool) = pool else {
            return BTreeMap::new();
        };
        self.assign(pool)
            .into_iter()
            .filter_map(|(gateway, verdict)| Some((gateway, verdict.err()?)))
            .collect()
    }

    /// [`addresses::assign`] over the Gateways, oldest first.
    fn assign(&self, pool: &Pool) -> BTreeMap<ObjectRef, Result<IpAddr, Fault>> {
        let requests: Vec<Request> = self
            .gateways
            .iter()
            .map(|g| Request {
                gateway: g.gateway.clone(),
                requested: g.requested_addresses.clone(),
                held: g.status_addresses.clone(),
            })
            .collect();
        addresses::assign(pool, &requests)
    }
}

/// The plan of `evaluation`'s served listeners, with the routes and Services of `objects`.
pub fn build(evaluation: &Evaluation, objects: &Objects) -> Plan {
    let mut builder = Builder {
        objects,
        context: Context {
            services: &objects.services,
            grants: &objects.reference_grants,
        },
        plan: Plan::default(),
        problems: BTreeSet::new(),
        candidates: HashMap::new(),
        rules: HashMap::new(),
        grpc_routes: HashMap::new(),
    };
    let mut by_gateway: Vec<(&ObjectRef, Vec<&ServedListener>)> = Vec::new();
    for listener in &evaluation.listeners {
        match by_gateway.last_mut() {
            Some((gateway, listeners)) if **gateway == listener.gateway => listeners.push(listener),
            _ => by_gateway.push((&listener.gateway, vec![listener])),
        }
    }
    // Oldest first (S-0.4): on a socket the Gateways share, the older keeps a host name both
    // claim (S-GW.4), and a pool hands out its free addresses in this order.
    by_gateway.sort_by_key(|(gateway, _)| {
        objects
            .gateways
            .get(*gateway)
            .map(|g| super::precedence::Age::of(&g.metadata))
    });
    for (gateway, listeners) in by_gateway {
        let plan = builder.gateway(gateway, &listeners);
        builder.plan.gateways.push(plan);
    }
    let mut plan = builder.plan;
    plan.problems = builder.problems.into_iter().collect();
    plan
}

/// A candidate made servable: its Exact or PathPrefix path (`None`: a RegularExpression path,
/// in its conditions), its conditions and the action of its rule.
type Servable = (Option<PathRule>, Conditions, Action);

struct Builder<'a> {
    objects: &'a Objects,
    context: Context<'a>,
    plan: Plan,
    problems: BTreeSet<Problem>,
    /// Each (route, rule, match) made servable once, or `None` when it is left out.
    candidates: HashMap<(RouteKind, ObjectRef, usize, usize), Option<Servable>>,
    /// Each (route, rule)'s action, once.
    rules: HashMap<(RouteKind, ObjectRef, usize), Action>,
    /// The HTTPRoutes the GRPCRoutes are served as, made once.
    grpc_routes: HashMap<ObjectRef, std::sync::Arc<HttpRoute>>,
}

impl Builder<'_> {
    fn problem(&mut self, kind: cluster_state::Kind, object: &ObjectRef, message: String) {
        self.problems.insert(Problem {
            kind,
            object: object.clone(),
            message,
        });
    }

    fn gateway(&mut self, gateway: &ObjectRef, listeners: &[&ServedListener]) -> GatewayPlan {
        let status_addresses = self
            .objects
            .gateways
            .get(gateway)
            .and_then(|g| g.status.as_ref())
            .and_then(|s| s.addresses.as_ref())
            .map(|list| list.iter().map(|a| a.value.clone()).collect())
            .unwrap_or_default();
        let requested_addresses = self
            .objects
            .gateways
            .get(gateway)
            .and_then(|g| g.spec.addresses.as_ref())
            .map(|list| {
                list.iter()
                    .map(|a| a.value.clone().unwrap_or_default())
                    .collect()
            })
            .unwrap_or_default();
        let mut ports: BTreeMap<i32, Vec<&ServedListener>> = BTreeMap::new();
        for listener in listeners {
            ports.entry(listener.port).or_default().push(listener);
        }
        let sockets = ports
            .into_iter()
            .map(|(port, listeners)| self.socket(gateway, port, &listeners))
            .collect();
        GatewayPlan {
            gateway: gateway.clone(),
            status_addresses,
            requested_addresses,
            sockets,
        }
    }

    fn socket(&mut self, gateway: &ObjectRef, port: i32, listeners: &[&ServedListener]) -> Socket {
        let tls = listeners.iter().any(|l| l.protocol == "HTTPS");
        let mut names: BTreeSet<Option<Hostname>> = BTreeSet::new();
        for listener in listeners {
            names.insert(listener.hostname.clone());
            names.extend(listener.candidates.iter().map(|c| c.hostname.clone()));
        }
        let mut names: Vec<Option<Hostname>> = names.into_iter().collect();
        names.sort_by_key(|n| n.as_ref().map_or(Specificity::NONE, Hostname::specificity));
        // Each listener's candidates by host name, in precedence order: a server looks up the
        // few names that cover it instead of testing every candidate.
        let by_name: Vec<HashMap<Option<&Hostname>, Vec<usize>>> = listeners
            .iter()
            .map(|listener| {
                let mut map: HashMap<Option<&Hostname>, Vec<usize>> = HashMap::new();
                for (index, c) in listener.candidates.iter().enumerate() {
                    map.entry(c.hostname.as_ref()).or_default().push(index);
                }
                map
            })
            .collect();
        let mut servers = Vec::new();
        for name in names {
            if let Some(bad) = name.as_ref().filter(|n| !servable_name(n)) {
                self.problem(
                    cluster_state::Kind::Gateway,
                    gateway,
                    format!("host name {bad:?} is not a lower-case DNS name; not served"),
                );
                continue;
            }
            let chosen = listeners
                .iter()
                .zip(&by_name)
                .filter(|(l, _)| covers(l.hostname.as_ref(), name.as_ref()))
                .min_by_key(|(l, _)| {
                    l.hostname
                        .as_ref()
                        .map_or(Specificity::NONE, Hostname::specificity)
                });
            let Some((listener, index)) = chosen else {
                continue;
            };
            let mut picked: Vec<usize> = covering(name.as_ref())
                .iter()
                .filter_map(|h| index.get(&h.as_ref()))
                .flatten()
                .copied()
                .collect();
            picked.sort_unstable();
            let routes = picked
                .iter()
                .filter_map(|i| listener.candidates.get(*i))
                .map(|c| c.route.clone())
                .collect();
            let (servable, owners): (Vec<Servable>, Vec<&Candidate>) = picked
                .iter()
                .filter_map(|i| listener.candidates.get(*i))
                .filter_map(|c| Some((self.candidate(c)?, c)))
                .unzip();
            let located = located(&servable);
            let claims = located
                .iter()
                .filter(|(_, chosen)| !chosen.is_empty())
                .map(|(location, chosen)| {
                    let owners = chosen.iter().filter_map(|i| owners.get(*i));
                    let claim = Claim {
                        routes: owners.clone().map(|c| c.route.clone()).collect(),
                        created: owners
                            .filter_map(|c| self.created(c.kind, &c.route))
                            .min()
                            .flatten(),
                    };
                    (location.key.clone(), claim)
                })
                .collect();
            let grpc = picked
                .iter()
                .filter_map(|i| listener.candidates.get(*i))
                .any(|c| c.kind == RouteKind::Grpc);
            servers.push(Server {
                name,
                listener: listener.name.clone(),
                grpc,
                certificates: listener
                    .certificates
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
                locations: located.into_iter().map(|(l, _)| l).collect(),
                routes,
                claims,
            });
        }
        Socket { port, tls, servers }
    }

    /// The creation time of `route` (`Some(None)`: it has none), `None` when it is unknown.
    fn created(&self, kind: RouteKind, route: &ObjectRef) -> Option<Option<Time>> {
        let metadata = match kind {
            RouteKind::Http => &self.objects.http_routes.get(route)?.metadata,
            RouteKind::Grpc => &self.objects.grpc_routes.get(route)?.metadata,
        };
        Some(metadata.creation_timestamp.clone())
    }

    /// The path and action of candidate `c`, or `None` (reported) when it cannot be served.
    fn candidate(&mut self, c: &Candidate) -> Option<Servable> {
        let key = (c.kind, c.route.clone(), c.rule, c.match_index);
        if let Some(done) = self.candidates.get(&key) {
            return done.clone();
        }
        let made = self.make_candidate(c);
        self.candidates.insert(key, made.clone());
        made
    }

    /// The route of candidate `c`: an HTTPRoute, or the HTTPRoute a GRPCRoute is served as.
    fn route(&mut self, c: &Candidate) -> Option<std::sync::Arc<HttpRoute>> {
        match c.kind {
            RouteKind::Http => self.objects.http_routes.get(&c.route).cloned(),
            RouteKind::Grpc => {
                if let Some(made) = self.grpc_routes.get(&c.route) {
                    return Some(made.clone());
                }
                let route = self.objects.grpc_routes.get(&c.route)?;
                let made = std::sync::Arc::new(super::grpc::as_http_route(route));
                self.grpc_routes.insert(c.route.clone(), made.clone());
                Some(made)
            }
        }
    }

    fn make_candidate(&mut self, c: &Candidate) -> Option<Servable> {
        let route = self.route(c)?;
        if !is_dns_name(&c.route.namespace) || !is_dns_name(&c.route.name) {
            self.problem(
                c.kind.kind(),
                &c.route,
                "namespace and name must be DNS names; not served".into(),
            );
            return None;
        }
        let rules = route.spec.rules();
        let rule = rules.get(c.rule)?;
        let matches = rule.matches();
        let m = matches.get(c.match_index)?;
        let path = m.path();
        let (rule_path, conditions) = match matches::servable(m) {
            Ok(parsed) => parsed,
            Err(message) => {
                self.problem(
                    c.kind.kind(),
                    &c.route,
                    format!(
                        "rule {} match {}: {message}; the match is left out",
                        c.rule, c.match_index
                    ),
                );
                return None;
            }
        };
        let prefix = rule_path.as_ref().map(|r| r.path.as_str());
        let action = self.rule_action(c, &route, path.value(), prefix);
        Some((rule_path, conditions, action))
    }

    /// The action of the rule of candidate `c` (of `route`) for a match with path value
    /// `path` (`prefix`: its literal path, see [`Action::Forward`]): its split, its redirect,
    /// or 500.
    fn rule_action(
        &mut self,
        c: &Candidate,
        route: &HttpRoute,
        path: &str,
        prefix: Option<&str>,
    ) -> Action {
        let (kind, key, index) = (c.kind, &c.route, c.rule);
        let cache = (kind, key.clone(), index);
        let action = match self.rules.get(&cache) {
            Some(action) => action.clone(),
            None => {
                let action = self.make_rule_action(kind, key, route, index);
                self.rules.insert(cache, action.clone());
                action
            }
        };
        let was_served = action != Action::Fail;
        let action = for_match(action, path, prefix);
        if was_served && action == Action::Fail {
            self.problem(
                kind.kind(),
                key,
                format!(
                    "rule {index}: ReplacePrefixMatch needs an Exact or PathPrefix match; \
                     requests its RegularExpression matches win are answered 500"
                ),
            );
        }
        action
    }

    fn make_rule_action(
        &mut self,
        kind: RouteKind,
        key: &ObjectRef,
        route: &HttpRoute,
        index: usize,
    ) -> Action {
        let rules = route.spec.rules();
        let Some(rule) = rules.get(index) else {
            return Action::Fail;
        };
        let mut actions = match rules::rule_actions(rule) {
            Ok(actions) => actions,
            Err(fault) => {
                self.problem(
                    kind.kind(),
                    key,
                    format!(
                        "rule {index}: {}; requests it wins are answered 500",
                        fault.message
                    ),
                );
                return Action::Fail;
            }
        };
        let redirect = actions.filters.iter().find_map(|f| match f {
            Filter::Redirect(redirect) => Some(redirect.clone()),
            _ => None,
        });
        if let Some(redirect) = redirect {
            let response = actions
                .filters
                .into_iter()
                .filter_map(|f| match f {
                    Filter::ResponseHeaders(edits) => Some(edits),
                    _ => None,
                })
                .collect();
            return Action::Redirect {
                redirect,
                response,
                prefix: None,
            };
        }
        self.resolve_mirrors(kind, key, index, &mut actions.filters);
        let refs = rule.backend_refs();
        // A GRPCRoute may have an HTTPRoute's name: its splits are apart.
        let split = match kind {
            RouteKind::Http => format!("gw:{key}#{index}"),
            RouteKind::Grpc => format!("gw:grpc:{key}#{index}"),
        };
        let mut shares = Vec::new();
        for (ref_index, backend) in refs.iter().enumerate() {
            let weight = u32::try_from(backend.weight().clamp(0, MAX_WEIGHT)).unwrap_or(0);
            if weight == 0 {
                continue;
            }
            match backend_refs::resolve(backend, kind.name(), &key.namespace, self.context) {
                Ok(found) => {
                    let mut name = format!("{}:{}", found.service, found.port);
                    self.plan.backends.insert((found.service, found.port));
                    // S-F.9: a backend with header edits of its own is drawn as its location.
                    let edits = backend_filters::backend_edits(backend).unwrap_or_default();
                    if !edits.is_empty() {
                        let Ok((request, response)) =
                            backend_filters::merged_edits(&actions.filters, &edits)
                        else {
                            return Action::Fail;
                        };
                        let location = backend_filters::member_location(&split, ref_index);
                        actions.filters.push(Filter::BackendHeaders(BackendRoute {
                            location: location.clone(),
                            backend: name,
                            request,
                            response,
                        }));
                        name = location;
                    }
                    shares.push(Share::Backend { name, weight });
                }
                Err(_) => shares.push(Share::Invalid { weight }),
            }
        }
        if !shares.iter().any(|s| matches!(s, Share::Backend { .. })) {
            return Action::Fail;
        }
        self.plan.splits.insert(split.clone(), shares);
        Action::Forward {
            split,
            route: key.clone(),
            path: String::new(),
            actions,
            prefix: None,
        }
    }
}

impl Builder<'_> {
    /// Resolves the backends of the RequestMirror filters among `filters` (of rule `index` of
    /// route `key` of kind `kind`) into the backend table's names; one that does not resolve is
    /// reported and copies nothing (S-F.6), one that copies no request is not resolved.
    fn resolve_mirrors(
        &mut self,
        kind: RouteKind,
        key: &ObjectRef,
        index: usize,
        filters: &mut [Filter],
    ) {
        for filter in filters {
            let Filter::Mirror(m) = filter else { continue };
            if m.sample.never() {
                continue;
            }
            match mirror::resolve(&m.backend, kind.name(), &key.namespace, self.context) {
                Ok(found) => {
                    m.upstream = Some(format!("{}:{}", found.service, found.port));
                    self.plan.backends.insert((found.service, found.port));
                }
                Err(fault) => self.problem(
                    kind.kind(),
                    key,
                    format!("rule {index}: {}; no copies are sent", fault.message),
                ),
            }
        }
    }
}

/// `action` for a match with path value `path` and literal path `prefix`: 500 when a
/// ReplacePrefixMatch has no prefix to replace.
fn for_match(action: Action, path: &str, prefix: Option<&str>) -> Action {
    let prefix = prefix.map(str::to_owned);
    let replaces_prefix =
        |change: Option<&PathChange>| matches!(change, Some(PathChange::Prefix(_)));
    match action {
        Action::Forward { actions, .. }
            if prefix.is_none()
                && actions.filters.iter().any(|f| match f {
                    Filter::Rewrite(rewrite) => replaces_prefix(rewrite.path.as_ref()),
                    _ => false,
                }) =>
        {
            Action::Fail
        }
        Action::Redirect { redirect, .. }
            if prefix.is_none() && replaces_prefix(redirect.path.as_ref()) =>
        {
            Action::Fail
        }
        Action::Forward {
            split,
            route,
            actions,
            ..
        } => Action::Forward {
            split,
            route,
            path: path.to_owned(),
            actions,
            prefix,
        },
        Action::Redirect {
            redirect, response, ..
        } => Action::Redirect {
            redirect,
            response,
            prefix,
        },
        Action::Fail => Action::Fail,
    }
}

/// Whether `name` can be an nginx `server_name`: a lower-case DNS name, or one after `*.`.
fn servable_name(name: &Hostname) -> bool {
    match name {
        Hostname::Exact(name) | Hostname::Wildcard(name) => is_dns_name(name),
    }
}

/// Whether a listener or candidate with host name `outer` (`None`: any) covers every request
/// host of the server name `inner` (`None`: any).
fn covers(outer: Option<&Hostname>, inner: Option<&Hostname>) -> bool {
    match (outer, inner) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(outer), Some(Hostname::Exact(name))) => outer.matches(name),
        (Some(Hostname::Wildcard(outer)), Some(Hostname::Wildcard(inner))) => {
            outer == inner || Hostname::Wildcard(outer.clone()).matches(inner)
        }
        (Some(Hostname::Exact(_)), Some(Hostname::Wildcard(_))) => false,
    }
}

/// The host names that cover the server name `name` (see [`covers`]): any, `name` itself,
/// and the wildcards of each of its proper suffixes.
fn covering(name: Option<&Hostname>) -> Vec<Option<Hostname>> {
    let mut out = vec![None];
    let Some(name) = name else {
        return out;
    };
    out.push(Some(name.clone()));
    let (Hostname::Exact(text) | Hostname::Wildcard(text)) = name;
    for (dot, _) in text.match_indices('.') {
        if let Some(suffix) = text.get(dot + 1..).filter(|s| !s.is_empty()) {
            out.push(Some(Hostname::Wildcard(suffix.to_owned())));
        }
    }
    out
}

/// The locations of a server whose servable candidates are `candidates`, in precedence
/// order: each candidate's locations, `location /`, and `= /p` beside every `/p/` (nginx
/// would otherwise answer `/p` with a redirect to `/p/`); each with the candidates that can
/// match a request nginx sends there, up to the first without conditions.
#[cfg(test)]
fn locations(candidates: &[Servable]) -> Vec<Location> {
    located(candidates).into_iter().map(|(l, _)| l).collect()
}

/// The locations of `candidates` (see `locations`), each with the indices in `candidates` of
/// the candidates it keeps.
fn located(candidates: &[Servable]) -> Vec<(Location, Vec<usize>)> {
    let mut exact: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut prefix: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut anywhere: Vec<usize> = Vec::new();
    let mut keys: BTreeSet<LocationKey> = BTreeSet::from([LocationKey::Prefix("/".into())]);
    for (index, (rule, _, _)) in candidates.iter().enumerate() {
        let Some(rule) = rule else {
            // A RegularExpression path may match in any location.
            anywhere.push(index);
            continue;
        };
        let map = match rule.kind {
            Kind::Exact => &mut exact,
            Kind::Prefix | Kind::Regex => &mut prefix,
        };
        map.entry(rule.path.as_str()).or_default().push(index);
        keys.extend(rule.locations());
    }
    let shields: Vec<LocationKey> = keys
        .iter()
        .filter_map(|key| match key {
            LocationKey::Exact(p) | LocationKey::Prefix(p) if p.len() > 1 && p.ends_with('/') => {
                Some(LocationKey::Exact(p.trim_end_matches('/').to_owned()))
            }
            _ => None,
        })
        .filter(|key| !matches!(key, LocationKey::Exact(p) if p.is_empty()))
        .collect();
    keys.extend(shields);
    keys.into_iter()
        .map(|key| {
            let (path, exact_too) = match &key {
                LocationKey::Exact(p) => (p.as_str(), true),
                LocationKey::Prefix(p) | LocationKey::Regex(p) => (p.as_str(), false),
            };
            let own = exact_too.then(|| exact.get(path)).flatten();
            let mut indices: Vec<usize> = ancestors(path)
                .filter_map(|a| prefix.get(a))
                .chain(own)
                .flatten()
                .chain(&anywhere)
                .copied()
                .collect();
            indices.sort_unstable();
            indices.dedup();
            let mut chosen = Vec::new();
            let mut kept = Vec::new();
            for index in indices {
                let Some((_, conditions, action)) = candidates.get(index) else {
                    continue;
                };
                chosen.push(Choice {
                    conditions: conditions.clone(),
                    action: action.clone(),
                });
                kept.push(index);
                if conditions.is_empty() {
                    break;
                }
            }
            let location = Location {
                key,
                candidates: chosen,
            };
            (location, kept)
        })
        .collect()
}

/// The prefixes that cover every request with path `path` (or below it, for a path ending in
/// `/`): `path` without its trailing `/`, then each shorter element prefix, then `/`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let trimmed = path.trim_end_matches('/');
    let mut next = Some(trimmed);
    std::iter::from_fn(move || {
        let current = next?;
        if current.is_empty() {
            next = None;
            return Some("/");
        }
        next = current
            .rfind('/')
            .map(|i| current.get(..i).unwrap_or_default());
        Some(current)
    })
}

#[cfg(test)]
mod tests {
    use super::super::matches::{gateway_path, whole_match};
    use super::*;

    fn servable(kind: &str, path: &str, split: &str) -> Servable {
        (
            Some(gateway_path(kind, path).unwrap()),
            Conditions::default(),
            Action::Forward {
                split: split.into(),
                route: ObjectRef::new("ns", "r"),
                path: path.into(),
                actions: RuleActions::default(),
                prefix: None,
            },
        )
    }

    /// The split of the first candidate of the location `key` (`None`: 404).
    fn split_of(locations: &[Location], key: &LocationKey) -> Option<String> {
        let found = locations.iter().find(|l| l.key == *key).unwrap();
        found.candidates.first().map(|c| match &c.action {
            Action::Forward { split, .. } => split.clone(),
            Action::Redirect { .. } | Action::Fail => "500".into(),
        })
    }

    /// The splits of the candidates of the location `key`, in order.
    fn splits_of(locations: &[Location], key: &LocationKey) -> Vec<String> {
        let found = locations.iter().find(|l| l.key == *key).unwrap();
        found
            .candidates
            .iter()
            .map(|c| match &c.action {
                Action::Forward { split, .. } => split.clone(),
                Action::Redirect { .. } | Action::Fail => "500".into(),
            })
            .collect()
    }

    /// HTTPRouteMatchingAcrossRoutes' shape: a header candidate before the catch-all prefix is
    /// kept, and the list ends at the first unconditional candidate.
    #[test]
    fn lists_end_at_the_first_candidate_without_conditions() {
        let with_header = |path: &str, split: &str| {
            let mut s = servable("PathPrefix", path, split);
            s.1.headers.push(("version".into(), "two".into()));
            s
        };
        let regex = (
            None,
            Conditions {
                path: Some(whole_match("/v[0-9]+")),
                ..Conditions::default()
            },
            servable("Exact", "/", "re").2,
        );
        let candidates = [
            servable("PathPrefix", "/v2", "v2"),
            regex,
            with_header("/", "h"),
            servable("PathPrefix", "/", "root"),
            servable("PathPrefix", "/", "never"),
        ];
        let got = locations(&candidates);
        let prefix = |p: &str| LocationKey::Prefix(p.into());
        assert_eq!(splits_of(&got, &prefix("/v2/")), ["v2"]);
        assert_eq!(splits_of(&got, &prefix("/")), ["re", "h", "root"]);
        assert_eq!(whole_match("/a|/b"), "(*LIMIT_MATCH=100000)^(?:/a|/b)\\z");
    }

    #[test]
    fn ancestors_walk_up_to_the_root() {
        assert_eq!(
            ancestors("/a/b/c").collect::<Vec<_>>(),
            ["/a/b/c", "/a/b", "/a", "/"]
        );
        assert_eq!(ancestors("/a/").collect::<Vec<_>>(), ["/a", "/"]);
        assert_eq!(ancestors("/").collect::<Vec<_>>(), ["/"]);
    }

    /// S-PM.3: escapes decoded, `$` and `;` kept, the rest refused.
    #[test]
    fn s_pm_3_path_values() {
        let rule = gateway_path("PathPrefix", "/a%2Db/").unwrap();
        assert_eq!((rule.kind, rule.path.as_str()), (Kind::Prefix, "/a-b"));
        let rule = gateway_path("Exact", "/$x;y/").unwrap();
        assert_eq!((rule.kind, rule.path.as_str()), (Kind::Exact, "/$x;y/"));
        for bad in [
            "/a%2Fb", "/a%20b", "/a%0d", "/a%25", "/a%zz", "/a%2", "/a b", "/a\"", "//a",
            "/a/../b", "/a/.", "a", "/a{", "/%C3",
        ] {
            assert!(gateway_path("Exact", bad).is_err(), "{bad}");
        }
        assert_eq!(gateway_path("Exact", "/%C3%A9").unwrap().path, "/é");
        assert!(gateway_path("RegularExpression", "/a").is_err());
    }

    /// HTTPRoutePathMatchOrder's rules: each location gets the candidate the specification
    /// picks for the requests nginx sends it.
    #[test]
    fn locations_take_the_first_candidate_that_covers_them() {
        // In S-PR order: Exact first, then longer prefixes.
        let candidates = [
            servable("Exact", "/match/exact/one", "v3"),
            servable("Exact", "/match/exact", "v2"),
            servable("Exact", "/match", "v1"),
            servable("PathPrefix", "/match/prefix/one", "v2"),
            servable("PathPrefix", "/match/prefix", "v1"),
            servable("PathPrefix", "/match", "v3"),
        ];
        let got = locations(&candidates);
        let exact = |p: &str| LocationKey::Exact(p.into());
        let prefix = |p: &str| LocationKey::Prefix(p.into());
        assert_eq!(split_of(&got, &exact("/match")).as_deref(), Some("v1"));
        assert_eq!(
            split_of(&got, &exact("/match/exact")).as_deref(),
            Some("v2")
        );
        assert_eq!(split_of(&got, &prefix("/match/")).as_deref(), Some("v3"));
        assert_eq!(
            split_of(&got, &prefix("/match/prefix/one/")).as_deref(),
            Some("v2")
        );
        assert_eq!(
            split_of(&got, &prefix("/match/prefix/")).as_deref(),
            Some("v1")
        );
        assert_eq!(split_of(&got, &prefix("/")), None);
    }

    /// An Exact `/p/` gets a `= /p` beside it, served as the specification says (here: 404).
    #[test]
    fn exact_paths_ending_in_a_slash_are_shielded() {
        let got = locations(&[servable("Exact", "/two/", "v2")]);
        let keys: Vec<&LocationKey> = got.iter().map(|l| &l.key).collect();
        assert_eq!(
            keys,
            [
                &LocationKey::Exact("/two".into()),
                &LocationKey::Exact("/two/".into()),
                &LocationKey::Prefix("/".into()),
            ]
        );
        assert_eq!(split_of(&got, &LocationKey::Exact("/two".into())), None);
    }

    /// The suite's base Gateways through `model::build`: each served, each on its own pool
    /// address in key order, and an address its status holds kept (sticky).
    #[test]
    fn gateways_of_the_model_and_their_addresses() {
        use std::sync::Arc;

        use cluster_state::gateway::{GatewayStatus, GatewayStatusAddress};

        use super::super::conformance::{INFRA, load};

        let mut snapshot = load("httproute-simple-same-namespace.yaml");
        let build = |snapshot: &cluster_state::Snapshot| {
            let objects = Objects::from_snapshot(snapshot);
            crate::model::build(&objects, &crate::class::Selection::default()).gateway
        };
        let pool: Pool = "127.0.1.0/24".parse().unwrap();
        let ip = |s: &str| Served::Own(s.parse().unwrap());
        let names = |plan: &Plan| -> Vec<(String, Served)> {
            plan.addresses(Some(&pool))
                .into_iter()
                .filter(|(g, _)| g.namespace == INFRA)
                .map(|(g, served)| (g.name, served))
                .collect()
        };
        let plan = build(&snapshot);
        assert_eq!(
            names(&plan),
            [
                ("all-namespaces".to_owned(), ip("127.0.1.1")),
                ("backend-namespaces".to_owned(), ip("127.0.1.2")),
                ("same-namespace".to_owned(), ip("127.0.1.3")),
                (
                    "same-namespace-with-https-listener".to_owned(),
                    ip("127.0.1.4")
                ),
            ]
        );
        let served = plan.addresses(None);
        assert!(served.values().all(|s| *s == Served::Shared));
        // The route of the test: `location /` of `same-namespace` forwards to its split.
        let same = plan
            .gateways
            .iter()
            .find(|g| g.gateway == ObjectRef::new(INFRA, "same-namespace"))
            .unwrap();
        let server = &same.sockets[0].servers[0];
        assert_eq!((same.sockets[0].port, server.name.as_ref()), (80, None));
        assert_eq!(
            split_of(&server.locations, &LocationKey::Prefix("/".into())).as_deref(),
            Some("gw:gateway-conformance-infra/gateway-conformance-infra-test#0")
        );

        let key = ObjectRef::new(INFRA, "same-namespace");
        let gateway = Arc::make_mut(snapshot.gateways.get_mut(&key).unwrap());
        gateway.status = Some(GatewayStatus {
            addresses: Some(vec![GatewayStatusAddress {
                type_: Some("IPAddress".into()),
                value: "127.0.1.9".into(),
            }]),
            ..GatewayStatus::default()
        });
        let plan = build(&snapshot);
        let got = names(&plan);
        assert_eq!(got[2], ("same-namespace".to_owned(), ip("127.0.1.9")));
        assert_eq!(got[3].1, ip("127.0.1.3"));
    }

    /// `covering` lists exactly the names `covers` accepts.
    #[test]
    fn covering_agrees_with_covers() {
        let names: Vec<Option<Hostname>> = [
            "", "a.b.c", "b.c", "c", "*.b.c", "*.c", "*.a.b.c", "x.b.c", "*.x.c",
        ]
        .iter()
        .map(|n| Hostname::new(n))
        .collect();
        for inner in &names {
            let listed = covering(inner.as_ref());
            for outer in &names {
                assert_eq!(
                    listed.contains(outer),
                    covers(outer.as_ref(), inner.as_ref()),
                    "{outer:?} over {inner:?}"
                );
            }
        }
    }

    #[test]
    fn covering_host_names() {
        let name = |s: &str| Hostname::new(s);
        let wild = name("*.example.com");
        assert!(covers(None, None));
        assert!(covers(None, wild.as_ref()));
        assert!(!covers(wild.as_ref(), None));
        assert!(covers(wild.as_ref(), name("a.b.example.com").as_ref()));
        assert!(covers(wild.as_ref(), name("*.b.example.com").as_ref()));
        assert!(covers(wild.as_ref(), wild.as_ref()));
        assert!(!covers(wild.as_ref(), name("*.com").as_ref()));
        assert!(!covers(name("a.example.com").as_ref(), wild.as_ref()));
    }

    /// A random candidate: `(type, path, header condition, regex)` drawn from a small
    /// alphabet, so that paths overlap often.
    fn arbitrary_candidate() -> impl proptest::strategy::Strategy<Value = (u8, String, bool)> {
        use proptest::prelude::*;
        let segment = prop::sample::select(vec!["a", "b", "ab"]);
        (
            0_u8..3,
            prop::collection::vec(segment, 0..3),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(kind, segments, slash, header)| {
                let mut path = format!("/{}", segments.join("/"));
                if slash && path.len() > 1 {
                    path.push('/');
                }
                (kind, path, header)
            })
    }

    /// The specification's choice: the first candidate, in order, whose path and header
    /// condition hold for the request (`None`: 404).
    fn spec_choice(candidates: &[Servable], path: &str, header: bool) -> Option<String> {
        candidates.iter().find_map(|(rule, conditions, action)| {
            let path_ok = match rule {
                Some(rule) => rule.match_len(path).is_some(),
                None => {
                    let pattern = conditions.path.as_deref().unwrap_or_default();
                    // The test's regexes are `(*LIMIT_MATCH=…)^(?:/a.*)\z`: a literal start.
                    let literal = pattern
                        .split("^(?:")
                        .nth(1)
                        .and_then(|p| p.strip_suffix(".*)\\z"))
                        .unwrap_or_default();
                    path.starts_with(literal)
                }
            };
            let header_ok = conditions.headers.is_empty() || header;
            (path_ok && header_ok).then(|| match action {
                Action::Forward { split, .. } => split.clone(),
                Action::Redirect { .. } | Action::Fail => "500".into(),
            })
        })
    }

    /// nginx's choice: the `=` location equal to the path, else the longest prefix location;
    /// then the first candidate of its list whose conditions hold.
    fn nginx_choice(locations: &[Location], path: &str, header: bool) -> Option<String> {
        let location = locations
            .iter()
            .find(|l| l.key == LocationKey::Exact(path.to_owned()))
            .or_else(|| {
                locations
                    .iter()
                    .filter(|l| matches!(&l.key, LocationKey::Prefix(p) if path.starts_with(p.as_str())))
                    .max_by_key(|l| match &l.key {
                        LocationKey::Prefix(p) => p.len(),
                        _ => 0,
                    })
            })?;
        location.candidates.iter().find_map(|choice| {
            let regex_ok = choice.conditions.path.as_deref().is_none_or(|pattern| {
                let literal = pattern
                    .split("^(?:")
                    .nth(1)
                    .and_then(|p| p.strip_suffix(".*)\\z"))
                    .unwrap_or_default();
                path.starts_with(literal)
            });
            let header_ok = choice.conditions.headers.is_empty() || header;
            (regex_ok && header_ok).then(|| match &choice.action {
                Action::Forward { split, .. } => split.clone(),
                Action::Redirect { .. } | Action::Fail => "500".into(),
            })
        })
    }

    proptest::proptest! {
        /// Rendering notes §2.2, the proof obligation: nginx's location choice, then the first
        /// candidate of its list whose conditions hold, is the specification's choice over all
        /// the candidates.
        #[test]
        fn locations_agree_with_the_specification(
            drawn in proptest::collection::vec(arbitrary_candidate(), 1..8),
            requests in proptest::collection::vec(arbitrary_candidate(), 1..8),
        ) {
            let candidates: Vec<Servable> = drawn
                .iter()
                .enumerate()
                .map(|(index, (kind, path, header))| {
                    let split = format!("c{index}");
                    let (rule, mut conditions) = match kind {
                        0 => (Some(gateway_path("Exact", path).unwrap()), Conditions::default()),
                        1 => (
                            Some(gateway_path("PathPrefix", path).unwrap()),
                            Conditions::default(),
                        ),
                        _ => (
                            None,
                            Conditions {
                                path: Some(whole_match(&format!("{}.*", path))),
                                ..Conditions::default()
                            },
                        ),
                    };
                    if *header {
                        conditions.headers.push(("x".into(), "1".into()));
                    }
                    let action = Action::Forward {
                        split,
                        route: ObjectRef::new("ns", "r"),
                        path: path.clone(),
                        actions: RuleActions::default(),
                        prefix: None,
                    };
                    (rule, conditions, action)
                })
                .collect();
            let built = locations(&candidates);
            for (_, path, header) in &requests {
                proptest::prop_assert_eq!(
                    nginx_choice(&built, path, *header),
                    spec_choice(&candidates, path, *header),
                    "request {} (header {}) with {:?}",
                    path,
                    header,
                    drawn
                );
            }
        }
    }
}
