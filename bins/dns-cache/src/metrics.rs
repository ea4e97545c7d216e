//! CoreDNS's metric names and labels (`docs/dns-cache.md` §2.9 and each plugin's list), in one
//! prometheus-client registry that lives as long as the process (reloads keep the counts).
//!
//! Label sets are `Vec<(&str, String)>` in CoreDNS's label order. Hot paths resolve their
//! series once, when a server block is set up, and then only touch atomics.

use std::sync::Mutex;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// A label set.
pub type Labels = Vec<(&'static str, String)>;

type Counters = Family<Labels, Counter>;
type Gauges = Family<Labels, Gauge>;
type Histograms = Family<Labels, Histogram, fn() -> Histogram>;

fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.00025, 2.0, 16))
}

fn size_histogram() -> Histogram {
    Histogram::new([
        0.0, 100.0, 200.0, 300.0, 400.0, 511.0, 1023.0, 2047.0, 4095.0, 8291.0, 16e3, 32e3, 48e3,
        64e3,
    ])
}

/// From 1 ms to about 17 minutes (CoreDNS's `ExponentialBuckets(0.001, 2, 20)`).
fn programming_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 20))
}

fn proxy_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.00025, 2.0, 16))
}

/// Every series the server exports.
pub struct Metrics {
    registry: Mutex<Registry>,
    /// `coredns_dns_requests_total{server,zone,view,proto,family,type}`.
    pub requests: Counters,
    /// `coredns_dns_request_duration_seconds{server,zone,view}`.
    pub request_duration: Histograms,
    /// `coredns_dns_request_size_bytes{server,zone,view,proto}`.
    pub request_size: Histograms,
    /// `coredns_dns_response_size_bytes{server,zone,view,proto}`.
    pub response_size: Histograms,
    /// `coredns_dns_do_requests_total{server,view,zone}`.
    pub do_requests: Counters,
    /// `coredns_dns_responses_total{server,zone,view,rcode,plugin}`.
    pub responses: Counters,
    /// `coredns_plugin_enabled{server,zone,view,name}`.
    pub plugin_enabled: Gauges,
    /// `coredns_cache_entries{server,type,zones,view}`.
    pub cache_entries: Gauges,
    /// `coredns_cache_hits_total{server,type,zones,view}`.
    pub cache_hits: Counters,
    /// `coredns_cache_misses_total{server,zones,view}`.
    pub cache_misses: Counters,
    /// `coredns_cache_requests_total{server,zones,view}`.
    pub cache_requests: Counters,
    /// `coredns_cache_prefetch_total{server,zones,view}`.
    pub cache_prefetch: Counters,
    /// `coredns_cache_drops_total{server,zones,view}`.
    pub cache_drops: Counters,
    /// `coredns_cache_served_stale_total{server,zones,view}`.
    pub cache_served_stale: Counters,
    /// `coredns_cache_evictions_total{server,type,zones,view}`.
    pub cache_evictions: Counters,
    /// `coredns_forward_healthcheck_broken_total`.
    pub forward_healthcheck_broken: Counter,
    /// `coredns_forward_max_concurrent_rejects_total`.
    pub forward_max_concurrent_rejects: Counter,
    /// `coredns_proxy_request_duration_seconds{proxy_name,to,rcode}`.
    pub proxy_duration: Histograms,
    /// `coredns_proxy_healthcheck_failures_total{proxy_name,to,rcode}`.
    pub proxy_healthcheck_failures: Counters,
    /// `coredns_proxy_conn_cache_hits_total{proxy_name,to,proto}`.
    pub proxy_conn_hits: Counters,
    /// `coredns_proxy_conn_cache_misses_total{proxy_name,to,proto}`.
    pub proxy_conn_misses: Counters,
    /// `coredns_hosts_entries`.
    pub hosts_entries: Gauge,
    /// `coredns_hosts_reload_timestamp_seconds`.
    pub hosts_reload_timestamp: Gauge<f64, std::sync::atomic::AtomicU64>,
    /// `coredns_reload_failed_total`.
    pub reload_failed: Counter,
    /// `coredns_reload_version_info{hash,value}`.
    pub reload_version: Gauges,
    /// `coredns_health_request_duration_seconds`.
    pub health_duration: Histogram,
    /// `coredns_health_request_failures_total`.
    pub health_failures: Counter,
    /// `coredns_panics_total`.
    pub panics: Counter,
    /// `coredns_kubernetes_dns_programming_duration_seconds{service_kind}`.
    pub kubernetes_dns_programming: Histograms,
}

impl Metrics {
    /// A registry with every series registered.
    pub fn new() -> Self {
        let m = Self {
            registry: Mutex::new(Registry::default()),
            requests: Counters::default(),
            request_duration: Histograms::new_with_constructor(duration_histogram),
            request_size: Histograms::new_with_constructor(size_histogram),
            response_size: Histograms::new_with_constructor(size_histogram),
            do_requests: Counters::default(),
            responses: Counters::default(),
            plugin_enabled: Gauges::default(),
            cache_entries: Gauges::default(),
            cache_hits: Counters::default(),
            cache_misses: Counters::default(),
            cache_requests: Counters::default(),
            cache_prefetch: Counters::default(),
            cache_drops: Counters::default(),
            cache_served_stale: Counters::default(),
            cache_evictions: Counters::default(),
            forward_healthcheck_broken: Counter::default(),
            forward_max_concurrent_rejects: Counter::default(),
            proxy_duration: Histograms::new_with_constructor(proxy_histogram),
            proxy_healthcheck_failures: Counters::default(),
            proxy_conn_hits: Counters::default(),
            proxy_conn_misses: Counters::default(),
            hosts_entries: Gauge::default(),
            hosts_reload_timestamp: Gauge::default(),
            reload_failed: Counter::default(),
            reload_version: Gauges::default(),
            health_duration: duration_histogram(),
            health_failures: Counter::default(),
            panics: Counter::default(),
            kubernetes_dns_programming: Histograms::new_with_constructor(programming_histogram),
        };
        let build_info = Gauges::default();
        build_info
            .get_or_create(&vec![
                ("version", env!("CARGO_PKG_VERSION").to_owned()),
                ("revision", String::new()),
                ("goversion", String::new()),
            ])
            .set(1);
        if let Ok(mut r) = m.registry.lock() {
            let r = &mut *r;
            r.register("coredns_build_info", "A metric with a constant '1' value labeled by version, revision, and goversion from which CoreDNS was built", build_info);
            r.register(
                "coredns_panics",
                "A metrics that counts the number of panics.",
                m.panics.clone(),
            );
            r.register(
                "coredns_dns_requests",
                "Counter of DNS requests made per zone, protocol and family.",
                m.requests.clone(),
            );
            r.register(
                "coredns_dns_request_duration_seconds",
                "Histogram of the time (in seconds) each request took per zone.",
                m.request_duration.clone(),
            );
            r.register(
                "coredns_dns_request_size_bytes",
                "Size of the EDNS0 UDP buffer in bytes (64K for TCP) per zone and protocol.",
                m.request_size.clone(),
            );
            r.register(
                "coredns_dns_response_size_bytes",
                "Size of the returned response in bytes.",
                m.response_size.clone(),
            );
            r.register(
                "coredns_dns_do_requests",
                "Counter of DNS requests with DO bit set per zone.",
                m.do_requests.clone(),
            );
            r.register(
                "coredns_dns_responses",
                "Counter of response status codes.",
                m.responses.clone(),
            );
            r.register(
                "coredns_plugin_enabled",
                "A metric that indicates whether a plugin is enabled on per server and zone basis.",
                m.plugin_enabled.clone(),
            );
            r.register(
                "coredns_cache_entries",
                "The number of elements in the cache.",
                m.cache_entries.clone(),
            );
            r.register(
                "coredns_cache_hits",
                "The count of cache hits.",
                m.cache_hits.clone(),
            );
            r.register("coredns_cache_misses", "The count of cache misses. Deprecated, derive misses from cache hits/requests counters", m.cache_misses.clone());
            r.register(
                "coredns_cache_requests",
                "The count of cache requests.",
                m.cache_requests.clone(),
            );
            r.register(
                "coredns_cache_prefetch",
                "The number of times the cache has prefetched a cached item.",
                m.cache_prefetch.clone(),
            );
            r.register(
                "coredns_cache_drops",
                "The number responses that are not cached, because the reply is malformed.",
                m.cache_drops.clone(),
            );
            r.register(
                "coredns_cache_served_stale",
                "The number of requests served from stale cache entries.",
                m.cache_served_stale.clone(),
            );
            r.register(
                "coredns_cache_evictions",
                "The count of cache evictions.",
                m.cache_evictions.clone(),
            );
            r.register(
                "coredns_forward_healthcheck_broken",
                "Counter of the number of complete failures of the healthchecks.",
                m.forward_healthcheck_broken.clone(),
            );
            r.register("coredns_forward_max_concurrent_rejects", "Counter of the number of queries rejected because the concurrent queries were at maximum", m.forward_max_concurrent_rejects.clone());
            r.register(
                "coredns_proxy_request_duration_seconds",
                "Histogram of the time each request took.",
                m.proxy_duration.clone(),
            );
            r.register(
                "coredns_proxy_healthcheck_failures",
                "Counter of the number of failed healthchecks.",
                m.proxy_healthcheck_failures.clone(),
            );
            r.register(
                "coredns_proxy_conn_cache_hits",
                "Counter of connection cache hits per upstream and protocol.",
                m.proxy_conn_hits.clone(),
            );
            r.register(
                "coredns_proxy_conn_cache_misses",
                "Counter of connection cache misses per upstream and protocol.",
                m.proxy_conn_misses.clone(),
            );
            r.register(
                "coredns_hosts_entries",
                "The combined number of entries in hosts and Corefile.",
                m.hosts_entries.clone(),
            );
            r.register(
                "coredns_hosts_reload_timestamp_seconds",
                "The timestamp of the last reload of hosts file.",
                m.hosts_reload_timestamp.clone(),
            );
            r.register(
                "coredns_reload_failed",
                "Counter of the number of failed reload attempts.",
                m.reload_failed.clone(),
            );
            r.register("coredns_reload_version_info", "A metric with a constant '1' value labeled by hash, and value which type of hash generated", m.reload_version.clone());
            r.register(
                "coredns_health_request_duration_seconds",
                "Histogram of the time (in seconds) each request took.",
                m.health_duration.clone(),
            );
            r.register(
                "coredns_kubernetes_dns_programming_duration_seconds",
                "Histogram of the time (in seconds) it took to program a dns instance.",
                m.kubernetes_dns_programming.clone(),
            );
            r.register(
                "coredns_health_request_failures",
                "The number of times the health check failed.",
                m.health_failures.clone(),
            );
        }
        m
    }

    /// The exposition text.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        if let Ok(registry) = self.registry.lock() {
            // Writing into a String cannot fail.
            let _ = encode(&mut text, &registry);
        }
        text
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// The `type` label of `coredns_dns_requests_total`: common qtypes by name, else `other`.
pub fn qtype_label(qtype: dns_wire::Type) -> &'static str {
    const MONITORED: [&str; 22] = [
        "A", "AAAA", "NS", "CNAME", "SOA", "PTR", "MX", "TXT", "SRV", "NAPTR", "DS", "DNSKEY",
        "RRSIG", "NSEC", "NSEC3", "HINFO", "IXFR", "AXFR", "ANY", "CAA", "SVCB", "HTTPS",
    ];
    qtype
        .mnemonic()
        .and_then(|m| MONITORED.iter().find(|x| **x == m).copied())
        .unwrap_or("other")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_coredns() {
        let m = Metrics::new();
        m.requests
            .get_or_create(&vec![
                ("server", "dns://:53".into()),
                ("zone", ".".into()),
                ("view", String::new()),
                ("proto", "udp".into()),
                ("family", "1".into()),
                ("type", "A".into()),
            ])
            .inc();
        let text = m.encode();
        assert!(text.contains(
            "coredns_dns_requests_total{server=\"dns://:53\",zone=\".\",view=\"\",proto=\"udp\",family=\"1\",type=\"A\"} 1"
        ));
        assert!(text.contains("coredns_build_info{version="));
        assert_eq!(qtype_label(dns_wire::Type::AAAA), "AAAA");
        assert_eq!(qtype_label(dns_wire::Type(65000)), "other");
    }
}
