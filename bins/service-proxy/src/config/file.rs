//! The `KubeProxyConfiguration` of `kubeproxy.config.k8s.io/v1alpha1`, field for field, as
//! serde types (kubernetes `staging/src/k8s.io/kube-proxy/config/v1alpha1/types.go`, with the
//! logging and client-connection types of `k8s.io/component-base`).
//!
//! Every field is optional: Go reads a missing field and `null` alike, as the zero value, and
//! kube-proxy's defaulting then replaces zero values (`pkg/proxy/apis/config/v1alpha1/
//! defaults.go`); `None` here stands for both. A field this type does not know is an error
//! (`deny_unknown_fields`), as in kube-proxy's strict decoding. `winkernel` is read and
//! ignored: it configures Windows' kernel proxier.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, Visitor};

use crate::cli::parse_duration;

/// The `apiVersion` a configuration file must have.
pub const API_VERSION: &str = "kubeproxy.config.k8s.io/v1alpha1";

/// The `kind` a configuration file must have.
pub const KIND: &str = "KubeProxyConfiguration";

/// A Go `time.Duration` as `metav1.Duration` writes it in YAML: `30s`, `1m30s`, `0s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoDuration(pub Duration);

impl<'de> Deserialize<'de> for GoDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse_duration(&text)
            .map(GoDuration)
            .map_err(serde::de::Error::custom)
    }
}

/// A scalar that component-base accepts as a number or as a string: `flushFrequency` (a
/// number of nanoseconds or a Go duration) and `infoBufferSize` (a quantity such as `"0"`).
/// Kept as text; only whether it is zero matters here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumberOrText(pub String);

impl NumberOrText {
    /// Whether the value is zero (`0`, `"0"`, `0s`): the value kubeadm writes.
    pub fn is_zero(&self) -> bool {
        let text = self.0.trim();
        text.trim_start_matches(['+', '-'])
            .trim_start_matches('0')
            .is_empty()
            || parse_duration(text).is_ok_and(|d| d.is_zero())
    }
}

impl<'de> Deserialize<'de> for NumberOrText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Scalar;

        impl Visitor<'_> for Scalar {
            type Value = NumberOrText;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a string")
            }

            fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Self::Value, E> {
                Ok(NumberOrText(value.to_string()))
            }

            fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Self::Value, E> {
                Ok(NumberOrText(value.to_string()))
            }

            fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<Self::Value, E> {
                Ok(NumberOrText(value.to_string()))
            }

            fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Self::Value, E> {
                Ok(NumberOrText(value.to_owned()))
            }
        }

        deserializer.deserialize_any(Scalar)
    }
}

/// `KubeProxyConfiguration`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubeProxyConfiguration {
    /// `apiVersion`: must be [`API_VERSION`].
    pub api_version: Option<String>,
    /// `kind`: must be [`KIND`].
    pub kind: Option<String>,
    /// `featureGates`.
    pub feature_gates: Option<BTreeMap<String, bool>>,
    /// `clientConnection`.
    pub client_connection: Option<ClientConnection>,
    /// `logging`.
    pub logging: Option<Logging>,
    /// `hostnameOverride`.
    pub hostname_override: Option<String>,
    /// `bindAddress`: the node's primary IP (kube-proxy binds nothing to it).
    pub bind_address: Option<String>,
    /// `healthzBindAddress`.
    pub healthz_bind_address: Option<String>,
    /// `metricsBindAddress`.
    pub metrics_bind_address: Option<String>,
    /// `bindAddressHardFail`.
    pub bind_address_hard_fail: Option<bool>,
    /// `enableProfiling`.
    pub enable_profiling: Option<bool>,
    /// `showHiddenMetricsForVersion`.
    pub show_hidden_metrics_for_version: Option<String>,
    /// `mode`.
    pub mode: Option<String>,
    /// `iptables`.
    pub iptables: Option<Iptables>,
    /// `ipvs`.
    pub ipvs: Option<Ipvs>,
    /// `nftables`.
    pub nftables: Option<Nftables>,
    /// `winkernel`: Windows only, ignored.
    pub winkernel: Option<IgnoredAny>,
    /// `detectLocalMode`.
    pub detect_local_mode: Option<String>,
    /// `detectLocal`.
    pub detect_local: Option<DetectLocal>,
    /// `clusterCIDR`: one CIDR, or a dual-stack pair separated by a comma.
    #[serde(rename = "clusterCIDR")]
    pub cluster_cidr: Option<String>,
    /// `nodePortAddresses`.
    pub node_port_addresses: Option<Vec<String>>,
    /// `oomScoreAdj`.
    pub oom_score_adj: Option<i32>,
    /// `conntrack`.
    pub conntrack: Option<Conntrack>,
    /// `configSyncPeriod`.
    pub config_sync_period: Option<GoDuration>,
    /// `portRange` (unused by kube-proxy too).
    pub port_range: Option<String>,
    /// `windowsRunAsService`.
    pub windows_run_as_service: Option<bool>,
}

/// `clientConnection` (component-base's `ClientConnectionConfiguration`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClientConnection {
    /// `kubeconfig`.
    pub kubeconfig: Option<String>,
    /// `acceptContentTypes`.
    pub accept_content_types: Option<String>,
    /// `contentType`.
    pub content_type: Option<String>,
    /// `qps`.
    pub qps: Option<f32>,
    /// `burst`.
    pub burst: Option<i32>,
}

/// `logging` (component-base's `LoggingConfiguration`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Logging {
    /// `format`.
    pub format: Option<String>,
    /// `flushFrequency`: nanoseconds, or a Go duration.
    pub flush_frequency: Option<NumberOrText>,
    /// `verbosity`.
    pub verbosity: Option<u32>,
    /// `vmodule`.
    pub vmodule: Option<Vec<VModule>>,
    /// `options`.
    pub options: Option<LoggingOptions>,
}

/// One `logging.vmodule` item.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VModule {
    /// `filePattern`.
    pub file_pattern: Option<String>,
    /// `verbosity`.
    pub verbosity: Option<u32>,
}

/// `logging.options`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoggingOptions {
    /// `text`.
    pub text: Option<OutputRouting>,
    /// `json`.
    pub json: Option<OutputRouting>,
}

/// `logging.options.text` and `logging.options.json`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutputRouting {
    /// `splitStream`.
    pub split_stream: Option<bool>,
    /// `infoBufferSize`: a quantity.
    pub info_buffer_size: Option<NumberOrText>,
}

/// `iptables`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Iptables {
    /// `masqueradeBit`.
    pub masquerade_bit: Option<i32>,
    /// `masqueradeAll`.
    pub masquerade_all: Option<bool>,
    /// `localhostNodePorts`.
    pub localhost_node_ports: Option<bool>,
    /// `snatNodeInternalIP`.
    #[serde(rename = "snatNodeInternalIP")]
    pub snat_node_internal_ip: Option<bool>,
    /// `syncPeriod`.
    pub sync_period: Option<GoDuration>,
    /// `minSyncPeriod`.
    pub min_sync_period: Option<GoDuration>,
}

/// `ipvs`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipvs {
    /// `syncPeriod`.
    pub sync_period: Option<GoDuration>,
    /// `minSyncPeriod`.
    pub min_sync_period: Option<GoDuration>,
    /// `scheduler`.
    pub scheduler: Option<String>,
    /// `excludeCIDRs`.
    #[serde(rename = "excludeCIDRs")]
    pub exclude_cidrs: Option<Vec<String>>,
    /// `strictARP`.
    #[serde(rename = "strictARP")]
    pub strict_arp: Option<bool>,
    /// `tcpTimeout`.
    pub tcp_timeout: Option<GoDuration>,
    /// `tcpFinTimeout`.
    pub tcp_fin_timeout: Option<GoDuration>,
    /// `udpTimeout`.
    pub udp_timeout: Option<GoDuration>,
}

/// `nftables`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Nftables {
    /// `masqueradeBit`.
    pub masquerade_bit: Option<i32>,
    /// `masqueradeAll`.
    pub masquerade_all: Option<bool>,
    /// `syncPeriod`.
    pub sync_period: Option<GoDuration>,
    /// `minSyncPeriod`.
    pub min_sync_period: Option<GoDuration>,
}

/// `conntrack`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Conntrack {
    /// `maxPerCore`.
    pub max_per_core: Option<i32>,
    /// `min`.
    pub min: Option<i32>,
    /// `tcpEstablishedTimeout`.
    pub tcp_established_timeout: Option<GoDuration>,
    /// `tcpCloseWaitTimeout`.
    pub tcp_close_wait_timeout: Option<GoDuration>,
    /// `tcpBeLiberal`.
    pub tcp_be_liberal: Option<bool>,
    /// `udpTimeout`.
    pub udp_timeout: Option<GoDuration>,
    /// `udpStreamTimeout`.
    pub udp_stream_timeout: Option<GoDuration>,
}

/// `detectLocal`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DetectLocal {
    /// `bridgeInterface`.
    pub bridge_interface: Option<String>,
    /// `interfaceNamePrefix`.
    pub interface_name_prefix: Option<String>,
}
