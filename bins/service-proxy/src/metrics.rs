//! kube-proxy's sync metrics (`pkg/proxy/metrics`, prefix `kubeproxy_`), prometheus-client.

use std::sync::atomic::AtomicU64;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;

/// The metrics and their registry.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    sync_duration: Histogram,
    full_duration: Histogram,
    partial_duration: Histogram,
    last_sync: Gauge<f64, AtomicU64>,
    last_queued: Gauge<f64, AtomicU64>,
    changes_pending: Gauge,
    restore_failures: Counter,
    partial_restore_failures: Counter,
    rules_last: Family<Labels, Gauge>,
    healthz: Family<Labels, Counter>,
}

fn seconds_since_epoch(time: SystemTime) -> f64 {
    time.duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// Buckets of 1 ms × 2^k, 15 of them, as kube-proxy's.
fn sync_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("kubeproxy");
        let metrics = Self {
            sync_duration: sync_histogram(),
            full_duration: sync_histogram(),
            partial_duration: sync_histogram(),
            last_sync: Gauge::default(),
            last_queued: Gauge::default(),
            changes_pending: Gauge::default(),
            restore_failures: Counter::default(),
            partial_restore_failures: Counter::default(),
            rules_last: Family::default(),
            healthz: Family::default(),
            registry: Registry::default(),
        };
        registry.register(
            "sync_proxy_rules_duration_seconds",
            "SyncProxyRules latency in seconds",
            metrics.sync_duration.clone(),
        );
        registry.register(
            "sync_full_proxy_rules_duration_seconds",
            "SyncProxyRules latency in seconds for full resyncs",
            metrics.full_duration.clone(),
        );
        registry.register(
            "sync_partial_proxy_rules_duration_seconds",
            "SyncProxyRules latency in seconds for partial resyncs",
            metrics.partial_duration.clone(),
        );
        registry.register(
            "sync_proxy_rules_last_timestamp_seconds",
            "The last time proxy rules were successfully synced",
            metrics.last_sync.clone(),
        );
        registry.register(
            "sync_proxy_rules_last_queued_timestamp_seconds",
            "The last time a sync of proxy rules was queued",
            metrics.last_queued.clone(),
        );
        registry.register(
            "sync_proxy_rules_service_changes_pending",
            "Pending proxy rules Service and EndpointSlice changes",
            metrics.changes_pending.clone(),
        );
        registry.register(
            "sync_proxy_rules_iptables_restore_failures",
            "Cumulative proxy iptables restore failures",
            metrics.restore_failures.clone(),
        );
        registry.register(
            "sync_proxy_rules_iptables_partial_restore_failures",
            "Cumulative proxy iptables partial restore failures",
            metrics.partial_restore_failures.clone(),
        );
        registry.register(
            "sync_proxy_rules_iptables_last",
            "Number of iptables rules written by kube-proxy in last sync",
            metrics.rules_last.clone(),
        );
        registry.register(
            "proxy_healthz",
            "Cumulative proxy healthz HTTP status",
            metrics.healthz.clone(),
        );
        Self {
            registry,
            ..metrics
        }
    }

    /// A change was queued at `at`, `pending` services now differ from the kernel.
    pub fn queued(&self, at: SystemTime, pending: usize) {
        self.last_queued.set(seconds_since_epoch(at));
        self.changes_pending
            .set(i64::try_from(pending).unwrap_or(i64::MAX));
    }

    /// A sync ended: how long it took, whether it was full, whether the restore succeeded,
    /// and the restore text (its rules are counted per table).
    pub fn synced(&self, took: Duration, full: bool, ok: bool, text: &str, now: SystemTime) {
        let seconds = took.as_secs_f64();
        self.sync_duration.observe(seconds);
        if full {
            self.full_duration.observe(seconds);
        } else {
            self.partial_duration.observe(seconds);
        }
        if !ok {
            self.restore_failures.inc();
            if !full {
                self.partial_restore_failures.inc();
            }
            return;
        }
        self.last_sync.set(seconds_since_epoch(now));
        for (table, rules) in rules_per_table(text) {
            self.rules_last
                .get_or_create(&vec![("table".to_owned(), table.to_owned())])
                .set(i64::try_from(rules).unwrap_or(i64::MAX));
        }
    }

    /// The pending-changes gauge.
    pub fn pending(&self, pending: usize) {
        self.changes_pending
            .set(i64::try_from(pending).unwrap_or(i64::MAX));
    }

    /// `/healthz` answered with `code`.
    pub fn healthz(&self, code: u16) {
        self.healthz
            .get_or_create(&vec![("code".to_owned(), code.to_string())])
            .inc();
    }

    /// The OpenMetrics text exposition.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

/// The `-A`/`-I` lines of each table of a restore text.
fn rules_per_table(text: &str) -> Vec<(&str, usize)> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for line in text.lines() {
        if let Some(table) = line.strip_prefix('*') {
            counts.push((table, 0));
        } else if (line.starts_with("-A ") || line.starts_with("-I "))
            && let Some((_, n)) = counts.last_mut()
        {
            *n += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_proxys_names_are_exposed() {
        let metrics = Metrics::new();
        metrics.synced(
            Duration::from_millis(3),
            false,
            true,
            "*filter\n-A X -j ACCEPT\nCOMMIT\n*nat\n-A Y -j RETURN\n-A Y -j RETURN\nCOMMIT\n",
            SystemTime::now(),
        );
        metrics.synced(
            Duration::from_millis(3),
            false,
            false,
            "",
            SystemTime::now(),
        );
        metrics.healthz(200);
        let text = metrics.encode();
        for name in [
            "kubeproxy_sync_proxy_rules_duration_seconds_bucket",
            "kubeproxy_sync_partial_proxy_rules_duration_seconds_count 2",
            "kubeproxy_sync_proxy_rules_last_timestamp_seconds",
            "kubeproxy_sync_proxy_rules_iptables_restore_failures_total 1",
            "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total 1",
            "kubeproxy_sync_proxy_rules_iptables_last{table=\"nat\"} 2",
            "kubeproxy_proxy_healthz_total{code=\"200\"} 1",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
    }
}
