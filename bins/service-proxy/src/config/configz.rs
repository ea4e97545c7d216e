//! `/configz`: the effective configuration as kube-proxy serves it on its metrics port
//! (component-base's `configz` handler, `cmd/kube-proxy/app/server.go`).
//!
//! kube-proxy registers its configuration under `kubeproxy.config.k8s.io` and serves the
//! internal `KubeProxyConfiguration` (`pkg/proxy/apis/config/types.go`) as JSON. That type has
//! no JSON tags, so its keys are the Go field names (`BindAddress`, `IPTables`,
//! `MasqueradeBit`, …), and its durations print as Go's `Duration.String` (`30s`, `1h0m0s`).
//! Only the fields service-proxy applies are listed: kube-proxy's others configure nothing
//! here, and the start-up warning names the ones that were set.

use serde_json::{Value, json};

use crate::cli::{Args, LocalMode, ProxyMode};
use crate::nodeports::NodePortAddress;

/// The `/proxyMode` text and `Mode` of `args`' proxy mode (`iptables` when none is given, as
/// kube-proxy's default on Linux).
pub const fn proxy_mode(args: &Args) -> &'static str {
    match args.proxy_mode {
        None | Some(ProxyMode::Iptables) => "iptables",
        Some(ProxyMode::Nftables) => "nftables",
        // Refused at start-up; named as given should that change.
        Some(ProxyMode::Ipvs) => "ipvs",
        Some(ProxyMode::Kernelspace) => "kernelspace",
    }
}

/// Go's `Duration.String` of `duration`.
fn go_duration(duration: std::time::Duration) -> String {
    let nanoseconds = i64::try_from(duration.as_nanos()).unwrap_or(i64::MAX);
    corefile::go::Duration(nanoseconds).to_string()
}

fn local_mode(mode: LocalMode) -> &'static str {
    match mode {
        LocalMode::ClusterCidr => "ClusterCIDR",
        LocalMode::NodeCidr => "NodeCIDR",
        LocalMode::BridgeInterface => "BridgeInterface",
        LocalMode::InterfaceNamePrefix => "InterfaceNamePrefix",
    }
}

/// The body of `/configz` for the effective settings `args`.
pub fn configz(args: &Args) -> Value {
    let mode = proxy_mode(args);
    let cluster_cidrs: Vec<String> = args.cluster_cidr.iter().map(ToString::to_string).collect();
    let node_port_addresses: Vec<String> = args
        .nodeport_addresses
        .iter()
        .map(|address| match address {
            NodePortAddress::Primary => "primary".to_owned(),
            NodePortAddress::Cidr(cidr) => cidr.to_string(),
        })
        .collect();
    let bind_address = args
        .bind_address
        .map_or_else(|| "0.0.0.0".to_owned(), |ip| ip.to_string());
    json!({
        "kubeproxy.config.k8s.io": {
            "HostnameOverride": args.hostname_override.clone().unwrap_or_default(),
            "BindAddress": bind_address,
            "HealthzBindAddress": args.healthz_bind_address.to_string(),
            "MetricsBindAddress": args.metrics_bind_address.to_string(),
            "Mode": mode,
            "IPTables": {
                "MasqueradeBit": args.iptables_masquerade_bit,
                "MasqueradeAll": args.masquerade_all,
                "LocalhostNodePorts": args.iptables_localhost_nodeports,
                "SyncPeriod": go_duration(args.iptables_sync_period),
                "MinSyncPeriod": go_duration(args.iptables_min_sync_period),
            },
            "NFTables": {
                "MasqueradeBit": args.nftables_masquerade_bit,
                "MasqueradeAll": args.masquerade_all,
                "SyncPeriod": go_duration(args.iptables_sync_period),
                "MinSyncPeriod": go_duration(args.iptables_min_sync_period),
            },
            "DetectLocalMode": local_mode(args.detect_local_mode.unwrap_or(LocalMode::ClusterCidr)),
            "DetectLocal": {
                "BridgeInterface": args.pod_bridge_interface.clone().unwrap_or_default(),
                "InterfaceNamePrefix": args.pod_interface_name_prefix.clone().unwrap_or_default(),
            },
            "ClusterCIDR": cluster_cidrs.join(","),
            "NodePortAddresses": node_port_addresses,
        }
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn go_field_names_and_go_durations() {
        let args = Args::try_parse_from([
            "service-proxy",
            "--hostname-override=node-a",
            "--cluster-cidr=10.244.0.0/16,fd00:10:244::/56",
            "--nodeport-addresses=primary",
            "--iptables-min-sync-period=1m30s",
        ])
        .unwrap();
        let value = configz(&args);
        let config = &value["kubeproxy.config.k8s.io"];
        assert_eq!(config["HostnameOverride"], "node-a");
        assert_eq!(config["Mode"], "iptables");
        assert_eq!(config["BindAddress"], "0.0.0.0");
        assert_eq!(config["HealthzBindAddress"], "0.0.0.0:10256");
        assert_eq!(config["MetricsBindAddress"], "127.0.0.1:10249");
        assert_eq!(config["IPTables"]["MasqueradeBit"], 14);
        assert_eq!(config["IPTables"]["SyncPeriod"], "30s");
        assert_eq!(config["IPTables"]["MinSyncPeriod"], "1m30s");
        assert_eq!(config["IPTables"]["LocalhostNodePorts"], true);
        assert_eq!(config["DetectLocalMode"], "ClusterCIDR");
        assert_eq!(config["ClusterCIDR"], "10.244.0.0/16,fd00:10:244::/56");
        assert_eq!(config["NodePortAddresses"], json!(["primary"]));
    }
}
