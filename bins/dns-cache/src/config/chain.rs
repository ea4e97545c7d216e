//! From a server block's plugin settings to its query chain: each plugin of the chain
//! built from its settings, and which one is last (the one whose missing "next" CoreDNS
//! names when nothing answers).

use std::net::SocketAddr;
use std::sync::Arc;

use corefile::plugins;
use corefile::view::BlockView;

use super::error::ConfigError;
use super::registry::CHAIN;
use super::source::plugin_config;
use crate::metrics::Metrics;
use crate::plugin::cache::Cache;
use crate::plugin::forward::Forward;
use crate::plugin::hosts::Hosts;
use crate::plugin::kubernetes::Kubernetes;
use crate::plugin::kubernetes::options::KubernetesConfig;
use crate::plugin::loop_detect::Loop;
use crate::plugin::{Chain, errors, log};

/// The plugin chain of server block `block` (number `index`), serving `zones` as
/// `server` on `listen`.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_chain(
    block: &BlockView<'_>,
    filename: &str,
    zones: &[String],
    server: &str,
    metrics: &Arc<Metrics>,
    chain_metrics: Option<Arc<Metrics>>,
    listen: SocketAddr,
    index: usize,
) -> Result<Chain, ConfigError> {
    let errors = plugin_config::<plugins::Errors>(block, filename)?
        .map(|e| errors::Errors::new(&e))
        .transpose()
        .map_err(ConfigError::Consolidate)?;
    let log = plugin_config::<plugins::Log>(block, filename)?
        .map(|l| log::Log::new(&l.rules))
        .transpose()
        .map_err(ConfigError::Log)?;
    let cache = plugin_config::<plugins::Cache>(block, filename)?
        .map(|c| Cache::new(&c, zones, server, metrics))
        .transpose()?;
    let hosts = plugin_config::<plugins::Hosts>(block, filename)?
        .map(|h| Hosts::new(&h, zones, metrics))
        .transpose()?;
    let kubernetes = plugin_config::<KubernetesConfig>(block, filename)?
        .map(|k| Kubernetes::new(&k, zones, listen))
        .transpose()?;
    let loop_detect = match plugin_config::<plugins::Loop>(block, filename)? {
        Some(_) => {
            let random = std::hash::RandomState::new();
            let seed = |label: u8| std::hash::BuildHasher::hash_one(&random, (index, label));
            Some(Arc::new(Loop::new(
                zones.first().map_or(".", String::as_str),
                listen,
                [seed(1), seed(2)],
            )))
        }
        None => None,
    };
    let forward = plugin_config::<plugins::Forward>(block, filename)?
        .map(|f| Forward::new(&f, metrics))
        .transpose()?;
    let whoami = plugin_config::<plugins::Whoami>(block, filename)?.is_some();
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
        kubernetes,
        loop_detect,
        forward,
        whoami,
        metrics: chain_metrics,
        last,
    })
}
