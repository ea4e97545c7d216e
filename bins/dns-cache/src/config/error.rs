//! What can be wrong with a Corefile, worded so that the text says what to fix (CoreDNS's
//! own text where CoreDNS rejects the same input).

use corefile::dispenser::PluginError;

use super::registry;
use crate::plugin::cache::CacheError;
use crate::plugin::forward::ForwardError;
use crate::plugin::hosts::HostsError;
use crate::plugin::loadbalance::LoadbalanceError;

/// A Corefile that cannot be served; the text says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The Corefile cannot be read.
    /// (The I/O error is part of the text, not a `source`: a source would make `{:#}`, the
    /// form the logs use, print it a second time.)
    #[error("{path}: {error}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// A reloaded Corefile without any server block: empty, blank, or only comments or
    /// snippets, as a file being truncated or rewritten looks for a moment. CoreDNS would
    /// serve its built-in default instead, dropping every listener and plugin (and `reload`
    /// with them, so it never comes back); a reload refuses it and the running
    /// configuration stays.
    #[error(
        "{0}: no server block (empty, or only comments or snippets); keeping the running configuration"
    )]
    NoServerBlock(String),
    /// The Corefile does not parse (CoreDNS's text).
    #[error(transparent)]
    Parse(#[from] corefile::Error),
    /// A plugin's arguments are wrong (CoreDNS's text).
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// A directive this server does not implement.
    #[error("plugin/{0}: not supported by dns-cache (supported: {list})", list = registry::names())]
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
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// `forward` setup.
    #[error(transparent)]
    Forward(#[from] ForwardError),
    /// `hosts` setup.
    #[error(transparent)]
    Hosts(#[from] HostsError),
    /// `loadbalance` setup.
    #[error(transparent)]
    Loadbalance(#[from] LoadbalanceError),
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::ConfigError;
    use crate::config::plan::{Empty, build};
    use crate::config::source::Source;
    use crate::metrics::Metrics;

    /// `run.rs` logs a failed reload as `{:#}` of an `anyhow` error, which prints the text
    /// and then every `source` below it: an error whose text already includes its source
    /// would print the cause twice (`Restart failed: X: X`). Each kind of error a reload
    /// meets prints exactly its own text.
    #[test]
    fn a_failed_reload_prints_its_error_once() {
        let metrics = Arc::new(Metrics::new());
        let mut errors: Vec<ConfigError> = [
            "example.org {\n",
            ".:53 {\n    cache 30 {\n        bogus\n    }\n}\n",
            ".:53 {\n    forward . not-an-address\n}\n",
            ".:53 {\n    cache 30 example..org\n}\n",
        ]
        .iter()
        .filter_map(|input| build(input.as_bytes(), "Corefile", 53, Empty::Refuse, &metrics).err())
        .collect();
        let missing = Source {
            path: Some("/nonexistent/dns-cache/Corefile".into()),
            dns_port: 53,
        };
        errors.extend(missing.read().err());
        assert_eq!(errors.len(), 5, "{errors:?}");
        for error in errors {
            let once = error.to_string();
            assert_eq!(format!("{:#}", anyhow::Error::from(error)), once);
        }
    }
}
