//! kube-proxy's sync metrics (`pkg/proxy/metrics`, prefix `kubeproxy_`), prometheus-client,
//! and the process metrics of [`crate::process`] (`process_*`, no prefix).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::process::ProcessCollector;
use crate::tally::RuleTally;

type Labels = Vec<(String, String)>;

/// The gauges a family's rules set; summed over the families.
#[derive(Clone, Debug, Default)]
struct FamilyRules {
    /// Rules per table.
    total: Vec<(String, usize)>,
    /// Service ports with no local endpoint, `(internal, external)`.
    no_local: (usize, usize),
}

/// The metrics and their registry.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    sync_duration: Histogram,
    full_duration: Histogram,
    partial_duration: Histogram,
    network_programming: Histogram,
    last_sync: Gauge<f64, AtomicU64>,
    last_queued: Gauge<f64, AtomicU64>,
    service_changes_pending: Gauge,
    service_changes: Counter,
    endpoint_changes_pending: Gauge,
    endpoint_changes: Counter,
    restore_failures: Counter,
    partial_restore_failures: Counter,
    rules_total: Family<Labels, Gauge>,
    rules_last: Family<Labels, Gauge>,
    no_local_endpoints: Family<Labels, Gauge>,
    healthz: Family<Labels, Counter>,
    livez: Family<Labels, Counter>,
    conntrack_deleted: Family<Labels, Counter>,
    conntrack_failures: Family<Labels, Counter>,
    conntrack_duration: Family<Labels, Histogram, fn() -> Histogram>,
    families: Mutex<BTreeMap<&'static str, FamilyRules>>,
}

fn seconds_since_epoch(time: SystemTime) -> f64 {
    time.duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

fn label(name: &str, value: impl Into<String>) -> Labels {
    vec![(name.to_owned(), value.into())]
}

fn gauge_value(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Buckets of 1 ms × 2^k, 15 of them, as kube-proxy's.
fn sync_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// kube-proxy's network-programming buckets: 0.25 s and 0.5 s, each second to 59 s, every
/// 5 s to 115 s, every 30 s to 5 min.
fn network_programming_histogram() -> Histogram {
    let quarters = [0.25, 0.5].into_iter();
    let seconds = (1..=59).map(f64::from);
    let fives = (0..12).map(|i| f64::from(60 + 5 * i));
    let halves = (0..7).map(|i| f64::from(120 + 30 * i));
    Histogram::new(quarters.chain(seconds).chain(fives).chain(halves))
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Self {
        let mut root = Registry::default();
        root.register_collector(Box::new(ProcessCollector::default()));
        let registry = root.sub_registry_with_prefix("kubeproxy");
        let metrics = Self {
            sync_duration: sync_histogram(),
            full_duration: sync_histogram(),
            partial_duration: sync_histogram(),
            network_programming: network_programming_histogram(),
            last_sync: Gauge::default(),
            last_queued: Gauge::default(),
            service_changes_pending: Gauge::default(),
            service_changes: Counter::default(),
            endpoint_changes_pending: Gauge::default(),
            endpoint_changes: Counter::default(),
            restore_failures: Counter::default(),
            partial_restore_failures: Counter::default(),
            rules_total: Family::default(),
            rules_last: Family::default(),
            no_local_endpoints: Family::default(),
            healthz: Family::default(),
            livez: Family::default(),
            conntrack_deleted: Family::default(),
            conntrack_failures: Family::default(),
            conntrack_duration: Family::new_with_constructor(sync_histogram),
            families: Mutex::default(),
            registry: Registry::default(),
        };
        let histograms = [
            (
                "sync_proxy_rules_duration_seconds",
                "SyncProxyRules latency in seconds",
                &metrics.sync_duration,
            ),
            (
                "sync_full_proxy_rules_duration_seconds",
                "SyncProxyRules latency in seconds for full resyncs",
                &metrics.full_duration,
            ),
            (
                "sync_partial_proxy_rules_duration_seconds",
                "SyncProxyRules latency in seconds for partial resyncs",
                &metrics.partial_duration,
            ),
            (
                "network_programming_duration_seconds",
                "In Cluster Network Programming Latency in seconds",
                &metrics.network_programming,
            ),
        ];
        for (name, help, histogram) in histograms {
            registry.register(name, help, histogram.clone());
        }
        let timestamps = [
            (
                "sync_proxy_rules_last_timestamp_seconds",
                "The last time proxy rules were successfully synced",
                &metrics.last_sync,
            ),
            (
                "sync_proxy_rules_last_queued_timestamp_seconds",
                "The last time a sync of proxy rules was queued",
                &metrics.last_queued,
            ),
        ];
        for (name, help, gauge) in timestamps {
            registry.register(name, help, gauge.clone());
        }
        let gauges = [
            (
                "sync_proxy_rules_service_changes_pending",
                "Pending proxy rules Service changes",
                &metrics.service_changes_pending,
            ),
            (
                "sync_proxy_rules_endpoint_changes_pending",
                "Pending proxy rules Endpoint changes",
                &metrics.endpoint_changes_pending,
            ),
        ];
        for (name, help, gauge) in gauges {
            registry.register(name, help, gauge.clone());
        }
        // prometheus-client appends `_total` to counters.
        let counters = [
            (
                "sync_proxy_rules_service_changes",
                "Cumulative proxy rules Service changes",
                &metrics.service_changes,
            ),
            (
                "sync_proxy_rules_endpoint_changes",
                "Cumulative proxy rules Endpoint changes",
                &metrics.endpoint_changes,
            ),
            (
                "sync_proxy_rules_iptables_restore_failures",
                "Cumulative proxy iptables restore failures",
                &metrics.restore_failures,
            ),
            (
                "sync_proxy_rules_iptables_partial_restore_failures",
                "Cumulative proxy iptables partial restore failures",
                &metrics.partial_restore_failures,
            ),
        ];
        for (name, help, counter) in counters {
            registry.register(name, help, counter.clone());
        }
        let gauge_families = [
            (
                "sync_proxy_rules_iptables_total",
                "Total number of iptables rules owned by kube-proxy",
                &metrics.rules_total,
            ),
            (
                "sync_proxy_rules_iptables_last",
                "Number of iptables rules written by kube-proxy in last sync",
                &metrics.rules_last,
            ),
            (
                "sync_proxy_rules_no_local_endpoints_total",
                "Number of services with a Local traffic policy and no endpoints",
                &metrics.no_local_endpoints,
            ),
        ];
        for (name, help, family) in gauge_families {
            registry.register(name, help, family.clone());
        }
        let counter_families = [
            (
                "proxy_healthz",
                "Cumulative proxy healthz HTTP status",
                &metrics.healthz,
            ),
            (
                "proxy_livez",
                "Cumulative proxy livez HTTP status",
                &metrics.livez,
            ),
            (
                "conntrack_reconciler_deleted_entries",
                "Cumulative conntrack flows deleted by conntrack reconciler",
                &metrics.conntrack_deleted,
            ),
            // service-proxy's own: kube-proxy only logs a failed reconcile.
            (
                "conntrack_reconciler_failures",
                "Cumulative conntrack reconciles that failed (conntrack missing or failing)",
                &metrics.conntrack_failures,
            ),
        ];
        for (name, help, family) in counter_families {
            registry.register(name, help, family.clone());
        }
        registry.register(
            "conntrack_reconciler_sync_duration_seconds",
            "ReconcileConntrackFlowsLatency latency in seconds",
            metrics.conntrack_duration.clone(),
        );
        Self {
            registry: root,
            ..metrics
        }
    }

    /// Objects arrived: `services` Service and `slices` EndpointSlice changes.
    pub fn changes_seen(&self, services: usize, slices: usize) {
        self.service_changes.inc_by(services as u64);
        self.endpoint_changes.inc_by(slices as u64);
    }

    /// At `at`, `services` Services and the endpoints of `endpoints` Services wait for a sync.
    pub fn pending(&self, at: Option<SystemTime>, services: usize, endpoints: usize) {
        if let Some(at) = at {
            self.last_queued.set(seconds_since_epoch(at));
        }
        self.service_changes_pending.set(gauge_value(services));
        self.endpoint_changes_pending.set(gauge_value(endpoints));
    }

    /// A sync of `family` ended after `took`: a full one when `full`, a failed restore when
    /// `rules` is `None`, else the rules it wrote per table and what the family's tables now
    /// hold.
    pub fn synced(
        &self,
        family: &'static str,
        took: Duration,
        full: bool,
        rules: Option<(&[(String, usize)], &RuleTally)>,
        now: SystemTime,
    ) {
        let seconds = took.as_secs_f64();
        self.sync_duration.observe(seconds);
        if full {
            self.full_duration.observe(seconds);
        } else {
            self.partial_duration.observe(seconds);
        }
        let Some((written, tally)) = rules else {
            self.restore_failures.inc();
            if !full {
                self.partial_restore_failures.inc();
            }
            return;
        };
        self.last_sync.set(seconds_since_epoch(now));
        for (table, rules) in written {
            self.rules_last
                .get_or_create(&label("table", table.as_str()))
                .set(gauge_value(*rules));
        }
        let mut families = self.families.lock().unwrap_or_else(PoisonError::into_inner);
        families.insert(
            family,
            FamilyRules {
                total: tally.totals().map(|(t, n)| (t.to_owned(), n)).collect(),
                no_local: tally.no_local_endpoints(),
            },
        );
        let mut totals: BTreeMap<&str, usize> = BTreeMap::new();
        let (mut internal, mut external) = (0, 0);
        for rules in families.values() {
            for (table, n) in &rules.total {
                *totals.entry(table).or_default() += n;
            }
            internal += rules.no_local.0;
            external += rules.no_local.1;
        }
        for (table, n) in totals {
            self.rules_total
                .get_or_create(&label("table", table))
                .set(gauge_value(n));
        }
        for (policy, n) in [("internal", internal), ("external", external)] {
            self.no_local_endpoints
                .get_or_create(&label("traffic_policy", policy))
                .set(gauge_value(n));
        }
    }

    /// Changes whose EndpointSlices were triggered at `triggers` are now in the kernel.
    pub fn programmed(&self, triggers: &[SystemTime], now: SystemTime) {
        for trigger in triggers {
            let latency = now.duration_since(*trigger).unwrap_or_default();
            self.network_programming.observe(latency.as_secs_f64());
        }
    }

    /// `/healthz` answered with `code`.
    pub fn healthz(&self, code: u16) {
        self.healthz
            .get_or_create(&label("code", code.to_string()))
            .inc();
    }

    /// `/livez` answered with `code`.
    pub fn livez(&self, code: u16) {
        self.livez
            .get_or_create(&label("code", code.to_string()))
            .inc();
    }

    /// A conntrack reconcile of `family` took `took` and deleted `deleted` flows; it stopped
    /// on an error when `failed`.
    pub fn conntrack_reconciled(&self, family: &str, took: Duration, deleted: u64, failed: bool) {
        let labels = label("ip_family", family);
        self.conntrack_duration
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
        self.conntrack_deleted
            .get_or_create(&labels)
            .inc_by(deleted);
        if failed {
            self.conntrack_failures.get_or_create(&labels).inc();
        }
    }

    /// The OpenMetrics text exposition.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value<'a>(text: &'a str, name: &str) -> &'a str {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("{name} missing from\n{text}"))
    }

    fn tally(text: &str) -> (Vec<(String, usize)>, RuleTally) {
        let mut tally = RuleTally::default();
        let written = tally.apply(text, true);
        (written, tally)
    }

    #[test]
    fn syncs_set_kube_proxys_sync_metrics() {
        let metrics = Metrics::new();
        let ms = Duration::from_millis(3);
        let (written, v4) = tally(
            "*filter\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -m comment --comment \"ns/a:p has no local endpoints\" -j DROP\nCOMMIT\n*nat\n:Y - [0:0]\n-A Y -j RETURN\n-A Y -j RETURN\nCOMMIT\n",
        );
        metrics.synced("IPv4", ms, true, Some((&written, &v4)), SystemTime::now());
        let (written, v6) = tally("*nat\n:Y - [0:0]\n-A Y -j RETURN\nCOMMIT\n");
        metrics.synced("IPv6", ms, false, Some((&written, &v6)), SystemTime::now());
        metrics.synced("IPv4", ms, false, None, SystemTime::now());
        metrics.healthz(200);
        metrics.livez(503);
        let text = metrics.encode();
        assert!(text.contains("kubeproxy_sync_proxy_rules_duration_seconds_bucket"));
        for (name, expected) in [
            ("kubeproxy_sync_proxy_rules_duration_seconds_count", "3"),
            (
                "kubeproxy_sync_full_proxy_rules_duration_seconds_count",
                "1",
            ),
            (
                "kubeproxy_sync_partial_proxy_rules_duration_seconds_count",
                "2",
            ),
            (
                "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
                "1",
            ),
            (
                "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total",
                "1",
            ),
            // The last sync that wrote nat (IPv6) wrote one rule.
            (
                "kubeproxy_sync_proxy_rules_iptables_last{table=\"nat\"}",
                "1",
            ),
            (
                "kubeproxy_sync_proxy_rules_iptables_last{table=\"filter\"}",
                "1",
            ),
            // Totals add the families up.
            (
                "kubeproxy_sync_proxy_rules_iptables_total{table=\"nat\"}",
                "3",
            ),
            (
                "kubeproxy_sync_proxy_rules_iptables_total{table=\"filter\"}",
                "1",
            ),
            (
                "kubeproxy_sync_proxy_rules_no_local_endpoints_total{traffic_policy=\"internal\"}",
                "1",
            ),
            (
                "kubeproxy_sync_proxy_rules_no_local_endpoints_total{traffic_policy=\"external\"}",
                "0",
            ),
            ("kubeproxy_proxy_healthz_total{code=\"200\"}", "1"),
            ("kubeproxy_proxy_livez_total{code=\"503\"}", "1"),
        ] {
            assert_eq!(value(&text, name), expected, "{name}");
        }
        assert_ne!(
            value(&text, "kubeproxy_sync_proxy_rules_last_timestamp_seconds"),
            "0.0"
        );
    }

    #[test]
    fn changes_are_counted_and_pending_ones_gauged() {
        let metrics = Metrics::new();
        metrics.changes_seen(2, 5);
        metrics.changes_seen(1, 0);
        let queued = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        metrics.pending(Some(queued), 3, 2);
        let text = metrics.encode();
        for (name, expected) in [
            ("kubeproxy_sync_proxy_rules_service_changes_total", "3"),
            ("kubeproxy_sync_proxy_rules_endpoint_changes_total", "5"),
            ("kubeproxy_sync_proxy_rules_service_changes_pending", "3"),
            ("kubeproxy_sync_proxy_rules_endpoint_changes_pending", "2"),
            (
                "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds",
                "1700000000.0",
            ),
        ] {
            assert_eq!(value(&text, name), expected, "{name}");
        }
        metrics.pending(None, 0, 0);
        let text = metrics.encode();
        assert_eq!(
            value(&text, "kubeproxy_sync_proxy_rules_service_changes_pending"),
            "0"
        );
        assert_eq!(
            value(
                &text,
                "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds"
            ),
            "1700000000.0"
        );
    }

    #[test]
    fn conntrack_reconciles_count_deleted_flows_and_failures_per_family() {
        let metrics = Metrics::new();
        let ms = Duration::from_millis(2);
        metrics.conntrack_reconciled("IPv4", ms, 3, false);
        metrics.conntrack_reconciled("IPv4", ms, 1, true);
        metrics.conntrack_reconciled("IPv6", ms, 0, false);
        let text = metrics.encode();
        for (name, expected) in [
            (
                "kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family=\"IPv4\"}",
                "4",
            ),
            (
                "kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family=\"IPv6\"}",
                "0",
            ),
            (
                "kubeproxy_conntrack_reconciler_failures_total{ip_family=\"IPv4\"}",
                "1",
            ),
            (
                "kubeproxy_conntrack_reconciler_sync_duration_seconds_count{ip_family=\"IPv4\"}",
                "2",
            ),
        ] {
            assert_eq!(value(&text, name), expected, "{name}");
        }
        assert!(
            !text.contains("kubeproxy_conntrack_reconciler_failures_total{ip_family=\"IPv6\"}")
        );
    }

    /// Each applied EndpointSlice change observes now − its trigger time, in kube-proxy's
    /// buckets (0.25 s, 0.5 s, 1 s … 59 s, 60 s … 115 s, 120 s … 300 s).
    #[test]
    fn network_programming_latency_is_observed_per_trigger() {
        let metrics = Metrics::new();
        let now = UNIX_EPOCH + Duration::from_secs(1_000);
        let triggers = [
            now - Duration::from_millis(300),
            now - Duration::from_secs(70),
        ];
        metrics.programmed(&triggers, now);
        let text = metrics.encode();
        assert_eq!(
            value(
                &text,
                "kubeproxy_network_programming_duration_seconds_count"
            ),
            "2"
        );
        assert_eq!(
            value(&text, "kubeproxy_network_programming_duration_seconds_sum"),
            "70.3"
        );
        assert_eq!(
            value(
                &text,
                "kubeproxy_network_programming_duration_seconds_bucket{le=\"0.5\"}"
            ),
            "1"
        );
        assert_eq!(
            value(
                &text,
                "kubeproxy_network_programming_duration_seconds_bucket{le=\"65.0\"}"
            ),
            "1"
        );
        assert_eq!(
            value(
                &text,
                "kubeproxy_network_programming_duration_seconds_bucket{le=\"70.0\"}"
            ),
            "2"
        );
        assert_eq!(
            text.matches("kubeproxy_network_programming_duration_seconds_bucket")
                .count(),
            81
        );
    }
}
