//! The plugin list, the counterpart of CoreDNS's `plugin.cfg`: every plugin this server
//! implements, once, in execution order, with the function that sets it up. It is the one
//! source of the order of a block's chain, of the directives a Corefile may use and of the
//! `-plugins` listing.
//!
//! Adding a plugin: a module under `plugin/` implementing [`Plugin`](crate::plugin::Plugin)
//! with a setup function (see `plugin/example.rs`), and one line here at the plugin's
//! `plugin.cfg` position. A plugin CoreDNS does not have (`example`) may sit anywhere; the
//! Corefile parser learns it from this list.

use std::sync::LazyLock;

use corefile::plugin_order::{PluginOrder, V1_14_7};

use super::chain::{self, SetupFn};
use crate::plugin::{example, loadbalance};

/// One plugin of the list.
pub struct Entry {
    /// Its directive.
    pub name: &'static str,
    /// What reads its settings and adds it to a block's chain. `None` for the plugins the
    /// server serves itself (`plan.rs`: listeners, HTTP endpoints, reloading).
    pub(crate) setup: Option<SetupFn>,
}

impl Entry {
    /// A plugin of the query chain.
    const fn chain(name: &'static str, setup: SetupFn) -> Self {
        Self {
            name,
            setup: Some(setup),
        }
    }

    /// A plugin the server serves itself.
    const fn server(name: &'static str) -> Self {
        Self { name, setup: None }
    }
}

/// The plugins this server knows, in execution order.
pub const PLUGINS: &[Entry] = &[
    // Early, as its README asks, so that it sees every query first.
    Entry::chain("example", example::setup),
    Entry::server("reload"),
    Entry::server("bind"),
    Entry::server("debug"),
    Entry::server("ready"),
    Entry::server("health"),
    Entry::chain("prometheus", chain::prometheus),
    Entry::chain("errors", chain::errors),
    Entry::chain("log", chain::log),
    Entry::chain("loadbalance", loadbalance::setup),
    Entry::chain("cache", chain::cache),
    Entry::chain("hosts", chain::hosts),
    Entry::chain("kubernetes", chain::kubernetes),
    Entry::chain("loop", chain::loop_detect),
    Entry::chain("forward", chain::forward),
    Entry::chain("whoami", chain::whoami),
];

/// Whether this server implements directive `name`.
pub(super) fn known(name: &str) -> bool {
    PLUGINS.iter().any(|p| p.name == name)
}

/// The plugins' names, comma-separated, in list order.
pub(super) fn names() -> String {
    PLUGINS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The directives the Corefile parser accepts, in execution order: CoreDNS v1.14.7's
/// (the ones not implemented here are refused by name, after parsing, as CoreDNS would
/// parse them) with this list's own plugins placed before the next plugin of the list
/// CoreDNS knows.
pub fn directive_order() -> PluginOrder<'static> {
    static NAMES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        let mut names = Vec::new();
        let mut pending = Vec::new();
        let mut coredns = V1_14_7.names.iter();
        for entry in PLUGINS {
            if !V1_14_7.contains(entry.name) {
                pending.push(entry.name);
                continue;
            }
            for name in coredns.by_ref() {
                if *name == entry.name {
                    names.append(&mut pending);
                    names.push(*name);
                    break;
                }
                names.push(*name);
            }
        }
        names.append(&mut pending);
        names.extend(coredns);
        names
    });
    PluginOrder {
        version: V1_14_7.version,
        names: NAMES.as_slice(),
    }
}

/// What `-plugins` prints (CoreDNS's layout, our plugins).
pub fn plugins_text() -> String {
    let mut text = String::from(
        "Server types:\n  dns\n\nCaddyfile loaders:\n  flag\n  default\n\nOther plugins:\n",
    );
    for plugin in PLUGINS {
        text.push_str("  dns.");
        text.push_str(plugin.name);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugins_lists_every_plugin_with_the_dns_prefix() {
        let text = plugins_text();
        assert!(text.contains("  dns.cache\n") && text.contains("  dns.forward\n"));
        assert!(text.contains("  dns.example\n") && text.contains("  dns.loadbalance\n"));
        assert!(text.starts_with("Server types:\n  dns\n"));
    }

    #[test]
    fn the_list_keeps_plugin_cfg_order_and_names_each_plugin_once() {
        let positions: Vec<usize> = PLUGINS
            .iter()
            .filter_map(|p| V1_14_7.position(p.name))
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
        for (i, entry) in PLUGINS.iter().enumerate() {
            assert!(!PLUGINS[..i].iter().any(|p| p.name == entry.name));
        }
    }

    #[test]
    fn the_parser_knows_coredns_directives_and_ours_in_list_order() {
        let order = directive_order();
        assert_eq!(order.names.len(), V1_14_7.names.len() + 1);
        assert!(V1_14_7.names.iter().all(|n| order.contains(n)));
        let ours: Vec<usize> = PLUGINS
            .iter()
            .map(|p| order.position(p.name).unwrap())
            .collect();
        assert!(ours.windows(2).all(|w| w[0] < w[1]), "{ours:?}");
        assert_eq!(
            order.position("example"),
            order.position("reload").map(|p| p - 1)
        );
    }
}
