//! The plugin execution order of `plugin.cfg`, as versioned data (spec section 4.5).

/// A CoreDNS release's directive list, in execution order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PluginOrder {
    /// The CoreDNS version the list belongs to.
    pub version: &'static str,
    /// Directive names, earliest first.
    pub names: &'static [&'static str],
}

/// CoreDNS v1.14.7's `plugin.cfg` (60 directives).
pub const V1_14_7: PluginOrder = PluginOrder {
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

impl Default for PluginOrder {
    fn default() -> Self {
        V1_14_7
    }
}

impl PluginOrder {
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
}
