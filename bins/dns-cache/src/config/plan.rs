//! The plan a Corefile turns into: the listeners (one per port and `bind` address), the
//! routing table of each (zone → the block's plugin chain) and the process-wide HTTP and
//! reload settings.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use corefile::plugins;
use corefile::zone::Transport;

use super::chain::build_chain;
use super::error::ConfigError;
use super::registry;
use super::source::{build_hash, parse, plugin_config};
use crate::duration::from_go;
use crate::metrics::Metrics;
use crate::plugin::Chain;
use crate::plugin::loop_detect::Loop;
use crate::query::route::Routes;
use crate::server::http::ReadyCheck;

/// What one server block's route leads to.
pub struct Route {
    /// The zone (lower-case, fully qualified), the `zone` label of metrics.
    pub zone: String,
    /// The block's chain.
    pub chain: Arc<Chain>,
}

/// The routing table of one listener.
pub struct Table {
    /// `server` label: `dns://:PORT` or `dns://ADDR:PORT`.
    pub server: String,
    /// Zone → route.
    pub routes: Routes<Arc<Route>>,
    /// Set when a block of this listener uses `prometheus` (for queries no block takes).
    pub metrics: Option<Arc<Metrics>>,
}

/// One DNS listen address and what it serves.
pub struct ListenerPlan {
    /// The address (`[::]:PORT` without `bind`).
    pub addr: SocketAddr,
    /// Its routing table.
    pub table: Arc<Table>,
}

/// `health` settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthPlan {
    /// Listen address.
    pub addr: String,
    /// How long to keep serving after SIGTERM.
    pub lameduck: Duration,
}

/// `reload` settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReloadPlan {
    /// Check interval.
    pub interval: Duration,
    /// Random extra delay, up to this.
    pub jitter: Duration,
}

/// Everything a Corefile asks for.
#[derive(Default)]
pub struct Plan {
    /// DNS listeners.
    pub listeners: Vec<ListenerPlan>,
    /// `health`, once per process.
    pub health: Option<HealthPlan>,
    /// `ready` address.
    pub ready: Option<String>,
    /// `prometheus` addresses.
    pub prometheus: Vec<String>,
    /// `reload`.
    pub reload: Option<ReloadPlan>,
    /// Loop detectors to start.
    pub loops: Vec<Arc<Loop>>,
    /// `debug` in any block.
    pub debug: bool,
    /// SHA-512 of the Corefile, hex.
    pub hash: String,
    /// `zone:port` of each block, for the start-up banner.
    pub banner: Vec<String>,
    /// The plugins that tell `ready` whether they are (CoreDNS's `ready.Readiness`).
    pub ready_checks: Vec<ReadyCheck>,
    /// How long the first start waits for them (`kubernetes`'s `startup_timeout`).
    pub startup_wait: Duration,
}

/// What a Corefile without any server block means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Empty {
    /// CoreDNS's built-in default Corefile (`.:PORT { whoami log }`): at start-up, as
    /// CoreDNS does, and whenever there is no Corefile at all.
    Default,
    /// [`ConfigError::NoServerBlock`]: a reloaded file that lost its server blocks.
    Refuse,
}

/// Loads the Corefile `input` (named `filename` in errors); `empty` says what an input
/// without a server block gives.
pub fn build(
    input: &[u8],
    filename: &str,
    dns_port: u16,
    empty: Empty,
    metrics: &Arc<Metrics>,
) -> Result<Plan, ConfigError> {
    let view = parse(input, filename, dns_port)?;
    if view.used_default_input && empty == Empty::Refuse {
        return Err(ConfigError::NoServerBlock(filename.to_owned()));
    }
    let mut plan = Plan {
        hash: build_hash(input),
        ..Plan::default()
    };
    let mut tables: BTreeMap<SocketAddr, Table> = BTreeMap::new();
    for (index, block) in view.blocks.iter().enumerate() {
        for directive in &block.directives {
            if !registry::known(&directive.name) {
                return Err(ConfigError::Unsupported(directive.name.to_string()));
            }
        }
        let mut zones = Vec::new();
        for zone in &block.zones {
            if zone.transport != Transport::Dns {
                return Err(ConfigError::Transport(zone.to_string()));
            }
            zones.push(zone.zone.clone());
        }
        let port: u16 = block
            .zones
            .first()
            .map_or(Ok(dns_port), |z| z.port.parse())
            .map_err(|_| {
                ConfigError::Port(
                    block
                        .zones
                        .first()
                        .map(|z| z.port.clone())
                        .unwrap_or_default(),
                )
            })?;
        let bind = plugin_config::<plugins::Bind>(block, filename)?;
        let hosts: Vec<IpAddr> = match &bind {
            Some(bind) => bind
                .addresses
                .iter()
                .filter(|a| !bind.except.contains(a))
                .map(|a| a.parse().map_err(|_| ConfigError::Bind(a.clone())))
                .collect::<Result<_, _>>()?,
            None => vec![IpAddr::V6(Ipv6Addr::UNSPECIFIED)],
        };
        let server = match &bind {
            Some(_) => hosts
                .iter()
                .map(|h| format!("dns://{}", SocketAddr::new(*h, port)))
                .collect::<Vec<_>>(),
            None => vec![format!("dns://:{port}")],
        };
        let prometheus = plugin_config::<plugins::Prometheus>(block, filename)?;
        let chain_metrics = prometheus.as_ref().map(|_| Arc::clone(metrics));
        let chain = Arc::new(build_chain(
            block,
            filename,
            &zones,
            server.first().map_or("", String::as_str),
            metrics,
            SocketAddr::new(
                *hosts.first().unwrap_or(&IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
                port,
            ),
            index,
        )?);
        if let Some(detector) = &chain.loop_detect {
            plan.loops.push(Arc::clone(detector));
        }
        plan.startup_wait = plan.startup_wait.max(chain.startup_wait);
        for plugin in chain.plugins() {
            if plugin.ready().is_some() {
                let name = plugin.name();
                let plugin = Arc::clone(plugin);
                let ready = move || plugin.ready().unwrap_or(true);
                plan.ready_checks.push((name, Arc::new(ready)));
            }
        }
        if let Some(p) = prometheus {
            let addr = p.address.unwrap_or_else(|| "localhost:9153".to_owned());
            if !plan.prometheus.contains(&addr) {
                plan.prometheus.push(addr);
            }
            for zone in &zones {
                for s in &server {
                    for name in block.directives.iter().map(|d| d.name.to_string()) {
                        metrics
                            .plugin_enabled
                            .get_or_create(&vec![
                                ("server", s.clone()),
                                ("zone", zone.clone()),
                                ("view", String::new()),
                                ("name", name),
                            ])
                            .set(1);
                    }
                }
            }
        }
        for zone in &zones {
            plan.banner.push(format!("{zone}:{port}"));
        }
        for (host, label) in hosts.iter().zip(server.iter().cycle()) {
            let addr = SocketAddr::new(*host, port);
            let entry = tables.entry(addr).or_insert_with(|| Table {
                server: label.clone(),
                routes: Routes::default(),
                metrics: None,
            });
            if chain_metrics.is_some() {
                entry.metrics = chain_metrics.clone();
            }
            for zone in &zones {
                let route = Arc::new(Route {
                    zone: zone.clone(),
                    chain: Arc::clone(&chain),
                });
                entry
                    .routes
                    .insert(zone, route)
                    .map_err(|_| ConfigError::Zone(zone.clone()))?;
            }
        }
        if let Some(health) = plugin_config::<plugins::Health>(block, filename)?
            && plan.health.is_none()
        {
            plan.health = Some(HealthPlan {
                addr: health.address.unwrap_or_else(|| ":8080".to_owned()),
                lameduck: health.lameduck.map_or(Duration::ZERO, from_go),
            });
        }
        if let Some(ready) = plugin_config::<plugins::Ready>(block, filename)? {
            plan.ready
                .get_or_insert(ready.address.unwrap_or_else(|| ":8181".to_owned()));
        }
        if let Some(reload) = plugin_config::<plugins::Reload>(block, filename)? {
            plan.reload.get_or_insert(ReloadPlan {
                interval: from_go(reload.interval),
                jitter: from_go(reload.jitter),
            });
        }
        plan.debug |= plugin_config::<plugins::Debug>(block, filename)?.is_some();
    }
    plan.listeners = tables
        .into_iter()
        .map(|(addr, table)| ListenerPlan {
            addr,
            table: Arc::new(table),
        })
        .collect();
    Ok(plan)
}

/// An HTTP listen address in Go's form (`:8080`, `localhost:9153`, `127.0.0.1:8080`) as
/// something tokio binds.
pub fn http_address(text: &str) -> String {
    match text.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Result<Plan, ConfigError> {
        built(text, Empty::Default)
    }

    fn rejected(text: &str) -> ConfigError {
        match built(text, Empty::Default) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e,
        }
    }

    fn built(text: &str, empty: Empty) -> Result<Plan, ConfigError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = rt.enter();
        build(
            text.as_bytes(),
            "Corefile",
            53,
            empty,
            &Arc::new(Metrics::new()),
        )
    }

    #[test]
    fn the_default_corefile_serves_whoami_on_the_given_port() {
        let p = plan("").unwrap();
        assert_eq!(p.listeners.len(), 1);
        assert_eq!(p.listeners[0].addr, "[::]:53".parse().unwrap());
        assert_eq!(p.listeners[0].table.server, "dns://:53");
        assert_eq!(p.banner, [".:53"]);
    }

    #[test]
    fn a_corefile_without_server_blocks_is_refused_where_asked() {
        let blank = [
            "",
            " \n\t\n",
            "# only a comment\n# and another\n",
            "(snippet) {\n    whoami\n}\n",
        ];
        for text in blank {
            let err = match built(text, Empty::Refuse) {
                Ok(_) => panic!("accepted: {text:?}"),
                Err(e) => e,
            };
            assert!(matches!(err, ConfigError::NoServerBlock(_)), "{err}");
            assert_eq!(
                err.to_string(),
                "Corefile: no server block (empty, or only comments or snippets); keeping the running configuration"
            );
            assert_eq!(plan(text).unwrap().banner, [".:53"], "{text:?}");
        }
        let served = built(".:53 {\n    whoami\n}\n", Empty::Refuse).unwrap();
        assert_eq!(served.banner, [".:53"]);
    }

    #[test]
    fn blocks_share_a_port_and_bind_splits_listeners() {
        let p = plan(
            "example.org:1053 {\n whoami\n}\n.:1053 {\n forward . 127.0.0.1:5300\n cache 30\n}\nother:1054 {\n bind 127.0.0.1 127.0.0.2\n whoami\n health :18080 {\n lameduck 2s\n }\n prometheus :19153\n}\n",
        )
        .unwrap();
        let addrs: Vec<String> = p.listeners.iter().map(|l| l.addr.to_string()).collect();
        assert_eq!(addrs, ["127.0.0.1:1054", "127.0.0.2:1054", "[::]:1053"]);
        assert_eq!(p.listeners[0].table.server, "dns://127.0.0.1:1054");
        assert_eq!(p.listeners[2].table.routes.targets().count(), 2);
        assert_eq!(
            p.health,
            Some(HealthPlan {
                addr: ":18080".into(),
                lameduck: Duration::from_secs(2)
            })
        );
        assert_eq!(p.prometheus, [":19153"]);
    }

    #[test]
    fn errors_read_as_coredns_and_unsupported_plugins_are_named() {
        let err = rejected(". {\n    fleeb\n}\n");
        assert_eq!(
            err.to_string(),
            "Corefile:2 - Error during parsing: Unknown directive 'fleeb'"
        );
        let err = rejected(". {\n    rewrite name a b\n}\n");
        assert!(
            err.to_string().starts_with("plugin/rewrite: not supported"),
            "{err}"
        );
        let err = rejected("tls://.:853 {\n    whoami\n}\n");
        assert!(err.to_string().contains("only plain DNS"), "{err}");
        let err = rejected(". {\n    cache -1\n}\n");
        assert!(err.to_string().starts_with("plugin/cache: "), "{err}");
    }

    #[test]
    fn http_addresses() {
        assert_eq!(http_address(":8080"), "0.0.0.0:8080");
        assert_eq!(http_address("localhost:9153"), "localhost:9153");
    }
}
