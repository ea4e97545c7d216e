//! node-cache's command line (`dns-cache node-local -localip … -upstreamsvc …`): single-dash
//! flags as node-cache spells them (rewritten to clap's `--` form, so both work), Go's
//! `-flag=false` booleans, and the cluster-state source flags for the upstream Service.

use std::ffi::OsString;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

/// `dns-cache node-local`: NodeLocal DNSCache's `node-cache`.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "dns-cache node-local",
    about = "NodeLocal DNSCache: a node-local cache on link-local addresses, without conntrack"
)]
pub struct NodeLocalArgs {
    /// Comma-separated IPs to listen on (one family), e.g. `169.254.20.10,10.96.0.10`.
    #[arg(
        long = "localip",
        value_name = "IPS",
        value_delimiter = ',',
        required = true
    )]
    pub local_ips: Vec<IpAddr>,
    /// The Corefile template with `__PILLAR__` placeholders.
    #[arg(
        long = "basecorefile",
        value_name = "FILE",
        default_value = "/etc/coredns/Corefile.base"
    )]
    pub base_corefile: PathBuf,
    /// Where the filled Corefile is written, and served from (`-conf`, as kubernetes'
    /// `nodelocaldns.yaml` spells it, is the same flag).
    #[arg(
        long = "corefile",
        visible_alias = "conf",
        value_name = "FILE",
        default_value = "/etc/Corefile"
    )]
    pub corefile: PathBuf,
    /// The Service (`NAME` in kube-system, or `NAMESPACE/NAME`) whose ClusterIP fills
    /// `__PILLAR__CLUSTER__DNS__`.
    #[arg(
        long = "upstreamsvc",
        value_name = "SERVICE",
        default_value = "kube-dns"
    )]
    pub upstream_service: String,
    /// Create the interface and put the local IPs on it (`-setupinterface=false` to skip).
    #[arg(long = "setupinterface", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_value = "true", default_missing_value = "true")]
    pub setup_interface: bool,
    /// The dummy interface carrying the local IPs.
    #[arg(
        long = "interfacename",
        value_name = "NAME",
        default_value = "nodelocaldns"
    )]
    pub interface_name: String,
    /// Install the NOTRACK and ACCEPT rules (`-setupiptables=false` to skip).
    #[arg(long = "setupiptables", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_value = "true", default_missing_value = "true")]
    pub setup_iptables: bool,
    /// How often the rules, the interface and the Corefile are checked: seconds, or a Go
    /// duration (`500ms`, `1m`).
    #[arg(long = "syncinterval", value_name = "INTERVAL", default_value = "60",
          value_parser = parse_interval)]
    pub sync_interval: Duration,
    /// Leave the rules and the interface in place at exit.
    #[arg(long = "skipteardown")]
    pub skip_teardown: bool,
    /// The port of the `health` plugin (its probes are not tracked either).
    #[arg(long = "health-port", value_name = "PORT", default_value_t = 8080)]
    pub health_port: u16,
    /// Where `coredns_nodecache_setup_errors_total` is served (`/metrics`).
    #[arg(
        long = "metrics-listen-address",
        value_name = "ADDR",
        default_value = "0.0.0.0:9353"
    )]
    pub metrics_listen_address: String,
    /// The DNS port the rules protect and zone keys default to.
    #[arg(long = "dns.port", value_name = "PORT", default_value_t = 53)]
    pub dns_port: u16,
    /// Write the process ID to FILE (removed at exit).
    #[arg(long, value_name = "FILE")]
    pub pidfile: Option<PathBuf>,
    /// Where the upstream Service is read from (`--manifests DIR`, `--kubeconfig FILE`, or
    /// in-cluster); with neither and `<NAME>_SERVICE_HOST` set, that variable is used as
    /// node-cache does.
    #[command(flatten)]
    pub source: cluster_state::SourceArgs,
}

/// The flags node-cache (and CoreDNS) write with one dash.
pub const LONG_FLAGS: [&str; 14] = [
    "localip",
    "basecorefile",
    "conf",
    "corefile",
    "upstreamsvc",
    "setupinterface",
    "interfacename",
    "setupiptables",
    "syncinterval",
    "skipteardown",
    "health-port",
    "metrics-listen-address",
    "dns.port",
    "pidfile",
];

impl NodeLocalArgs {
    /// Parses `args` (the subcommand name first), accepting node-cache's single-dash flags.
    pub fn try_parse_node_cache<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        Self::try_parse_from(crate::cli::rewrite_long_flags(
            args.into_iter().map(Into::into),
            &LONG_FLAGS,
        ))
    }

    /// The upstream Service as (namespace, name): `NAME` lives in `kube-system`.
    pub fn upstream_service_ref(&self) -> (&str, &str) {
        self.upstream_service
            .split_once('/')
            .unwrap_or(("kube-system", &self.upstream_service))
    }
}

/// `-syncinterval`: whole seconds (`60`) or a Go duration (`500ms`).
fn parse_interval(text: &str) -> Result<Duration, String> {
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let go = corefile::go::Duration::parse(text)?;
    u64::try_from(go.0)
        .ok()
        .filter(|&nanos| nanos > 0)
        .map(Duration::from_nanos)
        .ok_or_else(|| format!("sync interval must be positive: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_cache_flags_parse() {
        let args = NodeLocalArgs::try_parse_node_cache([
            "node-local",
            "-localip",
            "169.254.20.10,10.96.0.10",
            "-basecorefile",
            "/b",
            "-corefile=/c",
            "-upstreamsvc",
            "kube-dns-upstream",
            "-setupinterface=false",
            "-skipteardown",
            "-syncinterval",
            "500ms",
            "-health-port",
            "8081",
            "--manifests",
            "/m",
        ])
        .unwrap();
        assert_eq!(
            args.local_ips,
            [
                "169.254.20.10".parse::<IpAddr>().unwrap(),
                "10.96.0.10".parse().unwrap()
            ]
        );
        assert_eq!(args.base_corefile, PathBuf::from("/b"));
        assert_eq!(args.corefile, PathBuf::from("/c"));
        assert!(!args.setup_interface && args.setup_iptables && args.skip_teardown);
        assert_eq!(args.sync_interval, Duration::from_millis(500));
        assert_eq!(args.health_port, 8081);
        assert_eq!(args.interface_name, "nodelocaldns");
        assert_eq!(args.metrics_listen_address, "0.0.0.0:9353");
        assert_eq!(
            args.upstream_service_ref(),
            ("kube-system", "kube-dns-upstream")
        );
        assert_eq!(args.source.manifests, Some(PathBuf::from("/m")));
    }

    #[test]
    fn defaults_and_errors() {
        let args = NodeLocalArgs::try_parse_node_cache(["n", "-localip", "169.254.20.10"]).unwrap();
        assert_eq!(args.sync_interval, Duration::from_secs(60));
        assert!(args.setup_interface && args.setup_iptables && !args.skip_teardown);
        assert!(NodeLocalArgs::try_parse_node_cache(["n"]).is_err());
        assert!(NodeLocalArgs::try_parse_node_cache(["n", "-localip", "nope"]).is_err());
        assert!(
            NodeLocalArgs::try_parse_node_cache(["n", "-localip", "::1", "-syncinterval", "0s"])
                .is_err()
        );
    }
}
