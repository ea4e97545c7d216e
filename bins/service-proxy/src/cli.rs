//! Command-line flags, named after kube-proxy's where one exists.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use cluster_state::SourceArgs;
use iptables_exec::Backend;
use iptables_model::Cidr;
use iptables_model::kube::{InterfaceName, LocalDetector, PartialSync, ProxyOptions};

use crate::config::flags::KubeProxyFlags;
use crate::nodeports::{self, NodePortAddress};

/// kube-proxy's iptables mode: keeps the kernel's rules in sync with Services and
/// EndpointSlices.
#[derive(Clone, Debug, Parser)]
#[command(version, about)]
pub struct Args {
    /// Where Services and EndpointSlices come from.
    #[command(flatten)]
    pub source: SourceArgs,

    /// kube-proxy's configuration file (a `KubeProxyConfiguration` of
    /// `kubeproxy.config.k8s.io/v1alpha1`, as kubeadm writes it). A flag given on the command
    /// line wins over the file's field.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The proxy mode: `iptables` (the default) or `nftables`; `ipvs` and `kernelspace` are
    /// refused at start.
    #[arg(long, value_name = "MODE")]
    pub proxy_mode: Option<ProxyMode>,

    /// Log verbosity, as kube-proxy's `-v`: 0 and 1 log at info level, 2 to 4 at debug, 5 and
    /// more at trace. `RUST_LOG`, when set, wins.
    #[arg(short = 'v', long = "v", value_name = "LEVEL")]
    pub verbosity: Option<u32>,

    /// Print the restore input of a full sync of the manifests and apply nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Remove every rule and chain this proxy installs, then exit.
    #[arg(long)]
    pub cleanup: bool,

    /// This node's name (endpoints with this nodeName are local).
    #[arg(long, value_name = "NAME")]
    pub hostname_override: Option<String>,

    /// kube-proxy's name for the node's primary IP: when not `0.0.0.0` or `::`, it stands
    /// for `--node-ip` (unless that is given). Nothing is bound to it.
    #[arg(long, value_name = "IP")]
    pub bind_address: Option<IpAddr>,

    /// The node's IP addresses (one per family; checked against loadBalancerSourceRanges).
    #[arg(
        long,
        value_name = "IP",
        value_delimiter = ',',
        default_value = "127.0.0.1"
    )]
    pub node_ip: Vec<IpAddr>,

    /// The IP families to proxy.
    #[arg(long, value_delimiter = ',', default_value = "ipv4")]
    pub ip_families: Vec<Family>,

    /// The pod CIDRs (one per family): traffic to a ClusterIP from outside them is
    /// masqueraded. Without it, only --masquerade-all masquerades ClusterIP traffic.
    #[arg(long, value_name = "CIDR", value_delimiter = ',')]
    pub cluster_cidr: Vec<Cidr>,

    /// Masquerade all traffic to ClusterIPs (`--masquerade-all` or `--masquerade-all=BOOL`).
    #[arg(
        long,
        num_args = 0..=1,
        require_equals = true,
        default_value_t = false,
        default_missing_value = "true",
        action = clap::ArgAction::Set
    )]
    pub masquerade_all: bool,

    /// How traffic from pods is told from other traffic (it is not masqueraded):
    /// `ClusterCIDR` (the default: sources in --cluster-cidr), `BridgeInterface` (arriving on
    /// --pod-bridge-interface), `InterfaceNamePrefix` (arriving on interfaces named
    /// --pod-interface-name-prefix…), `NodeCIDR` (sources in the Node's podCIDRs, waited for at
    /// start).
    #[arg(long, value_name = "MODE")]
    pub detect_local_mode: Option<LocalMode>,

    /// The bridge interface of `--detect-local-mode BridgeInterface`.
    #[arg(long, value_name = "NAME")]
    pub pod_bridge_interface: Option<String>,

    /// The interface name prefix of `--detect-local-mode InterfaceNamePrefix`.
    #[arg(long, value_name = "PREFIX")]
    pub pod_interface_name_prefix: Option<String>,

    /// The bit of the packet mark that flags traffic for masquerading.
    #[arg(long, default_value_t = 14, value_parser = clap::value_parser!(u8).range(0..=31))]
    pub iptables_masquerade_bit: u8,

    /// The nftables mode's masquerade bit: the config file's `nftables.masqueradeBit` (no
    /// flag sets it in kube-proxy either).
    #[arg(skip = 14)]
    pub nftables_masquerade_bit: u8,

    /// The local addresses NodePort connections are accepted on: CIDRs (`10.0.0.0/8,fd00::/64`:
    /// the node's interface addresses inside them) or `primary` (each family's --node-ip).
    /// Unset: every local address.
    #[arg(long, value_name = "CIDR", value_delimiter = ',')]
    pub nodeport_addresses: Vec<NodePortAddress>,

    /// Accept NodePort connections to 127.0.0.1 (IPv4).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub iptables_localhost_nodeports: bool,

    /// Minimum time between the starts of two syncs (a Go duration: `500ms`, `1s`, `1m30s`).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub iptables_min_sync_period: Duration,

    /// Time between periodic syncs (canary check) when nothing changes.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub iptables_sync_period: Duration,

    /// Time between full resyncs.
    #[arg(long, default_value = "1h", value_parser = parse_duration)]
    pub full_sync_period: Duration,

    /// How partial syncs write the top-level chains: `minimal` (only the changed services'
    /// lines, by -D/-I) or `kube-proxy` (rewrite them whole, as KEP-3453).
    #[arg(long, default_value = "minimal")]
    pub partial_sync: PartialSyncArg,

    /// Which iptables build to run: `auto` uses the one the host's rules are in (where
    /// kubelet created its chains), else the system's `iptables`.
    #[arg(long, default_value = "auto")]
    pub iptables_variant: Variant,

    /// Where `/healthz` and `/livez` are served.
    #[arg(long, default_value = "0.0.0.0:10256")]
    pub healthz_bind_address: SocketAddr,

    /// Where `/metrics` is served.
    #[arg(long, default_value = "127.0.0.1:10249")]
    pub metrics_bind_address: SocketAddr,

    /// The address the Services' health-check node ports listen on.
    #[arg(long, default_value = "0.0.0.0")]
    pub health_check_address: IpAddr,

    /// kube-proxy's flags that service-proxy accepts without implementing them.
    #[command(flatten)]
    pub kube_proxy: KubeProxyFlags,
}

/// `--proxy-mode` and the file's `mode`: kube-proxy's proxy modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ProxyMode {
    /// iptables rules (the default).
    Iptables,
    /// nftables rules: one table per family, applied with `nft -f -`.
    Nftables,
    /// IPVS: not supported.
    Ipvs,
    /// Windows' kernel proxier: not supported.
    Kernelspace,
}

/// `--detect-local-mode` and the file's `detectLocalMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LocalMode {
    /// Pod traffic comes from --cluster-cidr.
    #[value(name = "ClusterCIDR")]
    ClusterCidr,
    /// Pod traffic comes from the Node's `spec.podCIDRs`.
    #[value(name = "NodeCIDR")]
    NodeCidr,
    /// Pod traffic comes in through --pod-bridge-interface.
    #[value(name = "BridgeInterface")]
    BridgeInterface,
    /// Pod traffic comes in through interfaces named --pod-interface-name-prefix….
    #[value(name = "InterfaceNamePrefix")]
    InterfaceNamePrefix,
}

/// An IP family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Family {
    /// IPv4 (`iptables`).
    Ipv4,
    /// IPv6 (`ip6tables`).
    Ipv6,
}

/// `--iptables-variant`: which build of the iptables programs to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Variant {
    /// The build whose tables hold kubelet's chains; `default` when none does.
    Auto,
    /// `iptables`, whatever the system's alternatives link points at.
    Default,
    /// `iptables-legacy`.
    Legacy,
    /// `iptables-nft`.
    Nft,
}

impl Variant {
    /// The build to run; `auto` looks at the host's rules (once per call).
    pub async fn backend(self) -> Backend {
        match self {
            Self::Auto => iptables_exec::detect().await,
            Self::Default => Backend::System,
            Self::Legacy => Backend::Legacy,
            Self::Nft => Backend::Nft,
        }
    }
}

/// `--partial-sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PartialSyncArg {
    /// Only what changed.
    Minimal,
    /// As kube-proxy.
    KubeProxy,
}

impl From<PartialSyncArg> for PartialSync {
    fn from(arg: PartialSyncArg) -> Self {
        match arg {
            PartialSyncArg::Minimal => Self::Minimal,
            PartialSyncArg::KubeProxy => Self::KubeProxy,
        }
    }
}

/// A duration as Go's `time.ParseDuration` reads it (kube-proxy's flags are Go durations):
/// a sequence of decimal numbers, each with a unit (`ns`, `us`, `ms`, `s`, `m`, `h`), such as
/// `1m30s` or `1.5h`; `0` alone needs no unit. Negative durations are refused.
///
/// # Errors
///
/// Go's message for text that is not a duration, or one saying the duration is negative.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    corefile::go::Duration::parse(text)?
        .to_std()
        .ok_or_else(|| format!("{text:?}: a duration here must not be negative"))
}

impl Args {
    /// The node name: `--hostname-override`, else the kernel's host name; trimmed and
    /// lowercased, as kube-proxy's `GetHostname` (`pkg/util/node`), so that `Node-A` names the
    /// Node `node-a` (object names are lowercase).
    pub fn hostname(&self) -> String {
        let name = self.hostname_override.clone().unwrap_or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default()
        });
        name.trim().to_lowercase()
    }

    /// How pod traffic is told apart in the rules of one family (kube-proxy's
    /// `getLocalDetectors`): by `--cluster-cidr` of the family (none: no detector), or by
    /// interface. The interface names were checked at start (`config::Settings::resolve`); a
    /// name that is not valid here gives no detector.
    fn local_detector(&self, ipv6: bool) -> LocalDetector {
        let interface = |name: &Option<String>, check: fn(&str) -> Result<InterfaceName, _>| {
            name.as_deref().and_then(|name| check(name).ok())
        };
        match self.detect_local_mode {
            None | Some(LocalMode::ClusterCidr | LocalMode::NodeCidr) => self
                .cluster_cidr
                .iter()
                .copied()
                .find(|c| c.addr.is_ipv6() == ipv6)
                .map_or(LocalDetector::None, LocalDetector::Cidr),
            Some(LocalMode::BridgeInterface) => {
                interface(&self.pod_bridge_interface, InterfaceName::new)
                    .map_or(LocalDetector::None, LocalDetector::BridgeInterface)
            }
            Some(LocalMode::InterfaceNamePrefix) => {
                interface(&self.pod_interface_name_prefix, InterfaceName::prefix)
                    .map_or(LocalDetector::None, LocalDetector::InterfaceNamePrefix)
            }
        }
    }

    /// The generator's options for one family.
    pub fn options(&self, family: Family) -> ProxyOptions {
        let ipv6 = family == Family::Ipv6;
        let node_ip = self
            .node_ip
            .iter()
            .copied()
            .find(|ip| ip.is_ipv6() == ipv6)
            .unwrap_or(if ipv6 {
                IpAddr::from(std::net::Ipv6Addr::LOCALHOST)
            } else {
                IpAddr::from(std::net::Ipv4Addr::LOCALHOST)
            });
        let mut options = ProxyOptions::new(self.hostname(), node_ip);
        options.local_detector = self.local_detector(ipv6);
        options.masquerade_all = self.masquerade_all;
        let nftables = self.proxy_mode == Some(ProxyMode::Nftables);
        options.masquerade_mark = 1
            << if nftables {
                self.nftables_masquerade_bit
            } else {
                self.iptables_masquerade_bit
            };
        // The nftables mode has no localhost NodePorts, and takes NodePorts on the node's
        // primary addresses when `--nodeport-addresses` is not given (kube-proxy's
        // `platformApplyDefaults`, `cmd/kube-proxy/app/server_linux.go`).
        options.localhost_node_ports = self.iptables_localhost_nodeports && !nftables;
        let primary = [NodePortAddress::Primary];
        let nodeport_addresses = if nftables && self.nodeport_addresses.is_empty() {
            &primary[..]
        } else {
            &self.nodeport_addresses
        };
        options.node_port_addresses =
            nodeports::node_port_cidrs(nodeport_addresses, &self.node_ip, ipv6);
        options
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_node_name_is_trimmed_and_lowercased_as_kube_proxys() {
        let args = Args::parse_from(["service-proxy", "--hostname-override", " Node-A.Example "]);
        assert_eq!(args.hostname(), "node-a.example");
    }

    #[test]
    fn durations_in_go_spelling() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn durations_parse_as_go_and_kube_proxy_read_them() {
        let seconds = |s: u64| Ok(Duration::from_secs(s));
        assert_eq!(parse_duration("1m30s"), seconds(90));
        assert_eq!(parse_duration("1h"), seconds(3600));
        assert_eq!(parse_duration("0s"), seconds(0));
        assert_eq!(parse_duration("0"), seconds(0));
        assert_eq!(parse_duration("1.5h"), seconds(5400));
        assert_eq!(parse_duration("2h45m"), seconds(9900));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("+1s"), seconds(1));
        assert_eq!(parse_duration("-0"), seconds(0));
        for bad in ["", "1", "1.5", "1d", "1 s", "m", ".s", "-1s"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse_duration("1x"),
            Err("time: unknown unit \"x\" in duration \"1x\"".to_owned())
        );
    }

    #[test]
    fn the_sync_period_flags_take_go_durations() {
        let args = Args::parse_from([
            "service-proxy",
            "--manifests",
            "/tmp",
            "--iptables-sync-period",
            "1m30s",
            "--iptables-min-sync-period",
            "500ms",
            "--full-sync-period",
            "1h",
        ]);
        assert_eq!(args.iptables_sync_period, Duration::from_secs(90));
        assert_eq!(args.iptables_min_sync_period, Duration::from_millis(500));
        assert_eq!(args.full_sync_period, Duration::from_secs(3600));
        let zero = Args::parse_from([
            "service-proxy",
            "--manifests",
            "/tmp",
            "--iptables-min-sync-period",
            "0s",
        ]);
        assert_eq!(zero.iptables_min_sync_period, Duration::ZERO);
        assert_eq!(zero.iptables_variant, Variant::Auto);
        assert!(Args::try_parse_from(["service-proxy", "--iptables-sync-period", "90"]).is_err());
    }

    #[test]
    fn the_nftables_mode_has_no_localhost_node_ports_and_defaults_to_primary_addresses() {
        let args = Args::parse_from([
            "service-proxy",
            "--hostname-override",
            "node-a",
            "--node-ip",
            "192.168.0.2",
            "--proxy-mode",
            "nftables",
        ]);
        let v4 = args.options(Family::Ipv4);
        assert!(!v4.localhost_node_ports);
        assert_eq!(
            v4.node_port_addresses,
            Some(vec!["192.168.0.2/32".parse().unwrap()])
        );
        let iptables = Args::parse_from(["service-proxy", "--node-ip", "192.168.0.2"]);
        let v4 = iptables.options(Family::Ipv4);
        assert!(v4.localhost_node_ports);
        assert_eq!(v4.node_port_addresses, None);
    }

    #[test]
    fn options_follow_the_flags() {
        let args = Args::parse_from([
            "service-proxy",
            "--manifests",
            "/tmp",
            "--hostname-override",
            "node-a",
            "--node-ip",
            "192.168.0.2,fd00::2",
            "--cluster-cidr",
            "10.244.0.0/16,fd00:10::/64",
            "--iptables-masquerade-bit",
            "15",
            "--nodeport-addresses",
            "192.168.0.0/16",
        ]);
        let v4 = args.options(Family::Ipv4);
        assert_eq!(v4.hostname, "node-a");
        assert_eq!(v4.node_ip.to_string(), "192.168.0.2");
        assert_eq!(
            v4.local_detector,
            LocalDetector::Cidr("10.244.0.0/16".parse().unwrap())
        );
        assert_eq!(v4.masquerade_mark, 0x8000);
        assert_eq!(
            v4.node_port_addresses,
            Some(vec!["192.168.0.0/16".parse().unwrap()])
        );
        let v6 = args.options(Family::Ipv6);
        assert!(v6.ipv6);
        assert_eq!(
            v6.local_detector,
            LocalDetector::Cidr("fd00:10::/64".parse().unwrap())
        );
        // No IPv6 CIDR: every local IPv6 address.
        assert_eq!(v6.node_port_addresses, None);
    }
}
