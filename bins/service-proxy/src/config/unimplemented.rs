//! The fields of a configuration file that service-proxy reads but does not act on, listed when
//! they differ from their default, for the start-up warning.
//!
//! A field is at its default when it holds its zero value (what kubeadm writes: `null`, `0s`,
//! `""`, `false`) or the value kube-proxy's defaulting puts in its place
//! (`pkg/proxy/apis/config/v1alpha1/defaults.go`: conntrack `maxPerCore` 32768, `min` 131072,
//! `tcpEstablishedTimeout` 24h, `tcpCloseWaitTimeout` 1h; `configSyncPeriod` 15m; client
//! `contentType` protobuf, `qps` 5, `burst` 10; `oomScoreAdj` -999; nftables `masqueradeBit`
//! 14, `syncPeriod` 30s, `minSyncPeriod` 1s; ipvs `syncPeriod` 30s; logging `format` text,
//! `flushFrequency` 5s). `winkernel` configures Windows and is never listed.

use std::fmt::Debug;
use std::time::Duration;

use super::file::{GoDuration, KubeProxyConfiguration, NumberOrText};

/// Collects `path: value` for each field not at its default.
#[derive(Default)]
struct Listing(Vec<String>);

impl Listing {
    fn note<T: Debug + PartialEq>(&mut self, path: &str, value: Option<&T>, defaults: &[T]) {
        if let Some(value) = value
            && !defaults.contains(value)
        {
            self.0.push(format!("{path}: {value:?}"));
        }
    }

    fn duration(&mut self, path: &str, value: Option<GoDuration>, default: Duration) {
        if let Some(GoDuration(value)) = value
            && !value.is_zero()
            && value != default
        {
            self.0.push(format!("{path}: {value:?}"));
        }
    }

    fn text(&mut self, path: &str, value: Option<&String>, defaults: &[&str]) {
        if let Some(value) = value
            && !value.is_empty()
            && !defaults.contains(&value.as_str())
        {
            self.0.push(format!("{path}: {value:?}"));
        }
    }

    fn flag(&mut self, path: &str, value: Option<bool>) {
        if value == Some(true) {
            self.0.push(format!("{path}: true"));
        }
    }

    fn list<T: Debug>(&mut self, path: &str, value: Option<&Vec<T>>) {
        if let Some(value) = value
            && !value.is_empty()
        {
            self.0.push(format!("{path}: {value:?}"));
        }
    }

    fn number_or_text(&mut self, path: &str, value: Option<&NumberOrText>, default: &str) {
        if let Some(value) = value
            && !value.is_zero()
            && value.0 != default
        {
            self.0.push(format!("{path}: {:?}", value.0));
        }
    }
}

const SECOND: Duration = Duration::from_secs(1);
const ZERO: Duration = Duration::ZERO;

/// The fields of `config` service-proxy does not implement and that are not at their default,
/// as `path: value`, in the order of the type.
pub fn unimplemented_fields(config: &KubeProxyConfiguration) -> Vec<String> {
    let mut out = Listing::default();
    if let Some(gates) = &config.feature_gates
        && !gates.is_empty()
    {
        out.0.push(format!("featureGates: {gates:?}"));
    }
    if let Some(client) = &config.client_connection {
        let protobuf = "application/vnd.kubernetes.protobuf";
        out.text(
            "clientConnection.acceptContentTypes",
            client.accept_content_types.as_ref(),
            &[],
        );
        out.text(
            "clientConnection.contentType",
            client.content_type.as_ref(),
            &[protobuf],
        );
        out.note("clientConnection.qps", client.qps.as_ref(), &[0.0, 5.0]);
        out.note("clientConnection.burst", client.burst.as_ref(), &[0, 10]);
    }
    if let Some(logging) = &config.logging {
        out.text("logging.format", logging.format.as_ref(), &["text"]);
        out.number_or_text(
            "logging.flushFrequency",
            logging.flush_frequency.as_ref(),
            "5s",
        );
        out.list("logging.vmodule", logging.vmodule.as_ref());
        if let Some(options) = &logging.options {
            for (format, routing) in [("text", &options.text), ("json", &options.json)] {
                if let Some(routing) = routing {
                    let prefix = format!("logging.options.{format}");
                    out.flag(&format!("{prefix}.splitStream"), routing.split_stream);
                    out.number_or_text(
                        &format!("{prefix}.infoBufferSize"),
                        routing.info_buffer_size.as_ref(),
                        "0",
                    );
                }
            }
        }
    }
    out.flag("bindAddressHardFail", config.bind_address_hard_fail);
    out.flag("enableProfiling", config.enable_profiling);
    out.text(
        "showHiddenMetricsForVersion",
        config.show_hidden_metrics_for_version.as_ref(),
        &[],
    );
    if let Some(iptables) = &config.iptables {
        out.flag(
            "iptables.snatNodeInternalIP",
            iptables.snat_node_internal_ip,
        );
    }
    if let Some(ipvs) = &config.ipvs {
        out.duration("ipvs.syncPeriod", ipvs.sync_period, 30 * SECOND);
        out.duration("ipvs.minSyncPeriod", ipvs.min_sync_period, ZERO);
        out.text("ipvs.scheduler", ipvs.scheduler.as_ref(), &[]);
        out.list("ipvs.excludeCIDRs", ipvs.exclude_cidrs.as_ref());
        out.flag("ipvs.strictARP", ipvs.strict_arp);
        out.duration("ipvs.tcpTimeout", ipvs.tcp_timeout, ZERO);
        out.duration("ipvs.tcpFinTimeout", ipvs.tcp_fin_timeout, ZERO);
        out.duration("ipvs.udpTimeout", ipvs.udp_timeout, ZERO);
    }
    out.note("oomScoreAdj", config.oom_score_adj.as_ref(), &[-999]);
    if let Some(conntrack) = &config.conntrack {
        // Zero leaves the kernel's value alone, as service-proxy does.
        out.note(
            "conntrack.maxPerCore",
            conntrack.max_per_core.as_ref(),
            &[0, 32 * 1024],
        );
        out.note("conntrack.min", conntrack.min.as_ref(), &[0, 128 * 1024]);
        out.duration(
            "conntrack.tcpEstablishedTimeout",
            conntrack.tcp_established_timeout,
            24 * 3600 * SECOND,
        );
        out.duration(
            "conntrack.tcpCloseWaitTimeout",
            conntrack.tcp_close_wait_timeout,
            3600 * SECOND,
        );
        out.flag("conntrack.tcpBeLiberal", conntrack.tcp_be_liberal);
        out.duration("conntrack.udpTimeout", conntrack.udp_timeout, ZERO);
        out.duration(
            "conntrack.udpStreamTimeout",
            conntrack.udp_stream_timeout,
            ZERO,
        );
    }
    out.duration(
        "configSyncPeriod",
        config.config_sync_period,
        15 * 60 * SECOND,
    );
    out.text("portRange", config.port_range.as_ref(), &[]);
    out.flag("windowsRunAsService", config.windows_run_as_service);
    out.0
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::read::read_config;

    fn fields(body: &str) -> Vec<String> {
        let text = format!(
            "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n{body}"
        );
        unimplemented_fields(&read_config(Path::new("c"), &text).unwrap())
    }

    #[test]
    fn zero_values_and_kube_proxys_defaults_are_not_listed() {
        let defaults = "conntrack:\n  maxPerCore: 32768\n  min: 131072\n  \
            tcpEstablishedTimeout: 24h0m0s\n  tcpCloseWaitTimeout: 1h0m0s\n  udpTimeout: 0s\n\
            configSyncPeriod: 15m0s\noomScoreAdj: -999\nclientConnection:\n  burst: 10\n  \
            qps: 5\n  contentType: application/vnd.kubernetes.protobuf\n\
            logging:\n  format: text\n  flushFrequency: 5s\n  verbosity: 3\n\
            nftables:\n  masqueradeBit: 14\n  syncPeriod: 30s\n  minSyncPeriod: 1s\n\
            ipvs:\n  syncPeriod: 30s\nwinkernel:\n  enableDSR: true\n";
        assert_eq!(fields(defaults), Vec::<String>::new());
    }

    #[test]
    fn exactly_the_non_default_unimplemented_fields_are_listed() {
        let body = "conntrack:\n  maxPerCore: 65536\n  min: null\n  tcpBeLiberal: true\n\
            ipvs:\n  scheduler: rr\n  strictARP: false\n\
            iptables:\n  masqueradeAll: true\n  snatNodeInternalIP: true\n\
            featureGates:\n  SomeGate: true\nenableProfiling: true\n\
            logging:\n  flushFrequency: 1000000000\n  options:\n    json:\n      \
            infoBufferSize: \"0\"\n      splitStream: true\n";
        assert_eq!(
            fields(body),
            [
                "featureGates: {\"SomeGate\": true}",
                "logging.flushFrequency: \"1000000000\"",
                "logging.options.json.splitStream: true",
                "enableProfiling: true",
                "iptables.snatNodeInternalIP: true",
                "ipvs.scheduler: \"rr\"",
                "conntrack.maxPerCore: 65536",
                "conntrack.tcpBeLiberal: true",
            ]
        );
    }
}
