//! The Gateways' nginx servers (rendering notes §3): each Gateway's sockets placed on its
//! address, one `server` per host name, its locations proxying through the Lua balancer to
//! the rule's split, or answering 500 or 404. Built only through the shared helpers of
//! [`crate::render`], so every value is one quoted argument.
//!
//! Placement: with `--gateway-addresses`, each Gateway listens on its own address, and each
//! socket gets exactly one `default_server` (its listener without host name, else a generated
//! one answering 404 and presenting the default certificate). Without, the Gateways share the
//! listen address with the Ingresses: on the Ingress HTTP and HTTPS ports the Ingress
//! catch-all keeps the default server and an Ingress host keeps its name, and between
//! Gateways the first (by key) to claim a host name on a socket keeps it.

use std::collections::BTreeSet;
use std::net::IpAddr;

use nginx_conf::Directive;

use super::plan::{Action, Location, Served, Server};
use crate::annotations::{BackendProtocol, NextUpstream};
use crate::hosts::Host;
use crate::paths::LocationKey;
use crate::render::{Context, Result, default_certificate, directive, location_header, proxy};

/// The servers of one nginx listening socket.
struct Placed<'a> {
    /// The `listen` address and port.
    listen: String,
    /// Whether it speaks TLS.
    tls: bool,
    /// Whether the Ingress servers listen on it too.
    ingress: bool,
    /// The host names taken (`None`: the catch-all).
    names: BTreeSet<Option<super::hostname::Hostname>>,
    /// The servers, in the Gateways' order.
    servers: Vec<&'a Server>,
}

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

/// The `server` blocks of every Gateway the model serves.
pub(crate) fn servers(context: &Context<'_>) -> Result<Vec<Directive>> {
    let options = context.options;
    let plan = &context.model.gateway;
    let addresses = plan.addresses(options.gateway_addresses.as_ref());
    let ingress_hosts: BTreeSet<&str> = context
        .model
        .servers
        .iter()
        .filter_map(|s| match &s.host {
            Host::Exact(name) => Some(name.as_str()),
            Host::Any | Host::Wildcard(_) => None,
        })
        .collect();
    let mut placed: Vec<Placed<'_>> = Vec::new();
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
            let ingress = shared && (port == options.http_port || port == options.https_port);
            if ingress && socket.tls != (port == options.https_port) {
                // The Ingress servers hold this socket with the other protocol.
                continue;
            }
            let listen = format!("{host}:{port}");
            let index = match placed.iter().position(|p| p.listen == listen) {
                Some(index) => index,
                None => {
                    placed.push(Placed {
                        listen,
                        tls: socket.tls,
                        ingress,
                        names: BTreeSet::new(),
                        servers: Vec::new(),
                    });
                    placed.len() - 1
                }
            };
            let Some(target) = placed.get_mut(index) else {
                continue;
            };
            if target.tls != socket.tls {
                continue;
            }
            for server in &socket.servers {
                let taken_by_ingress = match &server.name {
                    None => ingress,
                    Some(super::hostname::Hostname::Exact(name)) => {
                        ingress && ingress_hosts.contains(name.as_str())
                    }
                    Some(super::hostname::Hostname::Wildcard(_)) => false,
                };
                if !taken_by_ingress && target.names.insert(server.name.clone()) {
                    target.servers.push(server);
                }
            }
        }
    }
    let mut out = Vec::new();
    for socket in &placed {
        let has_default = socket.ingress || socket.names.contains(&None);
        if !has_default {
            let fallback = Server {
                name: None,
                listener: String::new(),
                certificates: Vec::new(),
                locations: vec![Location {
                    key: LocationKey::Prefix("/".into()),
                    action: Action::NotFound,
                }],
            };
            out.push(server(context, socket, &fallback)?);
        }
        for s in &socket.servers {
            out.push(server(context, socket, s)?);
        }
    }
    Ok(out)
}

/// One `server` on `socket`.
fn server(context: &Context<'_>, socket: &Placed<'_>, s: &Server) -> Result<Directive> {
    let mut listen = vec![socket.listen.as_str()];
    if socket.tls {
        listen.push("ssl");
        if context.model.global.http2 {
            listen.push("http2");
        }
    }
    if s.name.is_none() && !socket.ingress {
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
        let files = if own.is_empty() {
            default_certificate(context).into_iter().collect()
        } else {
            own
        };
        if files.is_empty() {
            body.push(directive("ssl_reject_handshake", ["on"])?);
        }
        for file in &files {
            body.push(directive("ssl_certificate", [file])?);
            body.push(directive("ssl_certificate_key", [file])?);
        }
    }
    for location in &s.locations {
        body.push(self::location(location)?);
    }
    Ok(directive("server", [""; 0])?.block(body))
}

/// One `location`: proxied to its split, or answered 500 or 404.
fn location(location: &Location) -> Result<Directive> {
    let mut body = Vec::new();
    match &location.action {
        Action::Forward { split, route, path } => {
            body.push(directive("set", ["$proxy_upstream_name", split])?);
            // The request metrics' labels: the route in the Ingress's place.
            body.push(directive("set", ["$namespace", &route.namespace])?);
            body.push(directive("set", ["$ingress_name", &route.name])?);
            // `set` reads `$` as a variable: a path's `$` is written as `${literal_dollar}`.
            body.push(directive(
                "set",
                ["$location_path", &path.replace('$', "${literal_dollar}")],
            )?);
            body.extend(proxy(BackendProtocol::Http, &NextUpstream::default())?);
        }
        Action::Fail => body.push(directive("return", ["500"])?),
        Action::NotFound => body.push(directive("return", ["404"])?),
    }
    Ok(location_header(&location.key)?.block(body))
}
