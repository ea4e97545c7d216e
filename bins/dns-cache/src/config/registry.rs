//! The plugin registry: the plugins this server implements, in CoreDNS's `plugin.cfg`
//! order, the ones that make up a block's query chain, and the `-plugins` listing.

/// The plugins this server knows, in `plugin.cfg` order.
pub const PLUGINS: [&str; 14] = [
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
    "kubernetes",
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
pub(super) const CHAIN: [&str; 8] = [
    "errors",
    "log",
    "cache",
    "hosts",
    "kubernetes",
    "loop",
    "forward",
    "whoami",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugins_lists_every_plugin_with_the_dns_prefix() {
        let text = plugins_text();
        assert!(text.contains("  dns.cache\n") && text.contains("  dns.forward\n"));
        assert!(text.starts_with("Server types:\n  dns\n"));
    }
}
