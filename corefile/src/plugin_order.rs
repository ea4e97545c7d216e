//! The plugin execution order of `plugin.cfg`, as versioned data (`docs/corefile.md` §4.5).

/// A CoreDNS release's directive list, in execution order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PluginOrder<'a> {
    /// The CoreDNS version the list belongs to.
    pub version: &'a str,
    /// Directive names, earliest first.
    pub names: &'a [&'a str],
}

/// CoreDNS v1.14.7's `plugin.cfg` (60 directives).
pub const V1_14_7: PluginOrder<'static> = PluginOrder {
    version: "1.14.7",
    names: &[
        "root",
        "metadata",
        "geoip",
        "cancel",
        "proxyproto",
        "quic",
        "grpc_server",
        "https",
        "https3",
        "timeouts",
        "multisocket",
        "reload",
        "nsid",
        "bufsize",
        "bind",
        "debug",
        "trace",
        "ready",
        "health",
        "pprof",
        "shed",
        "prometheus",
        "errors",
        "log",
        "dnstap",
        "local",
        "dns64",
        "any",
        "chaos",
        "loadbalance",
        "tsig",
        "rewrite",
        "autopath",
        "acl",
        "cache",
        "header",
        "dnssec",
        "tls",
        "minimal",
        "template",
        "transfer",
        "hosts",
        "route53",
        "azure",
        "clouddns",
        "k8s_external",
        "kubernetes",
        "file",
        "auto",
        "secondary",
        "etcd",
        "loop",
        "forward",
        "grpc",
        "erratic",
        "whoami",
        "on",
        "sign",
        "view",
        "nomad",
    ],
};

impl Default for PluginOrder<'static> {
    fn default() -> Self {
        V1_14_7
    }
}

/// The directive names of a `plugin.cfg` file, as CoreDNS's `directives_generate.go` reads
/// it: lines starting with `#` are skipped, and of every line with exactly one `:` the part
/// before it is a directive. Use with [`PluginOrder`] for another release.
pub fn names_from_plugin_cfg(plugin_cfg: &str) -> alloc::vec::Vec<&str> {
    plugin_cfg
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(
            |line| match line.split(':').collect::<alloc::vec::Vec<_>>()[..] {
                [name, _] => Some(name),
                _ => None,
            },
        )
        .collect()
}

impl PluginOrder<'_> {
    /// The position of `name` in the order, or `None` if it is not a directive.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| *n == name)
    }

    /// Whether `name` is a directive of this release.
    pub fn contains(&self, name: &str) -> bool {
        self.position(name).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_14_7_has_60_directives_spec_4_5() {
        assert_eq!(V1_14_7.names.len(), 60);
        assert!(V1_14_7.position("log") < V1_14_7.position("whoami"));
        assert!(V1_14_7.contains("on"));
        assert!(!V1_14_7.contains("proxy"));
    }

    #[test]
    fn plugin_cfg_lines_spec_4_5() {
        let cfg = "# comment: here\nmetadata:metadata\nlog:log\nbad\na:b:c\n";
        assert_eq!(names_from_plugin_cfg(cfg), ["metadata", "log"]);
    }
}
