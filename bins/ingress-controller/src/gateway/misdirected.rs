//! Misdirected requests on HTTPS sockets (S-HN.2, `docs/gateway-api.md` §8 item 14): the TLS
//! server name (SNI) picked the listener whose certificate the client accepted, the `Host`
//! header picks the server that answers; when the two pick different listeners, the request
//! gets 421 (RFC 9110 §15.5.20), so that a client reusing a connection for another name
//! opens one for it instead.
//!
//! nginx picks the `server` by `Host` itself. Each HTTPS socket gets an `http`-level `map` of
//! `$ssl_server_name` to the listener its name selects, written with nginx's own host name
//! matching (`hostnames`: exact names, then the longest `*.suffix`), the same that picks the
//! servers; each Gateway server then compares it with its own listener. No SNI (a client
//! that connected by address) is never misdirected. A server shared with an Ingress host
//! (S-IG.1) is not checked: ingress-nginx answers such requests, and the Ingress's answer does
//! not change.

use std::collections::BTreeMap;

use cluster_state::ObjectRef;
use nginx_conf::Directive;

use super::hostname::Hostname;
use super::plan::Server;
use crate::render::{Result, directive};

/// The value of a name that selects no listener of the socket (nor the generated fallback).
const NONE: &str = "-";

/// The listeners of one HTTPS socket, numbered, and the host names that select each.
#[derive(Debug, Default)]
pub(crate) struct Listeners {
    /// The listeners, each `(Gateway, listener name)`; the number of one is its index + 1.
    ids: Vec<(ObjectRef, String)>,
    /// Each exact or wildcard name of the socket and the number of its listener.
    names: Vec<(Hostname, usize)>,
    /// The number of the catch-all's listener, when a Gateway holds the catch-all.
    catch_all: Option<usize>,
}

impl Listeners {
    /// The listeners of the Gateway `servers` of a socket, `taken` saying which Gateway holds
    /// each name (`None`: the catch-all).
    pub(crate) fn of<'a>(
        taken: &BTreeMap<Option<Hostname>, ObjectRef>,
        servers: impl IntoIterator<Item = &'a Server>,
    ) -> Self {
        let mut out = Self::default();
        for server in servers {
            let Some(gateway) = taken.get(&server.name) else {
                continue;
            };
            let id = (gateway.clone(), server.listener.clone());
            let number = match out.ids.iter().position(|i| *i == id) {
                Some(index) => index + 1,
                None => {
                    out.ids.push(id);
                    out.ids.len()
                }
            };
            match &server.name {
                Some(name) => out.names.push((name.clone(), number)),
                None => out.catch_all = Some(number),
            }
        }
        out
    }

    /// The number of `server`'s listener as the map writes it; `-` for a server of no
    /// listener (the generated fallback, which a name of no listener reaches).
    fn number(&self, taken: &BTreeMap<Option<Hostname>, ObjectRef>, server: &Server) -> String {
        let id = taken
            .get(&server.name)
            .map(|gateway| (gateway.clone(), server.listener.clone()));
        id.and_then(|id| self.ids.iter().position(|i| *i == id))
            .map_or_else(|| NONE.to_owned(), |index| (index + 1).to_string())
    }

    /// `map $ssl_server_name VARIABLE { hostnames; default ""; NAME N; … ~. CATCH-ALL; }`:
    /// no SNI gives the empty value, any other name without a server of its own the
    /// catch-all's listener (nginx tries regexes last), or `-`.
    pub(crate) fn map(&self, variable: &str) -> Result<Directive> {
        let mut body = vec![
            directive("hostnames", [""; 0])?,
            directive("default", [""])?,
        ];
        for (name, number) in &self.names {
            body.push(directive(&key(name), [number.to_string()])?);
        }
        let rest = self
            .catch_all
            .map_or_else(|| NONE.to_owned(), |n| n.to_string());
        body.push(directive("~.", [rest])?);
        Ok(directive("map", ["$ssl_server_name", variable])?.block(body))
    }

    /// `if (VARIABLE !~ "^(N)?$") { return 421; }` for `server`: the SNI selected another
    /// listener.
    pub(crate) fn check(
        &self,
        variable: &str,
        taken: &BTreeMap<Option<Hostname>, ObjectRef>,
        server: &Server,
    ) -> Result<Directive> {
        let number = self.number(taken, server);
        let pattern = format!("^({})?$", crate::render::regex_escape(&number));
        Ok(directive("if", ["(", variable, "!~", &pattern, ")"])?
            .block(vec![directive("return", ["421"])?]))
    }
}

/// `name` as a `map` key: nginx's own `*.suffix` form, with `\` before the words a map block
/// reads as its parameters.
fn key(name: &Hostname) -> String {
    let text = name.to_string();
    match text.as_str() {
        "default" | "hostnames" | "include" | "volatile" => format!("\\{text}"),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    fn server(name: Option<&str>, listener: &str) -> Server {
        Server {
            name: name.map(|n| Hostname::new(n).unwrap()),
            listener: listener.into(),
            certificates: Vec::new(),
            locations: Vec::new(),
            routes: BTreeSet::new(),
            claims: BTreeMap::new(),
            grpc: false,
        }
    }

    fn text(directive: &Directive) -> String {
        let block = nginx_conf::Block::new(vec![directive.clone()]);
        String::from_utf8_lossy(&block.format()).into_owned()
    }

    /// The base HTTPS Gateway of the suite with the routes of
    /// HTTPRouteHTTPSListenerDetectMisdirectedRequests (v1.6.1): the route host `example.org`
    /// is a server of the catch-all listener `https`, as is any unknown name.
    #[test]
    fn s_hn_2_the_sni_map_follows_the_listeners() {
        let gateway = ObjectRef::new("infra", "gw");
        let servers = [
            server(Some("example.org"), "https"),
            server(Some("second-example.org"), "https-with-hostname"),
            server(
                Some("fourth-example.wildcard.org"),
                "https-with-hostname-matching-wildcard",
            ),
            server(Some("*.wildcard.org"), "https-with-wildcard-hostname"),
            server(None, "https"),
        ];
        let taken: BTreeMap<Option<Hostname>, ObjectRef> = servers
            .iter()
            .map(|s| (s.name.clone(), gateway.clone()))
            .collect();
        let listeners = Listeners::of(&taken, &servers);
        let map = text(&listeners.map("$gw_sni_0").unwrap());
        for line in [
            "map $ssl_server_name $gw_sni_0 {",
            "hostnames;",
            "default \"\";",
            "example.org 1;",
            "second-example.org 2;",
            "fourth-example.wildcard.org 3;",
            "*.wildcard.org 4;",
            "~. 1;",
        ] {
            assert!(map.contains(line), "{line:?} in {map}");
        }
        let check = text(&listeners.check("$gw_sni_0", &taken, &servers[3]).unwrap());
        assert!(check.contains("if ( $gw_sni_0 !~ \"^(4)?$\" )"), "{check}");
        assert!(check.contains("return 421;"), "{check}");
        // The generated fallback of a socket without catch-all: only names of no listener.
        let fallback = server(None, "");
        let alone = Listeners::of(&taken, &servers[..4]);
        assert!(text(&alone.map("$v").unwrap()).contains("~. -;"));
        let check = text(&alone.check("$v", &BTreeMap::new(), &fallback).unwrap());
        assert!(check.contains("\"^(-)?$\""), "{check}");
    }

    /// A single-label name that is a word of the `map` block is escaped, and written.
    #[test]
    fn map_words_are_escaped() {
        assert_eq!(key(&Hostname::new("default").unwrap()), "\\default");
        assert_eq!(key(&Hostname::new("*.default").unwrap()), "*.default");
        let gateway = ObjectRef::new("infra", "gw");
        let servers = [
            server(Some("default"), "https"),
            server(Some("include"), "b"),
        ];
        let taken = servers
            .iter()
            .map(|s| (s.name.clone(), gateway.clone()))
            .collect();
        let map = text(&Listeners::of(&taken, &servers).map("$v").unwrap());
        // nginx reads `"\\default"` as `\default`, and the map as the name `default`.
        assert!(map.contains("default \"\";"), "{map}");
        assert!(map.contains("\"\\\\default\" 1;"), "{map}");
        assert!(map.contains("\"\\\\include\" 2;"), "{map}");
    }
}
