//! From a server block's plugin settings to its query chain: the setup function of each
//! plugin in the list (`registry.rs`) whose directive the block uses is called in list
//! order, reads the plugin's settings and adds the plugin to the chain ([`Setup`], the
//! counterpart of CoreDNS's `dnsserver.GetConfig(c).AddPlugin`). The built-in plugins'
//! setup functions are here; a plugin module may keep its own.

use std::net::SocketAddr;
use std::sync::Arc;

use corefile::plugins::{self, PluginConfig};
use corefile::view::BlockView;

use super::error::ConfigError;
use super::registry::PLUGINS;
use super::source::plugin_config;
use crate::metrics::Metrics;
use crate::plugin::builtin::Whoami;
use crate::plugin::cache::Cache;
use crate::plugin::forward::Forward;
use crate::plugin::hosts::Hosts;
use crate::plugin::kubernetes::Kubernetes;
use crate::plugin::kubernetes::options::KubernetesConfig;
use crate::plugin::loop_detect::Loop;
use crate::plugin::prometheus::Prometheus;
use crate::plugin::{Chain, ChainBuilder, Plugin, errors, log};

/// What a plugin's setup function reads (the block and where it is served) and the chain
/// it adds to.
pub(crate) struct Setup<'a> {
    /// The server block.
    pub(crate) block: &'a BlockView<'a>,
    /// The Corefile's name, for error positions.
    pub(crate) filename: &'a str,
    /// The block's zones.
    pub(crate) zones: &'a [String],
    /// `server` label of the metrics: `dns://:PORT` or `dns://ADDR:PORT`.
    pub(crate) server: &'a str,
    /// The process's metrics.
    pub(crate) metrics: &'a Arc<Metrics>,
    /// The block's first listen address.
    pub(crate) listen: SocketAddr,
    /// The block's position in the Corefile.
    pub(crate) index: usize,
    /// The chain so far.
    chain: ChainBuilder,
}

impl Setup<'_> {
    /// The typed settings of plugin `P` in the block (`None` if the block does not use it).
    pub(crate) fn config<P: PluginConfig>(&self) -> Result<Option<P>, ConfigError> {
        plugin_config::<P>(self.block, self.filename)
    }

    /// Appends `plugin` to the block's chain.
    pub(crate) fn add(&mut self, plugin: Arc<dyn Plugin>) {
        self.chain.add(plugin);
    }
}

/// The setup function of a chain plugin: reads its settings from the block and adds it.
pub(crate) type SetupFn = fn(&mut Setup<'_>) -> Result<(), ConfigError>;

/// The plugin chain of server block `block` (number `index`), serving `zones` as
/// `server` on `listen`.
pub(super) fn build_chain(
    block: &BlockView<'_>,
    filename: &str,
    zones: &[String],
    server: &str,
    metrics: &Arc<Metrics>,
    listen: SocketAddr,
    index: usize,
) -> Result<Chain, ConfigError> {
    let mut setup = Setup {
        block,
        filename,
        zones,
        server,
        metrics,
        listen,
        index,
        chain: ChainBuilder::default(),
    };
    for entry in PLUGINS {
        if let Some(run) = entry.setup
            && block.directives.iter().any(|d| d.name == entry.name)
        {
            run(&mut setup)?;
        }
    }
    Ok(setup.chain.build())
}

/// `prometheus`: the per-query metrics (the HTTP endpoint is the server's, `plan.rs`).
pub(super) fn prometheus(setup: &mut Setup<'_>) -> Result<(), ConfigError> {
    let plugin = Prometheus::new(Arc::clone(setup.metrics), setup.server);
    setup.add(Arc::new(plugin));
    Ok(())
}

/// `errors`.
pub(super) fn errors(setup: &mut Setup<'_>) -> Result<(), ConfigError> {
    if let Some(config) = setup.config::<plugins::Errors>()? {
        let plugin = errors::Errors::new(&config).map_err(ConfigError::Consolidate)?;
        setup.add(Arc::new(plugin));
    }
    Ok(())
}

/// `log`.
pub(super) fn log(setup: &mut Setup<'_>) -> Result<(), ConfigError> {
    if let Some(config) = setup.config::<plugins::Log>()? {
        let plugin = log::Log::new(&config.rules).map_err(ConfigError::Log)?;
        setup.add(Arc::new(plugin));
    }
    Ok(())
}

/// `cache`.
pub(super) fn cache(setup: &mut Setup<'_>) -> Result<(), ConfigError> {
    if let Some(config) = setup.config::<plugins::Cache>()? {
        let cache = Cache::new(&config, setup.zones, setup.server, setup.metrics)?;
        setup.chain.add_cache(Arc::new(cache));
    }
    Ok(())
}

/// `hosts`.
pub(super) fn hosts(setup: &mut Setup<'_>) -> Result<(), ConfigError> {
    if let Some(config) = setup.config::<plugins::Hosts>()? {
        let plugin = Hosts::new(&config, setup.zones, setup.metrics)?;
        setup.add(Arc::new(plugin));
    }
    Ok(())
}

/// `kubernetes`: it reads its objects in the background; `ready` waits for them, and the
/// first start up to its `startup_timeout`.
pub(super) fn kubernetes(setup: &mut Setup<'_>) -> Result<(), ConfigError> {
    if let Some(config) = setup.config::<KubernetesConfig>()? {
        let plugin = Kubernetes::new(&config, setup.zones, setup.listen, setup.metrics)?;
        setup.chain.wait_at_startup(plugin.startup_timeout());
        setup.add(Arc::new(plugin));
    }
    Ok(())
}

/// `loop`: the detector's probe name is random per block.
pub(super) fn loop_detect(setup: &mut Setup<'_>) -> Result<(), ConfigError> {
    if setup.config::<plugins::Loop>()?.is_some() {
        let random = std::hash::RandomState::new();
        let seed = |label: u8| std::hash::BuildHasher::hash_one(&random, (setup.index, label));
        let detector = Loop::new(
            setup.zones.first().map_or(".", String::as_str),
            setup.listen,
            [seed(1), seed(2)],
        );
        setup.chain.add_loop(Arc::new(detector));
    }
    Ok(())
}

/// `forward`.
pub(super) fn forward(setup: &mut Setup<'_>) -> Result<(), ConfigError> {
    if let Some(config) = setup.config::<plugins::Forward>()? {
        let forward = Forward::new(&config, setup.metrics)?;
        setup.chain.add_forward(Arc::new(forward));
    }
    Ok(())
}

/// `whoami`.
pub(super) fn whoami(setup: &mut Setup<'_>) -> Result<(), ConfigError> {
    if setup.config::<plugins::Whoami>()?.is_some() {
        setup.add(Arc::new(Whoami));
    }
    Ok(())
}
