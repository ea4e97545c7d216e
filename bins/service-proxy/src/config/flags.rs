//! kube-proxy's flags that service-proxy does not implement (kubernetes
//! `cmd/kube-proxy/app/options.go`, `AddFlags`): those that change nothing service-proxy does
//! are accepted, so that a kube-proxy command line starts, and named in the start-up warning;
//! those whose absence would change what the operator asked for are refused with the reason.

use clap::Args;

/// The kube-proxy flags accepted, not implemented.
#[derive(Clone, Debug, Default, PartialEq, Eq, Args)]
#[command(
    next_help_heading = "kube-proxy flags accepted but not implemented (named in a warning at start)"
)]
pub struct KubeProxyFlags {
    /// Feature gates (`key=value,…`).
    #[arg(long, value_name = "GATES")]
    pub feature_gates: Option<String>,
    /// Content type of API requests.
    #[arg(long, value_name = "TYPE")]
    pub kube_api_content_type: Option<String>,
    /// API client burst.
    #[arg(long, value_name = "N")]
    pub kube_api_burst: Option<String>,
    /// API client QPS.
    #[arg(long, value_name = "N")]
    pub kube_api_qps: Option<String>,
    /// Exit when a port cannot be bound (service-proxy always does).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub bind_address_hard_fail: Option<String>,
    /// `/debug/pprof`.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub profiling: Option<String>,
    /// Hidden metrics of a previous version.
    #[arg(long, value_name = "VERSION")]
    pub show_hidden_metrics_for_version: Option<String>,
    /// IPVS mode only.
    #[arg(long, value_name = "DURATION")]
    pub ipvs_sync_period: Option<String>,
    /// IPVS mode only.
    #[arg(long, value_name = "DURATION")]
    pub ipvs_min_sync_period: Option<String>,
    /// IPVS mode only.
    #[arg(long, value_name = "NAME")]
    pub ipvs_scheduler: Option<String>,
    /// IPVS mode only.
    #[arg(long, value_name = "CIDRS")]
    pub ipvs_exclude_cidrs: Option<String>,
    /// IPVS mode only.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub ipvs_strict_arp: Option<String>,
    /// IPVS mode only.
    #[arg(long, value_name = "DURATION")]
    pub ipvs_tcp_timeout: Option<String>,
    /// IPVS mode only.
    #[arg(long, value_name = "DURATION")]
    pub ipvs_tcpfin_timeout: Option<String>,
    /// IPVS mode only.
    #[arg(long, value_name = "DURATION")]
    pub ipvs_udp_timeout: Option<String>,
    /// The process's OOM score adjustment (service-proxy leaves its own alone).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub oom_score_adj: Option<String>,
    /// Conntrack table size per core (not set by service-proxy yet).
    #[arg(long, value_name = "N")]
    pub conntrack_max_per_core: Option<String>,
    /// Conntrack table minimum size (not set by service-proxy yet).
    #[arg(long, value_name = "N")]
    pub conntrack_min: Option<String>,
    /// Conntrack timeout (not set by service-proxy yet).
    #[arg(long, value_name = "DURATION")]
    pub conntrack_tcp_timeout_established: Option<String>,
    /// Conntrack timeout (not set by service-proxy yet).
    #[arg(long, value_name = "DURATION")]
    pub conntrack_tcp_timeout_close_wait: Option<String>,
    /// Conntrack liberal TCP mode (not set by service-proxy yet).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub conntrack_tcp_be_liberal: Option<String>,
    /// Conntrack timeout (not set by service-proxy yet).
    #[arg(long, value_name = "DURATION")]
    pub conntrack_udp_timeout: Option<String>,
    /// Conntrack timeout (not set by service-proxy yet).
    #[arg(long, value_name = "DURATION")]
    pub conntrack_udp_timeout_stream: Option<String>,
    /// Informer resync period (the object source watches without periodic resync).
    #[arg(long, value_name = "DURATION")]
    pub config_sync_period: Option<String>,
    /// Per-file verbosity.
    #[arg(long, value_name = "PATTERN=N")]
    pub vmodule: Option<String>,
    /// Log format (service-proxy logs text).
    #[arg(long, value_name = "FORMAT")]
    pub logging_format: Option<String>,
    /// Log flush period.
    #[arg(long, value_name = "DURATION")]
    pub log_flush_frequency: Option<String>,

    /// Refused: the API server's address comes from the kubeconfig.
    #[arg(long, hide = true)]
    pub master: Option<String>,
    /// Refused: service-proxy does not write kube-proxy's configuration.
    #[arg(long, hide = true)]
    pub write_config_to: Option<String>,
    /// Refused: there is no separate privileged initialisation step.
    #[arg(long, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub init_only: Option<String>,
    /// Refused: deprecated in kube-proxy.
    #[arg(long, hide = true)]
    pub healthz_port: Option<String>,
    /// Refused: deprecated in kube-proxy.
    #[arg(long, hide = true)]
    pub metrics_port: Option<String>,
}

impl KubeProxyFlags {
    /// The accepted, unimplemented flags given, as `--name=value`.
    pub fn given(&self) -> Vec<String> {
        [
            ("feature-gates", &self.feature_gates),
            ("kube-api-content-type", &self.kube_api_content_type),
            ("kube-api-burst", &self.kube_api_burst),
            ("kube-api-qps", &self.kube_api_qps),
            ("bind-address-hard-fail", &self.bind_address_hard_fail),
            ("profiling", &self.profiling),
            (
                "show-hidden-metrics-for-version",
                &self.show_hidden_metrics_for_version,
            ),
            ("ipvs-sync-period", &self.ipvs_sync_period),
            ("ipvs-min-sync-period", &self.ipvs_min_sync_period),
            ("ipvs-scheduler", &self.ipvs_scheduler),
            ("ipvs-exclude-cidrs", &self.ipvs_exclude_cidrs),
            ("ipvs-strict-arp", &self.ipvs_strict_arp),
            ("ipvs-tcp-timeout", &self.ipvs_tcp_timeout),
            ("ipvs-tcpfin-timeout", &self.ipvs_tcpfin_timeout),
            ("ipvs-udp-timeout", &self.ipvs_udp_timeout),
            ("oom-score-adj", &self.oom_score_adj),
            ("conntrack-max-per-core", &self.conntrack_max_per_core),
            ("conntrack-min", &self.conntrack_min),
            (
                "conntrack-tcp-timeout-established",
                &self.conntrack_tcp_timeout_established,
            ),
            (
                "conntrack-tcp-timeout-close-wait",
                &self.conntrack_tcp_timeout_close_wait,
            ),
            ("conntrack-tcp-be-liberal", &self.conntrack_tcp_be_liberal),
            ("conntrack-udp-timeout", &self.conntrack_udp_timeout),
            (
                "conntrack-udp-timeout-stream",
                &self.conntrack_udp_timeout_stream,
            ),
            ("config-sync-period", &self.config_sync_period),
            ("vmodule", &self.vmodule),
            ("logging-format", &self.logging_format),
            ("log-flush-frequency", &self.log_flush_frequency),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.as_ref().map(|v| format!("--{name}={v}")))
        .collect()
    }

    /// Why the first refused flag given cannot be accepted, naming it.
    pub fn refused(&self) -> Option<String> {
        let reasons = [
            (
                "master",
                &self.master,
                "the API server's address comes from the kubeconfig (--kubeconfig or \
                 clientConnection.kubeconfig)",
            ),
            (
                "write-config-to",
                &self.write_config_to,
                "service-proxy does not write kube-proxy's configuration",
            ),
            (
                "init-only",
                &self.init_only,
                "service-proxy has no separate privileged initialisation step",
            ),
            (
                "healthz-port",
                &self.healthz_port,
                "deprecated in kube-proxy: use --healthz-bind-address",
            ),
            (
                "metrics-port",
                &self.metrics_port,
                "deprecated in kube-proxy: use --metrics-bind-address",
            ),
        ];
        reasons
            .into_iter()
            .find(|(_, value, _)| value.is_some())
            .map(|(name, _, why)| format!("--{name} is not supported: {why}"))
    }
}
