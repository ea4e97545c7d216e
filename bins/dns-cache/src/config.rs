//! From a Corefile to a server plan: the listeners (one per port and `bind` address), the
//! routing table of each (zone → the block's plugin chain) and the process-wide HTTP and
//! reload settings. Building a plan starts nothing but the plugins' background tasks, which
//! stop by themselves when the plan is dropped, so a bad new Corefile never disturbs the
//! running one.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use corefile::dispenser::PluginError;
use corefile::plugins::{self, PluginConfig};
use corefile::view::{BlockView, Options};
use corefile::zone::Transport;
use sha2::{Digest, Sha512};

use crate::cli::{Cli, DEFAULT_DNS_PORT, QUICK_START_PORT};
use crate::metrics::Metrics;
use crate::plugin::cache::{Cache, CacheError};
use crate::plugin::forward::{Forward, ForwardError};
use crate::plugin::hosts::{Hosts, HostsError};
use crate::plugin::loop_detect::Loop;
use crate::plugin::{Chain, errors, log};
use crate::query::route::Routes;

/// The plugins this server knows, in `plugin.cfg` order.
pub const PLUGINS: [&str; 13] = [
    "reload",
    "bind",
    "debug",
    "ready",
    "health",
    "prometheus",
    "errors",
    "log",
    "cache",
    "hosts",
    "loop",
    "forward",
    "whoami",
];

/// What `-plugins` prints (CoreDNS's layout, our plugins).
pub fn plugins_text() -> String {
    let mut text = String::from(
        "Server types:\n  dns\n\nCaddyfile loaders:\n  flag\n  default\n\nOther plugins:\n",
    );
    for plugin in PLUGINS {
        text.push_str("  dns.");
        text.push_str(plugin);
        text.push('\n');
    }
    text
}

/// The plugins of a block's query chain, in execution order.
const CHAIN: [&str; 7] = [
    "errors", "log", "cache", "hosts", "loop", "forward", "whoami",
];

/// A Corefile that cannot be served; the text says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The Corefile cannot be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The Corefile does not parse (CoreDNS's text).
    #[error("{0}")]
    Parse(#[from] corefile::Error),
    /// A plugin's arguments are wrong (CoreDNS's text).
    #[error("{0}")]
    Plugin(#[from] PluginError),
    /// A directive this server does not implement.
    #[error("plugin/{0}: not supported by dns-cache (supported: {list})", list = PLUGINS.join(", "))]
    Unsupported(String),
    /// A server block for DNS over TLS, HTTPS, gRPC or QUIC.
    #[error("{0}: only plain DNS server blocks (dns://) are supported")]
    Transport(String),
    /// A `bind` argument that is not an IP address.
    #[error("plugin/bind: not a valid IP address: {0} (interface names are not supported)")]
    Bind(String),
    /// A port that is not a number.
    #[error("invalid port {0:?}")]
    Port(String),
    /// An HTTP listen address that does not parse.
    #[error("plugin/{plugin}: invalid address {address:?}")]
    Address {
        /// health, ready or prometheus.
        plugin: &'static str,
        /// The address.
        address: String,
    },
    /// `cache` setup.
    #[error("{0}")]
    Cache(#[from] CacheError),
    /// `forward` setup.
    #[error("{0}")]
    Forward(#[from] ForwardError),
    /// `hosts` setup.
    #[error("{0}")]
    Hosts(#[from] HostsError),
    /// An `errors { consolidate }` pattern the regular-expression engine cannot compile.
    #[error("plugin/errors: consolidate: {0}")]
    Consolidate(regex::Error),
    /// `log` names.
    #[error("plugin/log: invalid name: {0}")]
    Log(dns_wire::Error),
    /// A zone that is not a name.
    #[error("invalid zone {0:?}")]
    Zone(String),
}

/// Where the configuration comes from.
#[derive(Clone, Debug)]
pub struct Source {
    /// The Corefile, or `None` for the built-in default.
    pub path: Option<PathBuf>,
    /// The default port of zone keys.
    pub dns_port: u16,
}

impl Source {
    /// `-conf FILE`, else `./Corefile` if it exists, else the built-in default (on 1053
    /// unless `-dns.port` says otherwise).
    pub fn from_cli(cli: &Cli) -> Self {
        let path = cli.conf.clone().or_else(|| {
            let local = PathBuf::from("Corefile");
            local.exists().then_some(local)
        });
        let dns_port = match (&path, cli.dns_port) {
            (_, Some(port)) => port,
            (Some(_), None) => DEFAULT_DNS_PORT,
            (None, None) => QUICK_START_PORT,
        };
        Self { path, dns_port }
    }

    /// The Corefile's bytes (empty for the built-in default) and its name for errors.
    pub fn read(&self) -> Result<(Vec<u8>, String), ConfigError> {
        match &self.path {
            None => Ok((Vec::new(), "Corefile".to_owned())),
            Some(path) => std::fs::read(path)
                .map(|bytes| (bytes, path.display().to_string()))
                .map_err(|source| ConfigError::Read {
                    path: path.display().to_string(),
                    source,
                }),
        }
    }
}

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
}

fn to_duration(d: corefile::go::Duration) -> Duration {
    Duration::from_nanos(u64::try_from(d.0).unwrap_or(0))
}

/// The typed config of plugin `P`, if the block uses it.
fn config<P: PluginConfig>(block: &BlockView<'_>, file: &str) -> Result<Option<P>, ConfigError> {
    plugins::config::<P>(block, file)
        .transpose()
        .map_err(ConfigError::from)
}

/// Loads the Corefile `input` (named `filename` in errors).
pub fn build(
    input: &[u8],
    filename: &str,
    dns_port: u16,
    metrics: &Arc<Metrics>,
) -> Result<Plan, ConfigError> {
    let port_text = dns_port.to_string();
    let env = |name: &str| std::env::var(name).ok();
    let view = corefile::load_with(
        input,
        Options {
            filename,
            order: corefile::plugin_order::PluginOrder::default(),
            dns_port: &port_text,
            env: &env,
            resolver: &mut corefile::fs::FsResolver,
        },
    )?;
    let mut plan = Plan {
        hash: build_hash(input),
        ..Plan::default()
    };
    let mut tables: BTreeMap<SocketAddr, Table> = BTreeMap::new();
    for (index, block) in view.blocks.iter().enumerate() {
        for directive in &block.directives {
            if !PLUGINS.contains(&&*directive.name) {
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
        let bind = config::<plugins::Bind>(block, filename)?;
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
        let prometheus = config::<plugins::Prometheus>(block, filename)?;
        let chain_metrics = prometheus.as_ref().map(|_| Arc::clone(metrics));
        let chain = Arc::new(build_chain(
            block,
            filename,
            &zones,
            server.first().map_or("", String::as_str),
            metrics,
            chain_metrics.clone(),
            &mut plan,
            SocketAddr::new(
                *hosts.first().unwrap_or(&IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
                port,
            ),
            index,
        )?);
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
        if let Some(health) = config::<plugins::Health>(block, filename)?
            && plan.health.is_none()
        {
            plan.health = Some(HealthPlan {
                addr: health.address.unwrap_or_else(|| ":8080".to_owned()),
                lameduck: health.lameduck.map_or(Duration::ZERO, to_duration),
            });
        }
        if let Some(ready) = config::<plugins::Ready>(block, filename)? {
            plan.ready
                .get_or_insert(ready.address.unwrap_or_else(|| ":8181".to_owned()));
        }
        if let Some(reload) = config::<plugins::Reload>(block, filename)? {
            plan.reload.get_or_insert(ReloadPlan {
                interval: to_duration(reload.interval),
                jitter: to_duration(reload.jitter),
            });
        }
        plan.debug |= config::<plugins::Debug>(block, filename)?.is_some();
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

#[allow(clippy::too_many_arguments)]
fn build_chain(
    block: &BlockView<'_>,
    filename: &str,
    zones: &[String],
    server: &str,
    metrics: &Arc<Metrics>,
    chain_metrics: Option<Arc<Metrics>>,
    plan: &mut Plan,
    listen: SocketAddr,
    index: usize,
) -> Result<Chain, ConfigError> {
    let errors = config::<plugins::Errors>(block, filename)?
        .map(|e| errors::Errors::new(&e))
        .transpose()
        .map_err(ConfigError::Consolidate)?;
    let log = config::<plugins::Log>(block, filename)?
        .map(|l| log::Log::new(&l.rules))
        .transpose()
        .map_err(ConfigError::Log)?;
    let cache = config::<plugins::Cache>(block, filename)?
        .map(|c| Cache::new(&c, zones, server, metrics))
        .transpose()?;
    let hosts = config::<plugins::Hosts>(block, filename)?
        .map(|h| Hosts::new(&h, zones, metrics))
        .transpose()?;
    let loop_detect = match config::<plugins::Loop>(block, filename)? {
        Some(_) => {
            let seed = std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), index);
            let detector = Arc::new(Loop::new(
                zones.first().map_or(".", String::as_str),
                listen,
                seed,
            ));
            plan.loops.push(Arc::clone(&detector));
            Some(detector)
        }
        None => None,
    };
    let forward = config::<plugins::Forward>(block, filename)?
        .map(|f| Forward::new(&f, metrics))
        .transpose()?;
    let whoami = config::<plugins::Whoami>(block, filename)?.is_some();
    // The plugin whose "next" is missing when nothing answers: the last of the chain.
    let last = block
        .directives
        .iter()
        .rev()
        .find_map(|d| CHAIN.iter().copied().find(|p| *p == d.name))
        .unwrap_or("whoami");
    Ok(Chain {
        server: server.to_owned(),
        errors,
        log,
        cache,
        hosts,
        loop_detect,
        forward,
        whoami,
        metrics: chain_metrics,
        last,
    })
}

/// The SHA-512 of a Corefile, hex (the `reload` plugin's comparison).
pub fn build_hash(input: &[u8]) -> String {
    hex(&Sha512::digest(input))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
        built(text)
    }

    fn rejected(text: &str) -> ConfigError {
        match built(text) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e,
        }
    }

    fn built(text: &str) -> Result<Plan, ConfigError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = rt.enter();
        build(text.as_bytes(), "Corefile", 53, &Arc::new(Metrics::new()))
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
        let err = rejected(". {\n    example\n}\n");
        assert_eq!(
            err.to_string(),
            "Corefile:2 - Error during parsing: Unknown directive 'example'"
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
    fn plugins_lists_every_plugin_with_the_dns_prefix() {
        let text = plugins_text();
        assert!(text.contains("  dns.cache\n") && text.contains("  dns.forward\n"));
        assert!(text.starts_with("Server types:\n  dns\n"));
    }

    #[test]
    fn http_addresses() {
        assert_eq!(http_address(":8080"), "0.0.0.0:8080");
        assert_eq!(http_address("localhost:9153"), "localhost:9153");
    }
}
