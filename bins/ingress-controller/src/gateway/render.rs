//! The Gateways' nginx servers (rendering notes §3): each Gateway's sockets placed on its
//! address, one `server` per host name, its locations proxying through the Lua balancer to
//! the rule's split, or answering 500 or 404. Built only through the shared helpers of
//! [`crate::render`], so every value is one quoted argument.
//!
//! Placement: with `--gateway-addresses`, each Gateway listens on its own address, and each
//! socket gets exactly one `default_server` (its listener without host name, else a generated
//! one answering 404 and presenting the default certificate). Without, the Gateways share the
//! listen address with the Ingresses. Who keeps a host name several claim on a socket is
//! [`super::collisions`]'s decision: a Gateway server of an Ingress host's exact name is
//! written as one `server` with it, the locations each keeps side by side. When no Ingress
//! claims the catch-all, a Gateway listener without host name takes the default server from
//! the generated one.
//!
//! A server of GRPCRoutes (S-GR.3, S-GR.5) forwards with `grpc_pass`, and answers what no
//! route matches with the gRPC status `UNIMPLEMENTED`, and what would be a 5xx of nginx's
//! (invalid backends, no endpoint) with `UNAVAILABLE`: HTTP 200, `application/grpc`, the
//! status in the trailers, as a gRPC server answers. A plaintext socket speaks h2c
//! (`listen … http2`, so HTTP/1 no longer) only when it serves GRPCRoutes and nothing else;
//! on TLS, ALPN offers h2 when `use-http2` is on.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use nginx_conf::Directive;

use super::backend_filters::{BackendRoute, member_action};
use super::collisions::{Ask, Collisions, IngressHosts, Merged, decide};
use super::filters::{Filter, HeaderEdits, PathChange, Redirect, Rewrite};
use super::mirror::Sample;
use super::misdirected::Listeners;
use super::plan::{Action, Choice, Conditions, Location, Served, Server};
use super::timeouts::{Limit, Timeouts};
use crate::annotations::{BackendProtocol, NextUpstream};
use crate::hosts::Host;
use crate::lua;
use crate::paths::LocationKey;
use crate::render::{
    Context, RenderError, Result, default_certificate, directive, hsts_header, location_header,
    lua_block, proxy_within, regex_escape, standard_headers,
};

/// The servers of one nginx listening socket.
pub(crate) struct Placed<'a> {
    /// The `listen` address and port.
    listen: String,
    /// Whether it speaks TLS.
    tls: bool,
    /// Whether the Ingress servers listen on it too.
    ingress: bool,
    /// The port of the Gateway listeners it serves (the first Gateway's: redirects keep it).
    port: i32,
    /// The host names taken (`None`: the catch-all), and by which Gateway.
    names: BTreeMap<Option<super::hostname::Hostname>, cluster_state::ObjectRef>,
    /// The servers, in the Gateways' order.
    servers: Vec<&'a Server>,
    /// The servers that share their name with an Ingress host, each as one `server` with the
    /// Ingress's locations.
    merged: Vec<Merged<'a>>,
}

impl Placed<'_> {
    /// Whether the socket serves GRPCRoutes and nothing else: then a plaintext one speaks
    /// h2c, and each of its servers answers as a gRPC server (S-GR.5).
    fn grpc_only(&self) -> bool {
        let serves = |s: &Server| s.locations.iter().any(|l| !l.candidates.is_empty());
        !self.ingress
            && self.servers.iter().any(|s| s.grpc)
            && self.servers.iter().all(|s| s.grpc || !serves(s))
    }
}

/// The named locations answering gRPC statuses, and the status each answers.
const GRPC_ANSWERS: [(&str, &str, &str); 2] = [
    ("@gw_grpc_unimplemented", "12", "no route matches the call"),
    ("@gw_grpc_unavailable", "14", "no backend can take the call"),
];

/// The longest piece of a candidate list one `set` writes (nginx's words end at 4 KB).
const CHUNK: usize = 4000;

/// The longest request-metrics path label written; a longer one is written `-`.
const MAX_LABEL: usize = 2048;

/// The nginx port of a listener on `port`: 80 and 443 are the controller's HTTP and HTTPS
/// ports (as the Service in front of it maps them), others their own number.
fn nginx_port(port: i32, context: &Context<'_>) -> Option<u16> {
    match port {
        80 => Some(context.options.http_port),
        443 => Some(context.options.https_port),
        other => u16::try_from(other).ok().filter(|p| *p != 0),
    }
}

/// `address` as the host part of a `listen` argument.
fn listen_host(address: IpAddr) -> String {
    match address {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    }
}

/// Whether a Gateway server without host name is the default server of the Ingress HTTP
/// port, and of the HTTPS port.
pub(crate) fn catch_alls(placed: &[Placed<'_>]) -> (bool, bool) {
    let holds = |tls: bool| {
        placed
            .iter()
            .any(|p| p.ingress && p.tls == tls && p.names.contains_key(&None))
    };
    (holds(false), holds(true))
}

/// Each Ingress host name a Gateway server joins, and whether on the HTTPS port: the Ingress
/// server does not listen there itself.
pub(crate) fn merged_hosts(placed: &[Placed<'_>]) -> BTreeSet<(String, bool)> {
    placed
        .iter()
        .flat_map(|p| p.merged.iter().map(move |m| (m, p.tls)))
        .filter_map(|(m, tls)| match &m.ingress.host {
            Host::Exact(name) => Some((name.clone(), tls)),
            Host::Any | Host::Wildcard(_) => None,
        })
        .collect()
}

/// Every Gateway server the model serves, on its socket, and every loss
/// ([`super::collisions`]).
pub(crate) fn place<'a>(context: &Context<'a>) -> (Vec<Placed<'a>>, Collisions) {
    let options = context.options;
    let model: &'a crate::model::Model = context.model;
    let plan = &model.gateway;
    let addresses = plan.addresses(options.gateway_addresses.as_ref());
    let mut asks = Vec::new();
    for gateway in &plan.gateways {
        let Some(served) = addresses.get(&gateway.gateway) else {
            continue;
        };
        let (host, shared) = match served {
            Served::Own(address) => (listen_host(*address), false),
            Served::Shared => (options.listen_address.clone(), true),
        };
        for socket in &gateway.sockets {
            let Some(port) = nginx_port(socket.port, context) else {
                continue;
            };
            let ingress = (shared && (port == options.http_port || port == options.https_port))
                .then_some(port == options.https_port);
            asks.push(Ask {
                gateway: &gateway.gateway,
                socket,
                listen: format!("{host}:{port}"),
                ingress,
            });
        }
    }
    let hosts = IngressHosts::of(&model.servers, &model.ingress_created);
    let (seats, collisions) = decide(&asks, &hosts);
    let placed = seats
        .into_iter()
        .map(|seat| Placed {
            listen: seat.listen,
            tls: seat.tls,
            ingress: seat.ingress,
            port: seat.port,
            names: seat.names,
            servers: seat.servers,
            merged: seat.merged,
        })
        .collect();
    (placed, collisions)
}

/// The `server` blocks of the Gateway servers `placed`, and the `http`-level `map`s their
/// header filters use.
pub(crate) fn servers(context: &Context<'_>, placed: &[Placed<'_>]) -> Result<Vec<Directive>> {
    let mut appends = Appends::default();
    let mut out = Vec::new();
    for (index, socket) in placed.iter().enumerate() {
        // S-HN.2: on HTTPS, the listener the SNI selects, for each server to compare.
        let variable = format!("$gw_sni_{index}");
        let listeners = socket.tls.then(|| {
            let merged = socket.merged.iter().map(|m| m.gateway);
            Listeners::of(&socket.names, socket.servers.iter().copied().chain(merged))
        });
        if let Some(listeners) = &listeners {
            out.push(listeners.map(&variable)?);
        }
        let check = |s: &Server| {
            let listeners = listeners.as_ref()?;
            Some(listeners.check(&variable, &socket.names, s))
        };
        let has_default = socket.ingress || socket.names.contains_key(&None);
        if !has_default {
            let fallback = Server {
                name: None,
                listener: String::new(),
                grpc: false,
                certificates: Vec::new(),
                locations: vec![Location {
                    key: LocationKey::Prefix("/".into()),
                    candidates: Vec::new(),
                }],
                routes: BTreeSet::new(),
                claims: std::collections::BTreeMap::new(),
            };
            let misdirected = check(&fallback).transpose()?;
            out.push(server(
                context,
                socket,
                &fallback,
                None,
                misdirected,
                &mut appends,
            )?);
        }
        for s in &socket.servers {
            let misdirected = check(s).transpose()?;
            out.push(server(context, socket, s, None, misdirected, &mut appends)?);
        }
        for m in &socket.merged {
            out.push(server(
                context,
                socket,
                m.gateway,
                Some(m),
                None,
                &mut appends,
            )?);
        }
    }
    out.extend(appends.maps()?);
    Ok(out)
}

/// The request headers a RequestHeaderModifier appends to (`add`), each `(name in lower case,
/// value)` once; the `map` of entry N sets `$gw_add_N` (rendering notes §6.1).
#[derive(Default)]
struct Appends {
    list: Vec<(String, String)>,
}

impl Appends {
    /// The variable holding the client's `name` header with `value` appended.
    fn variable(&mut self, name: &str, value: &str) -> String {
        let key = (name.to_ascii_lowercase(), value.to_owned());
        let index = match self.list.iter().position(|k| *k == key) {
            Some(index) => index,
            None => {
                self.list.push(key);
                self.list.len() - 1
            }
        };
        format!("$gw_add_{index}")
    }

    /// `map $http_NAME $gw_add_N { "" "VALUE"; default "$http_NAME,VALUE"; }` for each.
    fn maps(&self) -> Result<Vec<Directive>> {
        self.list
            .iter()
            .enumerate()
            .map(|(index, (name, value))| {
                // `[A-Za-z0-9-]` names (S-F.1): nginx's variable is `$http_` and the name in
                // lower case with `_` for `-`.
                let client = format!("$http_{}", name.replace('-', "_"));
                let value = literal(value);
                Ok(
                    directive("map", [client.as_str(), &format!("$gw_add_{index}")])?.block(vec![
                        directive("", [value.as_str()])?,
                        directive("default", [format!("{client},{value}")])?,
                    ]),
                )
            })
            .collect()
    }
}

/// `value` where nginx expands variables: each `$` written `${literal_dollar}`.
fn literal(value: &str) -> String {
    value.replace('$', "${literal_dollar}")
}

/// One `server` on `socket`: the Gateway server `s`, joined by the Ingress server of the
/// same name when `merged` says so (then with the locations each keeps, and the Ingress's
/// certificate); `misdirected` answers 421 to a request whose SNI selected another listener
/// (S-HN.2).
fn server(
    context: &Context<'_>,
    socket: &Placed<'_>,
    s: &Server,
    merged: Option<&Merged<'_>>,
    misdirected: Option<Directive>,
    appends: &mut Appends,
) -> Result<Directive> {
    let mut listen = vec![socket.listen.as_str()];
    let grpc_only = socket.grpc_only();
    if socket.tls {
        listen.push("ssl");
        if context.model.global.http2 {
            listen.push("http2");
        }
    } else if grpc_only {
        listen.push("http2");
    }
    let grpc = s.grpc || grpc_only;
    if s.name.is_none() {
        listen.push("default_server");
    }
    let mut body = vec![directive("listen", listen)?];
    match &s.name {
        None => body.push(directive("server_name", ["_"])?),
        Some(name) => {
            // A Gateway wildcard covers one or more labels: nginx's own `*.suffix` form.
            let name = name.to_string();
            body.push(directive("server_name", [&name])?);
            body.push(directive("set", ["$ingress_host", &name])?);
        }
    }
    body.push(directive("set", ["$proxy_upstream_name", "-"])?);
    if socket.tls {
        let model = context.model;
        let own: Vec<String> = s
            .certificates
            .iter()
            .filter_map(|secret| {
                let certificate = model.certificates.get(secret)?;
                let file = context.options.certificate_path(secret, certificate);
                Some(file.to_string_lossy().into_owned())
            })
            .collect();
        // Joined with an Ingress host, which holds the name on this port only under `tls`:
        // the Ingress's certificate.
        let ingress = merged.and_then(|m| crate::render::server_certificate(context, m.ingress));
        let files = match ingress {
            Some(file) => vec![file],
            None if own.is_empty() => default_certificate(context).into_iter().collect(),
            None => own,
        };
        if files.is_empty() {
            body.push(directive("ssl_reject_handshake", ["on"])?);
        }
        for file in &files {
            body.push(directive("ssl_certificate", [file])?);
            body.push(directive("ssl_certificate_key", [file])?);
        }
    }
    body.extend(misdirected);
    // The actions the dispatcher jumps to, each a named location `@gwN` (N its index).
    let mut named: Vec<&Action> = Vec::new();
    let mut emit = Emit {
        context,
        socket,
        appends,
        copies: Vec::new(),
        members: Vec::new(),
        grpc,
    };
    for location in &s.locations {
        if merged.is_some_and(|m| !m.split.gateway.contains(&location.key)) {
            continue;
        }
        body.push(self::location(location, &mut named, &mut emit)?);
    }
    if let Some(m) = merged {
        for location in &m.ingress.locations {
            if m.split.ingress.contains(&location.key) {
                body.push(crate::render::location_block(context, location)?);
            }
        }
        if m.split.fallback {
            body.push(crate::render::fallback_location(m.ingress)?);
        }
    }
    for (index, action) in named.iter().enumerate() {
        let mut block = Vec::new();
        emit.action(action, &mut block)?;
        body.push(directive("location", [format!("@gw{index}")])?.block(block));
    }
    // Emitting a member may add copies: members first.
    let mut index = 0;
    while let Some((route, action)) = emit.members.get(index).cloned() {
        let mut block = Vec::new();
        emit.action(&member_action(&action, &route), &mut block)?;
        body.push(directive("location", [&route.location])?.block(block));
        index += 1;
    }
    for index in 0..emit.copies.len() {
        body.push(emit.copy_location(index)?);
    }
    if grpc {
        body.extend(grpc_answers()?);
    }
    Ok(directive("server", [""; 0])?.block(body))
}

/// A gRPC server's answers (S-GR.3): nginx's 404 (no route) as `UNIMPLEMENTED`, its 5xx
/// (invalid backends, no endpoint, none reachable) as `UNAVAILABLE`, each HTTP 200 with
/// `application/grpc` and the status in the trailers.
fn grpc_answers() -> Result<Vec<Directive>> {
    let [(unimplemented, _, _), (unavailable, _, _)] = GRPC_ANSWERS;
    let mut out = vec![
        directive("error_page", ["404", "=", unimplemented])?,
        directive("error_page", ["500", "502", "503", "504", "=", unavailable])?,
    ];
    for (name, status, message) in GRPC_ANSWERS {
        out.push(directive("location", [name])?.block(vec![
            directive("default_type", ["application/grpc"])?,
            directive("add_trailer", ["grpc-status", status, "always"])?,
            directive("add_trailer", ["grpc-message", message, "always"])?,
            directive("return", ["200", ""])?,
        ]));
    }
    Ok(out)
}

/// One `location`: its first candidate's action inline when that one has no conditions (it
/// matches every request nginx sends there); otherwise the candidate list for the Lua
/// dispatcher, whose actions are added to `named`; 404 without candidates (S-PR.8).
fn location<'a>(
    location: &'a Location,
    named: &mut Vec<&'a Action>,
    emit: &mut Emit<'_, '_>,
) -> Result<Directive> {
    let mut body = Vec::new();
    match location.candidates.first() {
        None => body.push(directive("return", ["404"])?),
        Some(first) if first.conditions.is_empty() => emit.action(&first.action, &mut body)?,
        Some(_) => {
            let list = candidate_list(&location.candidates, named);
            // nginx reads a word of at most 4 KB: a longer list is appended in chunks.
            for (index, chunk) in list.as_bytes().chunks(CHUNK).enumerate() {
                // Percent-encoded data: no `$`, so nginx expands nothing in it (checked).
                let chunk = nginx_conf::Word::literal(chunk)
                    .map(|_| String::from_utf8_lossy(chunk))
                    .map_err(|source| RenderError::Emit {
                        what: "set $gw_candidates".into(),
                        source,
                    })?;
                let value = match index {
                    0 => chunk.into_owned(),
                    _ => format!("${{gw_candidates}}{chunk}"),
                };
                body.push(directive("set", ["$gw_candidates", &value])?);
            }
            body.push(lua_block("rewrite_by_lua_block", lua::GATEWAY_MATCH)?);
        }
    }
    Ok(location_header(&location.key)?.block(body))
}

/// The dispatcher's data for `candidates` (rendering notes §4.2): candidates separated by
/// `;`, fields by `,`: `a=N` (the named location `@gwN`), `m=METHOD`, `h=NAME:VALUE`,
/// `q=NAME:VALUE`, `H=NAME:REGEX` and `Q=NAME:REGEX` (RegularExpression header and query
/// values), `p=REGEX`. Every value, parameter name and regex is percent-encoded outside
/// `[A-Za-z0-9._~-]`; header names are `[A-Za-z0-9-]` already.
fn candidate_list<'a>(candidates: &'a [Choice], named: &mut Vec<&'a Action>) -> String {
    let mut out = Vec::new();
    for choice in candidates {
        let id = match named.iter().position(|a| **a == choice.action) {
            Some(id) => id,
            None => {
                named.push(&choice.action);
                named.len() - 1
            }
        };
        let Conditions {
            method,
            headers,
            query,
            regexes,
            path,
        } = &choice.conditions;
        let mut fields = vec![format!("a={id}")];
        fields.extend(method.iter().map(|m| format!("m={}", encode(m))));
        fields.extend(
            headers
                .iter()
                .map(|(name, value)| format!("h={}:{}", encode(name), encode(value))),
        );
        fields.extend(
            query
                .iter()
                .map(|(name, value)| format!("q={}:{}", encode(name), encode(value))),
        );
        fields.extend(regexes.iter().map(|r| {
            let key = if r.header { 'H' } else { 'Q' };
            format!("{key}={}:{}", encode(&r.name), encode(&r.pattern))
        }));
        fields.extend(path.iter().map(|p| format!("p={}", encode(p))));
        out.push(fields.join(","));
    }
    out.join(";")
}

/// The response headers CORS owns: the backend's are hidden where the gateway answers CORS.
const CORS_HEADERS: [&str; 6] = [
    "Access-Control-Allow-Origin",
    "Access-Control-Allow-Credentials",
    "Access-Control-Allow-Methods",
    "Access-Control-Allow-Headers",
    "Access-Control-Expose-Headers",
    "Access-Control-Max-Age",
];

/// A rule's CORS (S-F.7) for the Lua `access()`, as data in `$gw_cors`: fields separated by
/// `,`, `o=ORIGIN` for each origin, `c=1` with credentials, `m=`, `h=` and `e=` the methods,
/// allowed and exposed headers joined with `, `, `a=` the max age; every value percent-encoded.
/// The backend's own CORS headers are hidden.
fn cors(cors: &super::cors::Cors, body: &mut Vec<Directive>) -> Result<()> {
    let mut fields: Vec<String> = cors
        .origins
        .iter()
        .map(|o| format!("o={}", encode(o)))
        .collect();
    if cors.credentials {
        fields.push("c=1".into());
    }
    for (key, list) in [
        ("m", &cors.methods),
        ("h", &cors.headers),
        ("e", &cors.expose),
    ] {
        if !list.is_empty() {
            fields.push(format!("{key}={}", encode(&list.join(", "))));
        }
    }
    fields.push(format!("a={}", cors.max_age));
    // Percent-encoded data: no `$`, so nginx expands nothing in it.
    body.push(directive("set", ["$gw_cors", &fields.join(",")])?);
    for name in CORS_HEADERS {
        body.push(directive("proxy_hide_header", [name])?);
    }
    Ok(())
}

/// `text` with every byte outside `[A-Za-z0-9._~-]` written `%XX`.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"._~-".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What the actions of one server are written with.
struct Emit<'c, 'a> {
    context: &'c Context<'a>,
    socket: &'c Placed<'a>,
    appends: &'c mut Appends,
    /// The server's mirror copies, each served by location [`copy_uri`] of its index.
    copies: Vec<MirrorCopy>,
    /// The backends with request edits of their own (S-F.9) the server's forwards draw, each
    /// with the forward it belongs to: a named location each.
    members: Vec<(BackendRoute, Action)>,
    /// Whether the server is a gRPC one: `grpc_pass`, and the `grpc_` header directives.
    grpc: bool,
}

/// Where a RequestMirror sends its copies, and what they carry (S-F.6).
#[derive(Clone, PartialEq)]
struct MirrorCopy {
    /// The backend's name in the table.
    upstream: String,
    /// The share of requests copied.
    sample: Sample,
    /// The rule's request header edits and URLRewrite host, applied to the copy too.
    request: Vec<HeaderEdits>,
    /// As above.
    host: Option<String>,
}

/// The URI of the internal location of mirror copy `index`: it begins with `//`, which no
/// Gateway path (S-PM.3) and no client URI (nginx merges slashes) can reach.
fn copy_uri(index: usize) -> String {
    format!("//gw-mirror/{index}")
}

impl Emit<'_, '_> {
    /// The directives of `action`, appended to `body`: proxied to its split with the rule's
    /// filters and timeouts, redirected, or answered 500.
    fn action(&mut self, action: &Action, body: &mut Vec<Directive>) -> Result<()> {
        match action {
            Action::Forward {
                split,
                route,
                path,
                actions,
                prefix,
            } => {
                body.push(directive("set", ["$proxy_upstream_name", split])?);
                // The request metrics' labels: the route in the Ingress's place.
                body.push(directive("set", ["$namespace", &route.namespace])?);
                body.push(directive("set", ["$ingress_name", &route.name])?);
                // `set` reads `$` as a variable: a path's `$` is written as `${literal_dollar}`.
                let label = literal(path);
                let label = if label.len() <= MAX_LABEL {
                    &label
                } else {
                    "-"
                };
                body.push(directive("set", ["$location_path", label])?);
                // Every `set` before the rewrites: `rewrite … break` ends the `set` lines.
                let mirrored = actions.filters.iter().any(|f| match f {
                    Filter::Mirror(m) => m.upstream.is_some(),
                    _ => false,
                });
                if mirrored {
                    // Where the copies find this request's backend name again (Lua `mirror()`).
                    body.push(directive("set", ["$gw_mirror_main", "-"])?);
                }
                for filter in &actions.filters {
                    if let Filter::Cors(cors) = filter {
                        self::cors(cors, body)?;
                    }
                }
                let mut request = Vec::new();
                let mut response = Vec::new();
                let mut host = None;
                for filter in &actions.filters {
                    match filter {
                        Filter::RequestHeaders(edits) => request.push(edits),
                        Filter::ResponseHeaders(edits) => response.push(edits),
                        Filter::Rewrite(Rewrite { hostname, path }) => {
                            host = hostname.as_deref().or(host);
                            if let Some(change) = path {
                                // After the `set` lines: `rewrite … break` ends them.
                                rewrite(change, prefix.as_deref(), body)?;
                            }
                        }
                        // A rule with a redirect is planned as [`Action::Redirect`]; CORS is
                        // above, mirrors once the rule's request edits are known, below;
                        // backends with edits of their own are named locations of the server.
                        Filter::Redirect(_) | Filter::Mirror(_) | Filter::Cors(_) => {}
                        Filter::BackendHeaders(route) => {
                            if !self
                                .members
                                .iter()
                                .any(|(r, _)| r.location == route.location)
                            {
                                self.members.push((route.clone(), action.clone()));
                            }
                        }
                    }
                }
                for filter in &actions.filters {
                    if let Filter::Mirror(m) = filter {
                        let Some(upstream) = &m.upstream else {
                            continue;
                        };
                        let copy = MirrorCopy {
                            upstream: upstream.clone(),
                            sample: m.sample,
                            request: request.iter().map(|e| (*e).clone()).collect(),
                            host: host.map(str::to_owned),
                        };
                        let index = match self.copies.iter().position(|c| *c == copy) {
                            Some(index) => index,
                            None => {
                                self.copies.push(copy);
                                self.copies.len() - 1
                            }
                        };
                        body.push(directive("mirror", [copy_uri(index)])?);
                    }
                }
                self.request_headers(&request, host, body)?;
                response_headers(&response, self.module(), body)?;
                let next = timeouts(&actions.timeouts, body)?;
                let protocol = if self.grpc {
                    BackendProtocol::Grpc
                } else {
                    BackendProtocol::Http
                };
                body.extend(proxy_within(protocol, &NextUpstream::default(), &next)?);
            }
            Action::Redirect {
                redirect,
                response,
                prefix,
            } => {
                let response: Vec<&HeaderEdits> = response.iter().collect();
                response_headers(&response, self.module(), body)?;
                self.redirect(redirect, prefix.as_deref(), body)?;
            }
            Action::Fail => body.push(directive("return", ["500"])?),
        }
        Ok(())
    }

    /// The internal location of mirror copy `index` (S-F.6; nginx's `mirror` subrequest,
    /// whose answer nginx drops): its backend and share as data for the Lua `mirror()`, which
    /// answers 204 itself when the request is not drawn; the original request URI, the rule's
    /// request header edits; one try, on one endpoint.
    fn copy_location(&mut self, index: usize) -> Result<Directive> {
        let Some(MirrorCopy {
            upstream,
            sample,
            request,
            host,
        }) = self.copies.get(index).cloned()
        else {
            return directive("return", ["500"]);
        };
        // Subrequests share their parent's variables: both are set in every copy location.
        let share = format!("{}/{}", sample.numerator, sample.denominator);
        let mut body = vec![
            directive("internal", [""; 0])?,
            directive("set", ["$gw_mirror_upstream", &upstream])?,
            directive("set", ["$gw_mirror_sample", &share])?,
        ];
        let edits: Vec<&HeaderEdits> = request.iter().collect();
        self.request_headers(&edits, host.as_deref(), &mut body)?;
        body.push(directive("proxy_next_upstream", ["off"])?);
        // The mirror subrequest skips the access phase: the peer is picked while rewriting.
        body.push(lua_block("rewrite_by_lua_block", lua::MIRROR)?);
        body.push(directive(
            "proxy_pass",
            ["http://ingress_balancer$request_uri"],
        )?);
        Ok(directive("location", ["=", &copy_uri(index)])?.block(body))
    }

    /// The prefix of the proxy module's directives: `grpc` on a gRPC server, else `proxy`.
    fn module(&self) -> &'static str {
        if self.grpc { "grpc" } else { "proxy" }
    }

    /// The request headers of a proxied request when a filter changes them (rendering notes
    /// §6.1): a location with a `proxy_set_header` (`grpc_set_header`) inherits none from
    /// `http`, so the standard list is written again, without the names the filters set, add
    /// or remove, and with URLRewrite's `host` as `Host`; gRPC has no `Upgrade` nor
    /// `Connection` (HTTP/2).
    fn request_headers(
        &mut self,
        edits: &[&HeaderEdits],
        host: Option<&str>,
        body: &mut Vec<Directive>,
    ) -> Result<()> {
        if edits.is_empty() && host.is_none() {
            return Ok(());
        }
        let changed = |name: &str| {
            edits.iter().any(|e| {
                let named = e.set.iter().chain(&e.add).map(|(n, _)| n);
                named.chain(&e.remove).any(|n| n.eq_ignore_ascii_case(name))
            })
        };
        let set_header = format!("{}_set_header", self.module());
        for (name, value) in standard_headers(&self.context.model.global) {
            if changed(name) || (self.grpc && matches!(name, "Upgrade" | "Connection")) {
                continue;
            }
            let value = match (name, host) {
                // A lower-case DNS name (checked by the filter): no `$`.
                ("Host", Some(host)) => host,
                _ => value,
            };
            body.push(directive(&set_header, [name, value])?);
        }
        for e in edits {
            for (name, value) in &e.set {
                let value = literal(value);
                body.push(directive(&set_header, [name, &value])?);
            }
            for (name, value) in &e.add {
                let variable = self.appends.variable(name, value);
                body.push(directive(&set_header, [name, &variable])?);
            }
            for name in &e.remove {
                // nginx sends no header whose value is empty.
                body.push(directive(&set_header, [name.as_str(), ""])?);
            }
        }
        Ok(())
    }

    /// `return CODE LOCATION` (rendering notes §6.3): the scheme and port from the filter and
    /// the listener (S-F.3), the filter's host or the request's, and the path from the raw
    /// request line (`$request_uri`), never from the decoded `$uri`, which may hold a CR LF.
    fn redirect(
        &self,
        redirect: &Redirect,
        prefix: Option<&str>,
        body: &mut Vec<Directive>,
    ) -> Result<()> {
        let listener_scheme = if self.socket.tls { "https" } else { "http" };
        let listener_port = u16::try_from(self.socket.port).unwrap_or_default();
        let (scheme, port) = redirect.scheme_and_port(listener_scheme, listener_port);
        // A lower-case DNS name (checked by the filter), or the request's, which nginx has
        // checked and lower-cased, without its port.
        let host = redirect.hostname.as_deref().unwrap_or("$host");
        let origin = match port {
            Some(port) => format!("{scheme}://{host}:{port}"),
            None => format!("{scheme}://{host}"),
        };
        let code = redirect.code.to_string();
        let answer = |location: String| directive("return", [code.clone(), location]);
        match &redirect.path {
            None => body.push(answer(format!("{origin}$request_uri"))?),
            Some(PathChange::Full(value)) => {
                body.push(answer(format!("{origin}{}$is_args$args", literal(value)))?);
            }
            Some(PathChange::Prefix(value)) => {
                let Some(prefix) = prefix else {
                    body.push(directive("return", ["500"])?);
                    return Ok(());
                };
                let matched = regex_escape(prefix.trim_end_matches('/'));
                let replacement = literal(value.trim_end_matches('/'));
                let whole = if replacement.is_empty() {
                    "/"
                } else {
                    &replacement
                };
                // The path is the prefix alone (S-F.5: then never empty), or the prefix and
                // more; a request that spells the prefix with escapes matches neither and gets
                // the replacement alone.
                let cases = [
                    (
                        format!("^{matched}(?<gw_query>\\?.*)?$"),
                        format!("{origin}{whole}$gw_query"),
                    ),
                    (
                        format!("^{matched}(?<gw_rest>/[^?]*)(?<gw_query>\\?.*)?$"),
                        format!("{origin}{replacement}$gw_rest$gw_query"),
                    ),
                ];
                for (pattern, location) in cases {
                    body.push(
                        directive("if", ["(", "$request_uri", "~", &pattern, ")"])?
                            .block(vec![answer(location)?]),
                    );
                }
                body.push(answer(format!("{origin}{whole}"))?);
            }
        }
        Ok(())
    }
}

/// The `rewrite` of URLRewrite's path `change` (rendering notes §6.4) for a match whose
/// literal path is `prefix`. `(?s)`: the path nginx rewrites is decoded, and without it `.`
/// stops at a `%0A`, the rewrite does not apply and the original path goes to the backend.
/// A path the rewrite does not match answers 500 rather than pass unchanged.
fn rewrite(change: &PathChange, prefix: Option<&str>, body: &mut Vec<Directive>) -> Result<()> {
    let prefix = match (change, prefix) {
        (PathChange::Full(value), _) => {
            let value = literal(value);
            body.push(directive("rewrite", ["^", value.as_str(), "break"])?);
            return Ok(());
        }
        (PathChange::Prefix(_), None) => {
            body.push(directive("return", ["500"])?);
            return Ok(());
        }
        (PathChange::Prefix(value), Some(prefix)) => (value, prefix),
    };
    let (value, prefix) = prefix;
    let matched = regex_escape(prefix.trim_end_matches('/'));
    let replacement = literal(value.trim_end_matches('/'));
    if replacement.is_empty() {
        let alone = format!("(?s)^{matched}\\z");
        let more = format!("(?s)^{matched}(/.*)\\z");
        body.push(directive("rewrite", [alone.as_str(), "/", "break"])?);
        body.push(directive("rewrite", [more.as_str(), "$1", "break"])?);
    } else {
        let pattern = format!("(?s)^{matched}(/.*)?\\z");
        let target = format!("{replacement}$1");
        body.push(directive("rewrite", [pattern.as_str(), &target, "break"])?);
    }
    body.push(directive("return", ["500"])?);
    Ok(())
}

/// The response header changes (rendering notes §6.2): `set` hides the backend's header and
/// adds the value, `add` adds it after the backend's, `remove` hides it (`module`: `proxy`,
/// or `grpc` for `grpc_hide_header`). A location with an `add_header` inherits none from
/// `http`: the HSTS header is added again.
fn response_headers(edits: &[&HeaderEdits], module: &str, body: &mut Vec<Directive>) -> Result<()> {
    if edits.is_empty() {
        return Ok(());
    }
    let hide = format!("{module}_hide_header");
    for e in edits {
        for (name, value) in &e.set {
            body.push(directive(&hide, [name])?);
            let value = literal(value);
            body.push(directive("add_header", [name, &value, "always"])?);
        }
        for (name, value) in &e.add {
            let value = literal(value);
            body.push(directive("add_header", [name, &value, "always"])?);
        }
        for name in &e.remove {
            body.push(directive(&hide, [name])?);
        }
    }
    body.push(hsts_header()?);
    Ok(())
}

/// `limit` as an nginx time: milliseconds, or 24 days for no limit (S-TO.1: just under 2³¹
/// ms, which nginx's timers hold on every platform).
fn nginx_time(limit: Limit) -> String {
    match limit {
        Limit::Disabled => "24d".into(),
        Limit::Millis(ms) => format!("{ms}ms"),
    }
}

/// The proxy timeouts of `timeouts` (rendering notes §6.5), appended to `body`: each attempt
/// bounded by the shorter of `backendRequest` and `request`; returns the bound of the time
/// spent passing the request on (`request`; `0`, none, when unset or disabled).
///
/// nginx has no deadline for a whole exchange: `proxy_read_timeout` bounds the wait between
/// two reads, so a backend that keeps sending can exceed `request` (docs/gateway-api.md §9).
fn timeouts(timeouts: &Timeouts, body: &mut Vec<Directive>) -> Result<String> {
    let longest = |limit: Limit| match limit {
        Limit::Disabled => u64::MAX,
        Limit::Millis(ms) => ms,
    };
    let attempt = match (timeouts.request, timeouts.backend_request) {
        (Some(a), Some(b)) => Some(if longest(a) <= longest(b) { a } else { b }),
        (a, b) => a.or(b),
    };
    if let Some(limit) = attempt {
        let time = nginx_time(limit);
        for name in [
            "proxy_connect_timeout",
            "proxy_send_timeout",
            "proxy_read_timeout",
        ] {
            body.push(directive(name, [&time])?);
        }
    }
    Ok(match timeouts.request {
        Some(Limit::Millis(ms)) => format!("{ms}ms"),
        Some(Limit::Disabled) | None => NextUpstream::default().timeout.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::plan::ValueRegex;
    use super::*;

    /// Every byte a client or an object could use to leave the data is encoded.
    #[test]
    fn candidate_data_is_percent_encoded() {
        assert_eq!(encode("a-Z_0.~"), "a-Z_0.~");
        assert_eq!(encode("$x; \"{}\n,:%"), "%24x%3B%20%22%7B%7D%0A%2C%3A%25");
        let forward = Action::Forward {
            split: "gw:ns/r#0".into(),
            route: cluster_state::ObjectRef::new("ns", "r"),
            path: "/".into(),
            actions: crate::gateway::rules::RuleActions::default(),
            prefix: None,
        };
        let choice = |conditions: Conditions, action: &Action| Choice {
            conditions,
            action: action.clone(),
        };
        let candidates = [
            choice(
                Conditions {
                    method: Some("GET".into()),
                    headers: vec![("version".into(), "t$o,o".into())],
                    query: vec![("a b".into(), "c;d".into())],
                    regexes: vec![ValueRegex {
                        header: false,
                        name: "k".into(),
                        pattern: "v|w".into(),
                    }],
                    path: Some("^(?:/a)\\z".into()),
                },
                &forward,
            ),
            choice(Conditions::default(), &Action::Fail),
            choice(Conditions::default(), &forward),
        ];
        let mut named = Vec::new();
        assert_eq!(
            candidate_list(&candidates, &mut named),
            "a=0,m=GET,h=version:t%24o%2Co,q=a%20b:c%3Bd,Q=k:v%7Cw,p=%5E%28%3F%3A%2Fa%29%5Cz;a=1;a=0"
        );
        assert_eq!(named, [&forward, &Action::Fail]);
    }

    /// The configuration of the conformance manifest `file`, each Gateway on an address of
    /// its own (the base Gateways would share the catch-all otherwise).
    fn rendered(file: &str) -> String {
        let snapshot = super::super::conformance::load(file);
        let objects = crate::objects::Objects::from_snapshot(&snapshot);
        let model = crate::model::build(&objects, &crate::class::Selection::default());
        let options = crate::render::Options {
            gateway_addresses: Some("127.0.1.0/24".parse().unwrap()),
            ..options()
        };
        crate::render::render(&model, &options).unwrap()
    }

    fn options() -> crate::render::Options {
        crate::render::Options {
            prefix: "/prefix".into(),
            listen_address: "127.0.0.1".into(),
            http_port: 8080,
            https_port: 8443,
            workers: "1".into(),
            modules_dir: None,
            fallback_certificate: None,
            gateway_addresses: None,
        }
    }

    /// Rendering notes §6.3: no redirect or rewrite ever writes the decoded `$uri` (a
    /// `%0d%0a` in it would become a header break); the redirects read `$request_uri`.
    #[test]
    fn redirects_and_rewrites_never_write_the_decoded_uri() {
        for file in [
            "httproute-redirect-path.yaml",
            "httproute-redirect-port-and-scheme.yaml",
            "httproute-rewrite-path.yaml",
            "httproute-rewrite-host.yaml",
        ] {
            let text = rendered(file);
            assert!(!text.contains("$uri"), "{file}: {text}");
            assert!(!text.contains("$document_uri"), "{file}: {text}");
        }
        let text = rendered("httproute-redirect-path.yaml");
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for line in [
            "return 302 http://$host/full-path-replacement$is_args$args;",
            "return 302 http://$host/replacement-prefix$gw_rest$gw_query;",
            "return 302 http://$host/replacement-prefix;",
        ] {
            assert!(lines.contains(&line), "no `{line}` in:\n{text}");
        }
    }

    /// S-F.6: a rule's mirror is a `mirror` to an internal location that only nginx's
    /// subrequests reach, with its backend and share as data; copies of a rule that edits the
    /// request headers carry the edits.
    #[test]
    fn mirrors_copy_to_internal_locations() {
        let text = rendered("httproute-request-mirror.yaml");
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for line in [
            "mirror //gw-mirror/0;",
            "mirror //gw-mirror/1;",
            "location = //gw-mirror/0 {",
            "internal;",
            "set $gw_mirror_upstream gateway-conformance-infra/infra-backend-v2:8080;",
            "set $gw_mirror_sample 1/1;",
            "proxy_set_header X-Header-Set set-overwrites-values;",
            "proxy_next_upstream off;",
            "proxy_pass http://ingress_balancer$request_uri;",
        ] {
            assert!(lines.contains(&line), "no `{line}` in:\n{text}");
        }
        let text = rendered("httproute-request-percentage-mirror.yaml");
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for line in [
            "set $gw_mirror_sample 20/100;",
            "set $gw_mirror_sample 25/50;",
            "set $gw_mirror_sample 35/100;",
        ] {
            assert!(lines.contains(&line), "no `{line}` in:\n{text}");
        }
    }

    /// What nginx does with the `rewrite`s and `return`s `rewrite` writes, for a request
    /// with decoded path `path`: the first `rewrite` whose regex matches gives the new path
    /// (its `$1` replaced, `${literal_dollar}` read as `$`), `return 500` gives `"500"`.
    fn nginx_rewrites(body: &[Directive], path: &str) -> String {
        for d in body {
            let word = |i: usize| String::from_utf8(d.args[i].word().value().into_owned());
            match d.name.value().as_ref() {
                b"rewrite" => {
                    let pattern = word(0).unwrap();
                    let target = word(1).unwrap();
                    let regex = regex::Regex::new(&pattern).unwrap();
                    if let Some(captures) = regex.captures(path) {
                        let one = captures.get(1).map_or("", |m| m.as_str());
                        return target.replace("$1", one).replace("${literal_dollar}", "$");
                    }
                }
                b"return" => return word(0).unwrap(),
                other => panic!("{}", String::from_utf8_lossy(other)),
            }
        }
        panic!("no rewrite applied to {path:?}");
    }

    proptest::proptest! {
        /// S-F.5 as nginx runs it: for every path a PathPrefix location sends to a rule with a
        /// ReplacePrefixMatch rewrite (decoded newlines included), the rewrites give
        /// `filters::replace_prefix`'s path, never the original one.
        #[test]
        fn prefix_rewrites_agree_with_replace_prefix(
            prefix in proptest::collection::vec("[ab]{1,2}", 0..3),
            replacement in "(/[a-c$]{0,2}){0,2}/?",
            rest in proptest::collection::vec("[ab\\n.]{1,3}", 0..3),
            slash in proptest::bool::ANY,
        ) {
            let prefix = format!("/{}", prefix.join("/"));
            let mut path = prefix.clone();
            if !rest.is_empty() || slash {
                if !path.ends_with('/') {
                    path.push('/');
                }
                path.push_str(&rest.join("/"));
            }
            let mut body = Vec::new();
            rewrite(&PathChange::Prefix(replacement.clone()), Some(&prefix), &mut body).unwrap();
            proptest::prop_assert_eq!(
                nginx_rewrites(&body, &path),
                crate::gateway::filters::replace_prefix(&path, &prefix, &replacement),
                "{:?} under {:?} to {:?}",
                path,
                prefix,
                replacement
            );
        }
    }

    /// Without a pool the base Gateways share the HTTP port: the older one's listener without
    /// host name takes the catch-all (S-GW.4), the generated Ingress catch-all leaves the port.
    #[test]
    fn the_older_gateway_keeps_the_shared_catch_all() {
        use std::sync::Arc;

        use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::Time;
        use cluster_state::k8s::jiff::Timestamp;

        use super::super::conformance::{INFRA, load};

        let mut snapshot = load("httproute-simple-same-namespace.yaml");
        let key = cluster_state::ObjectRef::new(INFRA, "same-namespace");
        for (name, gateway) in snapshot.gateways.iter_mut() {
            let seconds = if *name == key { 1 } else { 2 };
            Arc::make_mut(gateway).metadata.creation_timestamp =
                Some(Time(Timestamp::from_second(seconds).unwrap()));
        }
        let objects = crate::objects::Objects::from_snapshot(&snapshot);
        let model = crate::model::build(&objects, &crate::class::Selection::default());
        let text = crate::render::render(&model, &options()).unwrap();
        let defaults: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("listen 127.0.0.1:8080") && l.contains("default_server"))
            .collect();
        assert_eq!(
            defaults,
            ["listen 127.0.0.1:8080 default_server;"],
            "{text}"
        );
        let start = text.find("listen 127.0.0.1:8080 default_server;").unwrap();
        let server = &text[start..];
        let end = server.find("\n    }").unwrap_or(server.len());
        assert!(
            server[..end].contains("gateway-conformance-infra-test#0"),
            "{}",
            &server[..end]
        );
    }
}
