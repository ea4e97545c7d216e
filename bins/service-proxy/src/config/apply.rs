//! The fields of a configuration file that service-proxy implements, put onto [`Args`]: each
//! field sets its flag's value unless that flag was given on the command line (a flag given
//! wins). A field at its zero value (`""`, `0s`, `null`) leaves the flag's default, which is
//! kube-proxy's default for the field.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use clap::ValueEnum;
use iptables_model::Cidr;

use super::file::{GoDuration, KubeProxyConfiguration};
use super::read::ConfigError;
use crate::cli::{Args, LocalMode, ProxyMode};
use crate::nodeports::NodePortAddress;

/// kube-proxy's health-check port (`pkg/cluster/ports`: `ProxyHealthzPort`).
const HEALTHZ_PORT: u16 = 10256;
/// kube-proxy's metrics port (`ProxyStatusPort`).
const METRICS_PORT: u16 = 10249;

/// Sets `args` from `config` (read from `path`), field by field, except where `given(id)` says
/// the flag of clap id `id` was on the command line. Returns the flags given that a field of
/// the file also set (the file's value lost).
///
/// # Errors
///
/// A field whose value is not valid for it (an address that is not one, a bit out of range),
/// naming the field.
pub fn apply_file(
    config: &KubeProxyConfiguration,
    path: &Path,
    args: &mut Args,
    given: &dyn Fn(&str) -> bool,
) -> Result<Vec<&'static str>, ConfigError> {
    let mut file = FileOnArgs {
        given,
        overridden: Vec::new(),
    };
    let error = |field: &str, message: String| ConfigError::new(path, field, message);

    if let Some(name) = non_empty(&config.hostname_override) {
        file.set_value(
            "hostname_override",
            &mut args.hostname_override,
            Some(name.to_owned()),
        );
    }
    if let Some(text) = non_empty(&config.bind_address) {
        let ip = text
            .parse::<IpAddr>()
            .map_err(|_| error("bindAddress", format!("{text:?} is not an IP address")))?;
        file.set_value("bind_address", &mut args.bind_address, Some(ip));
    }
    let ipv6 = args.bind_address.is_some_and(|ip| ip.is_ipv6());
    // kube-proxy's defaults follow the family of bindAddress: [::]:10256 and [::1]:10249 for
    // IPv6 (the flags' defaults are IPv4's).
    let (any, loopback) = (
        IpAddr::from(std::net::Ipv6Addr::UNSPECIFIED),
        IpAddr::from(std::net::Ipv6Addr::LOCALHOST),
    );
    let healthz = match non_empty(&config.healthz_bind_address) {
        Some(text) => Some(
            socket_address(text, HEALTHZ_PORT)
                .ok_or_else(|| error("healthzBindAddress", not_an_address(text)))?,
        ),
        None => ipv6.then_some(SocketAddr::new(any, HEALTHZ_PORT)),
    };
    if let Some(healthz) = healthz {
        file.set_value(
            "healthz_bind_address",
            &mut args.healthz_bind_address,
            healthz,
        );
    }
    let metrics = match non_empty(&config.metrics_bind_address) {
        Some(text) => Some(
            socket_address(text, METRICS_PORT)
                .ok_or_else(|| error("metricsBindAddress", not_an_address(text)))?,
        ),
        None => ipv6.then_some(SocketAddr::new(loopback, METRICS_PORT)),
    };
    if let Some(metrics) = metrics {
        file.set_value(
            "metrics_bind_address",
            &mut args.metrics_bind_address,
            metrics,
        );
    }
    if let Some(text) = non_empty(&config.mode) {
        let mode = ProxyMode::from_str(text, false).map_err(|_| {
            error(
                "mode",
                format!("{text:?}: expected iptables, nftables, ipvs or kernelspace"),
            )
        })?;
        file.set_value("proxy_mode", &mut args.proxy_mode, Some(mode));
    }
    if let Some(on) = config
        .iptables
        .as_ref()
        .and_then(|i| i.localhost_node_ports)
    {
        let flag = &mut args.iptables_localhost_nodeports;
        file.set_value("iptables_localhost_nodeports", flag, on);
    }
    // The mode in use picks the section that sets masquerading and the sync periods
    // (kube-proxy's `Convert_v1alpha1_KubeProxyConfiguration_To_config_KubeProxyConfiguration`:
    // `nftables.*` in the nftables mode, `iptables.*` otherwise); the other is ignored.
    let nftables = args.proxy_mode == Some(ProxyMode::Nftables);
    let section = if nftables {
        config.nftables.as_ref().map(|n| Section {
            name: "nftables",
            masquerade_all: n.masquerade_all,
            masquerade_bit: n.masquerade_bit,
            sync_period: n.sync_period,
            min_sync_period: n.min_sync_period,
        })
    } else {
        config.iptables.as_ref().map(|i| Section {
            name: "iptables",
            masquerade_all: i.masquerade_all,
            masquerade_bit: i.masquerade_bit,
            sync_period: i.sync_period,
            min_sync_period: i.min_sync_period,
        })
    };
    if let Some(section) = section {
        if let Some(all) = section.masquerade_all {
            file.set_value("masquerade_all", &mut args.masquerade_all, all);
        }
        if let Some(bit) = section.masquerade_bit {
            let bit = u8::try_from(bit)
                .ok()
                .filter(|bit| *bit <= 31)
                .ok_or_else(|| {
                    let field = format!("{}.masqueradeBit", section.name);
                    error(&field, format!("{bit}: must be 0 to 31"))
                })?;
            // kube-proxy's `--iptables-masquerade-bit` sets only the iptables section: the
            // nftables mode's bit comes from the file alone.
            if nftables {
                args.nftables_masquerade_bit = bit;
            } else {
                file.set_value(
                    "iptables_masquerade_bit",
                    &mut args.iptables_masquerade_bit,
                    bit,
                );
            }
        }
        if let Some(period) = non_zero(section.sync_period) {
            file.set_value(
                "iptables_sync_period",
                &mut args.iptables_sync_period,
                period,
            );
        }
        if let Some(period) = non_zero(section.min_sync_period) {
            let flag = &mut args.iptables_min_sync_period;
            file.set_value("iptables_min_sync_period", flag, period);
        }
    }
    if let Some(text) = non_empty(&config.detect_local_mode) {
        let mode = LocalMode::from_str(text, false).map_err(|_| {
            error(
                "detectLocalMode",
                format!(
                    "{text:?}: expected ClusterCIDR, NodeCIDR, BridgeInterface or \
                     InterfaceNamePrefix"
                ),
            )
        })?;
        file.set_value("detect_local_mode", &mut args.detect_local_mode, Some(mode));
    }
    if let Some(detect) = &config.detect_local {
        if let Some(name) = non_empty(&detect.bridge_interface) {
            let flag = &mut args.pod_bridge_interface;
            file.set_value("pod_bridge_interface", flag, Some(name.to_owned()));
        }
        if let Some(prefix) = non_empty(&detect.interface_name_prefix) {
            let flag = &mut args.pod_interface_name_prefix;
            file.set_value("pod_interface_name_prefix", flag, Some(prefix.to_owned()));
        }
    }
    if let Some(text) = non_empty(&config.cluster_cidr) {
        let cidrs = text
            .split(',')
            .map(|cidr| {
                let cidr = cidr.trim();
                cidr.parse::<Cidr>()
                    .map_err(|_| error("clusterCIDR", format!("{cidr:?} is not a CIDR")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        file.set_value("cluster_cidr", &mut args.cluster_cidr, cidrs);
    }
    if let Some(addresses) = config
        .node_port_addresses
        .as_ref()
        .filter(|a| !a.is_empty())
    {
        let addresses = addresses
            .iter()
            .map(|text| {
                text.parse::<NodePortAddress>()
                    .map_err(|message| error("nodePortAddresses", message))
            })
            .collect::<Result<Vec<_>, _>>()?;
        file.set_value(
            "nodeport_addresses",
            &mut args.nodeport_addresses,
            addresses,
        );
    }
    let kubeconfig = config
        .client_connection
        .as_ref()
        .and_then(|client| non_empty(&client.kubeconfig));
    // --manifests chooses another source: the file's kubeconfig is then not used.
    if let Some(kubeconfig) = kubeconfig
        && args.source.manifests.is_none()
    {
        let flag = &mut args.source.kubeconfig;
        file.set_value("kubeconfig", flag, Some(kubeconfig.into()));
    }
    let verbosity = config.logging.as_ref().and_then(|l| l.verbosity);
    if verbosity.is_some() {
        file.set_value("verbosity", &mut args.verbosity, verbosity);
    }
    Ok(file.overridden)
}

/// Puts the file's values onto flags not given on the command line.
struct FileOnArgs<'a> {
    given: &'a dyn Fn(&str) -> bool,
    overridden: Vec<&'static str>,
}

impl FileOnArgs<'_> {
    fn set_value<T>(&mut self, id: &'static str, flag: &mut T, value: T) {
        if (self.given)(id) {
            self.overridden.push(id);
        } else {
            *flag = value;
        }
    }
}

/// The fields of the `iptables` or `nftables` section that the mode in use reads.
struct Section {
    name: &'static str,
    masquerade_all: Option<bool>,
    masquerade_bit: Option<i32>,
    sync_period: Option<GoDuration>,
    min_sync_period: Option<GoDuration>,
}

fn non_empty(text: &Option<String>) -> Option<&str> {
    text.as_deref().map(str::trim).filter(|t| !t.is_empty())
}

fn non_zero(duration: Option<GoDuration>) -> Option<Duration> {
    duration.map(|d| d.0).filter(|d| !d.is_zero())
}

/// `IP:PORT`, `[IPv6]:PORT`, or an IP alone with kube-proxy's port for it (its
/// `AppendPortIfNeeded`).
fn socket_address(text: &str, port: u16) -> Option<SocketAddr> {
    text.parse::<SocketAddr>().ok().or_else(|| {
        text.parse::<IpAddr>()
            .ok()
            .map(|ip| SocketAddr::new(ip, port))
    })
}

fn not_an_address(text: &str) -> String {
    format!("{text:?}: expected IP:PORT or an IP")
}
