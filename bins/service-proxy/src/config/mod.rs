//! One effective configuration from the command line and kube-proxy's configuration file
//! (`--config`), checked before anything starts.
//!
//! kube-proxy (`cmd/kube-proxy/app/options.go`, `Complete`) replaces its flag-parsed settings
//! with the file's, then applies only `--hostname-override` and the logging flags the command
//! line set (pflag's `Changed`); its other flags are documented as ignored when `--config` is
//! given. service-proxy generalises that rule: every flag given on the command line wins over
//! the file's field, and is named in a log line, so that no value is dropped silently.

pub mod apply;
pub mod configz;
pub mod file;
pub mod flags;
pub mod read;
pub mod unimplemented;

use std::path::Path;

use clap::parser::ValueSource;
use clap::{ArgMatches, FromArgMatches};
use iptables_model::Cidr;

use crate::cli::{Args, LocalMode, ProxyMode};
use iptables_model::kube::InterfaceName;
use read::ConfigError;

/// The effective configuration, and what the start-up logs must say about it.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The flags, with the configuration file's fields applied.
    pub args: Args,
    /// Settings read and not implemented, not at their default: the file's fields
    /// (`path: value`) and kube-proxy's flags (`--name=value`). Named in one warning.
    pub not_implemented: Vec<String>,
    /// The flags given on the command line that won over a field of the file.
    pub overridden: Vec<&'static str>,
}

/// Why service-proxy does not start.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The command line does not parse.
    #[error(transparent)]
    Flags(#[from] clap::Error),
    /// The configuration file cannot be read.
    #[error("cannot read the configuration file {path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The configuration file is not a valid `KubeProxyConfiguration`.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The settings ask for something service-proxy does not do.
    #[error("{0}")]
    Refused(String),
}

impl Settings {
    /// Resolves the parsed command line `matches` (of [`Args`]) and the configuration file it
    /// names into one configuration, and checks it.
    ///
    /// # Errors
    ///
    /// A configuration file that cannot be read or is invalid, or settings that service-proxy
    /// refuses (a proxy mode or local-traffic detector it does not implement, a refused
    /// kube-proxy flag), with the reason.
    pub fn resolve(matches: &ArgMatches) -> Result<Self, SettingsError> {
        let mut args = Args::from_arg_matches(matches)?;
        let given = |id: &str| {
            matches!(
                matches
                    .try_get_raw(id)
                    .ok()
                    .and_then(|_| matches.value_source(id)),
                Some(ValueSource::CommandLine)
            )
        };
        let mut not_implemented = Vec::new();
        let mut overridden = Vec::new();
        if let Some(path) = args.config.clone() {
            let config = load(&path)?;
            overridden = apply::apply_file(&config, &path, &mut args, &given)?;
            not_implemented = unimplemented::unimplemented_fields(&config);
        }
        if let Some(ip) = args.bind_address
            && !ip.is_unspecified()
            && !given("node_ip")
        {
            args.node_ip = vec![ip];
        }
        not_implemented.extend(args.kube_proxy.given());
        // Flags of the iptables mode that kube-proxy's nftables mode ignores: named, as every
        // setting without effect.
        if args.proxy_mode == Some(ProxyMode::Nftables) {
            if given("iptables_masquerade_bit") {
                not_implemented.push(format!(
                    "--iptables-masquerade-bit={} (the nftables mode's bit is the config \
                     file's nftables.masqueradeBit)",
                    args.iptables_masquerade_bit
                ));
            }
            if given("iptables_localhost_nodeports") {
                not_implemented.push(format!(
                    "--iptables-localhost-nodeports={} (the nftables mode has no localhost \
                     NodePorts)",
                    args.iptables_localhost_nodeports
                ));
            }
        }
        check(&args)?;
        Ok(Self {
            args,
            not_implemented,
            overridden,
        })
    }

    /// The log level of the verbosity (`-v` or `logging.verbosity`), as kube-proxy's levels
    /// map onto tracing's: 0 and 1 info, 2 to 4 debug, 5 and more trace.
    pub fn log_level(&self) -> tracing::Level {
        match self.args.verbosity.unwrap_or(0) {
            0..=1 => tracing::Level::INFO,
            2..=4 => tracing::Level::DEBUG,
            _ => tracing::Level::TRACE,
        }
    }

    /// The log filter: [`Settings::log_level`] for this proxy's own crates, info for the
    /// libraries under them (as `-v` raises kube-proxy's own logs).
    pub fn log_filter(&self) -> String {
        let level = self.log_level().as_str().to_ascii_lowercase();
        format!("info,service_proxy={level},cluster_state={level},iptables_exec={level}")
    }

    /// Logs what the operator must know about the settings: the one warning naming every
    /// setting read and not implemented, and the flags that won over the file.
    pub fn log_start_up(&self) {
        if !self.not_implemented.is_empty() {
            tracing::warn!(
                "not implemented by service-proxy, ignored: {}",
                self.not_implemented.join(", ")
            );
        }
        if !self.overridden.is_empty() {
            let flags: Vec<String> = self
                .overridden
                .iter()
                .map(|id| match *id {
                    "verbosity" => "-v".to_owned(),
                    id => format!("--{}", id.replace('_', "-")),
                })
                .collect();
            tracing::info!(
                "flags given on the command line win over the configuration file: {}",
                flags.join(", ")
            );
        }
    }
}

fn load(path: &Path) -> Result<file::KubeProxyConfiguration, SettingsError> {
    let text = std::fs::read_to_string(path).map_err(|source| SettingsError::Io {
        path: path.to_owned(),
        source,
    })?;
    Ok(read::read_config(path, &text)?)
}

/// Refuses what service-proxy does not do, saying why.
fn check(args: &Args) -> Result<(), SettingsError> {
    let refuse = |message: String| Err(SettingsError::Refused(message));
    if let Some(why) = args.kube_proxy.refused() {
        return refuse(why);
    }
    match args.proxy_mode {
        None | Some(ProxyMode::Iptables | ProxyMode::Nftables) => {}
        Some(ProxyMode::Ipvs) => {
            return refuse(
                "proxy mode ipvs is not supported: service-proxy implements kube-proxy's \
                 iptables and nftables modes (use one of them, or leave it empty)"
                    .to_owned(),
            );
        }
        Some(ProxyMode::Kernelspace) => {
            return refuse("proxy mode kernelspace is Windows' and not supported".to_owned());
        }
    }
    match args.detect_local_mode {
        None | Some(LocalMode::ClusterCidr) => {}
        // The Node's pod CIDRs are waited for once the object source runs (main.rs).
        Some(LocalMode::NodeCidr) => {}
        Some(LocalMode::BridgeInterface) => {
            // As kube-proxy's validation: the interface must be named.
            let name = args.pod_bridge_interface.as_deref().unwrap_or_default();
            if let Err(why) = InterfaceName::new(name) {
                return refuse(format!(
                    "detect-local-mode BridgeInterface needs --pod-bridge-interface \
                     (detectLocal.bridgeInterface): {name:?}: {why}"
                ));
            }
        }
        Some(LocalMode::InterfaceNamePrefix) => {
            let prefix = args
                .pod_interface_name_prefix
                .as_deref()
                .unwrap_or_default();
            if let Err(why) = InterfaceName::prefix(prefix) {
                return refuse(format!(
                    "detect-local-mode InterfaceNamePrefix needs --pod-interface-name-prefix \
                     (detectLocal.interfaceNamePrefix): {prefix:?}: {why}"
                ));
            }
        }
    }
    for ipv6 in [false, true] {
        let same_family: Vec<String> = args
            .cluster_cidr
            .iter()
            .filter(|cidr: &&Cidr| cidr.addr.is_ipv6() == ipv6)
            .map(ToString::to_string)
            .collect();
        if same_family.len() > 1 {
            return refuse(format!(
                "cluster CIDRs {}: at most one per IP family (a dual-stack pair)",
                same_family.join(",")
            ));
        }
    }
    if args
        .hostname_override
        .as_deref()
        .is_some_and(|name| name.trim().is_empty())
    {
        return refuse("an empty hostname override is invalid".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::time::Duration;

    use clap::CommandFactory;

    use super::*;
    use crate::cli::Family;
    use iptables_model::kube::LocalDetector;

    const HEAD: &str =
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n";

    /// Resolves the command line `flags` with a configuration file of `body` (none if `None`).
    fn resolve(body: Option<&str>, flags: &[&str]) -> Result<Settings, SettingsError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.conf");
        let mut argv = vec!["service-proxy", "--manifests", "/tmp"];
        let config = format!("--config={}", path.display());
        if let Some(body) = body {
            std::fs::write(&path, format!("{HEAD}{body}")).unwrap();
            argv.push(&config);
        }
        argv.extend(flags);
        let matches = Args::command().try_get_matches_from(argv)?;
        Settings::resolve(&matches)
    }

    fn refusal(body: Option<&str>, flags: &[&str]) -> String {
        match resolve(body, flags) {
            Err(SettingsError::Refused(why)) => why,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn the_files_fields_set_the_flags_values() {
        let body = "hostnameOverride: node-b\nclusterCIDR: 10.244.0.0/16,fd00:10::/64\n\
            iptables:\n  masqueradeAll: true\n  masqueradeBit: 12\n  localhostNodePorts: false\n  \
            syncPeriod: 1m30s\n  minSyncPeriod: 500ms\n\
            healthzBindAddress: 127.0.0.1\nmetricsBindAddress: 0.0.0.0:9999\n\
            nodePortAddresses: [192.168.0.0/16, primary]\nbindAddress: 192.168.0.2\n\
            mode: iptables\ndetectLocalMode: ClusterCIDR\n";
        let args = resolve(Some(body), &[]).unwrap().args;
        assert_eq!(args.hostname_override.as_deref(), Some("node-b"));
        assert_eq!(
            args.node_ip,
            ["192.168.0.2".parse::<std::net::IpAddr>().unwrap()]
        );
        assert_eq!(args.iptables_sync_period, Duration::from_secs(90));
        assert_eq!(args.iptables_min_sync_period, Duration::from_millis(500));
        let healthz: SocketAddr = "127.0.0.1:10256".parse().unwrap();
        assert_eq!(args.healthz_bind_address, healthz);
        assert_eq!(args.metrics_bind_address.port(), 9999);
        assert_eq!(args.nodeport_addresses.len(), 2);
        let v4 = args.options(Family::Ipv4);
        assert_eq!(v4.masquerade_mark, 1 << 12);
        assert!(v4.masquerade_all);
        assert!(!v4.localhost_node_ports);
        assert_eq!(
            v4.local_detector,
            LocalDetector::Cidr("10.244.0.0/16".parse().unwrap())
        );
        let v6 = args.options(Family::Ipv6);
        assert_eq!(
            v6.local_detector,
            LocalDetector::Cidr("fd00:10::/64".parse().unwrap())
        );
    }

    #[test]
    fn zero_values_leave_kube_proxys_defaults() {
        let body = "iptables:\n  syncPeriod: 0s\n  minSyncPeriod: 0s\n  masqueradeBit: null\n\
            healthzBindAddress: \"\"\nmetricsBindAddress: \"\"\nbindAddress: 0.0.0.0\n";
        let args = resolve(Some(body), &[]).unwrap().args;
        assert_eq!(args.iptables_sync_period, Duration::from_secs(30));
        assert_eq!(args.iptables_min_sync_period, Duration::from_secs(1));
        assert_eq!(args.iptables_masquerade_bit, 14);
        assert_eq!(args.healthz_bind_address.to_string(), "0.0.0.0:10256");
        assert_eq!(args.metrics_bind_address.to_string(), "127.0.0.1:10249");
        assert_eq!(args.node_ip.len(), 1);
        assert!(args.node_ip[0].is_loopback());
        // An IPv6 bindAddress moves the default addresses to IPv6, as kube-proxy's defaulting.
        let args = resolve(Some("bindAddress: \"::\"\n"), &[]).unwrap().args;
        assert_eq!(args.healthz_bind_address.to_string(), "[::]:10256");
        assert_eq!(args.metrics_bind_address.to_string(), "[::1]:10249");
    }

    #[test]
    fn the_mode_in_use_picks_the_section_of_masquerading_and_sync_periods() {
        // kube-proxy's v1alpha1 conversion: `nftables.*` in the nftables mode, `iptables.*`
        // otherwise; kubeadm's ConfigMap carries both sections.
        let body = "iptables:\n  masqueradeAll: false\n  masqueradeBit: 12\n  syncPeriod: 1m\n  \
            minSyncPeriod: 2s\nnftables:\n  masqueradeAll: true\n  masqueradeBit: 9\n  \
            syncPeriod: 45s\n  minSyncPeriod: 500ms\n";
        let nft = resolve(Some(&format!("mode: nftables\n{body}")), &[])
            .unwrap()
            .args;
        assert_eq!(nft.iptables_sync_period, Duration::from_secs(45));
        assert_eq!(nft.iptables_min_sync_period, Duration::from_millis(500));
        let v4 = nft.options(Family::Ipv4);
        assert!(v4.masquerade_all);
        assert_eq!(v4.masquerade_mark, 1 << 9);
        let ipt = resolve(Some(body), &[]).unwrap().args;
        assert_eq!(ipt.iptables_sync_period, Duration::from_secs(60));
        assert_eq!(ipt.iptables_min_sync_period, Duration::from_secs(2));
        let v4 = ipt.options(Family::Ipv4);
        assert!(!v4.masquerade_all);
        assert_eq!(v4.masquerade_mark, 1 << 12);
        // `--iptables-masquerade-bit` is the iptables mode's; the nftables mode keeps 14.
        let flag = resolve(Some("mode: nftables\n"), &["--iptables-masquerade-bit=3"]).unwrap();
        assert_eq!(flag.args.options(Family::Ipv4).masquerade_mark, 1 << 14);
        // ... and is named at start-up, as the localhost NodePorts flag is.
        assert!(
            flag.not_implemented
                .iter()
                .any(|n| n.starts_with("--iptables-masquerade-bit=3 ")),
            "{:?}",
            flag.not_implemented
        );
        let flags = [
            "--proxy-mode=nftables",
            "--iptables-localhost-nodeports=false",
        ];
        let named = resolve(None, &flags).unwrap().not_implemented;
        assert!(
            named
                .iter()
                .any(|n| n.starts_with("--iptables-localhost-nodeports=false ")),
            "{named:?}"
        );
        assert!(
            resolve(Some(body), &["--iptables-masquerade-bit=3"])
                .unwrap()
                .not_implemented
                .is_empty()
        );
        let error = resolve(
            Some("mode: nftables\nnftables:\n  masqueradeBit: 40\n"),
            &[],
        )
        .unwrap_err();
        assert!(
            format!("{error:#}").contains("nftables.masqueradeBit"),
            "{error:#}"
        );
    }

    #[test]
    fn flags_given_on_the_command_line_win_over_the_file() {
        let body = "hostnameOverride: from-file\nclusterCIDR: 10.244.0.0/16\n\
            iptables:\n  masqueradeBit: 12\n  syncPeriod: 1m\nlogging:\n  verbosity: 2\n";
        let settings = resolve(
            Some(body),
            &[
                "--hostname-override",
                "from-flag",
                "--iptables-sync-period=10s",
                "-v=5",
            ],
        )
        .unwrap();
        let args = &settings.args;
        assert_eq!(args.hostname_override.as_deref(), Some("from-flag"));
        assert_eq!(args.iptables_sync_period, Duration::from_secs(10));
        assert_eq!(args.iptables_masquerade_bit, 12);
        assert_eq!(args.cluster_cidr.len(), 1);
        assert_eq!(settings.log_level(), tracing::Level::TRACE);
        assert_eq!(
            settings.overridden,
            ["hostname_override", "iptables_sync_period", "verbosity"]
        );
        // A flag left at its default does not override the file.
        let args = resolve(Some(body), &["--iptables-masquerade-bit", "14"])
            .unwrap()
            .args;
        assert_eq!(args.iptables_masquerade_bit, 14);
        let args = resolve(Some(body), &[]).unwrap().args;
        assert_eq!(args.iptables_masquerade_bit, 12);
    }

    #[test]
    fn bind_address_stands_for_the_node_ip_unless_that_is_given() {
        let ip = |text: &str| text.parse::<std::net::IpAddr>().unwrap();
        let args = resolve(None, &["--bind-address", "192.168.0.9"])
            .unwrap()
            .args;
        assert_eq!(args.node_ip, [ip("192.168.0.9")]);
        let flags = ["--bind-address=192.168.0.9", "--node-ip=10.0.0.1,fd00::1"];
        let args = resolve(None, &flags).unwrap().args;
        assert_eq!(args.node_ip, [ip("10.0.0.1"), ip("fd00::1")]);
        let args = resolve(None, &["--bind-address", "0.0.0.0"]).unwrap().args;
        assert_eq!(args.node_ip, [ip("127.0.0.1")]);
    }

    #[test]
    fn verbosity_maps_onto_log_levels() {
        use tracing::Level;
        for (flags, level) in [
            (&[][..], Level::INFO),
            (&["-v", "1"][..], Level::INFO),
            (&["--v=2"][..], Level::DEBUG),
            (&["-v=4"][..], Level::DEBUG),
            (&["--v", "5"][..], Level::TRACE),
        ] {
            let settings = resolve(None, flags).unwrap();
            assert_eq!(settings.log_level(), level, "{flags:?}");
        }
        let from_file = resolve(Some("logging:\n  verbosity: 3\n"), &[]).unwrap();
        assert_eq!(
            from_file.log_filter(),
            "info,service_proxy=debug,cluster_state=debug,iptables_exec=debug"
        );
    }

    #[test]
    fn the_nftables_mode_is_taken_and_the_others_are_refused() {
        let nftables = resolve(Some("mode: nftables\n"), &[]).unwrap();
        assert_eq!(nftables.args.proxy_mode, Some(ProxyMode::Nftables));
        assert!(resolve(None, &["--proxy-mode", "nftables"]).is_ok());
        assert!(refusal(None, &["--proxy-mode=ipvs"]).contains("ipvs is not supported"));
        assert!(refusal(Some("mode: kernelspace\n"), &[]).contains("Windows"));
        assert!(resolve(Some("mode: iptables\n"), &[]).is_ok());
        assert!(resolve(None, &["--proxy-mode", "iptables"]).is_ok());
        let error = resolve(Some("mode: userspace\n"), &[])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("mode") && error.contains("userspace"),
            "{error}"
        );
        // The flag wins over the file here too.
        let flag = resolve(Some("mode: nftables\n"), &["--proxy-mode", "iptables"]).unwrap();
        assert_eq!(flag.args.proxy_mode, Some(ProxyMode::Iptables));
    }

    #[test]
    fn local_traffic_detectors_need_their_interface() {
        // NodeCIDR's CIDRs come from the Node, once the source runs.
        assert!(resolve(None, &["--detect-local-mode", "NodeCIDR"]).is_ok());
        let bridge = "detectLocalMode: BridgeInterface\ndetectLocal:\n  bridgeInterface: cbr0\n";
        let settings = resolve(Some(bridge), &[]).unwrap();
        assert_eq!(
            settings.args.detect_local_mode,
            Some(LocalMode::BridgeInterface)
        );
        let unnamed = refusal(None, &["--detect-local-mode", "BridgeInterface"]);
        assert!(unnamed.contains("--pod-bridge-interface"), "{unnamed}");
        let hostile = refusal(
            None,
            &[
                "--detect-local-mode=InterfaceNamePrefix",
                "--pod-interface-name-prefix=veth\n-A KUBE-SERVICES",
            ],
        );
        assert!(hostile.contains("cannot hold '\\n'"), "{hostile}");
        let prefix = resolve(
            None,
            &[
                "--detect-local-mode=InterfaceNamePrefix",
                "--pod-interface-name-prefix=veth",
            ],
        );
        assert!(prefix.is_ok());
        let args = resolve(Some(bridge), &["--detect-local-mode", "ClusterCIDR"])
            .unwrap()
            .args;
        assert_eq!(args.pod_bridge_interface.as_deref(), Some("cbr0"));
        assert!(resolve(None, &["--detect-local-mode", "Bogus"]).is_err());
    }

    #[test]
    fn kube_proxy_flags_are_accepted_and_named_or_refused() {
        let settings = resolve(
            Some("conntrack:\n  min: 1\n"),
            &[
                "--profiling",
                "--conntrack-max-per-core=0",
                "--oom-score-adj",
                "-999",
            ],
        )
        .unwrap();
        assert_eq!(
            settings.not_implemented,
            [
                "conntrack.min: 1",
                "--profiling=true",
                "--oom-score-adj=-999",
                "--conntrack-max-per-core=0",
            ]
        );
        assert!(refusal(None, &["--master", "https://x"]).starts_with("--master"));
        assert!(refusal(None, &["--healthz-port=1"]).contains("--healthz-bind-address"));
        assert!(refusal(None, &["--init-only"]).starts_with("--init-only"));
        assert!(resolve(None, &["--no-such-flag"]).is_err());
    }

    #[test]
    fn bad_values_name_the_field() {
        for (body, field) in [
            ("clusterCIDR: 10.244.0.0/16,nonsense\n", "clusterCIDR"),
            ("iptables:\n  masqueradeBit: 32\n", "iptables.masqueradeBit"),
            ("bindAddress: node\n", "bindAddress"),
            ("healthzBindAddress: 1.2.3.4:x\n", "healthzBindAddress"),
            ("nodePortAddresses: [localhost]\n", "nodePortAddresses"),
            ("detectLocalMode: clustercidr\n", "detectLocalMode"),
        ] {
            match resolve(Some(body), &[]) {
                Err(SettingsError::Config(error)) => assert_eq!(error.field, field, "{body}"),
                other => panic!("{body}: {other:?}"),
            }
        }
        let two = refusal(Some("clusterCIDR: 10.244.0.0/16,10.245.0.0/16\n"), &[]);
        assert!(two.contains("at most one per IP family"), "{two}");
        assert!(refusal(None, &["--hostname-override", " "]).contains("empty hostname"));
        assert!(matches!(
            resolve(Some("iptables: {bogus: 1}\n"), &[]),
            Err(SettingsError::Config(_))
        ));
    }

    #[test]
    fn the_files_kubeconfig_feeds_the_api_source_unless_a_flag_chooses() {
        let body = "clientConnection:\n  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.conf");
        std::fs::write(&path, format!("{HEAD}{body}")).unwrap();
        let parse = |flags: &[&str]| {
            let mut argv = vec![
                "service-proxy".to_owned(),
                format!("--config={}", path.display()),
            ];
            argv.extend(flags.iter().map(|f| (*f).to_owned()));
            Settings::resolve(&Args::command().try_get_matches_from(argv).unwrap())
                .unwrap()
                .args
                .source
        };
        let source = parse(&[]);
        assert_eq!(
            source.kubeconfig.as_deref(),
            Some(Path::new("/var/lib/kube-proxy/kubeconfig.conf"))
        );
        assert_eq!(
            parse(&["--kubeconfig", "/etc/k.conf"])
                .kubeconfig
                .as_deref(),
            Some(Path::new("/etc/k.conf"))
        );
        let manifests = parse(&["--manifests", "/tmp"]);
        assert_eq!(manifests.kubeconfig, None);
    }
}
